/*
 * DEPTHWISE_CONV_2D int8 on Armv7E-M.
 *
 * Depth multiplier 1: four channels per step. A tap's four input and four weight bytes are split
 * by SXTB16 into halfword pairs and multiplied lane by lane (SMLABB / SMLATT). The input offset
 * is folded into a per-channel bias computed once (bias + offset * sum of the channel's taps), so
 * taps are raw int8 products. With the fast requantization (dsp_fast_requant_ok), in_c % 4 == 0
 * and windows up to 5x5, every output row runs on the row path (dw1_row: window rows copied into a
 * block padded with -offset, weights split once per row and channel group); otherwise pixel by
 * pixel (dw1_pixel), border pixels visiting only their valid taps with the offset added per tap.
 * One input channel: conv_s8.c (depthwise_s8_c1). Other multipliers: per pixel, a row of int32
 * accumulators swept once per valid tap. 1-D windows, multipliers above 1 and wide 3x3 stride-1
 * rows: two taps per SMLAD over int16 channel planes (depthwise_s8_pair, below).
 */
#include <limits.h>

#include "dsp.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8

/* Valid taps [*t0, *t1) of a window starting at i0 (dilation d) over an input of n. */
static void tap_range(int i0, int d, int f, int n, int *t0, int *t1) {
    int a = 0, z = f;
    while (a < f && i0 + a * d < 0) {
        ++a;
    }
    while (z > a && i0 + (z - 1) * d >= n) {
        --z;
    }
    *t0 = a;
    *t1 = z;
}

/* data: folded bias per channel, then a flag: dsp_out_fast is exact for this node. */
static size_t dw1_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * ((size_t)g->out_c + 1);
}

static void dw1_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    int32_t *folded = (int32_t *)data;
    const int C = g->out_c, taps = g->f_h * g->f_w;
    for (int c = 0; c < C; ++c) {
        uint32_t sum = 0;
        for (int t = 0; t < taps; ++t) {
            sum += (uint32_t)filter[(size_t)t * C + c];
        }
        folded[c] = (int32_t)((bias ? (uint32_t)bias[c] : 0u) + sum * (uint32_t)q->input_offset);
    }
    folded[C] = dsp_fast_requant_ok(q->shift, C, bias, taps);
}

/* The pixel path is the fallback (no fast requantization, or depth not a multiple of four, or a
 * window over DW1_MAX_TAPS taps): its requantization is the exact one, called. */
#define DW_OUT(acc, c) dsp_out_exact(acc, q->mult[c], q->shift[c], out_off, lo, hi)

/* One output pixel, all channels; taps [fy0, fy1) x [fx0, fx1). interior: base = folded bias and
 * raw products; else base = bias (or none) and products with the offset added. */
static void dw1_pixel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *in0, const int8_t *filter, const int32_t *base, int8_t *out, int fy0, int fy1, int fx0,
    int fx1, bool interior) {
    const int C = g->in_c;
    const int32_t off = q->input_offset, out_off = q->output_offset, lo = q->act_min, hi = q->act_max;
    const int32_t off2 = (int32_t)(((uint32_t)off & 0xffffu) * 0x10001u);
    const size_t row_step = (size_t)g->dil_h * g->in_w * C, col_step = (size_t)g->dil_w * C;
    int c = 0;
    for (; c + 4 <= C; c += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        if (base) {
            a0 = base[c];
            a1 = base[c + 1];
            a2 = base[c + 2];
            a3 = base[c + 3];
        }
        const int8_t *irow = in0 + (size_t)fy0 * row_step + (size_t)fx0 * col_step + c;
        const int8_t *wrow = filter + ((size_t)fy0 * g->f_w + fx0) * C + c;
        for (int fy = fy0; fy < fy1; ++fy, irow += row_step, wrow += (size_t)g->f_w * C) {
            const int8_t *ip = irow, *wp = wrow;
            for (int fx = fx0; fx < fx1; ++fx, ip += col_step, wp += C) {
                const int32_t x = dsp_ld32(ip), w = dsp_ld32(wp);
                int32_t xe = __sxtb16(x), xo = dsp_sxtb16_ror8(x);
                if (!interior) {
                    xe = __sadd16(xe, off2);
                    xo = __sadd16(xo, off2);
                }
                const int32_t we = __sxtb16(w), wo = dsp_sxtb16_ror8(w);
                a0 = __smlabb(xe, we, a0);
                a2 = __smlatt(xe, we, a2);
                a1 = __smlabb(xo, wo, a1);
                a3 = __smlatt(xo, wo, a3);
            }
        }
        out[c] = DW_OUT(a0, c);
        out[c + 1] = DW_OUT(a1, c + 1);
        out[c + 2] = DW_OUT(a2, c + 2);
        out[c + 3] = DW_OUT(a3, c + 3);
    }
    for (; c < C; ++c) {
        uint32_t acc = base ? (uint32_t)base[c] : 0u;
        const int32_t o = interior ? 0 : off;
        for (int fy = fy0; fy < fy1; ++fy) {
            for (int fx = fx0; fx < fx1; ++fx) {
                const int32_t x = in0[(size_t)fy * row_step + (size_t)fx * col_step + c];
                acc += (uint32_t)(filter[((size_t)fy * g->f_w + fx) * C + c] * (x + o));
            }
        }
        out[c] = DW_OUT((int32_t)acc, c);
    }
}

/* Windows of up to this many taps take the row path (dw1_row). */
#define DW1_MAX_TAPS 25   /* up to 5x5 */

/*
 * Output pixels [ox0, ox1) of one row, fast requantization, from in_row: the window rows, pixel
 * ox's window starting at column ox * stride_w, tap t at tap_off[t]. Channel groups outermost, so
 * a group's weights are split into halfword pairs once per row and its multipliers and shifts
 * loaded once; each pixel is then taps x (load, two SXTB16, four MACs).
 */
static inline __attribute__((always_inline)) void dw1_row_n(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *in_row, const int8_t *filter, const int32_t *folded, int8_t *out_row, int ox0, int ox1,
    const int32_t *tap_off, bool nine) {
    const int C = g->in_c, taps = nine ? 9 : g->f_h * g->f_w;
    const int32_t out_off = q->output_offset, lo = q->act_min, hi = q->act_max;
    const bool full = nine && lo == -128 && hi == 127;   /* specialized for 3x3 only */
    const int32_t c1 = 1 + 2 * out_off;
    const size_t px_step = (size_t)g->stride_w * C;
    int32_t wx[2 * DW1_MAX_TAPS];
    for (int c = 0; c + 4 <= C; c += 4) {
        for (int t = 0; t < taps; ++t) {
            const int32_t w = dsp_ld32(filter + (size_t)t * C + c);
            wx[2 * t] = __sxtb16(w);
            wx[2 * t + 1] = dsp_sxtb16_ror8(w);
        }
        int32_t m[4], r1[4];
        for (int i = 0; i < 4; ++i) {
            m[i] = q->mult[c + i];
            r1[i] = -q->shift[c + i] - 1;
        }
        const int8_t *ip = in_row + (size_t)ox0 * px_step + c;
        int8_t *op = out_row + (size_t)ox0 * C + c;
        for (int ox = ox0; ox < ox1; ++ox, ip += px_step, op += C) {
            int32_t a0 = folded[c], a1 = folded[c + 1], a2 = folded[c + 2], a3 = folded[c + 3];
#define DW1_TAP(t) do { \
                const int32_t x = dsp_ld32(ip + tap_off[t]); \
                const int32_t xe = __sxtb16(x), xo = dsp_sxtb16_ror8(x); \
                a0 = __smlabb(xe, wx[2 * (t)], a0); \
                a2 = __smlatt(xe, wx[2 * (t)], a2); \
                a1 = __smlabb(xo, wx[2 * (t) + 1], a1); \
                a3 = __smlatt(xo, wx[2 * (t) + 1], a3); \
            } while (0)
            if (nine) {
                _Pragma("GCC unroll 9")
                for (int t = 0; t < 9; ++t) {
                    DW1_TAP(t);
                }
            } else {
                for (int t = 0; t < taps; ++t) {
                    DW1_TAP(t);
                }
            }
#undef DW1_TAP
            if (full) {
                op[0] = dsp_out_fast_r(a0, m[0], r1[0], c1, lo, hi, true);
                op[1] = dsp_out_fast_r(a1, m[1], r1[1], c1, lo, hi, true);
                op[2] = dsp_out_fast_r(a2, m[2], r1[2], c1, lo, hi, true);
                op[3] = dsp_out_fast_r(a3, m[3], r1[3], c1, lo, hi, true);
            } else {
                op[0] = dsp_out_fast_r(a0, m[0], r1[0], c1, lo, hi, false);
                op[1] = dsp_out_fast_r(a1, m[1], r1[1], c1, lo, hi, false);
                op[2] = dsp_out_fast_r(a2, m[2], r1[2], c1, lo, hi, false);
                op[3] = dsp_out_fast_r(a3, m[3], r1[3], c1, lo, hi, false);
            }
        }
    }
}

/* 3x3, the common depthwise window, with its tap loop unrolled: each tap is then a load of its
 * offset and weights from the stack, one input load and six DSP instructions, no loop counter. */
static void dw1_row(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *in_row, const int8_t *filter,
    const int32_t *folded, int8_t *out_row, int ox0, int ox1, const int32_t *tap_off) {
    if (g->f_h * g->f_w == 9) {
        dw1_row_n(g, q, in_row, filter, folded, out_row, ox0, ox1, tap_off, true);
    } else {
        dw1_row_n(g, q, in_row, filter, folded, out_row, ox0, ox1, tap_off, false);
    }
}

/* The row path's padded window block: f_h rows of the padded width every output row reads. */
static int dw1_block_w(const mn_conv_geom_t *g) {
    return (g->out_w - 1) * g->stride_w + (g->f_w - 1) * g->dil_w + 1;
}

static bool dw1_rows(const mn_conv_geom_t *g) {
    return g->f_h * g->f_w <= DW1_MAX_TAPS && g->in_c % 4 == 0;
}

static size_t dw1_scratch_bytes(const mn_conv_geom_t *g) {
    return dw1_rows(g) ? (size_t)g->f_h * dw1_block_w(g) * g->in_c : 0;
}

/*
 * With fast requantization, every output row runs on the row path: the f_h input rows its
 * windows cover are copied into a block padded with -input_offset, which contributes exactly 0
 * after the offset (folded into the bias), so border pixels need no special case.
 * Otherwise each pixel visits its valid taps (dw1_pixel).
 */
static void dw1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    const int32_t *const folded = (const int32_t *)buf->data;
    const int C = g->in_c;
    const bool fast = folded[C] != 0;
    const int bw = dw1_block_w(g);
    int32_t tap_off[DW1_MAX_TAPS];
    const bool rows = fast && dw1_rows(g);
    /* Undilated, the block is a ring: input row iy stays in slot iy mod f_h while later output
     * rows read it, so each input row is copied once, not f_h / stride_h times. */
    const bool ring = g->dil_h == 1;
    /* input columns [x0, x1) land at block columns [x0 + pad_w, ...) */
    const int x0 = 0, x1 = bw - g->pad_w < g->in_w ? bw - g->pad_w : g->in_w;
    const size_t row_bytes = (size_t)bw * C;
    int8_t *const block = (int8_t *)buf->scratch;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * g->in_h * g->in_w * C;
        int next = INT_MIN;   /* ring: input rows below this one are in the block */
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int8_t *out_row = output + (((size_t)b * g->out_h + oy) * g->out_w) * C;
            if (rows) {
                int32_t *toff = tap_off;
                for (int fy = 0; fy < g->f_h; ++fy) {
                    const int iy = iy0 + fy * g->dil_h;
                    const int slot = ring ? ((iy % g->f_h) + g->f_h) % g->f_h : fy;
                    for (int fx = 0; fx < g->f_w; ++fx) {
                        *toff++ = (slot * bw + fx * g->dil_w) * C;
                    }
                    if (ring && iy < next) {
                        continue;
                    }
                    int8_t *dst = block + (size_t)slot * row_bytes;
                    if (iy < 0 || iy >= g->in_h || x1 <= x0) {
                        memset(dst, (int8_t)-q->input_offset, row_bytes);
                        continue;
                    }
                    const size_t left = (size_t)g->pad_w * C, mid = (size_t)(x1 - x0) * C;
                    memset(dst, (int8_t)-q->input_offset, left);
                    memcpy(dst + left, in_b + (size_t)iy * g->in_w * C, mid);
                    memset(dst + left + mid, (int8_t)-q->input_offset, row_bytes - left - mid);
                }
                next = iy0 + g->f_h;
                dw1_row(g, q, block, filter, folded, out_row, 0, g->out_w, tap_off);
                continue;
            }
            int fy0, fy1;
            tap_range(iy0, g->dil_h, g->f_h, g->in_h, &fy0, &fy1);
            int8_t *out = out_row;
            for (int ox = 0; ox < g->out_w; ++ox, out += C) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int fx0, fx1;
                tap_range(ix0, g->dil_w, g->f_w, g->in_w, &fx0, &fx1);
                /* in0: the (possibly outside) input position of tap (0, 0); only valid taps are read */
                const int8_t *in0 = in_b + ((ptrdiff_t)iy0 * g->in_w + ix0) * C;
                const bool interior = fy0 == 0 && fy1 == g->f_h && fx0 == 0 && fx1 == g->f_w;
                dw1_pixel(g, q, in0, filter, interior ? folded : bias, out, fy0, fy1, fx0, fx1, interior);
            }
        }
    }
}

const mn_conv_s8_variant_t mn_dsp_depthwise_s8_mult1 = {
    "dsp.depthwise_s8_mult1", mn_dsp_depthwise_s8_mult1_fits, dw1_scratch_bytes, dw1_data_bytes, dw1_precompute, dw1_run,
};

/* ---- two taps per SMLAD (depthwise_s8_pair): channel planes of int16 ---------------------------
 *
 * The window rows an output row reads are expanded once into a ring of f_h slots, each one int16
 * plane per input channel (input offset added, padding 0), so that a window row's taps are
 * consecutive halfwords: taps (2k, 2k + 1) of output pixel ox are one (unaligned) word at
 * ox * stride_w + 2k, multiplied by the tap pair's weights (int16 pairs made once in prepare, an
 * odd last tap paired with 0) in one SMLAD. Per output channel and row the weights, multiplier
 * and shift are loop-invariant (3x3: six weight words in registers); each output is f_h *
 * ceil(f_w / 2) loads and SMLADs and one requantization. A 1-D window along H over a width of 1
 * (Kx1 on 1xTx1xC) is the same memory as 1xK over 1x1xTxC: run with H and W swapped.
 */

/* g with H and W swapped when the window runs along H over a width of one. */
static void pr_geom(const mn_conv_geom_t *g, mn_conv_geom_t *s) {
    *s = *g;
    if (g->in_w == 1 && g->out_w == 1 && g->f_w == 1 && g->pad_w == 0 && g->f_h > 1) {
        s->in_h = g->in_w;
        s->in_w = g->in_h;
        s->out_h = g->out_w;
        s->out_w = g->out_h;
        s->f_h = g->f_w;
        s->f_w = g->f_h;
        s->stride_h = g->stride_w;
        s->stride_w = g->stride_h;
        s->pad_h = g->pad_w;
        s->pad_w = g->pad_h;
        s->dil_h = g->dil_w;
        s->dil_w = g->dil_h;
    }
}

/* Halfwords per plane: the block's columns, one more for an odd last tap's pair, even. */
static int pr_plane(const mn_conv_geom_t *s) {
    const int bw = (s->out_w - 1) * s->stride_w + s->f_w + 1;
    return (bw + 1) & ~1;
}

static size_t pr_scratch_bytes(const mn_conv_geom_t *g) {
    mn_conv_geom_t s;
    pr_geom(g, &s);
    return sizeof(int16_t) * (size_t)s.f_h * s.in_c * pr_plane(&s);
}

/* data: flag (fast requantization exact), then per output channel its bias and f_h * P weight
 * pairs (P = ceil(f_w / 2)). */
static size_t pr_data_bytes(const mn_conv_geom_t *g) {
    mn_conv_geom_t s;
    pr_geom(g, &s);
    const int P = (s.f_w + 1) / 2;
    return sizeof(int32_t) * (1 + (size_t)s.out_c * (1 + (size_t)s.f_h * P));
}

static void pr_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    mn_conv_geom_t s;
    pr_geom(g, &s);
    const int P = (s.f_w + 1) / 2, OC = s.out_c;
    int32_t *d = (int32_t *)data;
    d[0] = dsp_fast_requant_ok(q->shift, OC, bias, s.f_h * s.f_w);
    int32_t *w = d + 1;
    for (int oc = 0; oc < OC; ++oc) {
        *w++ = bias ? bias[oc] : 0;
        for (int fy = 0; fy < s.f_h; ++fy) {
            for (int k = 0; k < P; ++k) {
                /* tap (fy, fx) of the swapped geometry is tap fy * f_w + fx of the filter either way:
                 * a swap happens only when one of the two dimensions is 1 */
                const int fx = 2 * k;
                const int32_t lo = filter[((size_t)fy * s.f_w + fx) * OC + oc];
                const int32_t hi = fx + 1 < s.f_w ? filter[((size_t)fy * s.f_w + fx + 1) * OC + oc] : 0;
                *w++ = (int32_t)(((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16));
            }
        }
    }
}

static inline void pr_st32(int16_t *p, uint32_t v) {
    memcpy(p, &v, 4);
}

/* Low halves of a and b as one word (PKHBT), high halves (PKHTB). */
static inline uint32_t pr_lo2(int32_t a, int32_t b) {
    return ((uint32_t)a & 0xffffu) | ((uint32_t)b << 16);
}

/* High half of a, low half of b: (a_hi b_lo). */
static inline uint32_t pr_hi2_lo(int32_t a, int32_t b) {
    return ((uint32_t)a >> 16) | ((uint32_t)b << 16);
}

static inline uint32_t pr_hi2(int32_t a, int32_t b) {
    return ((uint32_t)a >> 16) | ((uint32_t)b & 0xffff0000u);
}

static inline int32_t pr_sxtab16_ror8(int32_t a, int32_t x) {
    int32_t r;
    __asm("sxtab16 %0, %1, %2, ror #8" : "=r" (r) : "r" (a), "r" (x));
    return r;
}

/* Input row src (in_w pixels of C channels) into C planes of n halfwords at dst: columns
 * [pad, pad + in_w) the input plus offset, the rest 0. */
static void pr_expand_row(const int8_t *src, int16_t *dst, int C, int in_w, int pad, int n, int32_t off) {
    const int32_t off2 = (int32_t)(((uint32_t)off & 0xffffu) * 0x10001u);
    const int x1 = pad + in_w < n ? in_w : n - pad;   /* input columns [0, x1) are kept */
    if (x1 <= 0) {
        memset(dst, 0, sizeof(int16_t) * (size_t)C * n);
        return;
    }
    for (int c = 0; c < C; ++c) {
        int16_t *p = dst + (size_t)c * n;
        memset(p, 0, sizeof(int16_t) * (size_t)pad);
        memset(p + pad + x1, 0, sizeof(int16_t) * (size_t)(n - pad - x1));
    }
    int c = 0;
    for (; c + 4 <= C; c += 4) {
        const int8_t *sp = src + c;
        int16_t *p0 = dst + (size_t)c * n + pad, *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
        int x = 0;
        for (; x + 2 <= x1; x += 2, sp += 2 * C) {
            const int32_t a = dsp_ld32(sp), b = dsp_ld32(sp + C);
            const int32_t ae = __sxtab16(off2, a), be = __sxtab16(off2, b);
            const int32_t ao = pr_sxtab16_ror8(off2, a), bo = pr_sxtab16_ror8(off2, b);
            pr_st32(p0 + x, pr_lo2(ae, be));
            pr_st32(p2 + x, pr_hi2(ae, be));
            pr_st32(p1 + x, pr_lo2(ao, bo));
            pr_st32(p3 + x, pr_hi2(ao, bo));
        }
        if (x < x1) {
            p0[x] = (int16_t)(sp[0] + off);
            p1[x] = (int16_t)(sp[1] + off);
            p2[x] = (int16_t)(sp[2] + off);
            p3[x] = (int16_t)(sp[3] + off);
        }
    }
    for (; c < C; ++c) {
        int16_t *p = dst + (size_t)c * n + pad;
        const int8_t *sp = src + c;
        for (int x = 0; x < x1; ++x, sp += C) {
            p[x] = (int16_t)(*sp + off);
        }
    }
}

#define PR_MAX_FH 16   /* window rows held as plane pointers; taller windows: not this variant */

/* One output channel over one output row: rows[fy] its plane in window row fy, w its weight
 * pairs, FH / P the window (0: run-time fh / p), full / fast the requantization. */
static inline __attribute__((always_inline)) void pr_channel_row(const int16_t *const *rows, const int32_t *w,
    int32_t b, int8_t *op, int out_w, int stride, int step, int fh, int p, int FH, int P, int32_t mult,
    int shift, const mn_conv_quant_t *q, bool fast, bool full, bool odd3) {
    const int nh = FH ? FH : fh, np = P ? P : p;
    const int32_t out_off = q->output_offset, lo = q->act_min, hi = q->act_max, c1 = 1 + 2 * out_off;
    const int r1 = -shift - 1;
    if (FH == 1) {
        /* weights as locals: the int8 output stores could alias w, which would reload it per tap */
        int32_t wl[8];
        const int16_t *r = rows[0];
        if (P) {
            _Pragma("GCC unroll 8")
            for (int k = 0; k < P; ++k) {
                wl[k] = w[k];
            }
        }
        for (int8_t *const end = op + (ptrdiff_t)out_w * step; op != end; op += step, r += stride) {
            int32_t acc = b;
            _Pragma("GCC unroll 8")
            for (int k = 0; k < np; ++k) {
                acc = __smlad(dsp_ld32(r + 2 * k), P ? wl[k] : w[k], acc);
            }
            *op = fast ? dsp_out_fast_r(acc, mult, r1, c1, lo, hi, full)
                       : dsp_out_exact(acc, mult, shift, out_off, lo, hi);
        }
        return;
    }
    if (FH == 3 && P == 2 && odd3 && fast && stride == 1) {
        /* two outputs per pass, sharing each row's two loads: with L0 = (x0 x1), L2 = (x2 x3) and
         * the weight pairs W01 = (w0 w1), W12 = (w1 w2), output 0 is L0.W01 + x2 w2 (SMLAD, SMLABT)
         * and output 1 is x1 w0 + L2.W12 (SMLATB, SMLAD) */
        const int16_t *r0 = rows[0], *rr1 = rows[1], *r2 = rows[2];
        const int32_t a01 = w[0], b01 = w[2], c01 = w[4];
        const int32_t a12 = (int32_t)pr_hi2_lo(a01, w[1]), b12 = (int32_t)pr_hi2_lo(b01, w[3]);
        const int32_t c12 = (int32_t)pr_hi2_lo(c01, w[5]);
        int ox = 0;
        for (; ox + 2 <= out_w; ox += 2, op += 2 * step, r0 += 2, rr1 += 2, r2 += 2) {
            int32_t l0 = dsp_ld32(r0), l2 = dsp_ld32(r0 + 2);
            int32_t s0 = __smlad(l0, a01, b), s1 = __smlatb(l0, a01, b);
            s0 = __smlabt(l2, a12, s0);
            s1 = __smlad(l2, a12, s1);
            l0 = dsp_ld32(rr1);
            l2 = dsp_ld32(rr1 + 2);
            s0 = __smlad(l0, b01, s0);
            s1 = __smlatb(l0, b01, s1);
            s0 = __smlabt(l2, b12, s0);
            s1 = __smlad(l2, b12, s1);
            l0 = dsp_ld32(r2);
            l2 = dsp_ld32(r2 + 2);
            s0 = __smlad(l0, c01, s0);
            s1 = __smlatb(l0, c01, s1);
            s0 = __smlabt(l2, c12, s0);
            s1 = __smlad(l2, c12, s1);
            op[0] = dsp_out_fast_r(s0, mult, r1, c1, lo, hi, full);
            op[step] = dsp_out_fast_r(s1, mult, r1, c1, lo, hi, full);
        }
        if (ox < out_w) {
            int32_t acc = __smlad(dsp_ld32(r0), a01, b);
            acc = __smlad(dsp_ld32(r0 + 2), w[1], acc);
            acc = __smlad(dsp_ld32(rr1), b01, acc);
            acc = __smlad(dsp_ld32(rr1 + 2), w[3], acc);
            acc = __smlad(dsp_ld32(r2), c01, acc);
            acc = __smlad(dsp_ld32(r2 + 2), w[5], acc);
            *op = dsp_out_fast_r(acc, mult, r1, c1, lo, hi, full);
        }
        return;
    }
    if (FH == 3 && P == 2) {
        const int16_t *r0 = rows[0], *rr1 = rows[1], *r2 = rows[2];
        const int32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
        for (int ox = 0; ox < out_w; ++ox, op += step, r0 += stride, rr1 += stride, r2 += stride) {
            int32_t acc = __smlad(dsp_ld32(r0), w0, b);
            acc = __smlad(dsp_ld32(r0 + 2), w1, acc);
            acc = __smlad(dsp_ld32(rr1), w2, acc);
            acc = __smlad(dsp_ld32(rr1 + 2), w3, acc);
            acc = __smlad(dsp_ld32(r2), w4, acc);
            acc = __smlad(dsp_ld32(r2 + 2), w5, acc);
            *op = fast ? dsp_out_fast_r(acc, mult, r1, c1, lo, hi, full)
                       : dsp_out_exact(acc, mult, shift, out_off, lo, hi);
        }
        return;
    }
    for (int ox = 0; ox < out_w; ++ox, op += step) {
        const int x = ox * stride;
        int32_t acc = b;
        const int32_t *wp = w;
        for (int fy = 0; fy < nh; ++fy) {
            const int16_t *r = rows[fy] + x;
            _Pragma("GCC unroll 4")
            for (int k = 0; k < np; ++k) {
                acc = __smlad(dsp_ld32(r + 2 * k), *wp++, acc);
            }
        }
        *op = fast ? dsp_out_fast_r(acc, mult, r1, c1, lo, hi, full)
                   : dsp_out_exact(acc, mult, shift, out_off, lo, hi);
    }
}

/* One channel row, specialized (noinline: the loop gets every register; 3x3: its six weight
 * words, three row pointers and the requantization constants). */
typedef void (*pr_fn)(const int16_t *const *rows, const int32_t *w, int32_t b, int8_t *op, int out_w, int stride,
    int step, int fh, int p, int32_t mult, int shift, const mn_conv_quant_t *q);

#define PR_FN(name, FH, P, fast, full, odd3) \
    static __attribute__((noinline)) void name(const int16_t *const *rows, const int32_t *w, int32_t b, int8_t *op, \
        int out_w, int stride, int step, int fh, int p, int32_t mult, int shift, const mn_conv_quant_t *q) { \
        pr_channel_row(rows, w, b, op, out_w, stride, step, fh, p, FH, P, mult, shift, q, fast, full, odd3); \
    }
PR_FN(pr_3x3_full, 3, 2, true, true, true)
PR_FN(pr_3x3, 3, 2, true, false, true)
PR_FN(pr_3x4, 3, 2, true, false, false)
PR_FN(pr_5x5, 5, 3, true, false, false)
PR_FN(pr_1d_p1, 1, 1, true, false, false)
PR_FN(pr_1d_p2, 1, 2, true, false, false)
PR_FN(pr_1d_p3, 1, 3, true, false, false)
PR_FN(pr_1d_p4, 1, 4, true, false, false)
PR_FN(pr_1d_p5, 1, 5, true, false, false)
PR_FN(pr_1d_p1_full, 1, 1, true, true, false)
PR_FN(pr_1d_p2_full, 1, 2, true, true, false)
PR_FN(pr_1d_p3_full, 1, 3, true, true, false)
PR_FN(pr_1d_p4_full, 1, 4, true, true, false)
PR_FN(pr_1d_p5_full, 1, 5, true, true, false)
PR_FN(pr_1d, 1, 0, true, false, false)
PR_FN(pr_any, 0, 0, true, false, false)
PR_FN(pr_exact, 0, 0, false, false, false)
#undef PR_FN

static pr_fn pr_pick(const mn_conv_geom_t *s, const mn_conv_quant_t *q, bool fast) {
    static const pr_fn one_row[2][5] = {
        { pr_1d_p1, pr_1d_p2, pr_1d_p3, pr_1d_p4, pr_1d_p5 },
        { pr_1d_p1_full, pr_1d_p2_full, pr_1d_p3_full, pr_1d_p4_full, pr_1d_p5_full },
    };
    const int P = (s->f_w + 1) / 2;
    const bool full = q->act_min == -128 && q->act_max == 127;
    if (!fast) {
        return pr_exact;
    }
    if (s->f_h == 3 && s->f_w == 3) {   /* (odd3: the two-output pass needs no fourth tap) */
        return full ? pr_3x3_full : pr_3x3;
    }
    if (s->f_h == 3 && P == 2) {
        return pr_3x4;
    }
    if (s->f_h == 5 && P == 3) {
        return pr_5x5;
    }
    if (s->f_h == 1) {
        return P <= 5 ? one_row[full][P - 1] : pr_1d;
    }
    return pr_any;
}

/* Every output channel of one output row, slots[fy] window row fy's slot. */
static void pr_row(const mn_conv_geom_t *s, const mn_conv_quant_t *q, const int32_t *data, int16_t *const *slots,
    int n, int8_t *out_row) {
    const pr_fn fn = pr_pick(s, q, data[0] != 0);
    const int OC = s->out_c, dm = s->depth_mult, p = (s->f_w + 1) / 2, per = 1 + s->f_h * p;
    const int32_t *d = data + 1;
    const int16_t *rows[PR_MAX_FH];
    for (int oc = 0; oc < OC; ++oc, d += per) {
        const size_t plane = (size_t)(oc / dm) * n;
        for (int fy = 0; fy < s->f_h; ++fy) {
            rows[fy] = slots[fy] + plane;
        }
        fn(rows, d + 1, d[0], out_row + oc, s->out_w, s->stride_w, OC, s->f_h, p, q->mult[oc], q->shift[oc], q);
    }
}

static void pr_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)filter;
    (void)bias;
    mn_conv_geom_t s;
    pr_geom(g, &s);
    const int C = s.in_c, n = pr_plane(&s);
    const size_t slot_len = (size_t)C * n;
    int16_t *const block = (int16_t *)buf->scratch;
    int16_t *slots[PR_MAX_FH];
    /* Undilated, the slots are a ring: input row iy stays in slot iy mod f_h while later output
     * rows read it, so each input row is expanded once. */
    const bool ring = s.dil_h == 1;
    for (int b = 0; b < s.batches; ++b) {
        const int8_t *in_b = input + (size_t)b * s.in_h * s.in_w * C;
        int next = INT_MIN;
        for (int oy = 0; oy < s.out_h; ++oy) {
            const int iy0 = oy * s.stride_h - s.pad_h;
            for (int fy = 0; fy < s.f_h; ++fy) {
                const int iy = iy0 + fy * s.dil_h;
                const int slot = ring ? ((iy % s.f_h) + s.f_h) % s.f_h : fy;
                slots[fy] = block + (size_t)slot * slot_len;
                if (ring && iy < next) {
                    continue;
                }
                if (iy < 0 || iy >= s.in_h) {
                    memset(slots[fy], 0, sizeof(int16_t) * slot_len);
                } else {
                    pr_expand_row(in_b + (size_t)iy * s.in_w * C, slots[fy], C, s.in_w, s.pad_w, n, q->input_offset);
                }
            }
            next = iy0 + s.f_h;
            pr_row(&s, q, (const int32_t *)buf->data, slots, n, output + (((size_t)b * s.out_h + oy) * s.out_w) * s.out_c);
        }
    }
}

const mn_conv_s8_variant_t mn_dsp_depthwise_s8_pair = {
    "dsp.depthwise_s8_pair", mn_dsp_depthwise_s8_pair_fits, pr_scratch_bytes, pr_data_bytes, pr_precompute, pr_run,
};

/* ---- any depth multiplier: per pixel, a row of int32 accumulators (scratch) swept once per
 * valid tap, each input value loaded once for its depth_mult outputs ---- */

static size_t dw_scratch_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * (size_t)g->out_c;
}

static size_t dw_data_bytes(const mn_conv_geom_t *g) {
    (void)g;
    return sizeof(int32_t);
}

static void dw_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    (void)filter;
    *(int32_t *)data = dsp_fast_requant_ok(q->shift, g->out_c, bias, g->f_h * g->f_w);
}

static void dw_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    const int C = g->in_c, dm = g->depth_mult, out_c = g->out_c;
    const int32_t off = q->input_offset, out_off = q->output_offset, lo = q->act_min, hi = q->act_max;
    const bool fast = *(const int32_t *)buf->data != 0;
    uint32_t *const acc = (uint32_t *)buf->scratch;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * g->in_h * g->in_w * C;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int fy0, fy1;
            tap_range(iy0, g->dil_h, g->f_h, g->in_h, &fy0, &fy1);
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            for (int ox = 0; ox < g->out_w; ++ox, out += out_c) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int fx0, fx1;
                tap_range(ix0, g->dil_w, g->f_w, g->in_w, &fx0, &fx1);
                for (int oc = 0; oc < out_c; ++oc) {
                    acc[oc] = bias ? (uint32_t)bias[oc] : 0u;
                }
                for (int fy = fy0; fy < fy1; ++fy) {
                    for (int fx = fx0; fx < fx1; ++fx) {
                        const int8_t *ip = in_b + ((size_t)(iy0 + fy * g->dil_h) * g->in_w + (ix0 + fx * g->dil_w)) * C;
                        const int8_t *wp = filter + ((size_t)fy * g->f_w + fx) * out_c;
                        uint32_t *a = acc;
                        for (int ic = 0; ic < C; ++ic) {
                            const int32_t x = ip[ic] + off;
                            for (int m = 0; m < dm; ++m) {
                                *a++ += (uint32_t)(*wp++ * x);
                            }
                        }
                    }
                }
                for (int oc = 0; oc < out_c; ++oc) {
                    out[oc] = fast ? dsp_out_fast((int32_t)acc[oc], q->mult[oc], -q->shift[oc], out_off, lo, hi)
                                   : dsp_out_exact((int32_t)acc[oc], q->mult[oc], q->shift[oc], out_off, lo, hi);
                }
            }
        }
    }
}

const mn_conv_s8_variant_t mn_dsp_depthwise_s8 = {
    "dsp.depthwise_s8", mn_dsp_depthwise_s8_fits, dw_scratch_bytes, dw_data_bytes, dw_precompute, dw_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
