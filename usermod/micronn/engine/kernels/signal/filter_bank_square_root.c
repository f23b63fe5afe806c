/*
 * Custom op "SignalFilterBankSquareRoot" (TFLM signal/micro/kernels/filter_bank_square_root.cc):
 * the rounded integer square root of each uint64 channel, shifted right by the scale bits input
 * (int32 scalar, SignalFftAutoScale's output), into uint32. No options.
 * The scale comes at run time: a value outside [0, 31] is an invoke error (TFLM shifts anyway).
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalFilterBankSquareRoot

static mn_status_t fbsqrt_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 2 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 2 inputs and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *bits = mn_input(ctx, node, 1), *out = mn_output(ctx, node, 0);
    if (!in || !bits || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_UINT64 || bits->dtype != MN_INT32 || out->dtype != MN_UINT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s, %s -> %s not supported (uint64, int32 -> uint32 only)",
            mn_dtype_name(in->dtype), mn_dtype_name(bits->dtype), mn_dtype_name(out->dtype));
    }
    if (in->ndim != 1 || out->ndim != 1 || out->dims[0] != in->dims[0] || mn_tensor_count(bits) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "input and output must be 1-D of one length, the scale bits one value");
    }
    return MN_OK;
}

static mn_status_t fbsqrt_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    const uint64_t *x = mn_input_data(ctx, node, 0);
    const int32_t bits = *(const int32_t *)mn_input_data(ctx, node, 1);
    if (bits < 0 || bits > 31) {
        return mn_fail(ctx, MN_ERR_KERNEL, "scale bits %d outside [0, 31]", (int)bits);
    }
    uint32_t *y = out->data;
    for (int32_t i = 0; i < out->dims[0]; i++) {
        y[i] = mn_sig_sqrt64(x[i]) >> bits;
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFilterBankSquareRoot = { NULL, fbsqrt_prepare, fbsqrt_eval, NULL, NULL };

#endif
