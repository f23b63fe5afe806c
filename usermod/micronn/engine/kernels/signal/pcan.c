/*
 * Custom op "SignalPCAN" (TFLM signal/micro/kernels/pcan.cc): per-channel energy normalisation.
 * Inputs: filter bank output uint32 [C], noise estimate uint32 [C], gain table int16 [L]. Each
 * channel's gain is a piecewise quadratic of its noise estimate (the table holds three
 * coefficients per power-of-two interval of the estimate: interval b, b >= 2, uses entries
 * 4 b - 6 .. 4 b - 4; estimates 0..2 read entries 0..2 directly); the channel times the gain,
 * shifted right by snr_shift, then goes through the "shrink" curve (x^2 / 4 below 2, x - 1 above,
 * at 12 fractional bits in and 6 out). Output uint32 [C]. Options: snr_shift (0..63).
 * The table must be a constant of at least 4 * 32 - 3 entries (what a 32-bit estimate can index;
 * TFLM's generator writes 125).
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalPCAN

#define PCAN_SNR_BITS 12
#define PCAN_OUT_BITS 6

typedef struct {
    int32_t channels, snr_shift;
} pcan_data_t;

static mn_status_t pcan_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 3 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 3 inputs and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *ne = mn_input(ctx, node, 1), *lut = mn_input(ctx, node, 2);
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    if (!in || !ne || !lut || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_UINT32 || ne->dtype != MN_UINT32 || lut->dtype != MN_INT16 || out->dtype != MN_UINT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s, %s, %s -> %s not supported (uint32, uint32, int16 -> uint32)",
            mn_dtype_name(in->dtype), mn_dtype_name(ne->dtype), mn_dtype_name(lut->dtype), mn_dtype_name(out->dtype));
    }
    if (in->ndim != 1 || ne->ndim != 1 || lut->ndim != 1 || out->ndim != 1 || in->dims[0] < 1
        || ne->dims[0] != in->dims[0] || out->dims[0] != in->dims[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "input, noise estimate and output must be 1-D of one length");
    }
    if (lut->dims[0] < 4 * 32 - 3) {
        return mn_fail(ctx, MN_ERR_MODEL, "gain table has %d entries, needs at least %d", (int)lut->dims[0], 4 * 32 - 3);
    }
    mn_flex_map_t m;
    int32_t shift;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "snr_shift", 0, 63, &shift);
    }
    if (s != MN_OK) {
        return s;
    }
    pcan_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->channels = in->dims[0];
    d->snr_shift = shift;
    node->user_data = d;
    return MN_OK;
}

/* the gain for noise estimate x (TFLM's WideDynamicFunction) */
static inline int16_t pcan_gain(uint32_t x, const int16_t *lut) {
    if (x <= 2) {
        return lut[x];
    }
    const int32_t b = (int32_t)mn_sig_msb32(x);
    const int16_t *c = lut + 4 * b - 6;
    const int16_t frac = (int16_t)((b < 11 ? x << (11 - b) : x >> (b - 11)) & 0x3FF);
    int32_t r = ((int32_t)c[2] * frac) >> 5;
    r += (int32_t)((uint32_t)c[1] << 5);
    r = (int32_t)((uint32_t)r * (uint32_t)(int32_t)frac);   /* int32 products wrap, as in TFLM */
    r = (int32_t)((uint32_t)r + (1u << 14)) >> 15;
    r += c[0];
    return (int16_t)r;
}

static inline uint32_t pcan_shrink(uint32_t x) {
    if (x < (2u << PCAN_SNR_BITS)) {
        return (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUT_BITS);
    }
    return (x >> (PCAN_SNR_BITS - PCAN_OUT_BITS)) - (1u << PCAN_OUT_BITS);
}

static mn_status_t pcan_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const pcan_data_t *d = node->user_data;
    const uint32_t *x = mn_input_data(ctx, node, 0), *ne = mn_input_data(ctx, node, 1);
    const int16_t *lut = mn_input_data(ctx, node, 2);
    uint32_t *y = mn_output(ctx, node, 0)->data;
    const unsigned shift = (unsigned)d->snr_shift;
    for (int32_t i = 0; i < d->channels; i++) {
        /* the int16 gain sign-extended to uint32, as TFLM converts it */
        const uint32_t gain = (uint32_t)(int32_t)pcan_gain(ne[i], lut);
        const uint32_t snr = (uint32_t)(((uint64_t)x[i] * gain) >> shift);
        y[i] = pcan_shrink(snr);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalPCAN = { NULL, pcan_prepare, pcan_eval, NULL, NULL };

#endif
