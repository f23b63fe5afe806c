/*
 * FULLY_CONNECTED int8 on Armv7E-M (per-tensor and per-channel requantization), with
 * sum (w + wo)(x + io) = sum w*(x + io) + wo*sum (x + io): the model's bias is the start value and
 * wo*sum (x + io) (only with a weights offset) one pass over the input per batch row. Nothing is
 * kept per unit.
 * One batch row (the usual case): no scratch. Each input word is split into its halfword pairs
 * with the input offset added (SXTAB16, two instructions) once for four weight rows
 * (dsp_dot_4rows): 25 instructions per 16 MACs, fewer than an expanded int16 copy's 14 per 8.
 * Several batch rows: the rows are expanded into an int16 scratch (dsp_expand_pair, input offset
 * added) and two batch rows share each weight load (dsp_mac_pair_2x2), two weight rows per pass.
 */
#include "dsp.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8

/* two expanded batch rows, interleaved; none for one row */
static size_t fc_scratch_bytes(const mn_fc_params_t *p) {
    return p->batches > 1 ? 2 * (size_t)p->depth * sizeof(int16_t) : 0;
}

static int32_t row_sum(const int8_t *x, int n) {
    uint32_t s = 0;
    for (int i = 0; i < n; ++i) {
        s += (uint32_t)x[i];
    }
    return (int32_t)s;
}

static inline int8_t fc_out(const mn_fc_params_t *p, int32_t acc, int u) {
    int32_t v = p->mult_pc ? mn_fc_requant(p, acc, u, p->mult_pc[u], p->shift_pc[u])
                           : mn_fc_requant(p, acc, u, p->mult, (int)p->shift);
    v = mn_add_wrap(v, p->output_offset);
    return (int8_t)mn_clamp_i32(v, p->act_min, p->act_max);
}

/* dsp_dot_4rows compiled once on its own: its 14 registers must not depend on the caller's
 * surroundings (inlined into fc_row, small changes there made the constraints impossible). */
static __attribute__((noinline)) void fc_dot4(const int8_t *x, const int8_t *w0, const int8_t *w2, int s, int n,
    int32_t off, int32_t acc[4]) {
    dsp_dot_4rows(x, w0, w2, s, n, off, acc);
}

/* One batch row, four units per pass (dsp_dot_4rows); a last one to three: the pass repeats rows
 * (rows u, u; u, u + 1; u, u + 1, u + 1, u + 2). */
static void fc_row(const mn_fc_params_t *p, const int8_t *in, const int8_t *weights, const int32_t *bias,
    int8_t *out, uint32_t extra) {
    const int depth = p->depth, units = p->units;
    for (int u = 0; u < units; u += 4) {
        const int n = units - u < 4 ? units - u : 4;
        const int8_t *w0 = weights + (size_t)u * depth;
        const int s = n > 1 ? depth : 0;
        const int8_t *w2 = n == 4 ? w0 + 2 * depth : n == 3 ? w0 + depth : w0;
        /* the rows the four accumulators see: u + row[r] */
        const int row[4] = { 0, s ? 1 : 0, n == 4 ? 2 : n == 3 ? 1 : 0, n == 4 ? 3 : n == 3 ? 2 : s ? 1 : 0 };
        int32_t acc[4];
        for (int r = 0; r < 4; ++r) {
            acc[r] = (int32_t)((bias ? (uint32_t)bias[u + row[r]] : 0u) + extra);
        }
        fc_dot4(in, w0, w2, s, depth, p->input_offset, acc);
        if (n == 3) {
            acc[2] = acc[3];
        }
        for (int r = 0; r < n; ++r) {
            out[u + r] = fc_out(p, acc[r], u + r);
        }
    }
}

/* Two batch rows from the interleaved expanded pair in col, two units per pass. */
static void fc_two_rows(const mn_fc_params_t *p, const int16_t *col, const int8_t *weights, const int32_t *bias,
    int8_t *out0, int8_t *out1, uint32_t extra0, uint32_t extra1) {
    const int depth = p->depth, units = p->units;
    const int8_t *w = weights;
    for (int u = 0; u < units; u += 2, w += 2 * depth) {
        /* an odd last unit runs as a pair with itself */
        const int u1 = u + 1 < units ? u + 1 : u;
        const int8_t *w1 = weights + (size_t)u1 * depth;
        const uint32_t b0 = bias ? (uint32_t)bias[u] : 0u, b1 = bias ? (uint32_t)bias[u1] : 0u;
        int32_t acc[4] = { (int32_t)(b0 + extra0), (int32_t)(b1 + extra0), (int32_t)(b0 + extra1),
            (int32_t)(b1 + extra1) };
        dsp_mac_pair_2x2(col, w, w1, depth, acc);
        out0[u] = fc_out(p, acc[0], u);
        out0[u1] = fc_out(p, acc[1], u1);
        out1[u] = fc_out(p, acc[2], u);
        out1[u1] = fc_out(p, acc[3], u1);
    }
}

static void fc_run(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    int8_t *output, const mn_vbuf_t *buf) {
    const int depth = p->depth, units = p->units;
    const int32_t io = p->input_offset;
    const uint32_t wo = (uint32_t)p->weights_offset;
    const uint32_t offsets = (uint32_t)depth * (uint32_t)io;
    int16_t *const col = (int16_t *)buf->scratch;
    for (int b = 0; b < p->batches; b += 2) {
        const int8_t *in0 = input + (size_t)b * depth, *in1 = in0 + depth;
        int8_t *out0 = output + (size_t)b * units, *out1 = out0 + units;
        const uint32_t extra0 = wo ? wo * ((uint32_t)row_sum(in0, depth) + offsets) : 0;
        if (b + 1 < p->batches) {   /* two batch rows share each weight load */
            const uint32_t extra1 = wo ? wo * ((uint32_t)row_sum(in1, depth) + offsets) : 0;
            dsp_expand_pair(in0, col, 0, depth, io);
            dsp_expand_pair(in1, col, 1, depth, io);
            fc_two_rows(p, col, weights, bias, out0, out1, extra0, extra1);
        } else {
            fc_row(p, in0, weights, bias, out0, extra0);
        }
    }
}

const mn_fc_s8_variant_t mn_dsp_fc_s8 = {
    "dsp.fc_s8", mn_dsp_fc_s8_fits, fc_scratch_bytes, NULL, NULL, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED */
