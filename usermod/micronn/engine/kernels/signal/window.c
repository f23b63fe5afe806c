/*
 * Custom op "SignalWindow" (TFLM signal/micro/kernels/window.cc): input int16 [..., N] times an
 * int16 window [N], each product shifted right by `shift` (arithmetic) and saturated to int16,
 * frame by frame over the input's leading dimensions.
 * Options: shift (int, 0..31). Inputs: signal, window (any int16 1-D tensor of N elements).
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalWindow

typedef struct {
    int32_t shift, size, frame;
} win_data_t;

static mn_status_t win_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 2 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 2 inputs and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *w = mn_input(ctx, node, 1), *out = mn_output(ctx, node, 0);
    if (!in || !w || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT16 || w->dtype != MN_INT16 || out->dtype != MN_INT16) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s, %s -> %s not supported (int16 only, as TFLM)",
            mn_dtype_name(in->dtype), mn_dtype_name(w->dtype), mn_dtype_name(out->dtype));
    }
    const size_t n = mn_tensor_count(in), frame = mn_tensor_count(w);
    if (in->ndim < 1 || w->ndim != 1 || frame == 0 || n % frame || mn_tensor_count(out) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "window must be 1-D, its length dividing the input's, output as input");
    }
    mn_flex_map_t m;
    int32_t shift;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "shift", 0, 31, &shift);
    }
    if (s != MN_OK) {
        return s;
    }
    win_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->shift = shift;
    d->size = (int32_t)n;
    d->frame = (int32_t)frame;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t win_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const win_data_t *d = node->user_data;
    const int16_t *x = mn_input_data(ctx, node, 0), *w = mn_input_data(ctx, node, 1);
    int16_t *y = mn_output(ctx, node, 0)->data;
    const int shift = d->shift;
    for (int32_t f = 0; f < d->size; f += d->frame) {
        for (int32_t i = 0; i < d->frame; i++) {
            int32_t v = ((int32_t)x[f + i] * w[i]) >> shift;
            y[f + i] = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalWindow = { NULL, win_prepare, win_eval, NULL, NULL };

#endif
