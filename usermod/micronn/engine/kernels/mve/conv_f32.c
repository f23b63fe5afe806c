/*
 * Helium float32 convolution. Pointwise (1x1, unpadded, ungrouped): one matrix product per output
 * row (mn_mve_gemm_f32). Any other shape: the generic backend's walk over each pixel's valid taps
 * (a filter row's valid taps are one contiguous run when ungrouped and not dilated horizontally)
 * with Helium dot products, so it is listed only when the generic backend is compiled in.
 */
#include "mve.h"

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_FLOAT32 && (__ARM_FEATURE_MVE & 2)

static void conv_1x1_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int in_c = g->in_c, out_c = g->out_c;
    for (int b = 0; b < g->batches; ++b) {
        for (int oy = 0; oy < g->out_h; ++oy) {
            const float *row = input + (((size_t)b * g->in_h + (size_t)oy * g->stride_h) * g->in_w) * in_c;
            float *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            mn_mve_gemm_f32(row, (size_t)g->stride_w * in_c, g->out_w, filter, in_c, out_c, bias, act_min, act_max,
                out);
        }
    }
}

const mn_conv_f32_variant_t mn_mve_conv_f32_1x1 = {
    "mve.conv_f32_1x1", mn_mve_conv_f32_1x1_fits, NULL, conv_1x1_run,
};

#if MICRONN_KERNELS_GENERIC
#include "../generic/generic.h"

static void conv_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input, const float *filter,
    const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    static const mn_generic_dots_f32_t dots = { mn_mve_dot4_f32, mn_mve_dot_f32 };
    mn_generic_conv_f32_taps(g, act_min, act_max, input, filter, bias, output, &dots);
}

const mn_conv_f32_variant_t mn_mve_conv_f32 = {
    "mve.conv_f32", mn_mve_conv_f32_fits, NULL, conv_run,
};
#endif /* MICRONN_KERNELS_GENERIC */

#endif /* MICRONN_OP_CONV_2D && MVE float */
