/*
 * Custom op "SignalFilterBankSpectralSubtraction" (TFLM signal/micro/kernels/
 * filter_bank_spectral_subtraction.cc): per channel, a running noise estimate (a one-pole low-pass
 * of the input, scaled up by smoothing_bits; even channels use smoothing / one_minus_smoothing,
 * odd ones the alternate pair) is subtracted from the input, keeping at least
 * input * min_signal_remaining / 2^spectral_subtraction_bits. Outputs: the result and the noise
 * estimate after this frame (uint32 [C] each). With clamping, an estimate above the scaled-up input
 * is lowered to it.
 *
 * State: the noise estimate, in persistent memory, zero at the first invoke and after
 * mn_interp_reset (TFLM: zero at prepare and reset).
 * Options (all required): num_channels, smoothing, one_minus_smoothing, alternate_smoothing,
 * alternate_one_minus_smoothing, min_signal_remaining (0..2^31-1), smoothing_bits (0..31),
 * spectral_subtraction_bits (0..63), clamping (bool).
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalFilterBankSpectralSubtraction

typedef struct {
    uint32_t *noise;
    uint32_t smoothing[2], one_minus[2], min_remaining, epoch;
    int32_t channels;
    uint8_t smoothing_bits, ss_bits;
    bool clamping;
} ss_data_t;

static mn_status_t ss_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 2 outputs");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0), *ne = mn_output(ctx, node, 1);
    if (!in || !out || !ne) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_UINT32 || out->dtype != MN_UINT32 || ne->dtype != MN_UINT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s, %s not supported (uint32 only)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype), mn_dtype_name(ne->dtype));
    }
    mn_flex_map_t m;
    int32_t v[8];
    bool clamping = false;
    static const char *const keys[8] = { "num_channels", "smoothing", "one_minus_smoothing", "alternate_smoothing",
        "alternate_one_minus_smoothing", "min_signal_remaining", "smoothing_bits", "spectral_subtraction_bits" };
    mn_status_t s = mn_sig_options(ctx, node, &m);
    for (int k = 0; k < 8 && s == MN_OK; k++) {
        s = mn_sig_int(ctx, &m, keys[k], k == 0 ? 1 : 0, k == 6 ? 31 : k == 7 ? 63 : INT32_MAX, &v[k]);
    }
    if (s == MN_OK) {
        s = mn_sig_bool(ctx, &m, "clamping", &clamping);
    }
    if (s != MN_OK) {
        return s;
    }
    if (in->ndim != 1 || out->ndim != 1 || ne->ndim != 1 || in->dims[0] != v[0] || out->dims[0] != v[0]
        || ne->dims[0] != v[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "input and outputs must be [num_channels] (%d)", (int)v[0]);
    }
    ss_data_t *d = mn_alloc_persistent(ctx, sizeof *d + (size_t)v[0] * sizeof(uint32_t));
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->noise = (uint32_t *)(d + 1);
    d->channels = v[0];
    d->smoothing[0] = (uint32_t)v[1];
    d->one_minus[0] = (uint32_t)v[2];
    d->smoothing[1] = (uint32_t)v[3];
    d->one_minus[1] = (uint32_t)v[4];
    d->min_remaining = (uint32_t)v[5];
    d->smoothing_bits = (uint8_t)v[6];
    d->ss_bits = (uint8_t)v[7];
    d->clamping = clamping;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t ss_eval(mn_ctx_t *ctx, mn_node_t *node) {
    ss_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    if (d->epoch != now) {   /* first invoke, or the interpreter was reset */
        memset(d->noise, 0, (size_t)d->channels * sizeof *d->noise);
        d->epoch = now;
    }
    const uint32_t *x = mn_input_data(ctx, node, 0);
    uint32_t *y = mn_output(ctx, node, 0)->data, *ne = mn_output(ctx, node, 1)->data, *noise = d->noise;
    const unsigned sb = d->smoothing_bits, ssb = d->ss_bits;
    for (int32_t i = 0; i < d->channels; i++) {
        const uint32_t up = x[i] << sb;
        noise[i] = (uint32_t)(((uint64_t)up * d->smoothing[i & 1] + (uint64_t)noise[i] * d->one_minus[i & 1]) >> ssb);
        uint32_t est = noise[i];
        if (est > up) {
            est = up;
            if (d->clamping) {
                noise[i] = up;
            }
        }
        const uint32_t floor = (uint32_t)(((uint64_t)x[i] * d->min_remaining) >> ssb);
        const uint32_t sub = (up - est) >> sb;
        y[i] = sub > floor ? sub : floor;
    }
    memcpy(ne, noise, (size_t)d->channels * sizeof *ne);
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFilterBankSpectralSubtraction = { NULL, ss_prepare, ss_eval, NULL, NULL };

#endif
