/*
 * CONV_2D int8 on Armv7E-M: partial im2col plus a blocked SMLAD matrix product. Two output pixels
 * at a time have their receptive fields expanded into int16 columns (input offset added, padding
 * as zeros, so it contributes nothing, like the reference's skipped taps); each weight row then
 * meets both columns, two output channels per pass (dsp_mac_pair_2x2: every loaded word feeds two
 * SMLADs). A 1x1 unpadded convolution is the same with one tap per column: a straight expansion
 * of the pixel, no bounds checks. Requantization runs once per output, outside the MAC loops.
 */
#include "dsp.h"

#if (MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D) && MICRONN_TYPE_INT8

/* A window of several taps is gathered as int8 first (padding as -offset, which expands to 0). */
static bool conv_gathers(const mn_conv_geom_t *g) {
    return g->f_h * g->f_w > 1 || g->pad_h || g->pad_w;
}

static size_t conv_scratch_bytes(const mn_conv_geom_t *g) {
    const size_t k = (size_t)g->f_h * g->f_w * g->in_c;
    return 2 * k * sizeof(int16_t) + (conv_gathers(g) ? k : 0);
}

/* memcpy, without the call for the few bytes of a thin layer's window row */
static inline void copy_bytes(int8_t *dst, const int8_t *src, int n) {
    if (n >= 16) {
        memcpy(dst, src, (size_t)n);
        return;
    }
    while (n--) {
        *dst++ = *src++;
    }
}

/* Column `which` of the pair: output pixel (oy, ox)'s K = f_h * f_w * in_c inputs plus offset. */
static void conv_column(const mn_conv_geom_t *g, const int8_t *in_b, int p, int32_t off, int16_t *pair,
    int which, int8_t *patch) {
    const int C = g->in_c, oy = p / g->out_w, ox = p % g->out_w;
    const int iy0 = oy * g->stride_h - g->pad_h, ix0 = ox * g->stride_w - g->pad_w;
    if (!patch) {   /* 1x1, unpadded: the pixel itself */
        dsp_expand_pair(in_b + ((size_t)iy0 * g->in_w + ix0) * C, pair, which, C, off);
        return;
    }
    const int row_bytes = g->f_w * C;
    const bool row_contiguous = g->dil_w == 1 && ix0 >= 0 && ix0 + g->f_w <= g->in_w;
    int8_t *dst = patch;
    for (int fy = 0; fy < g->f_h; ++fy) {
        const int iy = iy0 + fy * g->dil_h;
        if (iy < 0 || iy >= g->in_h) {
            memset(dst, (int8_t)-off, (size_t)row_bytes);   /* |off| <= 128: fits int8 */
            dst += row_bytes;
        } else if (row_contiguous) {   /* the common interior case: one copy per filter row */
            copy_bytes(dst, in_b + ((size_t)iy * g->in_w + ix0) * C, row_bytes);
            dst += row_bytes;
        } else {
            for (int fx = 0; fx < g->f_w; ++fx, dst += C) {
                const int ix = ix0 + fx * g->dil_w;
                if (ix >= 0 && ix < g->in_w) {
                    copy_bytes(dst, in_b + ((size_t)iy * g->in_w + ix) * C, C);
                } else {
                    memset(dst, (int8_t)-off, (size_t)C);
                }
            }
        }
    }
    dsp_expand_pair(patch, pair, which, (int)(dst - patch), off);
}

/* The output channel loop for one pixel pair; fast picks the requantization (dsp_out_fast_r, else
 * the exact one, called), full the clamp (int8 range only). Inlined with constants for the common
 * case, once more with runtime flags for the rest. */
static inline __attribute__((always_inline)) void conv_pair(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int16_t *pair, const int8_t *filter, const int32_t *bias, int8_t *o0, bool two, bool fast, bool full) {
    const int K = g->f_h * g->f_w * g->in_c, out_c = g->out_c;
    const int32_t out_off = q->output_offset, lo = q->act_min, hi = q->act_max, c1 = 1 + 2 * out_off;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    int8_t *const o1 = o0 + out_c;
    const int8_t *w = filter;
#define CONV_OUT(acc, m, s) (fast ? dsp_out_fast_r(acc, m, ~(s), c1, lo, hi, full) \
                                 : dsp_out_exact(acc, m, s, out_off, lo, hi))
    int oc = 0;
    for (; oc + 2 <= out_c; oc += 2, w += 2 * K) {
        const int32_t b0 = bias ? bias[oc] : 0, b1 = bias ? bias[oc + 1] : 0;
        int32_t acc[4] = { b0, b1, b0, b1 };
        dsp_mac_pair_2x2(pair, w, w + K, K, acc);
        const int32_t m0 = mult[oc], m1 = mult[oc + 1];
        const int s0 = shift[oc], s1 = shift[oc + 1];
        o0[oc] = CONV_OUT(acc[0], m0, s0);
        o0[oc + 1] = CONV_OUT(acc[1], m1, s1);
        if (two) {
            o1[oc] = CONV_OUT(acc[2], m0, s0);
            o1[oc + 1] = CONV_OUT(acc[3], m1, s1);
        }
    }
    if (oc < out_c) {
        const int32_t b0 = bias ? bias[oc] : 0;
        int32_t acc[2] = { b0, b0 };
        dsp_mac_pair_2x1(pair, w, K, acc);
        o0[oc] = CONV_OUT(acc[0], mult[oc], shift[oc]);
        if (two) {
            o1[oc] = CONV_OUT(acc[1], mult[oc], shift[oc]);
        }
    }
#undef CONV_OUT
}

/* The whole convolution (ungrouped, filter [out_c][f_h][f_w][in_c]); fast: dsp_out_fast is exact. */
static void conv_gemm(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, int16_t *pair, bool fast) {
    const int K = g->f_h * g->f_w * g->in_c, out_c = g->out_c;
    const int npx = g->out_h * g->out_w;
    const int32_t off = q->input_offset;
    const bool full = q->act_min == -128 && q->act_max == 127;
    int8_t *const patch = conv_gathers(g) ? (int8_t *)(pair + 2 * K) : NULL;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * g->in_h * g->in_w * g->in_c;
        int8_t *out_b = output + (size_t)b * npx * out_c;
        for (int p = 0; p < npx; p += 2) {
            /* an odd last pixel is computed twice, its copy discarded */
            const bool two = p + 1 < npx;
            conv_column(g, in_b, p, off, pair, 0, patch);
            conv_column(g, in_b, two ? p + 1 : p, off, pair, 1, patch);
            int8_t *const o0 = out_b + (size_t)p * out_c;
            /* the common case (no clamp beyond int8) specialized; the rest share one copy */
            if (fast && full) {
                conv_pair(g, q, pair, filter, bias, o0, two, true, true);
            } else {
                conv_pair(g, q, pair, filter, bias, o0, two, fast, false);
            }
        }
    }
}

#endif /* MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D */

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8

/* data: one int32, nonzero when dsp_out_fast is exact for this node. */
static size_t conv_data_bytes(const mn_conv_geom_t *g) {
    (void)g;
    return sizeof(int32_t);
}

static void conv_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    (void)filter;
    *(int32_t *)data = dsp_fast_requant_ok(q->shift, g->out_c, bias, g->f_h * g->f_w * g->in_c);
}

static void conv_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    conv_gemm(g, q, input, filter, bias, output, (int16_t *)buf->scratch, *(const int32_t *)buf->data != 0);
}

const mn_conv_s8_variant_t mn_dsp_conv_s8 = {
    "dsp.conv_s8", mn_dsp_conv_s8_fits, conv_scratch_bytes, conv_data_bytes, conv_precompute, conv_run,
};

#endif /* MICRONN_OP_CONV_2D */

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8

/*
 * DEPTHWISE_CONV_2D with one input channel (a first layer on a grayscale image, any depth
 * multiplier) is a convolution with in_c = 1 and out_c = depth_mult whose filter is stored
 * transposed ([taps][out_c] instead of [out_c][taps]): prepare keeps the transposed copy (taps *
 * out_c bytes) and it runs as conv_s8.
 */
static size_t dwc1_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) + (size_t)g->f_h * g->f_w * g->out_c;
}

static void dwc1_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    const int taps = g->f_h * g->f_w, out_c = g->out_c;
    int8_t *t = (int8_t *)data + sizeof(int32_t);
    *(int32_t *)data = dsp_fast_requant_ok(q->shift, out_c, bias, taps);
    for (int oc = 0; oc < out_c; ++oc) {
        for (int k = 0; k < taps; ++k) {
            t[oc * taps + k] = filter[k * out_c + oc];
        }
    }
}

static void dwc1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)filter;   /* transposed into buf->data */
    mn_conv_geom_t cg = *g;
    cg.f_in_c = 1;
    conv_gemm(&cg, q, input, (const int8_t *)buf->data + sizeof(int32_t), bias, output, (int16_t *)buf->scratch,
        *(const int32_t *)buf->data != 0);
}

const mn_conv_s8_variant_t mn_dsp_depthwise_s8_c1 = {
    "dsp.depthwise_s8_c1", mn_dsp_depthwise_s8_c1_fits, conv_scratch_bytes, dwc1_data_bytes, dwc1_precompute, dwc1_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
