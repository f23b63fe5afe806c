/*
 * Portable int8 FULLY_CONNECTED for symmetric weights (weights offset 0, the converter's output):
 * the input offset is folded into the bias at prepare, so each output is one int8 dot product.
 * Requantization as the reference: one rounding (mn_mul_by_qm_single), per tensor or per channel.
 */
#include "generic.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

static bool fc_fits(const mn_fc_params_t *p) {
    return p->weights_offset == 0;
}

static size_t fc_data_bytes(const mn_fc_params_t *p) {
    return sizeof(int32_t) * (size_t)p->units;
}

static void fc_precompute(const mn_fc_params_t *p, const int8_t *weights, const int32_t *bias, void *data) {
    mn_generic_fold_offset(p->units, p->depth, p->input_offset, weights, bias, (int32_t *)data);
}

static size_t fc_scratch_bytes(const mn_fc_params_t *p) {
    return sizeof(uint32_t) * (size_t)p->units;
}

static void fc_run(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int depth = p->depth, units = p->units;
    const int32_t *const folded = (const int32_t *)buf->data;
    const int32_t *const mult_pc = p->mult_pc;
    const int8_t *const shift_pc = p->shift_pc;
    const int32_t mult = p->mult, out_off = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int shift = (int)p->shift;
    uint32_t *const acc = (uint32_t *)buf->scratch;
    /* Per tensor, a multiplier below 1/2 (shift <= -2, the usual case) rounds at bit 33 or above
     * of the 64-bit product: (ab + 2^(t-1)) >> t is then (hi + 2^(t-33)) >> (t-32), since the low
     * word cannot carry into the result. */
    const int high = !mult_pc && shift <= -2 ? -shift - 1 : 0;   /* t - 32 */
    for (int b = 0; b < p->batches; ++b) {
        int8_t *out = output + (size_t)b * units;
        mn_generic_matvec_acc(input + (size_t)b * depth, weights, folded, depth, units, acc);
        if (high) {
            const int32_t round = (int32_t)1 << (high - 1);
            for (int u = 0; u < units; ++u) {
                const int32_t hi = (int32_t)(((int64_t)(int32_t)acc[u] * mult) >> 32);
                const int32_t v = mn_add_wrap((hi + round) >> high, out_off);
                out[u] = (int8_t)mn_clamp_i32(v, act_min, act_max);
            }
            continue;
        }
        for (int u = 0; u < units; ++u) {
            int32_t v = mult_pc ? mn_mul_by_qm_single((int32_t)acc[u], mult_pc[u], shift_pc[u])
                                : mn_mul_by_qm_single((int32_t)acc[u], mult, shift);
            v = mn_add_wrap(v, out_off);
            out[u] = (int8_t)mn_clamp_i32(v, act_min, act_max);
        }
    }
}

const mn_fc_s8_variant_t mn_generic_fc_s8 = {
    "generic.fc_s8", fc_fits, fc_scratch_bytes, fc_data_bytes, fc_precompute, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
