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

#if !defined(__ARM_FEATURE_MVE) || !(__ARM_FEATURE_MVE & 1)
#error "kernels/mve needs Armv8.1-M with the Helium integer extension (e.g. -mcpu=cortex-m55)"
#endif

#include <arm_mve.h>

/* mn_mul_by_qm + output offset + clamp, per lane; shift > 0 = left, as mn_conv_quant_t. */
static inline int32x4_t mn_mve_requant(int32x4_t acc, int32x4_t mult, int32x4_t shift, int32_t out_off,
    int32_t act_min, int32_t act_max) {
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t right = vminq_s32(shift, zero);   /* -(right shift), 0 when shifting left */
    int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, vmaxq_s32(shift, zero)), mult);
    /* -1 in lanes that are negative and will be shifted right (right < 0 has its sign bit set) */
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
    x = vaddq_n_s32(vrshlq_s32(x, right), out_off);
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
}

/* acc[r] += sum_c x[c] * w[r * cols + c] for the 4 rows r < 4 (wrapping 32-bit sums). */
void mn_mve_dot4(const int8_t *x, const int8_t *w, int cols, int32_t acc[4]);

/* sum_c x[c] * w[c] (wrapping 32-bit sum). */
int32_t mn_mve_dot(const int8_t *x, const int8_t *w, int n);

/* Sum of n int8 values (wrapping 32-bit). */
int32_t mn_mve_sum(const int8_t *x, int n);

/* out[o] = requant(folded[o] + sum_c w[o][c] * x[c]) for o < rows, per-channel mn_mul_by_qm. */
void mn_mve_matvec(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_conv_quant_t *q, int8_t *out);

/* folded[o] = bias[o] + offset * sum_c w[o][c] (wrapping), for `rows` rows of `cols` weights. */
void mn_mve_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded);

/* Copy n bytes / set n bytes to v (short runs: im2col rows, padding). */
void mn_mve_copy(int8_t *dst, const int8_t *src, int n);
void mn_mve_fill(int8_t *dst, int8_t v, int n);

extern const mn_conv_s8_variant_t mn_mve_conv_s8_1x1;
extern const mn_conv_s8_variant_t mn_mve_conv_s8_im2col;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_m1;
extern const mn_conv_s8_variant_t mn_mve_depthwise_s8_mult;
extern const mn_fc_s8_variant_t mn_mve_fc_s8;

#endif /* MN_MVE_H */
