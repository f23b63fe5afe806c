/*
 * mn_quant.h — fixed-point arithmetic shared by the reference kernels.
 *
 * Every function here reproduces, bit for bit, the integer arithmetic of
 * TensorFlow Lite's reference kernels (QuantizeMultiplier,
 * SaturatingRoundingDoublingHighMul, RoundingDivideByPOT,
 * MultiplyByQuantizedMultiplier in its default "double rounding" form,
 * activation ranges, padding).  Portable C99, no MicroPython headers.
 *
 * Assumption (true for gcc/clang on every target we build for): right shift
 * of a negative signed integer is arithmetic.
 */
#ifndef MN_QUANT_H
#define MN_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fused activation codes, same values as the TFLite schema's
 * ActivationFunctionType. */
enum {
    MN_FUSED_ACT_NONE = 0,
    MN_FUSED_ACT_RELU = 1,
    MN_FUSED_ACT_RELU_N1_TO_1 = 2,
    MN_FUSED_ACT_RELU6 = 3,
    MN_FUSED_ACT_TANH = 4,
    MN_FUSED_ACT_SIGN_BIT = 5,
};

/* Padding codes are the TFLite schema's Padding values (0 = SAME,
 * 1 = VALID; mn_kernel.h names them MN_PADDING_SAME / MN_PADDING_VALID). */

/* real multiplier -> (Q31 multiplier, power-of-two exponent) such that
 * m ~= qm * 2^(shift - 31).  shift > 0 means left shift.  Multipliers below
 * 2^-32 flush to (0, 0).  Same rounding as TFLite (frexp, round half away
 * from zero, carry into the exponent).  Always -31 <= shift <= 31 (NaN/inf
 * give (0, 0); multipliers >= 2^31 saturate), so shifts never exceed 31. */
void mn_quantize_multiplier(double m, int32_t *qm, int *shift);

/* (a * b * 2 + 2^31) >> 32 with round-half-away-from-zero, saturating the
 * single overflow case a == b == INT32_MIN. */
static inline int32_t mn_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^e rounded to nearest, ties away from zero.  0 <= e <= 31. */
static inline int32_t mn_rdbpot(int32_t x, int e) {
    const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* x << s with two's complement wrap-around (what the C++ reference does in
 * practice with x * (1 << s)), without signed-overflow UB. */
static inline int32_t mn_shl_wrap(int32_t x, int s) {
    return (int32_t)((uint32_t)x << s);
}

/* a + b with two's complement wrap-around (int32 accumulation as the C++
 * reference does it in practice), without signed-overflow UB. */
static inline int32_t mn_add_wrap(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* LiteRT's FULLY_CONNECTED requantization (ai-edge-litert's reference kernels, int8 and int16x8,
 * per-tensor and per-channel): x * R rounded to the nearest integer with ties away from zero, R =
 * input scale * weights scale / output scale in double precision. Probed against LiteRT: exact ties
 * (power-of-two scales) go away from zero (TFLite's single-rounding MultiplyByQuantizedMultiplier
 * takes them up), and values within a 31-bit multiplier's error of a tie follow R itself.
 *
 * Fast path: with qm/shift, R's nearest 31-bit multiplier (mn_quantize_multiplier), |x| * qm is
 * within |x| / 2 of |x| * R * 2^(31 - shift); unless that leaves the side of the tie open, the
 * result is decided here. Returns false then (and for qm == 0): the caller takes
 * mn_round_away_f64(x, R). Requires -31 <= shift <= 30. */
static inline bool mn_fc_round_fast(int32_t x, int32_t qm, int shift, int32_t *out) {
    const uint32_t a = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
    const int t = 31 - shift;
    const uint64_t prod = (uint64_t)a * (uint32_t)qm;
    const uint64_t half = (uint64_t)1 << (t - 1);
    const uint64_t frac = prod & ((half << 1) - 1);
    const uint64_t off = frac > half ? frac - half : half - frac;
    if (off <= (uint64_t)(a >> 1) + (a >> 16) + 2 || qm <= 0) {   /* (+: qm from the exact scale ratio) */
        return false;
    }
    uint64_t q = (prod >> t) + (frac > half ? 1u : 0u);
    if (q > (uint64_t)INT32_MAX) {
        q = x < 0 ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX;
    }
    *out = x < 0 ? (int32_t)(0u - (uint32_t)q) : (int32_t)q;
    return true;
}

/* x * r in double precision, rounded to the nearest integer with ties away from zero, saturated
 * to int32 (the slow path of mn_fc_round_fast; also for int64 accumulators past 2^31). */
int32_t mn_round_away_f64(int64_t x, double r);

/* TFLite MultiplyByQuantizedMultiplier (int32 x, default double rounding). */
static inline int32_t mn_mul_by_qm(int32_t x, int32_t qm, int shift) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return mn_rdbpot(mn_srdhm(mn_shl_wrap(x, left), qm), right);
}

/* TFLite MultiplyByQuantizedMultiplierGreaterThanOne. */
static inline int32_t mn_mul_by_qm_gt_one(int32_t x, int32_t qm, int left_shift) {
    return mn_srdhm(mn_shl_wrap(x, left_shift), qm);
}

/* TFLite MultiplyByQuantizedMultiplierSmallerThanOneExp (left_shift <= 0). */
static inline int32_t mn_mul_by_qm_lt_one(int32_t x, int32_t qm, int left_shift) {
    return mn_rdbpot(mn_srdhm(x, qm), -left_shift);
}

static inline int32_t mn_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

static inline float mn_absf(float x) {
    return x < 0.0f ? -x : x;
}

static inline float mn_clamp_f32(float x, float lo, float hi) {
    /* Same order as TFLite ActivationFunctionWithMinMax: min(max(x, lo), hi). */
    float y = x < lo ? lo : x;
    return y > hi ? hi : y;
}

/* n / d (and n % d in *rem when rem is not NULL) for any d > 0, using 32-bit divisions only:
 * libgcc's 64-bit division (__aeabi_uldivmod) carries an unwind table (.ARM.exidx) that the
 * linker scripts of bare-metal ports, e.g. upstream MicroPython's qemu port, do not place. */
uint64_t mn_udivmod64(uint64_t n, uint32_t d, uint32_t *rem);

/* n / d rounded towards zero like C's int64_t division, for d != 0, through mn_udivmod64. */
int64_t mn_sdiv64(int64_t n, int32_t d);

/* Integer range of a quantized type code (MN_QTYPE_*). */
enum {
    MN_QTYPE_INT8 = 0,
    MN_QTYPE_UINT8 = 1,
    MN_QTYPE_INT16 = 2,
    MN_QTYPE_INT32 = 3,
};
void mn_qtype_range(int qtype, int32_t *qmin, int32_t *qmax);

/* Quantized activation range (TFLite CalculateActivationRangeQuantized):
 * clamps of the fused activation, expressed in the output's quantized
 * domain and intersected with [qmin, qmax].  Returns 0, -1 when the
 * activation is not one of NONE/RELU/RELU_N1_TO_1/RELU6, or -2 when a bound
 * does not quantize into int32 (LiteRT refuses the model then too). */
int mn_act_range_quant(int act, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max);

/* Float activation range (TFLite CalculateActivationRange).  Returns 0 or -1
 * for unsupported activations. */
int mn_act_range_f32(int act, float *act_min, float *act_max);

/* Name of a fused activation code, for error messages. */
const char *mn_fused_act_name(int act);

/* TFLite ComputeOutSize: output extent for the given padding (0 SAME,
 * 1 VALID); 0 for an unknown padding or stride <= 0. */
int mn_conv_out_size(int padding, int in_size, int filter_size, int stride, int dilation);

/* TFLite ComputePaddingWithOffset (only the leading padding is used by the
 * reference kernels). */
int mn_conv_padding(int stride, int dilation, int in_size, int filter_size, int out_size);

/* Per-channel multipliers for conv-like ops (TFLite
 * PopulateConvolutionQuantizationParams): input_scale * filter_scale /
 * output_scale in double.  filter_scales has n_scales entries, 1 (broadcast
 * to all n_out channels) or n_out. */
void mn_conv_multipliers(float input_scale, const float *filter_scales, int n_scales,
    float output_scale, int n_out, int32_t *mult, int8_t *shift);
/* The same for n per-channel scales stored as little-endian float32 at filter_scales (as in the
 * model, any alignment). */
void mn_conv_multipliers_le(float input_scale, const uint8_t *filter_scales, int n, float output_scale,
    int32_t *mult, int8_t *shift);

/* ---- gemmlowp-style fixed point used by the quantized softmax ----------------
 * Raw int32 values; "Qm" means m integer bits and 31 - m fraction bits. */

/* Saturating x * 2^e for 0 <= e < 31 (gemmlowp SaturatingRoundingMultiplyByPOT
 * with a positive exponent). */
static inline int32_t mn_sat_shl(int32_t x, int e) {
    const int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return mn_shl_wrap(x, e);
}

/* exp(a) for a <= 0; a in Q5.26, result in Q0.31 (gemmlowp
 * exp_on_negative_values with 5 integer bits). */
int32_t mn_exp_on_negative_values_q5(int32_t a);

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (gemmlowp
 * one_over_one_plus_x_for_x_in_0_1). */
int32_t mn_one_over_one_plus_x(int32_t a);

/* TFLite GetReciprocal: x in Q(x_integer_digits); returns 1/x as Q0.31 scaled by
 * 2^num_bits_over_unit.  x > 0. */
int32_t mn_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit);

/* TFLite PreprocessSoftmaxScaling: beta * input_scale * 2^(31 - integer_bits),
 * capped at 2^31 - 1, as a multiplier > 1 with a left shift. */
void mn_softmax_scaling(double beta, double input_scale, int integer_bits,
    int32_t *mult, int *left_shift);

/* TFLite CalculateInputRadius (total_signed_bits = 31). */
int mn_input_radius(int integer_bits, int left_shift);

/* Round half away from zero, as TfLiteRound (std::round). */
float mn_roundf(float x);

/* ---- gemmlowp int16 fixed point used by the integer LSTM ----------------------
 * Raw int16 values; "Qm" means m integer bits and 15 - m fraction bits.  These
 * reproduce gemmlowp's FixedPoint<int16_t, m> logistic/tanh (what TFLite's
 * portable ApplySigmoid / ApplyTanh run), including its int16 constants
 * (the int32 constants rounding-shifted right by 16). */

/* logistic(x): x in Q3.12, result in Q0.15 (TFLite ApplySigmoid). */
int16_t mn_logistic_s16_q3(int16_t x);

/* tanh(x): x in Q(integer_bits), 0 <= integer_bits <= 6, result in Q0.15
 * (TFLite ApplyTanh(integer_bits, ...)). */
int16_t mn_tanh_s16(int16_t x, int integer_bits);

/* gemmlowp SaturatingRoundingDoublingHighMul for int16 (HARD_SWISH). */
int16_t mn_srdhm_s16(int16_t a, int16_t b);

/* gemmlowp SaturatingRoundingMultiplyByPOT for any exponent e (|e| < 31). */
static inline int32_t mn_sat_pot(int32_t x, int e) {
    return e >= 0 ? mn_sat_shl(x, e) : mn_rdbpot(x, -e);
}

/* TFLite GetInvSqrtQuantizedMultiplierExp with reverse shift: 1 / sqrt(input) as a multiplier and
 * shift (> 0 = left); input <= 1 gives (INT32_MAX, 0) (L2_NORMALIZATION, RSQRT). */
void mn_inv_sqrt_q(int32_t input, int32_t *mult, int *shift);

/* TFLite's int64 MultiplyByQuantizedMultiplier (int16x8 kernels, whose accumulators are int64):
 * the multiplier rounded to 16 bits, then x * m / 2^(15 - shift) rounded half up in one step.
 * Requires -31 <= shift <= 14; the result is truncated to int32 as the reference's cast does. */
static inline int32_t mn_mul_by_qm64(int64_t x, int32_t qm, int shift) {
    const int32_t reduced = qm < 0x7FFF0000 ? ((qm + (1 << 15)) >> 16) : 0x7FFF;
    const int total = 15 - shift;
    /* unsigned: a model's int64 bias can push x past the reference's 2^47 bound (UB there) */
    const int64_t p = (int64_t)((uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total - 1)));
    return (int32_t)(uint32_t)(uint64_t)(p >> total);
}

/* TFLite's dynamic input quantization for hybrid kernels (float activations, int8 weights): n floats
 * to int8, symmetric to [-127, 127] (SymmetricQuantizeFloats) or, if asymmetric, to [-128, 127]
 * with a zero point (AsymmetricQuantizeFloats), in TFLite's float/double arithmetic. Returns the
 * scaling factor (1 for an all-zero input); *zero_point gets the zero point (0 when symmetric). */
float mn_quantize_dynamic_s8(const float *x, size_t n, int8_t *q, int asymmetric, int32_t *zero_point);

#ifdef __cplusplus
}
#endif

#endif /* MN_QUANT_H */
