/* SOFTMAX reference kernel.
 *
 * int8 input: TFLite's reference kernel (what LiteRT's BUILTIN_REF resolver
 * and TFLM run): gemmlowp fixed point.  Input differences to the row maximum
 * are scaled by beta * input_scale into Q5.26, exponentiated with
 * exp_on_negative_values, summed in Q12.19, and multiplied by a fixed-point
 * reciprocal of the sum.  The output quantization is implied: scale 1/256,
 * zero point -128 for int8; scale 1/65536, zero point -32768 for int16.
 * int16 input (TFLite SoftmaxInt16): exp and 1 / (1 + x) tables with interpolation, built in
 * prepare; zero points 0, output scale 1/32768.
 * float32: exp((x - max) * beta) / sum in float, as reference_ops::Softmax. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_SOFTMAX

#define DEFINE_SOFTMAX_Q(NAME, TOUT, OMIN, OMAX, OBITS) \
    void NAME(const mn_softmax_q_t *p, int outer, int depth, \
        const int8_t *input, TOUT *output) { \
        for (int i = 0; i < outer; ++i) { \
            const int8_t *in = input + (size_t)i * depth; \
            TOUT *out = output + (size_t)i * depth; \
            int32_t mx = INT8_MIN; \
            for (int j = 0; j < depth; ++j) { \
                mx = in[j] > mx ? in[j] : mx; \
            } \
            uint32_t sum = 0; /* Q12.19, wrap-around defined */ \
            for (int j = 0; j < depth; ++j) { \
                const int32_t diff = (int32_t)in[j] - mx; \
                if (diff >= p->diff_min) { \
                    const int32_t scaled = mn_mul_by_qm_gt_one(diff, p->input_mult, p->input_left_shift); \
                    sum += (uint32_t)mn_rdbpot(mn_exp_on_negative_values_q5(scaled), 12); \
                } \
            } \
            int bits_over_unit; \
            const int32_t recip = mn_get_reciprocal((int32_t)sum, 12, &bits_over_unit); \
            int exponent = bits_over_unit + 31 - (OBITS); \
            /* 0..31 unless the Q12.19 sum overflowed (depth >= 4096 with \
             * near-equal inputs; TFLite aborts there) */ \
            exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent); \
            for (int j = 0; j < depth; ++j) { \
                const int32_t diff = (int32_t)in[j] - mx; \
                if (diff >= p->diff_min) { \
                    const int32_t scaled = mn_mul_by_qm_gt_one(diff, p->input_mult, p->input_left_shift); \
                    const int32_t e = mn_exp_on_negative_values_q5(scaled); \
                    const int32_t v = mn_rdbpot(mn_srdhm(recip, e), exponent) + (OMIN); \
                    out[j] = (TOUT)mn_clamp_i32(v, OMIN, OMAX); \
                } else { \
                    out[j] = (TOUT)(OMIN); \
                } \
            } \
        } \
    }

DEFINE_SOFTMAX_Q(mn_softmax_s8_s8, int8_t, INT8_MIN, INT8_MAX, 8)
DEFINE_SOFTMAX_Q(mn_softmax_s8_s16, int16_t, INT16_MIN, INT16_MAX, 16)

/* int16: exp of the (rescaled) difference to the row maximum from a table over [-10, 0], a sum
 * in Q16.15, 1 / sum from a second table after normalising the sum to [1, 2). The exps are kept
 * in the output row meanwhile, as TFLite does. */
void mn_softmax_s16(const mn_softmax_s16_t *p, int outer, int depth, const int16_t *input, int16_t *output) {
    for (int i = 0; i < outer; ++i) {
        const int16_t *in = input + (size_t)i * depth;
        int16_t *out = output + (size_t)i * depth;
        int16_t mx = INT16_MIN;
        for (int j = 0; j < depth; ++j) {
            mx = in[j] > mx ? in[j] : mx;
        }
        int32_t sum = 0;
        for (int j = 0; j < depth; ++j) {
            const int32_t scaled = mn_mul_by_qm((int32_t)in[j] - mx, p->mult, p->shift);
            const int16_t sym = (int16_t)mn_clamp_i32(mn_add_wrap(scaled, 32767), INT16_MIN, INT16_MAX);
            out[j] = mn_lut_s16_lookup(sym, p->exp_lut);
            sum = mn_add_wrap(sum, out[j]);
        }
        /* sum >= exp(0) = 32767, so 1 <= headroom_plus_one <= 17 */
        int headroom_plus_one = 0;
        while (headroom_plus_one < 32 && !((uint32_t)sum & (0x80000000u >> headroom_plus_one))) {
            ++headroom_plus_one;
        }
        const int32_t shifted = (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
        const int16_t sym_sum = (int16_t)mn_clamp_i32(shifted - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX);
        const int16_t recip = mn_lut_s16_lookup(sym_sum, p->recip_lut);
        const int right = 31 - headroom_plus_one;
        const int64_t round = (int64_t)1 << (right - 1);
        for (int j = 0; j < depth; ++j) {
            const int32_t r = (int32_t)(((int64_t)out[j] * recip + round) >> right);
            out[j] = (int16_t)mn_clamp_i32(r, 0, INT16_MAX);
        }
    }
}

void mn_softmax_f32(int outer, int depth, float beta, const float *input, float *output) {
    for (int i = 0; i < outer; ++i) {
        const float *in = input + (size_t)i * depth;
        float *out = output + (size_t)i * depth;
        float mx = -INFINITY;
        for (int j = 0; j < depth; ++j) {
            mx = in[j] > mx ? in[j] : mx;
        }
        float sum = 0.0f;
        for (int j = 0; j < depth; ++j) {
            const float e = expf((in[j] - mx) * beta);
            out[j] = e;
            sum += e;
        }
        for (int j = 0; j < depth; ++j) {
            out[j] = out[j] / sum;
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

static mn_status_t softmax_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_softmax_data_t *d = (const ref_softmax_data_t *)node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    /* the paths of the families built (mn_check_family refused the others at prepare) */
    if (MICRONN_TYPE_INT8 && d->in_dtype == MN_INT8) {
        if (!MICRONN_TYPE_INT16 || d->out_dtype == MN_INT8) {
            mn_softmax_s8_s8(&d->u.q, d->outer, d->depth, (const int8_t *)in->data, (int8_t *)out->data);
        } else {
            mn_softmax_s8_s16(&d->u.q, d->outer, d->depth, (const int8_t *)in->data, (int16_t *)out->data);
        }
    } else if (MICRONN_TYPE_INT16 && d->in_dtype == MN_INT16) {
        const int16_t *luts = (const int16_t *)((const uint8_t *)d + REF_SOFTMAX_HEAD);
        const mn_softmax_s16_t q16 = { d->u.q16.mult, d->u.q16.shift, luts, luts + MN_LUT_S16_SIZE };
        mn_softmax_s16(&q16, d->outer, d->depth, (const int16_t *)in->data, (int16_t *)out->data);
    } else if (MICRONN_TYPE_FLOAT32) {
        mn_softmax_f32(d->outer, d->depth, d->u.beta, (const float *)in->data, (float *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SOFTMAX = { NULL, ref_softmax_prepare, softmax_eval, NULL, NULL };

#endif /* MICRONN_OP_SOFTMAX */
