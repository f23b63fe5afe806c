/*
 * Custom op "SignalFftAutoScale" (TFLM signal/micro/kernels/fft_auto_scale*.cc): shifts an int16
 * frame left by the most bits that keep its largest magnitude below 2^15, and outputs that shift
 * (int32 scalar) for SignalFilterBankSquareRoot to undo. No options.
 * Outputs: scaled int16 [N], scale bits int32 [].
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalFftAutoScale

static mn_status_t fas_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 2 outputs");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0), *bits = mn_output(ctx, node, 1);
    if (!in || !out || !bits) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT16 || out->dtype != MN_INT16 || bits->dtype != MN_INT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s, %s not supported (int16 -> int16, int32 only)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype), mn_dtype_name(bits->dtype));
    }
    if (in->ndim != 1 || out->ndim != 1 || bits->ndim != 0 || out->dims[0] != in->dims[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "input and output must be 1-D of one length, the scale a scalar");
    }
    return MN_OK;
}

static mn_status_t fas_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    const int16_t *x = mn_input_data(ctx, node, 0);
    int16_t *y = out->data;
    const int32_t n = out->dims[0];
    int16_t max = 0;
    for (int32_t i = 0; i < n; i++) {
        /* TFLM's MaxAbs16: the negation is compared in int, then stored in int16, so -32768
         * becomes the maximum as -32768 (a later larger value replaces it) */
        const int32_t v = x[i];
        if (v > max) {
            max = (int16_t)v;
        } else if (-v > max) {
            max = (int16_t)-v;
        }
    }
    int32_t bits = 16 - (int32_t)mn_sig_msb32((uint32_t)(int32_t)max) - 1;
    if (bits < 0) {
        bits = 0;
    }
    for (int32_t i = 0; i < n; i++) {
        y[i] = (int16_t)(x[i] * (1 << bits));
    }
    *(int32_t *)mn_output(ctx, node, 1)->data = bits;
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFftAutoScale = { NULL, fas_prepare, fas_eval, NULL, NULL };

#endif
