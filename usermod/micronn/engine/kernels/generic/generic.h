/* Helpers shared by the portable ("generic") kernel variants. */
#ifndef MN_GENERIC_H
#define MN_GENERIC_H

#include "../mn_variants.h"

/* Per-channel requantization of an int32 accumulator to int8 (mn_mul_by_qm, as conv). */
typedef struct {
    const int32_t *mult;
    const int8_t *shift;
    int32_t out_off, act_min, act_max;
} mn_generic_requant_t;

/* mn_mul_by_qm (double rounding) for qm != INT32_MIN, which fits() checks (mn_variant_mults_ok):
 * only INT32_MIN * INT32_MIN saturates in SaturatingRoundingDoublingHighMul, and otherwise its
 * (ab + nudge) / 2^31, truncated toward zero, equals (ab + 2^30) >> 31 for either sign of ab
 * (for ab < 0, ceil((ab + 1 - 2^30) / 2^31) = floor((ab + 2^30) / 2^31)). RoundingDivideByPOT by
 * right adds one when the remainder exceeds 2^(right-1) - 1 + (x < 0), i.e. when
 * remainder - (x < 0) > mask >> 1 (one signed compare), which is also never true for right = 0
 * (mask 0): no branch, no overflow. On RV32 this is about half the instructions of the literal
 * form (no nudge select, no 64-bit signed division, no saturation test). */
static inline int32_t mn_generic_requant(int32_t acc, int32_t qm, int shift) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    const int64_t ab = (int64_t)(int32_t)((uint32_t)acc << left) * qm;
    /* (ab + 2^30) >> 31 from ab's 32-bit halves: 2 hi + floor((lo + 2^30) / 2^31), and for lo in
     * [0, 2^32) the latter is ((lo >> 30) + 1) >> 1 (no carry to propagate into hi) */
    const uint32_t lo = (uint32_t)ab;
    const int32_t x = (int32_t)(((uint32_t)(ab >> 32) << 1) + (((lo >> 30) + 1u) >> 1));
    const int32_t mask = (int32_t)((1u << right) - 1u);
    return (x >> right) + ((x & mask) + (x >> 31) > (mask >> 1));
}

/* Requantize accumulator acc of output channel ch to int8. */
static inline int8_t mn_generic_out(const mn_generic_requant_t *rq, int ch, uint32_t acc) {
    const int32_t v = mn_add_wrap(mn_generic_requant((int32_t)acc, rq->mult[ch], rq->shift[ch]), rq->out_off);
    return (int8_t)mn_clamp_i32(v, rq->act_min, rq->act_max);
}

/* The taps [*lo, *hi) of a filter of n taps, dilation dil, whose input position p0 + dil * tap
 * lies in [0, size): the loops over them need no per-tap bounds checks. */
static inline void mn_generic_taps(int p0, int dil, int n, int size, int *lo, int *hi) {
    int l = 0, h = n;
    if (p0 < 0) {
        l = (-p0 + dil - 1) / dil;
    }
    if ((long long)p0 + (long long)(n - 1) * dil >= size) {
        h = p0 >= size ? 0 : (size - p0 + dil - 1) / dil;
    }
    *lo = l < n ? l : n;
    *hi = h > *lo ? h : *lo;
}

/* folded[o] = bias[o] + offset * sum_c w[o][c] (wrapping 32-bit), for `rows` rows of `cols` weights. */
void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded);

/* acc[r] += sum_c w[r * cols + c] * x[c] for four rows r: each input value loaded once. */
void mn_generic_dot4_s8(const int8_t *x, const int8_t *w, int cols, uint32_t acc[4]);

/* acc[o] = init[o] (or 0) + sum_c w[o][c] * (x[c] + off) for o < rows (wrapping 32-bit). The offset
 * is added to each input as it is loaded (one add per input per four rows): for a matrix-vector
 * product that is cheaper than keeping off * sum_c w[o][c] for every row in RAM. */
void mn_generic_matvec_acc(const int8_t *x, const int8_t *w, const int32_t *init, int32_t off, int cols, int rows,
    uint32_t *acc);

/* out[o] = requant(folded[o] + sum_c w[o][c] * x[c]) for o < rows. */
void mn_generic_matvec_s8(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_generic_requant_t *rq, int8_t *out);

/* mn_generic_matvec_s8 for two input vectors x0, x1 (two pixels) at once, into out0, out1. */
void mn_generic_matvec2_s8(const int8_t *x0, const int8_t *x1, const int8_t *w, const int32_t *folded, int cols,
    int rows, const mn_generic_requant_t *rq, int8_t *out0, int8_t *out1);

/* Plain dot product of n elements (wrapping 32-bit sum), and the sum of n int8 values. */
int32_t mn_generic_dot_s8(const int8_t *a, const int8_t *b, int n);
int32_t mn_generic_sum_s8(const int8_t *p, int n);

/* Float: acc[r] += sum_c x[c] * w[r * w_stride + c] for four rows r, and acc + sum_c x[c] * w[c];
 * terms added in order c = 0, 1, ... as the reference does. */
void mn_generic_dot4_f32(const float *x, const float *w, size_t w_stride, int n, float acc[4]);
float mn_generic_dot_f32(const float *x, const float *w, int n, float acc);

/* out[p * rows + o] = clamp(bias[o] + sum_c x[p * x_stride + c] * w[o * cols + c], lo, hi) for
 * p < n, o < rows: two inputs by four rows per step, each output summed in reference order. */
void mn_generic_gemm_f32(const float *x, size_t x_stride, int n, const float *w, int cols, int rows,
    const float *bias, float lo, float hi, float *out);

/* Float dot products as the convolution tap walk calls them (mn_generic_dot4_f32 / _dot_f32 or a
 * vector backend's). */
typedef struct {
    void (*dot4)(const float *x, const float *w, size_t w_stride, int n, float acc[4]);
    float (*dot)(const float *x, const float *w, int n, float acc);
} mn_generic_dots_f32_t;

/* Float convolution of any shape over each pixel's valid taps (generic.conv_f32), with these dots. */
void mn_generic_conv_f32_taps(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output, const mn_generic_dots_f32_t *dots);

extern const mn_conv_s8_variant_t mn_generic_conv_s8_1x1;
extern const mn_conv_s8_variant_t mn_generic_conv_s8;
extern const mn_conv_s8_variant_t mn_generic_depthwise_s8;
extern const mn_fc_s8_variant_t mn_generic_fc_s8;
extern const mn_svdf_s8_variant_t mn_generic_svdf_s8;
extern const mn_conv_f32_variant_t mn_generic_conv_f32_1x1;
extern const mn_conv_f32_variant_t mn_generic_conv_f32;
extern const mn_conv_f32_variant_t mn_generic_depthwise_f32;
extern const mn_add_s8_variant_t mn_generic_add_s8;
extern const mn_mul_s8_variant_t mn_generic_mul_s8;
extern const mn_fc_f32_variant_t mn_generic_fc_f32;
extern const mn_requant_variant_t mn_generic_requant_s8_s8;
extern const mn_requant_variant_t mn_generic_requant_s16_s8;
extern const mn_requant_variant_t mn_generic_requant_s16_s16;

#endif /* MN_GENERIC_H */
