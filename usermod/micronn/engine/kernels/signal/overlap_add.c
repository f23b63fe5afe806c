/*
 * Custom op "SignalOverlapAdd" (TFLM signal/micro/kernels/overlap_add.cc): the inverse of the
 * framer. Input [..., F, frame_size] frames, output [..., F * frame_step]: each frame is added
 * into a per-row accumulator of frame_size samples (int16: saturated), whose first frame_step
 * samples are then output and shifted out (zeros shifted in). Options: frame_step
 * (1..frame_size), T (the TFLite tensor type: 7 int16, 0 float32).
 * State: the accumulators, zero at the first invoke and after mn_interp_reset.
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalOverlapAdd

typedef struct {
    void *acc;              /* rows * size samples */
    int32_t rows, frames, size, step;
    uint32_t epoch;
    uint8_t esz;            /* 2 int16, 4 float32 */
} ola_data_t;

static mn_status_t ola_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    mn_flex_map_t m;
    int32_t type, step;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "T", 0, 255, &type);
    }
    if (s != MN_OK) {
        return s;
    }
    const int dt = type == 7 ? MN_INT16 : type == 0 ? MN_FLOAT32 : -1;
    if (dt < 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "type T=%d not supported (int16 and float32 only)", (int)type);
    }
    if (in->dtype != dt || out->dtype != dt) {
        return mn_fail(ctx, MN_ERR_MODEL, "dtypes %s -> %s do not match option T (%s)", mn_dtype_name(in->dtype),
            mn_dtype_name(out->dtype), mn_dtype_name(dt));
    }
    const int32_t size = mn_dim(in, -1), frames = mn_dim(in, -2);
    s = mn_sig_int(ctx, &m, "frame_step", 1, size > 0 ? size : 1, &step);
    if (s != MN_OK) {
        return s;
    }
    if (in->ndim < 2 || out->ndim + 1 != in->ndim || size < 1 || frames < 1 || mn_dim(out, -1) != frames * step) {
        return mn_fail(ctx, MN_ERR_MODEL, "input [..., F, frame_size] and output [..., F * frame_step] expected");
    }
    const size_t rows = mn_tensor_count(in) / ((size_t)size * (size_t)frames), esz = dt == MN_INT16 ? 2 : 4;
    if (mn_tensor_count(out) != rows * (size_t)frames * (size_t)step) {
        return mn_fail(ctx, MN_ERR_MODEL, "output's leading dimensions must be the input's");
    }
    ola_data_t *d = mn_alloc_persistent(ctx, sizeof *d + rows * (size_t)size * esz);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->acc = d + 1;
    d->rows = (int32_t)rows;
    d->frames = frames;
    d->size = size;
    d->step = step;
    d->esz = (uint8_t)esz;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t ola_eval(mn_ctx_t *ctx, mn_node_t *node) {
    ola_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    const size_t size = (size_t)d->size, step = (size_t)d->step, esz = d->esz;
    if (d->epoch != now) {
        memset(d->acc, 0, (size_t)d->rows * size * esz);
        d->epoch = now;
    }
    const uint8_t *x = mn_input_data(ctx, node, 0);
    uint8_t *y = mn_output(ctx, node, 0)->data;
    for (int32_t r = 0; r < d->rows; r++) {
        uint8_t *acc = (uint8_t *)d->acc + (size_t)r * size * esz;
        for (int32_t f = 0; f < d->frames; f++, x += size * esz, y += step * esz) {
            if (esz == 2) {
                int16_t *a = (int16_t *)acc;
                const int16_t *in = (const int16_t *)x;
                for (size_t i = 0; i < size; i++) {
                    const int32_t v = (int32_t)in[i] + a[i];
                    a[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
                }
            } else {
                float *a = (float *)acc;
                const float *in = (const float *)x;
                for (size_t i = 0; i < size; i++) {
                    a[i] += in[i];
                }
            }
            memcpy(y, acc, step * esz);
            memmove(acc, acc + step * esz, (size - step) * esz);
            memset(acc + (size - step) * esz, 0, step * esz);
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalOverlapAdd = { NULL, ola_prepare, ola_eval, NULL, NULL };

#endif
