/*
 * Helium int8 FULLY_CONNECTED, per-tensor and per-channel: four units per pass over the input
 * (mn_mve_dot4). Offsets are folded, exact in wrapping 32-bit arithmetic:
 *   sum_d (w + w_off)(x + in_off) = sum_d w x + in_off * sum_d w + w_off * sum_d x + depth w_off in_off
 * where the w terms are constant (prepare) and w_off * sum_d x is formed once per batch row.
 * Requantization as the reference (mn_fc_requant): the 64-bit product and
 * shift are scalar work (MVE has no 64-bit lane shifts), a few instructions per unit.
 */
#include "mve.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

static size_t fc_data_bytes(const mn_fc_params_t *p) {
    return sizeof(int32_t) * (size_t)p->units;
}

static void fc_precompute(const mn_fc_params_t *p, const int8_t *weights, const int32_t *bias, void *data) {
    int32_t *folded = (int32_t *)data;
    mn_mve_fold_offset(p->units, p->depth, p->input_offset, weights, bias, folded);
    const uint32_t both = (uint32_t)p->depth * (uint32_t)p->weights_offset * (uint32_t)p->input_offset;
    for (int u = 0; u < p->units; ++u) {
        folded[u] = (int32_t)((uint32_t)folded[u] + both);
    }
}

static void fc_run(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int depth = p->depth, units = p->units;
    const int32_t *const folded = (const int32_t *)buf->data;
    const int32_t w_off = p->weights_offset, out_off = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int32_t *const mult_pc = p->mult_pc;
    const int8_t *const shift_pc = p->shift_pc;
    const int32_t mult = p->mult;
    const int shift = (int)p->shift;
    for (int b = 0; b < p->batches; ++b) {
        const int8_t *in = input + (size_t)b * depth;
        int8_t *out = output + (size_t)b * units;
        const uint32_t x_term = w_off ? (uint32_t)w_off * (uint32_t)mn_mve_sum(in, depth) : 0u;
        int u = 0;
        while (u < units) {
            int32_t acc[4];
            const int n = units - u < 4 ? units - u : 4;
            for (int i = 0; i < n; ++i) {
                acc[i] = (int32_t)((uint32_t)folded[u + i] + x_term);
            }
            if (n == 4) {
                mn_mve_dot4(in, weights + (size_t)u * depth, depth, acc);
            } else {
                for (int i = 0; i < n; ++i) {
                    acc[i] = mn_add_wrap(acc[i], mn_mve_dot(in, weights + (size_t)(u + i) * depth, depth));
                }
            }
            for (int i = 0; i < n; ++i, ++u) {
                const int32_t v = mult_pc ? mn_fc_requant(p, acc[i], u, mult_pc[u], shift_pc[u])
                                          : mn_fc_requant(p, acc[i], u, mult, shift);
                out[u] = (int8_t)mn_clamp_i32(mn_add_wrap(v, out_off), act_min, act_max);
            }
        }
    }
}

const mn_fc_s8_variant_t mn_mve_fc_s8 = {
    "mve.fc_s8", mn_mve_fc_s8_fits, NULL, fc_data_bytes, fc_precompute, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
