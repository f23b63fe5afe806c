/*
 * FULLY_CONNECTED int8 on Armv7E-M (per-tensor and per-channel requantization). Offsets are
 * folded once: sum (w + wo)(x + io) = sum w*x + io*sum w + depth*wo*io + wo*sum x, exact modulo
 * 2^32; the first three terms join the bias in prepare, wo*sum x (only with a weights offset) is
 * one pass over the input per batch. The input rows, expanded to int16 (dsp_expand_s8), meet two
 * weight rows per pass; two batch rows at a time share each weight load (dsp_mac_pair_2x2).
 */
#include "dsp.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

static size_t fc_scratch_bytes(const mn_fc_params_t *p) {
    return 2 * (size_t)p->depth * sizeof(int16_t);
}

static size_t fc_data_bytes(const mn_fc_params_t *p) {
    return sizeof(int32_t) * (size_t)p->units;
}

static void fc_precompute(const mn_fc_params_t *p, const int8_t *weights, const int32_t *bias, void *data) {
    int32_t *folded = (int32_t *)data;
    const uint32_t io = (uint32_t)p->input_offset, wo = (uint32_t)p->weights_offset;
    for (int u = 0; u < p->units; ++u) {
        uint32_t sum = 0;
        for (int d = 0; d < p->depth; ++d) {
            sum += (uint32_t)weights[(size_t)u * p->depth + d];
        }
        folded[u] = (int32_t)((bias ? (uint32_t)bias[u] : 0u) + io * sum + (uint32_t)p->depth * wo * io);
    }
}

static int32_t row_sum(const int8_t *x, int n) {
    uint32_t s = 0;
    for (int i = 0; i < n; ++i) {
        s += (uint32_t)x[i];
    }
    return (int32_t)s;
}

static inline int8_t fc_out(const mn_fc_params_t *p, int32_t acc, int u) {
    int32_t v = p->mult_pc ? mn_mul_by_qm_single(acc, p->mult_pc[u], p->shift_pc[u])
                           : mn_mul_by_qm_single(acc, p->mult, (int)p->shift);
    v = mn_add_wrap(v, p->output_offset);
    return (int8_t)mn_clamp_i32(v, p->act_min, p->act_max);
}

static void fc_run(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int depth = p->depth, units = p->units;
    const int32_t *const folded = (const int32_t *)buf->data;
    int16_t *const col = (int16_t *)buf->scratch;
    for (int b = 0; b < p->batches; b += 2) {
        const bool two = b + 1 < p->batches;
        const int8_t *in0 = input + (size_t)b * depth, *in1 = in0 + depth;
        int8_t *out0 = output + (size_t)b * units, *out1 = out0 + units;
        uint32_t extra0 = 0, extra1 = 0;
        if (p->weights_offset) {
            extra0 = (uint32_t)p->weights_offset * (uint32_t)row_sum(in0, depth);
            extra1 = two ? (uint32_t)p->weights_offset * (uint32_t)row_sum(in1, depth) : 0;
        }
        if (two) {   /* two batch rows share each weight load */
            dsp_expand_pair(in0, col, 0, depth, 0);
            dsp_expand_pair(in1, col, 1, depth, 0);
        } else {
            dsp_expand_s8(in0, col, depth, 0);
        }
        const int8_t *w = weights;
        for (int u = 0; u < units; u += 2, w += 2 * depth) {
            /* an odd last unit runs as a pair with itself */
            const int u1 = u + 1 < units ? u + 1 : u;
            const int8_t *w1 = weights + (size_t)u1 * depth;
            int32_t acc[4] = { (int32_t)((uint32_t)folded[u] + extra0), (int32_t)((uint32_t)folded[u1] + extra0),
                (int32_t)((uint32_t)folded[u] + extra1), (int32_t)((uint32_t)folded[u1] + extra1) };
            if (two) {
                dsp_mac_pair_2x2(col, w, w1, depth, acc);
                out1[u] = fc_out(p, acc[2], u);
                out1[u1] = fc_out(p, acc[3], u1);
            } else {
                dsp_mac_1x2(col, w, w1, depth, acc);
            }
            out0[u] = fc_out(p, acc[0], u);
            out0[u1] = fc_out(p, acc[1], u1);
        }
    }
}

const mn_fc_s8_variant_t mn_dsp_fc_s8 = {
    "dsp.fc_s8", mn_dsp_fc_s8_fits, fc_scratch_bytes, fc_data_bytes, fc_precompute, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
