/*
 * Custom op "SignalFilterBankLog" (TFLM signal/micro/kernels/filter_bank_log.cc): per channel,
 * output_scale * ln(input << input_correction_bits), in fixed point (TFLM's Log32: the integer part
 * of log2 from the top bit, the fraction from a 129-entry correction table with linear
 * interpolation, times ln 2 at 16 fractional bits), saturated to int16; inputs whose shifted value
 * is 0 or 1 give 0. uint32 [C] -> int16 [C].
 * Options: input_correction_bits (0..31), output_scale (>= 0; the product wraps at 32 bits as TFLM's).
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalFilterBankLog

typedef struct {
    int32_t channels, correction, scale;
} fblog_data_t;

/* log2(1 + k / 128) - k / 128 at 16 fractional bits, k = 0..128 (+ 1 pad): TFLM's kLogLut, the
 * front end's published table (data, needed to be bit-exact). */
static const uint16_t fblog_lut[130] = {
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
    3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
    5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
    5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
    5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
    2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142,
    0, 0,
};

static mn_status_t fblog_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_UINT32 || out->dtype != MN_INT16) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s not supported (uint32 -> int16 only)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
    }
    if (in->ndim != 1 || out->ndim != 1 || out->dims[0] != in->dims[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "input and output must be 1-D of one length");
    }
    mn_flex_map_t m;
    int32_t corr, scale;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "input_correction_bits", 0, 31, &corr);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "output_scale", 0, INT32_MAX, &scale);
    }
    if (s != MN_OK) {
        return s;
    }
    fblog_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->channels = in->dims[0];
    d->correction = corr;
    d->scale = scale;
    node->user_data = d;
    return MN_OK;
}

/* round(out_scale * ln(x)) in TFLM's fixed point, x >= 2 */
static uint32_t fblog_log(uint32_t x, uint32_t out_scale) {
    const uint32_t ip = mn_sig_msb32(x) - 1;
    /* the mantissa's fraction at 16 bits */
    int32_t frac = (int32_t)(x - (uint32_t)(1ull << ip));
    if (ip < 16) {
        frac <<= 16 - ip;
    } else {
        frac >>= ip - 16;
    }
    const uint32_t seg = (uint32_t)frac >> 9;
    const int32_t c0 = fblog_lut[seg], c1 = fblog_lut[seg + 1];
    const int32_t rel = ((c1 - c0) * (frac - (int32_t)(seg << 9))) >> 16;
    const uint32_t log2 = (ip << 16) + (uint32_t)(frac + c0 + rel);
    const uint32_t ln = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16);
    return (out_scale * ln + 32768) >> 16;
}

static mn_status_t fblog_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const fblog_data_t *d = node->user_data;
    const uint32_t *x = mn_input_data(ctx, node, 0);
    int16_t *y = mn_output(ctx, node, 0)->data;
    for (int32_t i = 0; i < d->channels; i++) {
        const uint32_t v = x[i] << d->correction;
        if (v > 1) {
            const uint32_t l = fblog_log(v, (uint32_t)d->scale);
            y[i] = (int16_t)(l < INT16_MAX ? l : INT16_MAX);
        } else {
            y[i] = 0;
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFilterBankLog = { NULL, fblog_prepare, fblog_eval, NULL, NULL };

#endif
