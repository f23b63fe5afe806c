/*
 * The dsp backend's variants: when each one fits, and the order the backend tries them in, per
 * compute function (X-macros of X(backend, variant) for variant mn_<backend>_<variant>, fits
 * mn_<backend>_<variant>_fits). Portable C, without the DSP intrinsics: the firmware's lists
 * (dsp.c) and the host build's variant query (mn_variants.h, MICRONN_VARIANTS) both use it.
 */
#ifndef MN_DSP_FITS_H
#define MN_DSP_FITS_H

#include "../mn_variants.h"

#define MN_DSP_CONV_S8(X) X(dsp, conv_s8)
#define MN_DSP_DEPTHWISE_S8(X) X(dsp, depthwise_s8_c1) X(dsp, depthwise_s8_pair) \
    X(dsp, depthwise_s8_mult1) X(dsp, depthwise_s8)
#define MN_DSP_FC_S8(X) X(dsp, fc_s8)
#define MN_DSP_SVDF_S8(X) X(dsp, svdf_s8)
#define MN_DSP_ADD_S8(X) X(dsp, add_s8)
#define MN_DSP_MUL_S8(X) X(dsp, mul_s8)

/* Every ungrouped convolution (any kernel, stride, padding, dilation). */
static inline bool mn_dsp_conv_s8_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return g->f_in_c == g->in_c && mn_variant_mults_ok(q->mult, g->out_c);
}

/* One input channel (and several outputs): the convolution with a transposed filter. */
static inline bool mn_dsp_depthwise_s8_c1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return g->in_c == 1 && g->out_c > 1 && mn_variant_mults_ok(q->mult, g->out_c);
}

/* Two taps per SMLAD along W, or along H over a width of one (Kx1 on 1xTx1xC): at least two taps
 * there, undilated, at most 16 window rows (depthwise_s8.c, "depthwise_s8_pair"). Taken where it
 * beats depthwise_s8_mult1 (person_detect and a 1-D net on MPS2_AN386): 1-D windows, multipliers
 * above 1, and 3x3 stride 1 over rows of at least 12 outputs (narrower rows and stride 2 pay more
 * for the int16 planes and the per-channel pass than the pairs save). */
static inline bool mn_dsp_depthwise_s8_pair_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    const bool col = g->in_w == 1 && g->out_w == 1 && g->f_w == 1 && g->pad_w == 0 && g->f_h > 1;
    const int taps = col ? g->f_h : g->f_w, dil = col ? g->dil_h : g->dil_w, rows = col ? 1 : g->f_h;
    if (taps < 2 || dil != 1 || rows > 16 || !mn_variant_mults_ok(q->mult, g->out_c)) {
        return false;
    }
    /* (3x3 stride 1 on rows of 12+ outputs ran ~6% faster too, but its int16 weight pairs and row
     * scratch cost person_detect 3 KB of arena for 2% of its time: those stay on mult1) */
    return rows == 1 || g->depth_mult > 1;
}

static inline bool mn_dsp_depthwise_s8_mult1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return g->depth_mult == 1 && mn_variant_mults_ok(q->mult, g->out_c);
}

static inline bool mn_dsp_depthwise_s8_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    return mn_variant_mults_ok(q->mult, g->out_c);
}

static inline bool mn_dsp_fc_s8_fits(const mn_fc_params_t *p) {
    (void)p;
    return true;
}

static inline bool mn_dsp_svdf_s8_fits(const mn_svdf_params_t *p) {
    /* an odd memory would put every other filter's words off the pairwise layout */
    return p->memory % 2 == 0 && p->mult1 != INT32_MIN && p->mult2 != INT32_MIN;
}

/* ADD / SUB int8: the shapes and parameters of mn_ew_add_s8_ok, the output shifted right, and
 * one input multiplier 1/2 with the other below it (as mn_add_quant_init makes them: the
 * input with the larger scale has 1/2, 2^30 without shift, the other a right shift). */
static inline bool mn_dsp_add_s8_unit(int32_t mult, int shift) {
    return mult == (1 << 30) && shift == 0;
}

static inline bool mn_dsp_add_s8_fits(const mn_add_quant_t *p, const mn_bcast_t *b) {
    const bool u1 = mn_dsp_add_s8_unit(p->input1_mult, p->input1_shift);
    const bool u2 = mn_dsp_add_s8_unit(p->input2_mult, p->input2_shift);
    return mn_ew_add_s8_ok(p, b) && p->output_shift < 0 && (u1 || u2) && (u1 || p->input1_shift < 0)
        && (u2 || p->input2_shift < 0);
}

static inline bool mn_dsp_mul_s8_fits(const mn_mul_quant_t *p, const mn_bcast_t *b) {
    return mn_ew_mul_s8_ok(p, b);
}

#endif /* MN_DSP_FITS_H */
