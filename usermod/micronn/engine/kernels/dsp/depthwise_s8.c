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
 * accumulators swept once per valid tap.
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
