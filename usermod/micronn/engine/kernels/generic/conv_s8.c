/*
 * Portable int8 convolution, any filter size, stride, padding, dilation and groups. Interior
 * pixels use a bias with the input offset folded in at prepare, so each filter row (or tap) is a
 * plain int8 dot product; border pixels add the offset for their valid taps only. With one group
 * and no horizontal dilation a filter row is contiguous in the input, so it is one dot product.
 */
#include "generic.h"

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8

static bool conv_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return mn_variant_mults_ok(q->mult, g->out_c);
}

static size_t conv_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * (size_t)g->out_c;
}

static void conv_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    mn_generic_fold_offset(g->out_c, g->f_h * g->f_w * g->f_in_c, q->input_offset, filter, bias, (int32_t *)data);
}

/* sum over taps [fx0, fx1) of row fy of filter f_oc: dot with the input (+ offset * weights sum on
 * border pixels). x points at the input of tap fx0. */
static uint32_t conv_row(const mn_conv_geom_t *g, const int8_t *x, const int8_t *w, int fx0, int fx1,
    int32_t off, bool border) {
    uint32_t acc = 0;
    if (g->dil_w == 1 && g->f_in_c == g->in_c) {
        const int n = (fx1 - fx0) * g->in_c;
        acc = (uint32_t)mn_generic_dot_s8(x, w, n);
        if (border) {
            acc += (uint32_t)mn_generic_sum_s8(w, n) * (uint32_t)off;
        }
        return acc;
    }
    for (int fx = fx0; fx < fx1; ++fx) {
        acc += (uint32_t)mn_generic_dot_s8(x, w, g->f_in_c);
        if (border) {
            acc += (uint32_t)mn_generic_sum_s8(w, g->f_in_c) * (uint32_t)off;
        }
        x += (size_t)g->dil_w * g->in_c;
        w += g->f_in_c;
    }
    return acc;
}

static void conv_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    const mn_generic_requant_t rq = { q->mult, q->shift, q->output_offset, q->act_min, q->act_max };
    const int32_t *const folded = (const int32_t *)buf->data;
    const int32_t off = q->input_offset;
    const int per_group = g->out_c / (g->in_c / g->f_in_c);
    const size_t f_size = (size_t)g->f_h * g->f_w * g->f_in_c;
    int8_t *out = output;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * g->in_h * g->in_w * g->in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int fy0, fy1;
            mn_generic_taps(iy0, g->dil_h, g->f_h, g->in_h, &fy0, &fy1);
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int fx0, fx1;
                mn_generic_taps(ix0, g->dil_w, g->f_w, g->in_w, &fx0, &fx1);
                const bool border = fy0 > 0 || fy1 < g->f_h || fx0 > 0 || fx1 < g->f_w;
                for (int oc = 0; oc < g->out_c; ++oc) {
                    const int c0 = (oc / per_group) * g->f_in_c;
                    const int8_t *f_oc = filter + (size_t)oc * f_size;
                    uint32_t acc = border ? (bias ? (uint32_t)bias[oc] : 0u) : (uint32_t)folded[oc];
                    for (int fy = fy0; fy < fy1; ++fy) {
                        const int iy = iy0 + g->dil_h * fy;
                        const int8_t *x = in_b + ((size_t)iy * g->in_w + ix0 + g->dil_w * fx0) * g->in_c + c0;
                        acc += conv_row(g, x, f_oc + ((size_t)fy * g->f_w + fx0) * g->f_in_c, fx0, fx1, off, border);
                    }
                    out[oc] = mn_generic_out(&rq, oc, acc);
                }
                out += g->out_c;
            }
        }
    }
}

const mn_conv_s8_variant_t mn_generic_conv_s8 = {
    "generic.conv_s8", conv_fits, NULL, conv_data_bytes, conv_precompute, conv_run,
};

#endif /* MICRONN_OP_CONV_2D */
