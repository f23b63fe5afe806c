/*
 * Helium float32 depthwise convolution, depth multiplier 1: input and filter channels are
 * contiguous, so four channels per vector (tail predicated), over each pixel's valid taps only.
 * Each output sums its taps in the reference's order (fused multiply-add).
 */
#include "mve.h"
#include "../generic/generic.h"   /* mn_generic_taps (inline) */

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_FLOAT32 && (__ARM_FEATURE_MVE & 2)

static void dw_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input, const float *filter,
    const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int c_n = g->in_c;
    const size_t row_step = (size_t)g->dil_h * g->in_w * c_n, tap_step = (size_t)g->dil_w * c_n;
    const float32x4_t lo = vdupq_n_f32(act_min), hi = vdupq_n_f32(act_max);
    float *out = output;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->in_h * g->in_w * c_n;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int row_y0, row_y1;
            mn_generic_taps(iy0, g->dil_h, g->f_h, g->in_h, &row_y0, &row_y1);
            for (int ox = 0; ox < g->out_w; ++ox, out += c_n) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int x0, x1, y0 = row_y0, y1 = row_y1;   /* per pixel: the reset below must not leak */
                mn_generic_taps(ix0, g->dil_w, g->f_w, g->in_w, &x0, &x1);
                if (y0 == y1 || x0 == x1) {
                    x0 = x1 = y0 = y1 = 0;   /* no valid tap: keeps the pointers below in range */
                }
                const float *px = in_b + ((size_t)(iy0 + y0 * g->dil_h) * g->in_w + ix0 + x0 * g->dil_w) * c_n;
                for (int c = 0; c < c_n; c += 4) {
                    const mve_pred16_t p = vctp32q((uint32_t)(c_n - c));
                    float32x4_t acc = vdupq_n_f32(0.0f);
                    const float *xr = px + c;
                    for (int fy = y0; fy < y1; ++fy, xr += row_step) {
                        const float *x = xr, *w = filter + ((size_t)fy * g->f_w + x0) * c_n + c;
                        for (int fx = x0; fx < x1; ++fx, x += tap_step, w += c_n) {
                            acc = vfmaq_f32(acc, vldrwq_z_f32(x, p), vldrwq_z_f32(w, p));
                        }
                    }
                    if (bias) {
                        acc = vaddq_f32(acc, vldrwq_z_f32(bias + c, p));
                    }
                    vstrwq_p_f32(out + c, mn_mve_clamp_f32(acc, lo, hi), p);
                }
            }
        }
    }
}

const mn_conv_f32_variant_t mn_mve_depthwise_f32_m1 = {
    "mve.depthwise_f32_m1", mn_mve_depthwise_f32_m1_fits, NULL, dw_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D && MVE float */
