/*
 * Portable int8 FULLY_CONNECTED for symmetric weights (weights offset 0, the converter's output):
 * four output units per pass over the input, the input offset added to each input value as it is
 * loaded (mn_generic_matvec_acc), the model's bias as the start value. Nothing persistent and no
 * scratch: folding the offset into a per-unit constant would save one add per input per four
 * units but keep 4 bytes per unit in RAM (2.5 KB for a 640-unit layer).
 * Requantization as the reference (mn_fc_requant), per tensor or per channel.
 */
#include "generic.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

static bool fc_fits(const mn_fc_params_t *p) {
    return p->weights_offset == 0;
}

static void fc_run(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    int8_t *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int depth = p->depth, units = p->units;
    const int32_t *const mult_pc = p->mult_pc;
    const int8_t *const shift_pc = p->shift_pc;
    const int32_t mult = p->mult, out_off = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int shift = (int)p->shift;
    for (int b = 0; b < p->batches; ++b) {
        const int8_t *x = input + (size_t)b * depth;
        int8_t *out = output + (size_t)b * units;
        for (int u0 = 0; u0 < units; u0 += 4) {
            const int n = units - u0 < 4 ? units - u0 : 4;
            uint32_t acc[4];
            mn_generic_matvec_acc(x, weights + (size_t)u0 * depth, bias ? bias + u0 : NULL, p->input_offset, depth, n,
                acc);
            for (int k = 0; k < n; ++k) {
                const int u = u0 + k;
                const int32_t v = mult_pc ? mn_fc_requant(p, (int32_t)acc[k], u, mult_pc[u], shift_pc[u])
                                          : mn_fc_requant(p, (int32_t)acc[k], u, mult, shift);
                out[u] = (int8_t)mn_clamp_i32(mn_add_wrap(v, out_off), act_min, act_max);
            }
        }
    }
}

const mn_fc_s8_variant_t mn_generic_fc_s8 = {
    "generic.fc_s8", fc_fits, NULL, NULL, NULL, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
