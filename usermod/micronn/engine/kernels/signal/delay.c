/*
 * Custom op "SignalDelay" (TFLM signal/micro/kernels/delay.cc): delays each row of an int16 input
 * [..., N] by delay_length samples across invokes (the first delay_length output samples of a
 * stream are 0). Options: delay_length (0..65535).
 * State: delay_length samples per row in persistent memory, zero at the first invoke and after
 * mn_interp_reset (TFLM: at prepare and reset).
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalDelay

typedef struct {
    int16_t *state;         /* rows * delay samples, oldest first */
    int32_t rows, frame, delay;
    uint32_t epoch;
} delay_data_t;

static mn_status_t delay_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT16 || out->dtype != MN_INT16) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s not supported (int16 only, as TFLM)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
    }
    const int32_t frame = mn_dim(in, -1);
    if (in->ndim < 1 || frame < 1 || mn_tensor_count(out) != mn_tensor_count(in)) {
        return mn_fail(ctx, MN_ERR_MODEL, "input [..., N >= 1] and output of its size expected");
    }
    mn_flex_map_t m;
    int32_t delay;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "delay_length", 0, 65535, &delay);
    }
    if (s != MN_OK) {
        return s;
    }
    const size_t rows = mn_tensor_count(in) / (size_t)frame;
    delay_data_t *d = mn_alloc_persistent(ctx, sizeof *d + rows * (size_t)delay * sizeof(int16_t));
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->state = (int16_t *)(d + 1);
    d->rows = (int32_t)rows;
    d->frame = frame;
    d->delay = delay;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t delay_eval(mn_ctx_t *ctx, mn_node_t *node) {
    delay_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    const size_t n = (size_t)d->frame, k = (size_t)d->delay;
    if (d->epoch != now) {
        memset(d->state, 0, (size_t)d->rows * k * sizeof *d->state);
        d->epoch = now;
    }
    const int16_t *x = mn_input_data(ctx, node, 0);
    int16_t *y = mn_output(ctx, node, 0)->data;
    for (int32_t r = 0; r < d->rows; r++, x += n, y += n) {
        int16_t *st = d->state + (size_t)r * k;
        /* the stream is state ++ input: the first n samples out, the last k kept */
        if (k >= n) {
            memcpy(y, st, n * sizeof *y);
            memmove(st, st + n, (k - n) * sizeof *st);
            memcpy(st + (k - n), x, n * sizeof *st);
        } else {
            memcpy(y, st, k * sizeof *y);
            memcpy(y + k, x, (n - k) * sizeof *y);
            memcpy(st, x + (n - k), k * sizeof *st);
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalDelay = { NULL, delay_prepare, delay_eval, NULL, NULL };

#endif
