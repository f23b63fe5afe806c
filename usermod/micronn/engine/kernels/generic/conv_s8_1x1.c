/*
 * Portable int8 pointwise (1x1, unpadded, ungrouped) convolution: every output pixel is a matrix-
 * vector product over the input channels. The input offset is folded into the bias once, in
 * prepare: sum_c f[c] * (x[c] + off) = sum_c f[c] * x[c] + off * sum_c f[c], exact in wrapping
 * 32-bit arithmetic, so the inner loop is a plain int8 dot product. Pixels go in pairs along a
 * row, four output channels at a time, so each weight loaded serves two pixels.
 */
#include "../mn_variants.h"

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8

#include "generic.h"

static bool conv_1x1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return g->f_h == 1 && g->f_w == 1 && g->pad_h == 0 && g->pad_w == 0 && g->f_in_c == g->in_c
        && mn_variant_mults_ok(q->mult, g->out_c);
}

static size_t conv_1x1_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * (size_t)g->out_c;
}

static void conv_1x1_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    mn_generic_fold_offset(g->out_c, g->in_c, q->input_offset, filter, bias, (int32_t *)data);
}

static void conv_1x1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int in_c = g->in_c, out_c = g->out_c;
    const int32_t *const folded = (const int32_t *)buf->data;
    const mn_generic_requant_t rq = { q->mult, q->shift, q->output_offset, q->act_min, q->act_max };
    for (int b = 0; b < g->batches; ++b) {
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int8_t *row = input + (((size_t)b * g->in_h + (size_t)oy * g->stride_h) * g->in_w) * in_c;
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            const size_t step = (size_t)g->stride_w * in_c;
            int ox = 0;
            for (; ox + 2 <= g->out_w; ox += 2) {
                const int8_t *px = row + (size_t)ox * step;
                mn_generic_matvec2_s8(px, px + step, filter, folded, in_c, out_c, &rq, out, out + out_c);
                out += 2 * out_c;
            }
            if (ox < g->out_w) {
                mn_generic_matvec_s8(row + (size_t)ox * step, filter, folded, in_c, out_c, &rq, out);
            }
        }
    }
}

const mn_conv_s8_variant_t mn_generic_conv_s8_1x1 = {
    "generic.conv_s8_1x1", conv_1x1_fits, NULL, conv_1x1_data_bytes, conv_1x1_precompute, conv_1x1_run,
};

#endif /* MICRONN_OP_CONV_2D */
