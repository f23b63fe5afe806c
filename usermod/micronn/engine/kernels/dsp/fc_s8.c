/*
 * FULLY_CONNECTED int8 on Armv7E-M (per-tensor and per-channel requantization), with
 * sum (w + wo)(x + io) = sum w*(x + io) + wo*sum (x + io): the model's bias is the start value and
 * wo*sum (x + io) (only with a weights offset) one pass over the input per batch row. Nothing is
 * kept per unit.
 * One batch row (the usual case): no scratch. Each input word is split into its halfword pairs
 * with the input offset added (SXTAB16, two instructions) once for three weight rows: 20
 * instructions per 12 MACs, fewer than an expanded int16 copy's 14 per 8.
 * Several batch rows: the rows are expanded into an int16 scratch (dsp_expand_s8, input offset
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
    int32_t v = p->mult_pc ? mn_mul_by_qm_single(acc, p->mult_pc[u], p->shift_pc[u])
                           : mn_mul_by_qm_single(acc, p->mult, (int)p->shift);
    v = mn_add_wrap(v, p->output_offset);
    return (int8_t)mn_clamp_i32(v, p->act_min, p->act_max);
}

/* acc[r] += w_r . (x + io) over k inputs for the weight rows w0, w1, w2: each input word is split
 * into its halfword pairs [x0 x2] / [x1 x3] with the input offset added (SXTAB16, io2 = the
 * offset in both halfwords) once for the three rows: 20 instructions per 12 MACs. In assembly:
 * the compiler's allocation of these 13 live registers spills inside the loop. */
static inline __attribute__((always_inline)) void fc_dot_3rows(const int8_t *x, const int8_t *w0,
    const int8_t *w1, const int8_t *w2, int k, int32_t io, int32_t io2, int32_t acc[3]) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2];
    int n = k >> 2;
    if (n) {
        int32_t xe, xo, v, t;
        __asm volatile(
            "1:\n"
            "ldr %[v], [%[x]], #4\n"
            "sxtab16 %[xe], %[io2], %[v]\n"
            "sxtab16 %[xo], %[io2], %[v], ror #8\n"
            "ldr %[v], [%[w0]], #4\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a0], %[t], %[xe], %[a0]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a0], %[t], %[xo], %[a0]\n"
            "ldr %[v], [%[w1]], #4\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a1], %[t], %[xe], %[a1]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a1], %[t], %[xo], %[a1]\n"
            "ldr %[v], [%[w2]], #4\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a2], %[t], %[xe], %[a2]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a2], %[t], %[xo], %[a2]\n"
            "subs %[n], %[n], #1\n"
            "bne 1b\n"
            : [a0] "+r" (a0), [a1] "+r" (a1), [a2] "+r" (a2), [x] "+r" (x), [w0] "+r" (w0), [w1] "+r" (w1),
              [w2] "+r" (w2), [n] "+r" (n), [xe] "=&r" (xe), [xo] "=&r" (xo), [v] "=&r" (v), [t] "=&r" (t)
            : [io2] "r" (io2)
            : "cc", "memory");
    }
    for (int i = k & 3; i; --i) {
        const int32_t xi = *x++ + io;
        MAC1(a0, xi, *w0++);
        MAC1(a1, xi, *w1++);
        MAC1(a2, xi, *w2++);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

/* One batch row, three units per pass (a last one or two: the pass repeats its last row). */
static void fc_row(const mn_fc_params_t *p, const int8_t *in, const int8_t *weights, const int32_t *bias,
    int8_t *out, uint32_t extra) {
    const int depth = p->depth, units = p->units;
    const int32_t io = p->input_offset;
    const int32_t io2 = (int32_t)(((uint32_t)io & 0xffffu) | ((uint32_t)io << 16));
    for (int u = 0; u < units; u += 3) {
        const int n = units - u < 3 ? units - u : 3;
        const int u1 = n > 1 ? u + 1 : u, u2 = n > 2 ? u + 2 : u1;
        int32_t acc[3];
        acc[0] = (int32_t)((bias ? (uint32_t)bias[u] : 0u) + extra);
        acc[1] = (int32_t)((bias ? (uint32_t)bias[u1] : 0u) + extra);
        acc[2] = (int32_t)((bias ? (uint32_t)bias[u2] : 0u) + extra);
        const int8_t *w0 = weights + (size_t)u * depth;
        fc_dot_3rows(in, w0, weights + (size_t)u1 * depth, weights + (size_t)u2 * depth, depth, io, io2, acc);
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
