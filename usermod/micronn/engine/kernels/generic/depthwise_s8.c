/*
 * Portable int8 depthwise convolution, any filter size, stride, dilation and depth multiplier:
 * the valid tap range of each output pixel is computed once (no per-tap bounds checks), and with
 * multiplier 1 four channels share each tap's loop, their accumulators in registers.
 */
#include "generic.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8

static bool dw_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return mn_variant_mults_ok(q->mult, g->out_c);
}

/* One output pixel: taps [fy0, fy1) x [fx0, fx1) at input rows iy0 + dil_h * fy, columns
 * ix0 + dil_w * fx of image `in`. */
typedef struct {
    const int8_t *in;
    int iy0, ix0, fy0, fy1, fx0, fx1;
} dw_pixel_t;

static void dw_pixel_m1(const mn_conv_geom_t *g, const dw_pixel_t *px, int32_t off, const int8_t *filter,
    const int32_t *bias, const mn_generic_requant_t *rq, int8_t *out) {
    const int in_w = g->in_w, c_n = g->in_c, f_w = g->f_w, dil_h = g->dil_h, dil_w = g->dil_w;
    int c = 0;
    for (; c + 4 <= c_n; c += 4) {
        uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        if (bias) {
            a0 = (uint32_t)bias[c], a1 = (uint32_t)bias[c + 1], a2 = (uint32_t)bias[c + 2], a3 = (uint32_t)bias[c + 3];
        }
        for (int fy = px->fy0; fy < px->fy1; ++fy) {
            const int8_t *x = px->in + ((size_t)(px->iy0 + dil_h * fy) * in_w + px->ix0 + dil_w * px->fx0) * c_n + c;
            const int8_t *w = filter + ((size_t)fy * f_w + px->fx0) * c_n + c;
            for (int fx = px->fx0; fx < px->fx1; ++fx) {
                a0 += (uint32_t)(w[0] * (x[0] + off));
                a1 += (uint32_t)(w[1] * (x[1] + off));
                a2 += (uint32_t)(w[2] * (x[2] + off));
                a3 += (uint32_t)(w[3] * (x[3] + off));
                x += (size_t)dil_w * c_n;
                w += c_n;
            }
        }
        out[c] = mn_generic_out(rq, c, a0);
        out[c + 1] = mn_generic_out(rq, c + 1, a1);
        out[c + 2] = mn_generic_out(rq, c + 2, a2);
        out[c + 3] = mn_generic_out(rq, c + 3, a3);
    }
    for (; c < c_n; ++c) {
        uint32_t a = bias ? (uint32_t)bias[c] : 0u;
        for (int fy = px->fy0; fy < px->fy1; ++fy) {
            for (int fx = px->fx0; fx < px->fx1; ++fx) {
                const int32_t x = px->in[((size_t)(px->iy0 + dil_h * fy) * in_w + px->ix0 + dil_w * fx) * c_n + c];
                a += (uint32_t)(filter[((size_t)fy * f_w + fx) * c_n + c] * (x + off));
            }
        }
        out[c] = mn_generic_out(rq, c, a);
    }
}

/* Depth multiplier > 1: taps outside, so each input value feeds its dm output channels, whose
 * accumulators live in scratch. */
static void dw_pixel_multiplier(const mn_conv_geom_t *g, const dw_pixel_t *px, int32_t off, const int8_t *filter,
    const int32_t *bias, const mn_generic_requant_t *rq, uint32_t *acc, int8_t *out) {
    const int in_w = g->in_w, in_c = g->in_c, out_c = g->out_c, dm = g->depth_mult;
    for (int oc = 0; oc < out_c; ++oc) {
        acc[oc] = bias ? (uint32_t)bias[oc] : 0u;
    }
    for (int fy = px->fy0; fy < px->fy1; ++fy) {
        for (int fx = px->fx0; fx < px->fx1; ++fx) {
            const int8_t *x = px->in + ((size_t)(px->iy0 + g->dil_h * fy) * in_w + px->ix0 + g->dil_w * fx) * in_c;
            const int8_t *w = filter + ((size_t)fy * g->f_w + fx) * out_c;
            uint32_t *a = acc;
            for (int ic = 0; ic < in_c; ++ic) {
                const int32_t v = x[ic] + off;
                for (int k = 0; k < dm; ++k) {
                    a[k] += (uint32_t)(w[k] * v);
                }
                a += dm;
                w += dm;
            }
        }
    }
    for (int oc = 0; oc < out_c; ++oc) {
        out[oc] = mn_generic_out(rq, oc, acc[oc]);
    }
}

static size_t dw_scratch_bytes(const mn_conv_geom_t *g) {
    return g->depth_mult > 1 ? sizeof(uint32_t) * (size_t)g->out_c : 0;
}

static void dw_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    const mn_generic_requant_t rq = { q->mult, q->shift, q->output_offset, q->act_min, q->act_max };
    const int32_t off = q->input_offset;
    dw_pixel_t px;
    for (int b = 0; b < g->batches; ++b) {
        px.in = input + (size_t)b * g->in_h * g->in_w * g->in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            px.iy0 = oy * g->stride_h - g->pad_h;
            mn_generic_taps(px.iy0, g->dil_h, g->f_h, g->in_h, &px.fy0, &px.fy1);
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * g->out_c;
            for (int ox = 0; ox < g->out_w; ++ox) {
                px.ix0 = ox * g->stride_w - g->pad_w;
                mn_generic_taps(px.ix0, g->dil_w, g->f_w, g->in_w, &px.fx0, &px.fx1);
                if (g->depth_mult == 1) {
                    dw_pixel_m1(g, &px, off, filter, bias, &rq, out);
                } else {
                    dw_pixel_multiplier(g, &px, off, filter, bias, &rq, (uint32_t *)buf->scratch, out);
                }
                out += g->out_c;
            }
        }
    }
}

const mn_conv_s8_variant_t mn_generic_depthwise_s8 = {
    "generic.depthwise_s8", dw_fits, dw_scratch_bytes, NULL, NULL, dw_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
