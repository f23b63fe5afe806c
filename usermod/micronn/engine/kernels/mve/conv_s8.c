/*
 * Helium int8 CONV_2D (ungrouped): every output pixel is a matrix-vector product of the filter
 * [out_c][K] with a K-vector of input, four output channels per pass over the input vector
 * (mn_mve_matvec). The input offset is folded into the bias in prepare, exact in wrapping
 * arithmetic: sum_k f[k] * (x[k] + off) = sum_k f[k] * x[k] + off * sum_k f[k].
 *   1x1 unpadded: the K-vector is the input pixel itself (K = in_c).
 *   im2col: any filter/stride/padding/dilation; the pixel's receptive field is gathered into
 *   scratch (K = f_h * f_w * in_c), taps outside the input set to the input zero point, whose
 *   offset-corrected value x + off is 0, exactly the reference's skipped tap.
 */
#include "mve.h"

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8

static size_t conv_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * (size_t)g->out_c;
}

static void conv_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    mn_mve_fold_offset(g->out_c, mn_mve_conv_k(g), q->input_offset, filter, bias, (int32_t *)data);
}

static void conv_1x1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int in_c = g->in_c, out_c = g->out_c;
    const size_t px_step = (size_t)g->stride_w * in_c;
    const int32_t *const folded = (const int32_t *)buf->data;
    const bool left = mn_mve_any_left(q->shift, out_c);
    for (int b = 0; b < g->batches; ++b) {
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int8_t *px = input + (((size_t)b * g->in_h + (size_t)oy * g->stride_h) * g->in_w) * in_c;
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            if (in_c <= 16) {
                mn_mve_matmul_short(px, px_step, g->out_w, filter, folded, in_c, out_c, q, out, (size_t)out_c);
                continue;
            }
            for (int ox = 0; ox < g->out_w; ++ox) {
                mn_mve_matvec(px, filter, folded, in_c, out_c, q, out, left);
                px += px_step;
                out += out_c;
            }
        }
    }
}

const mn_conv_s8_variant_t mn_mve_conv_s8_1x1 = {
    "mve.conv_s8_1x1", mn_mve_conv_s8_1x1_fits, NULL, conv_data_bytes, conv_precompute, conv_1x1_run,
};

static size_t conv_im2col_scratch_bytes(const mn_conv_geom_t *g) {
    return (size_t)mn_mve_conv_k(g);
}

static void conv_im2col_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    mn_mve_conv_im2col(g, q, input, filter, (const int32_t *)buf->data, (int8_t *)buf->scratch, output);
}

const mn_conv_s8_variant_t mn_mve_conv_s8_im2col = {
    "mve.conv_s8_im2col", mn_mve_conv_s8_im2col_fits, conv_im2col_scratch_bytes, conv_data_bytes, conv_precompute,
    conv_im2col_run,
};

#endif /* MICRONN_OP_CONV_2D */
