/*
 * The mve backend's variants: when each one fits, and the order the backend tries them in, per
 * compute function (X-macros of X(backend, variant) for variant mn_<backend>_<variant>, fits
 * mn_<backend>_<variant>_fits). Portable C, without the Helium intrinsics: the firmware's lists
 * (mve.c) and the host build's variant query (mn_variants.h, MICRONN_VARIANTS) both use it.
 */
#ifndef MN_MVE_FITS_H
#define MN_MVE_FITS_H

#include "../mn_variants.h"

#define MN_MVE_CONV_S8(X) X(mve, conv_s8_1x1) X(mve, conv_s8_im2col)
/* mve.conv_f32 runs generic's tap walk: in the firmware's list only with generic compiled in */
#define MN_MVE_CONV_F32(X) X(mve, conv_f32_1x1) X(mve, conv_f32)
#define MN_MVE_DEPTHWISE_S8(X) X(mve, depthwise_s8_in1) X(mve, depthwise_s8_3x3) X(mve, depthwise_s8_rows) \
    X(mve, depthwise_s8_m1) \
    X(mve, depthwise_s8_mult)
#define MN_MVE_DEPTHWISE_F32(X) X(mve, depthwise_f32_m1)
#define MN_MVE_FC_S8(X) X(mve, fc_s8)
#define MN_MVE_FC_F32(X) X(mve, fc_f32)
#define MN_MVE_SVDF_S8(X) X(mve, svdf_s8)
#define MN_MVE_ADD_S8(X) X(mve, add_s8)
#define MN_MVE_MUL_S8(X) X(mve, mul_s8)

static inline bool mn_mve_conv_s8_1x1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->f_h == 1 && g->f_w == 1 && g->pad_h == 0 && g->pad_w == 0 && g->f_in_c == g->in_c;
}

static inline bool mn_mve_conv_s8_im2col_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->f_in_c == g->in_c;
}

static inline bool mn_mve_conv_f32_1x1_fits(const mn_conv_geom_t *g) {
    return g->f_h == 1 && g->f_w == 1 && g->pad_h == 0 && g->pad_w == 0 && g->f_in_c == g->in_c;
}

static inline bool mn_mve_conv_f32_fits(const mn_conv_geom_t *g) {
    (void)g;
    return true;
}

static inline bool mn_mve_depthwise_s8_in1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->in_c == 1;
}

static inline bool mn_mve_depthwise_s8_3x3_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->depth_mult == 1 && g->f_h == 3 && g->f_w == 3 && g->in_c >= 8;
}

/* Multiplier 1 over padded rows: 1-D windows (1xK, or Kx1 over a width of one) and windows up to
 * 5x5 (depthwise_s8.c, "depthwise_s8_rows"). */
static inline bool mn_mve_depthwise_s8_rows_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    const bool col = g->in_w == 1 && g->out_w == 1 && g->f_w == 1 && g->pad_w == 0;
    return g->depth_mult == 1 && (col || g->f_h == 1 || g->f_h * g->f_w <= 25);
}

static inline bool mn_mve_depthwise_s8_m1_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->depth_mult == 1;
}

static inline bool mn_mve_depthwise_s8_mult_fits(const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    (void)q;
    return g->depth_mult > 1;
}

static inline bool mn_mve_depthwise_f32_m1_fits(const mn_conv_geom_t *g) {
    return g->depth_mult == 1;
}

static inline bool mn_mve_fc_s8_fits(const mn_fc_params_t *p) {
    (void)p;
    return true;
}

static inline bool mn_mve_fc_f32_fits(const mn_fc_params_t *p) {
    (void)p;
    return true;
}

static inline bool mn_mve_svdf_s8_fits(const mn_svdf_params_t *p) {
    (void)p;
    return true;
}

/* ADD / SUB and MUL int8: the shapes and parameters of mn_ew_add_s8_ok / mn_ew_mul_s8_ok. */
static inline bool mn_mve_add_s8_fits(const mn_add_quant_t *p, const mn_bcast_t *b) {
    return mn_ew_add_s8_ok(p, b);
}

static inline bool mn_mve_mul_s8_fits(const mn_mul_quant_t *p, const mn_bcast_t *b) {
    return mn_ew_mul_s8_ok(p, b);
}

#endif /* MN_MVE_FITS_H */
