/*
 * Custom op "SignalStacker" (TFLM signal/micro/kernels/stacker.cc): stacks the last
 * left_context + 1 + right_context feature frames (int16 [C] each invoke) into one int16
 * [C * (left + 1 + right)] output, every stacker_step frames; the bool scalar output says whether
 * this invoke produced one (the output is left as it was otherwise, as TFLM). The first frame of
 * a stream is repeated left_context extra times as padding.
 * Options: num_channels (C), stacker_left_context, stacker_right_context (0..65535),
 * stacker_step (1..left + 1 + right).
 * State: the frames held, reset at the first invoke and by mn_interp_reset.
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalStacker

typedef struct {
    int16_t *buf;           /* size samples, oldest first */
    int32_t channels, left, size, step, count;
    uint32_t epoch;
} stacker_data_t;

static mn_status_t stacker_prepare(mn_ctx_t *ctx, mn_node_t *node) {
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
    int32_t c, left, right, step;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "num_channels", 1, 65535, &c);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "stacker_left_context", 0, 65535, &left);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "stacker_right_context", 0, 65535, &right);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "stacker_step", 1, left + right + 1, &step);
    }
    if (s != MN_OK) {
        return s;
    }
    const int32_t size = c * (left + right + 1);
    if (in->ndim != 1 || out->ndim != 1 || valid->ndim != 0 || in->dims[0] != c || out->dims[0] != size) {
        return mn_fail(ctx, MN_ERR_MODEL, "input [num_channels], output [num_channels * (left + 1 + right)] = [%d], "
            "valid [] expected", (int)size);
    }
    stacker_data_t *d = mn_alloc_persistent(ctx, sizeof *d + (size_t)size * sizeof(int16_t));
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->buf = (int16_t *)(d + 1);
    d->channels = c;
    d->left = left;
    d->size = size;
    d->step = step * c;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t stacker_eval(mn_ctx_t *ctx, mn_node_t *node) {
    stacker_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    const size_t c = (size_t)d->channels;
    const int16_t *x = mn_input_data(ctx, node, 0);
    int copies = 1;
    if (d->epoch != now) {   /* a new stream: its first frame is repeated left_context times more */
        d->count = 0;
        d->epoch = now;
        copies += d->left;
    }
    for (int k = 0; k < copies; k++) {
        memcpy(d->buf + d->count, x, c * sizeof *x);
        d->count += d->channels;
    }
    bool valid = d->count >= d->size;
    if (valid) {
        memcpy(mn_output(ctx, node, 0)->data, d->buf, (size_t)d->size * sizeof *d->buf);
        d->count -= d->step;
        memmove(d->buf, d->buf + d->step, (size_t)d->count * sizeof *d->buf);
    }
    *(bool *)mn_output(ctx, node, 1)->data = valid;
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalStacker = { NULL, stacker_prepare, stacker_eval, NULL, NULL };

#endif
