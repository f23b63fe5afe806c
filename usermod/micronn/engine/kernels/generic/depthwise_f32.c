/*
 * Portable float32 depthwise convolution over each pixel's valid taps only. With depth multiplier 1
 * input and filter channels are contiguous, so four channels are accumulated per step; other
 * multipliers go channel by channel. Each output's terms are summed in the reference's order.
 */
#include "generic.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_FLOAT32

static bool dw_fits(const mn_conv_geom_t *g) {
    (void)g;
    return true;
}

static void dw_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input, const float *filter,
    const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int in_c = g->in_c, out_c = g->out_c, dm = g->depth_mult;
    const size_t row_step = (size_t)g->dil_h * g->in_w * in_c, tap_step = (size_t)g->dil_w * in_c;
    float *out = output;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->in_h * g->in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int y0, y1;
            mn_generic_taps(iy0, g->dil_h, g->f_h, g->in_h, &y0, &y1);
            for (int ox = 0; ox < g->out_w; ++ox, out += out_c) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int x0, x1;
                mn_generic_taps(ix0, g->dil_w, g->f_w, g->in_w, &x0, &x1);
                const float *px = in_b + ((size_t)(iy0 + y0 * g->dil_h) * g->in_w + ix0 + x0 * g->dil_w) * in_c;
                int oc = 0;
                if (dm == 1) {
                    for (; oc + 4 <= out_c; oc += 4) {
                        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
                        const float *xr = px + oc;
                        for (int fy = y0; fy < y1; ++fy, xr += row_step) {
                            const float *x = xr, *w = filter + ((size_t)fy * g->f_w + x0) * out_c + oc;
                            for (int fx = x0; fx < x1; ++fx, x += tap_step, w += out_c) {
                                a0 += x[0] * w[0], a1 += x[1] * w[1], a2 += x[2] * w[2], a3 += x[3] * w[3];
                            }
                        }
                        const float acc[4] = { a0, a1, a2, a3 };
                        for (int j = 0; j < 4; ++j) {
                            out[oc + j] = mn_clamp_f32(acc[j] + (bias ? bias[oc + j] : 0.0f), act_min, act_max);
                        }
                    }
                }
                for (; oc < out_c; ++oc) {
                    float a = 0.0f;
                    const float *xr = px + oc / dm;
                    for (int fy = y0; fy < y1; ++fy, xr += row_step) {
                        const float *x = xr, *w = filter + ((size_t)fy * g->f_w + x0) * out_c + oc;
                        for (int fx = x0; fx < x1; ++fx, x += tap_step, w += out_c) {
                            a += x[0] * w[0];
                        }
                    }
                    out[oc] = mn_clamp_f32(a + (bias ? bias[oc] : 0.0f), act_min, act_max);
                }
            }
        }
    }
}

const mn_conv_f32_variant_t mn_generic_depthwise_f32 = {
    "generic.depthwise_f32", dw_fits, NULL, dw_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
