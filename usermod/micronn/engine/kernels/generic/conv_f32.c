/*
 * Portable float32 convolution. Pointwise (1x1, unpadded, ungrouped) is a matrix product per output
 * row (mn_generic_gemm_f32: two pixels by four output channels per step). Any other shape walks
 * only each pixel's valid taps, four output channels of a group at a time so each input value is
 * loaded once per four products; with one group and no horizontal dilation a filter row's valid
 * taps are one contiguous run of the input row. Each output's terms are summed in the reference's
 * order (rows, taps, channels), bias last.
 */
#include "generic.h"

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_FLOAT32

static bool conv_1x1_fits(const mn_conv_geom_t *g) {
    return g->f_h == 1 && g->f_w == 1 && g->pad_h == 0 && g->pad_w == 0 && g->f_in_c == g->in_c;
}

static void conv_1x1_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int in_c = g->in_c, out_c = g->out_c;
    for (int b = 0; b < g->batches; ++b) {
        for (int oy = 0; oy < g->out_h; ++oy) {
            const float *row = input + (((size_t)b * g->in_h + (size_t)oy * g->stride_h) * g->in_w) * in_c;
            float *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            mn_generic_gemm_f32(row, (size_t)g->stride_w * in_c, g->out_w, filter, in_c, out_c, bias, act_min,
                act_max, out);
        }
    }
}

const mn_conv_f32_variant_t mn_generic_conv_f32_1x1 = {
    "generic.conv_f32_1x1", conv_1x1_fits, NULL, conv_1x1_run,
};

static bool conv_fits(const mn_conv_geom_t *g) {
    (void)g;
    return true;
}

/* Input of tap (fy, fx0) for channel c0 is x; accumulate taps [y0, y1) x [x0, x1) of `k` (4 or 1)
 * output channels whose filters start at w (filter size f_size apart). */
static void conv_taps(const mn_conv_geom_t *g, const float *x, const float *w, size_t f_size, int y0, int y1,
    int x0, int x1, int k, float acc[4], const mn_generic_dots_f32_t *dots) {
    const size_t row_step = (size_t)g->dil_h * g->in_w * g->in_c, tap_step = (size_t)g->dil_w * g->in_c;
    const int f_in_c = g->f_in_c;
    const bool contiguous = g->dil_w == 1 && f_in_c == g->in_c;
    for (int fy = y0; fy < y1; ++fy, x += row_step) {
        const float *wt = w + ((size_t)fy * g->f_w + x0) * f_in_c;
        const float *xt = x;
        /* contiguous: the valid taps of the filter row are one run of (x1 - x0) * in_c values */
        const int n = contiguous ? (x1 - x0) * f_in_c : f_in_c;
        for (int fx = x0; fx < (contiguous ? x0 + 1 : x1); ++fx, xt += tap_step, wt += f_in_c) {
            if (k == 4) {
                dots->dot4(xt, wt, f_size, n, acc);
            } else {
                acc[0] = dots->dot(xt, wt, n, acc[0]);
            }
        }
    }
}

void mn_generic_conv_f32_taps(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output, const mn_generic_dots_f32_t *dots) {
    const int out_c = g->out_c, f_in_c = g->f_in_c;
    const int per_group = out_c / (g->in_c / f_in_c);
    const size_t f_size = (size_t)g->f_h * g->f_w * f_in_c;
    float *out = output;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->in_h * g->in_w * g->in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int y0, y1;
            mn_generic_taps(iy0, g->dil_h, g->f_h, g->in_h, &y0, &y1);
            for (int ox = 0; ox < g->out_w; ++ox, out += out_c) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int x0, x1;
                mn_generic_taps(ix0, g->dil_w, g->f_w, g->in_w, &x0, &x1);
                const float *px = in_b + ((size_t)(iy0 + y0 * g->dil_h) * g->in_w + ix0 + x0 * g->dil_w) * g->in_c;
                for (int g0 = 0; g0 < out_c; g0 += per_group) {
                    const float *x = px + (size_t)(g0 / per_group) * f_in_c;
                    for (int oc = g0; oc < g0 + per_group;) {
                        const int k = oc + 4 <= g0 + per_group ? 4 : 1;
                        float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
                        if (y0 < y1 && x0 < x1) {
                            conv_taps(g, x, filter + (size_t)oc * f_size, f_size, y0, y1, x0, x1, k, acc, dots);
                        }
                        for (int j = 0; j < k; ++j, ++oc) {
                            out[oc] = mn_clamp_f32(acc[j] + (bias ? bias[oc] : 0.0f), act_min, act_max);
                        }
                    }
                }
            }
        }
    }
}

static void conv_run(const mn_conv_geom_t *g, float act_min, float act_max, const float *input, const float *filter,
    const float *bias, float *output, const mn_vbuf_t *buf) {
    (void)buf;
    static const mn_generic_dots_f32_t dots = { mn_generic_dot4_f32, mn_generic_dot_f32 };
    mn_generic_conv_f32_taps(g, act_min, act_max, input, filter, bias, output, &dots);
}

const mn_conv_f32_variant_t mn_generic_conv_f32 = {
    "generic.conv_f32", conv_fits, NULL, conv_run,
};

#endif /* MICRONN_OP_CONV_2D */
