/*
 * Custom op "SignalFramer" (TFLM signal/micro/kernels/framer.cc): cuts each row of an int16
 * stream, fed frame_step * F samples per invoke (input [..., F * frame_step]), into F frames of
 * frame_size samples advancing by frame_step (output [..., F, frame_size]); the bool scalar
 * output says whether every frame of this invoke was complete. With prefill the stream starts
 * with frame_size - frame_step zeros. A frame not complete yet is written as zeros (TFLM leaves
 * it as the arena held it). Options: frame_size, frame_step (1..65535), prefill (bool).
 * State: per row, the samples not consumed yet, reset at the first invoke and by mn_interp_reset.
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalFramer

typedef struct {
    int16_t *buf;           /* rows * cap samples */
    int32_t *count;         /* samples held per row */
    int32_t rows, frames, size, step, cap;
    uint32_t epoch;
    bool prefill;
} framer_data_t;

static mn_status_t framer_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 2 outputs");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0), *valid = mn_output(ctx, node, 1);
    if (!in || !out || !valid) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT16 || out->dtype != MN_INT16 || valid->dtype != MN_BOOL) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s, %s not supported (int16 -> int16, bool only)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype), mn_dtype_name(valid->dtype));
    }
    mn_flex_map_t m;
    int32_t size, step;
    bool prefill = false;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "frame_size", 1, 65535, &size);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "frame_step", 1, 65535, &step);
    }
    if (s == MN_OK) {
        s = mn_sig_bool(ctx, &m, "prefill", &prefill);
    }
    if (s != MN_OK) {
        return s;
    }
    const int32_t inner = mn_dim(in, -1);
    if (in->ndim < 1 || out->ndim != in->ndim + 1 || inner < step || inner % step || mn_tensor_count(valid) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "input [..., F * frame_step], output [..., F, frame_size], valid [] expected");
    }
    const size_t rows = mn_tensor_count(in) / (size_t)inner, frames = (size_t)(inner / step);
    if (mn_dim(out, -1) != size || mn_dim(out, -2) != (int32_t)frames
        || mn_tensor_count(out) != rows * frames * (size_t)size) {
        return mn_fail(ctx, MN_ERR_MODEL, "output must be [..., %d, %d]", (int)frames, (int)size);
    }
    const int32_t cap = (size + step - 1) / step * step;
    framer_data_t *d = mn_alloc_persistent(ctx, sizeof *d + rows * sizeof(int32_t) + rows * (size_t)cap * 2);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->count = (int32_t *)(d + 1);
    d->buf = (int16_t *)(d->count + rows);
    d->rows = (int32_t)rows;
    d->frames = (int32_t)frames;
    d->size = size;
    d->step = step;
    d->cap = cap;
    d->prefill = prefill;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t framer_eval(mn_ctx_t *ctx, mn_node_t *node) {
    framer_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    const size_t size = (size_t)d->size, step = (size_t)d->step;
    if (d->epoch != now) {
        memset(d->buf, 0, (size_t)d->rows * (size_t)d->cap * sizeof *d->buf);
        for (int32_t r = 0; r < d->rows; r++) {
            d->count[r] = d->prefill ? d->size - d->step : 0;
        }
        d->epoch = now;
    }
    const int16_t *x = mn_input_data(ctx, node, 0);
    int16_t *y = mn_output(ctx, node, 0)->data;
    bool valid = true;
    for (int32_t r = 0; r < d->rows; r++) {
        int16_t *b = d->buf + (size_t)r * (size_t)d->cap;
        for (int32_t f = 0; f < d->frames; f++, x += step, y += size) {
            memcpy(b + d->count[r], x, step * sizeof *b);
            d->count[r] += d->step;
            if (d->count[r] >= d->size) {
                memcpy(y, b, size * sizeof *y);
                d->count[r] -= d->step;
                memmove(b, b + step, (size_t)d->count[r] * sizeof *b);
            } else {
                memset(y, 0, size * sizeof *y);
                valid = false;
            }
        }
    }
    *(bool *)mn_output(ctx, node, 1)->data = valid;
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFramer = { NULL, framer_prepare, framer_eval, NULL, NULL };

#endif
