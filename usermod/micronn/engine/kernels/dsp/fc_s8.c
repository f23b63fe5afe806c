/*
 * FULLY_CONNECTED int8 on Armv7E-M (per-tensor and per-channel requantization). The input rows are
 * expanded to int16 with the input offset added (dsp_expand_s8, SADD16: free), so
 * sum (w + wo)(x + io) = sum w*(x + io) + wo*sum (x + io): the model's bias is the start value and
 * wo*sum (x + io) (only with a weights offset) one pass over the input per batch. Nothing is kept
 * per unit. The expanded rows meet two weight rows per pass; two batch rows at a time share each
 * weight load (dsp_mac_pair_2x2).
 */
#include "dsp.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

/* one expanded input row, or two interleaved when there are batch rows to pair */
static size_t fc_scratch_bytes(const mn_fc_params_t *p) {
    return (p->batches > 1 ? 2 : 1) * (size_t)p->depth * sizeof(int16_t);
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
    const int depth = p->depth, units = p->units;
    const int32_t io = p->input_offset;
    const uint32_t wo = (uint32_t)p->weights_offset;
    int16_t *const col = (int16_t *)buf->scratch;
    for (int b = 0; b < p->batches; b += 2) {
        const bool two = b + 1 < p->batches;
        const int8_t *in0 = input + (size_t)b * depth, *in1 = in0 + depth;
        int8_t *out0 = output + (size_t)b * units, *out1 = out0 + units;
        uint32_t extra0 = 0, extra1 = 0;
        if (wo) {
            const uint32_t offsets = (uint32_t)depth * (uint32_t)io;
            extra0 = wo * ((uint32_t)row_sum(in0, depth) + offsets);
            extra1 = two ? wo * ((uint32_t)row_sum(in1, depth) + offsets) : 0;
        }
        if (two) {   /* two batch rows share each weight load */
            dsp_expand_pair(in0, col, 0, depth, io);
            dsp_expand_pair(in1, col, 1, depth, io);
        } else {
            dsp_expand_s8(in0, col, depth, io);
        }
        const int8_t *w = weights;
        for (int u = 0; u < units; u += 2, w += 2 * depth) {
            /* an odd last unit runs as a pair with itself */
            const int u1 = u + 1 < units ? u + 1 : u;
            const int8_t *w1 = weights + (size_t)u1 * depth;
            const uint32_t b0 = bias ? (uint32_t)bias[u] : 0u, b1 = bias ? (uint32_t)bias[u1] : 0u;
            int32_t acc[4] = { (int32_t)(b0 + extra0), (int32_t)(b1 + extra0), (int32_t)(b0 + extra1),
                (int32_t)(b1 + extra1) };
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
    "dsp.fc_s8", mn_dsp_fc_s8_fits, fc_scratch_bytes, NULL, NULL, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
