/*
 * Helpers shared by the Armv8.1-M Helium ("mve") kernel variants.
 *
 * Requantization here reproduces mn_mul_by_qm (TFLite's double rounding) four lanes at a time:
 *   - the left shift wraps like mn_shl_wrap (VSHL by register does not saturate);
 *   - VQRDMULH is exactly mn_srdhm: (2ab + 2^31) >> 32 with the same single saturating case,
 *     and gemmlowp's nudge (2^30 or 1 - 2^30, then truncation towards zero) works out to the
 *     same floor((ab + 2^30) / 2^31) for both signs;
 *   - VRSHL rounds ties upwards, mn_rdbpot away from zero: subtracting one from negative values
 *     first (only when a right shift follows) turns one into the other. The subtraction
 *     saturates, which is harmless: INT32_MIN shifted right by e >= 1 rounds the same either way.
 */
#ifndef MN_MVE_H
#define MN_MVE_H

#include "../mn_variants.h"
#include "mve_fits.h"

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "kernels/mve needs Armv8.1-M with the Helium integer extension (e.g. -mcpu=cortex-m55)"
#endif

#include <arm_mve.h>

/* mn_mul_by_qm + output offset + clamp, per lane; shift > 0 = left, as mn_conv_quant_t. LEFT false
 * promises no lane shifts left (the usual case: multipliers below one), which saves the left shift. */
static inline __attribute__((always_inline)) int32x4_t mn_mve_requant_x(int32x4_t acc, int32x4_t mult,
    int32x4_t shift, int32_t out_off, int32_t act_min, int32_t act_max, bool left) {
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t right = left ? vminq_s32(shift, zero) : shift;   /* -(right shift), 0 when shifting left */
    int32x4_t x = vqrdmulhq_s32(left ? vshlq_s32(acc, vmaxq_s32(shift, zero)) : acc, mult);
    /* -1 in lanes that are negative and will be shifted right (right < 0 has its sign bit set) */
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
    x = vaddq_n_s32(vrshlq_s32(x, right), out_off);
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
}

static inline __attribute__((always_inline)) int32x4_t mn_mve_requant(int32x4_t acc, int32x4_t mult,
    int32x4_t shift, int32_t out_off, int32_t act_min, int32_t act_max) {
    return mn_mve_requant_x(acc, mult, shift, out_off, act_min, act_max, true);
}

/* Whether any of n per-channel shifts is a left shift (> 0). */
static inline bool mn_mve_any_left(const int8_t *shift, int n) {
    int8_t m = 0;
    for (int i = 0; i < n; i += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - i));
        m = vmaxvq_p_s8(m, vldrbq_z_s8(shift + i, p), p);
    }
    return m > 0;
}

/* acc[r] += sum_c x[c] * w[r * cols + c] for the 4 rows r < 4 (wrapping 32-bit sums).
 * VMLADAVA accumulates 16 int8 products into a 32-bit scalar, wrapping like the reference. The
 * tail is loaded with zeroing predication, so its dead lanes add nothing. */
static inline __attribute__((always_inline)) void mn_mve_dot4(const int8_t *x, const int8_t *w, int cols,
    int32_t acc[4]) {
    const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int c = 0;
    for (; c + 16 <= cols; c += 16) {
        const int8x16_t xv = vldrbq_s8(x + c);
        a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w0 + c));
        a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1 + c));
        a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2 + c));
        a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3 + c));
    }
    if (c < cols) {
        const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
        const int8x16_t xv = vldrbq_z_s8(x + c, p);
        a0 = vmladavaq_s8(a0, xv, vldrbq_z_s8(w0 + c, p));
        a1 = vmladavaq_s8(a1, xv, vldrbq_z_s8(w1 + c, p));
        a2 = vmladavaq_s8(a2, xv, vldrbq_z_s8(w2 + c, p));
        a3 = vmladavaq_s8(a3, xv, vldrbq_z_s8(w3 + c, p));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* sum_c x[c] * w[c] (wrapping 32-bit sum). */
int32_t mn_mve_dot(const int8_t *x, const int8_t *w, int n);

/* Sum of n int8 values (wrapping 32-bit). */
int32_t mn_mve_sum(const int8_t *x, int n);

/* out[o] = requant(folded[o] + sum_c w[o][c] * x[c]) for o < rows, per-channel mn_mul_by_qm; left:
 * mn_mve_any_left(q->shift, rows). */
void mn_mve_matvec(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_conv_quant_t *q, int8_t *out, bool left);

/* Ungrouped convolution as one matrix-vector product per output pixel over its receptive field,
 * gathered into col (mn_mve_conv_k(g) bytes; taps outside the input hold the input zero point,
 * whose offset-corrected value is 0); filter: [out_c][K], folded: bias + input offset * row sums. */
static inline int mn_mve_conv_k(const mn_conv_geom_t *g) {
    return g->f_h * g->f_w * g->in_c;
}
void mn_mve_conv_im2col(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *folded, int8_t *col, int8_t *output);

/* mn_mve_matvec for n_px input vectors x + i * x_step of cols <= 16 (outputs out + i * out_step):
 * output channels outer, so four filter rows stay in registers across the pixels. */
void mn_mve_matmul_short(const int8_t *x, size_t x_step, int n_px, const int8_t *w, const int32_t *folded, int cols,
    int rows, const mn_conv_quant_t *q, int8_t *out, size_t out_step);

/* folded[o] = bias[o] + offset * sum_c w[o][c] (wrapping), for `rows` rows of `cols` weights. */
void mn_mve_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded);

/* Copy n bytes / set n bytes to v (short runs: im2col rows, padding). */
void mn_mve_copy(int8_t *dst, const int8_t *src, int n);
void mn_mve_fill(int8_t *dst, int8_t v, int n);

#if __ARM_FEATURE_MVE & 2
/* Float (Helium floating point): four lanes of partial sums per row, fused multiply-add, lanes
 * added at the end, so the terms are summed in another order than the reference's: within 1e-5 of
 * the sum of |terms| (tests/kernels/equiv.c). acc[r] += sum_c x[c] * w[r * w_stride + c], r < 4. */
/* min(max(x, lo), hi) per lane, as mn_clamp_f32 (a NaN stays NaN). */
static inline __attribute__((always_inline)) float32x4_t mn_mve_clamp_f32(float32x4_t x, float32x4_t lo,
    float32x4_t hi) {
    x = vpselq_f32(lo, x, vcmpltq_f32(x, lo));
    return vpselq_f32(hi, x, vcmpgtq_f32(x, hi));
}
void mn_mve_dot4_f32(const float *x, const float *w, size_t w_stride, int n, float acc[4]);
float mn_mve_dot_f32(const float *x, const float *w, int n, float acc);

/* out[p * rows + o] = clamp(bias[o] + sum_c x[p * x_stride + c] * w[o * cols + c], lo, hi). */
void mn_mve_gemm_f32(const float *x, size_t x_stride, int n, const float *w, int cols, int rows, const float *bias,
    float lo, float hi, float *out);
#endif

extern const mn_conv_s8_variant_t mn_mve_conv_s8_1x1;
extern const mn_conv_s8_variant_t mn_mve_conv_s8_im2col;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_in1;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_3x3;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_rows;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_m1;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_mult;
extern const mn_fc_s8_variant_t mn_mve_fc_s8;
extern const mn_svdf_s8_variant_t mn_mve_svdf_s8;
extern const mn_conv_f32_variant_t mn_mve_conv_f32_1x1;
extern const mn_conv_f32_variant_t mn_mve_conv_f32;
extern const mn_conv_f32_variant_t mn_mve_depthwise_f32_m1;
extern const mn_fc_f32_variant_t mn_mve_fc_f32;

extern const mn_add_s8_variant_t mn_mve_add_s8;
extern const mn_mul_s8_variant_t mn_mve_mul_s8;

#endif /* MN_MVE_H */
