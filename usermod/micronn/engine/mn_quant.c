/* mn_quant.c — see mn_quant.h.
 *
 * Bare-metal ports link only a single-precision libm (MicroPython's lib/libm), so the
 * double-precision helpers needed here (frexp, round) are implemented locally, exactly. */
#include "mn_quant.h"
#include "micronn.h"

#include <math.h>
#include <string.h>

/* frexp for IEEE-754 binary64: x = m * 2^e with 0.5 <= |m| < 1 (0, inf, nan unchanged). */
static double mn_frexp(double x, int *e) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int ex = (int)((b >> 52) & 0x7ff);
    *e = 0;
    if (ex == 0x7ff || x == 0.0) {
        return x;
    }
    if (ex == 0) {
        /* subnormal: scale into the normal range first */
        x *= 18014398509481984.0; /* 2^54 */
        memcpy(&b, &x, sizeof b);
        ex = (int)((b >> 52) & 0x7ff) - 54;
    }
    *e = ex - 1022;
    b = (b & ~((uint64_t)0x7ff << 52)) | ((uint64_t)1022 << 52);
    memcpy(&x, &b, sizeof x);
    return x;
}

/* round half away from zero for |x| < 2^62. */
static int64_t mn_round_i64(double x) {
    int64_t t = (int64_t)x; /* truncates toward zero */
    const double frac = x - (double)t; /* exact for |x| < 2^52; 0 above */
    if (frac >= 0.5) {
        ++t;
    } else if (frac <= -0.5) {
        --t;
    }
    return t;
}

/* Final step of QuantizeMultiplier, shared by the double and the integer paths: m = q * 2^e with
 * q_fixed = round(q * 2^31), 2^30 <= |q_fixed| <= 2^31. */
static void quantize_finish(int64_t q_fixed, int e, int32_t *qm, int *shift) {
    if (q_fixed == ((int64_t)1 << 31)) {   /* TFLite adjusts positive values only */
        q_fixed /= 2;
        ++e;
    }
    if (e < -31) {
        e = 0;
        q_fixed = 0;
    }
    if (e > 31) {
        /* absurd multiplier (malformed model): saturate, keep shifts < 32 */
        e = 31;
        q_fixed = q_fixed < 0 ? -INT32_MAX : INT32_MAX;
    }
    *qm = (int32_t)q_fixed;
    *shift = e;
}

int32_t mn_round_away_f64(int64_t x, double r) {
    const double v = (double)x * r;
    const double a = v < 0 ? -v : v;
    if (!(a < 2147483648.0)) {   /* (NaN: a malformed model; prepare refuses it) */
        return v < 0 ? INT32_MIN : INT32_MAX;
    }
    int64_t i = (int64_t)a;   /* a - i is exact below 2^52 */
    if (a - (double)i >= 0.5) {
        ++i;
    }
    if (v < 0) {
        return (int32_t)-i;
    }
    return i > INT32_MAX ? INT32_MAX : (int32_t)i;
}

void mn_quantize_multiplier(double m, int32_t *qm, int *shift) {
    if (m == 0.0 || m != m || m > 1e300 || m < -1e300) {
        /* zero, or NaN/inf from a malformed model: no scaling at all */
        *qm = 0;
        *shift = 0;
        return;
    }
    int e = 0;
    const double q = mn_frexp(m, &e); /* m = q * 2^e, 0.5 <= |q| < 1 */
    quantize_finish(mn_round_i64(q * (double)((int64_t)1 << 31)), e, qm, shift);
}

/* Significand (with the implicit bit) and exponent of a positive normal float: x = *m * 2^*e. */
static int float_parts(float x, uint32_t *m, int *e) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    const int ex = (int)(b >> 23);   /* sign bit included: negative values fail the range check */
    if (ex < 1 || ex > 254) {
        return -1;
    }
    *m = (b & 0x7fffffu) | 0x800000u;
    *e = ex - 150;
    return 0;
}

static int bit_length64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? 64 - __builtin_clzll(x) : 0;
#else
    int n = 0;
    while (x) {
        x >>= 1;
        ++n;
    }
    return n;
#endif
}

int64_t mn_sdiv64(int64_t n, int32_t d) {
    const uint64_t un = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    const uint32_t ud = d < 0 ? (uint32_t)0 - (uint32_t)d : (uint32_t)d;
    const uint64_t q = mn_udivmod64(un, ud, NULL);
    return (n < 0) != (d < 0) ? (int64_t)((uint64_t)0 - q) : (int64_t)q;
}

uint64_t mn_udivmod64(uint64_t n, uint32_t d, uint32_t *rem) {
    uint64_t q = 0;
    if ((n >> 32) == 0) {
        q = (uint32_t)n / d;
        if (rem) {
            *rem = (uint32_t)n - (uint32_t)q * d;
        }
        return q;
    }
    if (d < (1u << 24)) {
        /* the top (at most) 32 bits at once, then long division in base 256: each partial
         * remainder is < d, so (r << 8 | digit) < 2^32 */
        int s = (bit_length64(n) - 32 + 7) & ~7;   /* >= 8, as n >= 2^32 */
        uint32_t r = (uint32_t)(n >> s);
        q = r / d;
        r -= (uint32_t)q * d;
        for (s -= 8; s >= 0; s -= 8) {
            const uint32_t cur = (r << 8) | (uint32_t)((n >> s) & 0xffu);
            const uint32_t digit = cur / d;
            q = (q << 8) | digit;
            r = cur - digit * d;
        }
        if (rem) {
            *rem = r;
        }
        return q;
    }
    /* base 2 (divisors this large come only from absurd model parameters) */
    uint64_t r = 0;
    for (int s = bit_length64(n) - 1; s >= 0; s--) {
        r = (r << 1) | ((n >> s) & 1u);
        q <<= 1;
        if (r >= d) {
            r -= d;
            q |= 1u;
        }
    }
    if (rem) {
        *rem = (uint32_t)r;
    }
    return q;
}

/*
 * mn_quantize_multiplier((double)num * 2^num_e / (double)den_float) without floating point, for a
 * positive integer num < 2^48 and a positive normal float den: the division is rounded to 53
 * bits (nearest, ties to even) exactly as the double division, then to 31 bits as
 * QuantizeMultiplier does. Soft-float double math costs ~1,000 instructions per channel on cores
 * without a double FPU; this costs two 64/32-bit divisions.
 */
static int quantize_ratio(uint64_t num, int num_e, float den, int32_t *qm, int *shift) {
    uint32_t d;
    int de;
    if (num == 0 || float_parts(den, &d, &de)) {
        return -1;
    }
    /* Normalise num to 48 bits so that num / d lies in (2^23, 2^25). */
    const int s = 48 - bit_length64(num);
    num <<= s;
    int e = num_e - s - de;                        /* value = num / d * 2^e */
    uint32_t r0, rs_rem;
    const uint64_t q0 = mn_udivmod64(num, d, &r0);
    const int extra = 54 - bit_length64(q0);      /* 53 bits + one guard bit */
    const uint64_t rs = (uint64_t)r0 << extra;     /* r0 < 2^24, extra <= 31 */
    uint64_t q = (q0 << extra) | mn_udivmod64(rs, d, &rs_rem);
    const int sticky = rs_rem != 0;
    e -= extra;
    /* round to 53 bits, ties to even */
    const int guard = (int)(q & 1u);
    q >>= 1;
    ++e;
    if (guard && (sticky || (q & 1u))) {
        ++q;
    }
    /* frexp: value = (q / 2^53) * 2^(e + 53); round(q / 2^53 * 2^31) half away from zero */
    quantize_finish((int64_t)((q + ((uint64_t)1 << 21)) >> 22), e + 53, qm, shift);
    return 0;
}

void mn_qtype_range(int qtype, int32_t *qmin, int32_t *qmax) {
    switch (qtype) {
        case MN_QTYPE_UINT8:
            *qmin = 0;
            *qmax = 255;
            break;
        case MN_QTYPE_INT16:
            *qmin = INT16_MIN;
            *qmax = INT16_MAX;
            break;
        case MN_QTYPE_INT32:
            *qmin = INT32_MIN;
            *qmax = INT32_MAX;
            break;
        case MN_QTYPE_INT8:
        default:
            *qmin = INT8_MIN;
            *qmax = INT8_MAX;
            break;
    }
}

static void conv_multiplier(float input_scale, float fs, float output_scale, int32_t *mult, int8_t *shift) {
    uint32_t mi, mf;
    int ei, ef, s;
    /* (double)input_scale * (double)fs is exact (48 bits): divide it in integers */
    if (float_parts(input_scale, &mi, &ei) || float_parts(fs, &mf, &ef) ||
        quantize_ratio((uint64_t)mi * mf, ei + ef, output_scale, mult, &s)) {
        mn_quantize_multiplier((double)input_scale * (double)fs / (double)output_scale, mult, &s);
    }
    *shift = (int8_t)s;   /* quantize_finish keeps shifts in [-31, 31] */
}

void mn_conv_multipliers(float input_scale, const float *filter_scales, int n_scales,
    float output_scale, int n_out, int32_t *mult, int8_t *shift) {
    for (int i = 0; i < n_out; ++i) {
        if (i > 0 && n_scales <= 1) {   /* one filter scale: one multiplier */
            mult[i] = mult[0];
            shift[i] = shift[0];
        } else {
            conv_multiplier(input_scale, n_scales > 1 ? filter_scales[i] : filter_scales[0], output_scale,
                &mult[i], &shift[i]);
        }
    }
}

void mn_conv_multipliers_le(float input_scale, const uint8_t *filter_scales, int n, float output_scale,
    int32_t *mult, int8_t *shift) {
    for (int i = 0; i < n; ++i) {
        conv_multiplier(input_scale, mn_ld_f32(filter_scales + 4 * (size_t)i), output_scale, &mult[i], &shift[i]);
    }
}

float mn_roundf(float x) {
    return roundf(x);
}

/* zero_point + round(f / scale), computed in float like TFLite. */
static int quantize_bound(float scale, int32_t zero_point, float f, int32_t *q) {
    const float t = roundf(f / scale);
    if (!(t >= -2147483648.0f && t < 2147483648.0f)) {
        return -1;
    }
    *q = zero_point + (int32_t)t;
    return 0;
}

int mn_act_range_quant(int act, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max) {
    int32_t lo = qmin, hi = qmax, t;
    switch (act) {
        case MN_FUSED_ACT_NONE:
            break;
        case MN_FUSED_ACT_RELU:
            if (quantize_bound(scale, zero_point, 0.0f, &t)) {
                return -2;
            }
            lo = t > qmin ? t : qmin;
            break;
        case MN_FUSED_ACT_RELU6:
            if (quantize_bound(scale, zero_point, 0.0f, &t)) {
                return -2;
            }
            lo = t > qmin ? t : qmin;
            if (quantize_bound(scale, zero_point, 6.0f, &t)) {
                return -2;
            }
            hi = t < qmax ? t : qmax;
            break;
        case MN_FUSED_ACT_RELU_N1_TO_1:
            if (quantize_bound(scale, zero_point, -1.0f, &t)) {
                return -2;
            }
            lo = t > qmin ? t : qmin;
            if (quantize_bound(scale, zero_point, 1.0f, &t)) {
                return -2;
            }
            hi = t < qmax ? t : qmax;
            break;
        default:
            return -1;
    }
    *act_min = lo;
    *act_max = hi;
    return 0;
}

int mn_act_range_f32(int act, float *act_min, float *act_max) {
    switch (act) {
        case MN_FUSED_ACT_NONE:
            *act_min = -INFINITY;
            *act_max = INFINITY;
            return 0;
        case MN_FUSED_ACT_RELU:
            *act_min = 0.0f;
            *act_max = INFINITY;
            return 0;
        case MN_FUSED_ACT_RELU_N1_TO_1:
            *act_min = -1.0f;
            *act_max = 1.0f;
            return 0;
        case MN_FUSED_ACT_RELU6:
            *act_min = 0.0f;
            *act_max = 6.0f;
            return 0;
        default:
            return -1;
    }
}

const char *mn_fused_act_name(int act) {
    switch (act) {
        case MN_FUSED_ACT_NONE: return "NONE";
        case MN_FUSED_ACT_RELU: return "RELU";
        case MN_FUSED_ACT_RELU_N1_TO_1: return "RELU_N1_TO_1";
        case MN_FUSED_ACT_RELU6: return "RELU6";
        case MN_FUSED_ACT_TANH: return "TANH";
        case MN_FUSED_ACT_SIGN_BIT: return "SIGN_BIT";
        default: return "?";
    }
}

int mn_conv_out_size(int padding, int in_size, int filter_size, int stride, int dilation) {
    /* 64-bit so that absurd sizes from a malformed model cannot overflow */
    const int64_t eff = ((int64_t)filter_size - 1) * dilation + 1;
    int64_t num;
    if (stride <= 0) {
        return 0;
    }
    if (padding == 0) {
        num = (int64_t)in_size + stride - 1;
    } else if (padding == 1) {
        num = (int64_t)in_size + stride - eff;
    } else {
        return 0;
    }
    if (num < 0) {
        return 0; /* what truncating division then clamping to 0 gives */
    }
    const uint64_t out = mn_udivmod64((uint64_t)num, (uint32_t)stride, NULL);
    return out > INT32_MAX ? INT32_MAX : (int)out;
}

int mn_conv_padding(int stride, int dilation, int in_size, int filter_size, int out_size) {
    const int64_t eff = ((int64_t)filter_size - 1) * dilation + 1;
    int64_t total = ((int64_t)out_size - 1) * stride + eff - in_size;
    if (total < 0) {
        total = 0;
    }
    total /= 2;
    return total > INT32_MAX ? INT32_MAX : (int)total;
}

/* ---- gemmlowp-style fixed point ------------------------------------------ */

/* exp(a) on [-1/4, 0): Taylor expansion around -1/8, a and result in Q0.31. */
static int32_t exp_on_interval_neg_quarter_0(int32_t a) {
    const int32_t constant_term = 1895147668;     /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883;
    const int32_t x = a + (1 << 28);              /* a + 1/8 */
    const int32_t x2 = mn_srdhm(x, x);
    const int32_t x3 = mn_srdhm(x2, x);
    const int32_t x4 = mn_srdhm(x2, x2);
    const int32_t x4_over_4 = mn_rdbpot(x4, 2);
    const int32_t poly = mn_rdbpot(mn_srdhm(x4_over_4 + x3, constant_1_over_3) + x2, 1);
    return constant_term + mn_srdhm(constant_term, x + poly);
}

int32_t mn_exp_on_negative_values_q5(int32_t a) {
    const int frac_bits = 26;                     /* Q5.26 */
    const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
    const int32_t mask = one_quarter - 1;
    const int32_t a_mod_quarter_minus_quarter = (a & mask) - one_quarter;
    int32_t result = exp_on_interval_neg_quarter_0(mn_sat_shl(a_mod_quarter_minus_quarter, 5));
    const int32_t remainder = a_mod_quarter_minus_quarter - a;
    /* exp(-2^k) for k = -2 .. 4, in Q0.31 */
    static const int32_t mults[7] = { 1672461947, 1302514674, 790015084, 290630308,
                                      39332535, 720401, 242 };
    for (int k = 0; k < 7; ++k) {
        const int shift = frac_bits + k - 2;
        if (remainder & ((int32_t)1 << shift)) {
            result = mn_srdhm(result, mults[k]);
        }
    }
    if (a == 0) {
        result = INT32_MAX;
    }
    return result;
}

int32_t mn_one_over_one_plus_x(int32_t a) {
    /* half_denominator = (a + 1) / 2, rounded (gemmlowp RoundingHalfSum) */
    const int64_t sum = (int64_t)a + (int64_t)INT32_MAX;
    const int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t c48_17 = 1515870810;            /* 48/17 in Q2.29 */
    const int32_t cm32_17 = -1010580540;          /* -32/17 in Q2.29 */
    int32_t x = c48_17 + mn_srdhm(half_den, cm32_17);
    for (int i = 0; i < 3; ++i) {                 /* Newton-Raphson */
        const int32_t hdx = mn_srdhm(half_den, x);
        const int32_t one_minus = ((int32_t)1 << 29) - hdx;
        x = x + mn_sat_shl(mn_srdhm(x, one_minus), 2);
    }
    return mn_sat_shl(x, 1);
}

static int clz32(uint32_t x) {
    if (x == 0) {
        return 32;
    }
    int n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        ++n;
    }
    return n;
}

int32_t mn_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit) {
    const int headroom_plus_one = clz32((uint32_t)x);
    *num_bits_over_unit = x_integer_digits - headroom_plus_one;
    const int32_t shifted_minus_one =
        (int32_t)(((uint32_t)x << headroom_plus_one) - ((uint32_t)1 << 31));
    return mn_one_over_one_plus_x(shifted_minus_one);
}

void mn_softmax_scaling(double beta, double input_scale, int integer_bits,
    int32_t *mult, int *left_shift) {
    double m = beta * input_scale * (double)(1 << (31 - integer_bits));
    const double cap = (double)((int64_t)1 << 31) - 1.0;
    if (m > cap) {
        m = cap;
    }
    mn_quantize_multiplier(m, mult, left_shift);
}

int mn_input_radius(int integer_bits, int left_shift) {
    const double max_input_rescaled = 1.0 * (double)((1 << integer_bits) - 1) *
        (double)((int64_t)1 << (31 - integer_bits)) / (double)((int64_t)1 << left_shift);
    return (int)max_input_rescaled; /* positive and < 2^31: truncation is floor */
}

/* ---- gemmlowp int16 fixed point (integer LSTM) ----------------------------- */

/* int32 -> int16 with two's complement wrap-around (the C++ code narrows its
 * int arithmetic back to int16 the same way). */
static int16_t w16(int32_t x) {
    return (int16_t)(uint16_t)(uint32_t)x;
}

/* gemmlowp RescaleConstantInitializer: int32 raw constant -> int16 raw. */
static int16_t c16(int32_t c) {
    return (int16_t)mn_rdbpot(c, 16);
}

/* SaturatingRoundingDoublingHighMul for int16. */
static int16_t srdhm16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) {
        return INT16_MAX;
    }
    const int32_t ab = (int32_t)a * (int32_t)b;
    const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((ab + nudge) / (1 << 15));
}

/* Saturating x * 2^e, 0 < e < 15. */
static int16_t sat_shl16(int16_t x, int e) {
    const int32_t threshold = ((int32_t)1 << (15 - e)) - 1;
    if (x > threshold) {
        return INT16_MAX;
    }
    if (x < -threshold) {
        return INT16_MIN;
    }
    return (int16_t)((int32_t)x * ((int32_t)1 << e));
}

static int16_t sat_add16(int16_t a, int16_t b) {
    return (int16_t)mn_clamp_i32((int32_t)a + b, INT16_MIN, INT16_MAX);
}

/* exp(a) on [-1/4, 0), a and result in Q0.15. */
static int16_t exp_neg_quarter16(int16_t a) {
    const int16_t constant_term = c16(1895147668);   /* exp(-1/8) */
    const int16_t one_third = c16(715827883);
    const int16_t x = w16(a + (1 << 12));            /* a + 1/8 */
    const int16_t x2 = srdhm16(x, x);
    const int16_t x3 = srdhm16(x2, x);
    const int16_t x4 = srdhm16(x2, x2);
    const int16_t x4_over_4 = (int16_t)mn_rdbpot(x4, 2);
    const int16_t poly = (int16_t)mn_rdbpot(w16(srdhm16(w16(x4_over_4 + x3), one_third) + x2), 1);
    return sat_add16(constant_term, srdhm16(constant_term, w16(x + poly)));
}

/* exp(a) for a <= 0, a in Q(int_bits) (1 <= int_bits <= 7), result in Q0.15. */
static int16_t exp_neg16(int16_t a, int int_bits) {
    const int frac_bits = 15 - int_bits;
    const int16_t one_quarter = (int16_t)(1 << (frac_bits - 2));
    const int16_t mask = (int16_t)(one_quarter - 1);
    const int16_t a_mod_quarter_minus_quarter = w16((a & mask) - one_quarter);
    int16_t result = exp_neg_quarter16(sat_shl16(a_mod_quarter_minus_quarter, int_bits));
    const int16_t remainder = w16(a_mod_quarter_minus_quarter - a);
    /* exp(-2^k) for k = -2 .. 4, int32 Q0.31 constants as gemmlowp gives them */
    static const int32_t mults[7] = { 1672461947, 1302514674, 790015084, 290630308,
                                      39332535, 720401, 242 };
    for (int k = -2; k <= 4; ++k) {
        if (int_bits > k && (remainder & (1 << (frac_bits + k)))) {
            result = srdhm16(result, c16(mults[k + 2]));
        }
    }
    if (int_bits > 5) {
        const int16_t clamp = c16(-((int32_t)1 << (36 - int_bits)));  /* -32 */
        if (a < clamp) {
            result = 0;
        }
    }
    if (a == 0) {
        result = INT16_MAX;
    }
    return result;
}

/* Newton-Raphson reciprocal of the half denominator (1 + a) / 2, i.e. 2 / (1 + a)
 * in Q2.13, for a in Q0.15 (gemmlowp one_over_one_plus_x / one_minus_x_over_one_plus_x). */
static int16_t two_over_one_plus16(int16_t a) {
    const int32_t sum = (int32_t)a + INT16_MAX;      /* RoundingHalfSum(a, 1) */
    const int16_t half_den = (int16_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int16_t c48_17 = c16(1515870810);          /* 48/17 in Q2.13 */
    const int16_t cm32_17 = c16(-1010580540);        /* -32/17 in Q2.13 */
    int16_t x = w16(c48_17 + srdhm16(half_den, cm32_17));
    for (int i = 0; i < 3; ++i) {
        const int16_t hdx = srdhm16(half_den, x);
        const int16_t one_minus = w16((1 << 13) - hdx);
        x = w16(x + sat_shl16(srdhm16(x, one_minus), 2));
    }
    return x;
}

int16_t mn_logistic_s16_q3(int16_t x) {
    if (x == 0) {
        return c16(1 << 30);                         /* 1/2 */
    }
    const int positive = x > 0;
    const int16_t abs_x = positive ? x : w16(-x);
    /* 1 / (1 + e) = (2 / (1 + e)) / 2: Q2.13 read as Q1.14, rescaled to Q0.15 */
    const int16_t r = sat_shl16(two_over_one_plus16(exp_neg16(w16(-abs_x), 3)), 1);
    return positive ? r : w16(INT16_MAX - r);
}

int16_t mn_tanh_s16(int16_t x, int integer_bits) {
    if (x == 0) {
        return 0;
    }
    const int negative = x < 0;
    const int16_t n = negative ? x : w16(-x);
    /* -tanh(n) = (1 - e) / (1 + e) = 2 / (1 + e) - 1 with e = exp(2n), n <= 0 */
    const int16_t two_over = two_over_one_plus16(exp_neg16(n, integer_bits + 1));
    const int16_t t = sat_shl16(w16(two_over - (1 << 13)), 2);
    return negative ? w16(-t) : t;
}

int16_t mn_srdhm_s16(int16_t a, int16_t b) {
    return srdhm16(a, b);
}

/* TFLite GetInvSqrtQuantizedMultiplierExp (L2_NORMALIZATION, RSQRT): Newton-Raphson in Q3.28. */
void mn_inv_sqrt_q(int32_t input, int32_t *mult, int *shift) {
    if (input <= 1) {
        /* 0 (invalid) and 1 alike, as TFLite */
        *mult = INT32_MAX;
        *shift = 0;
        return;
    }
    int s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++s;
    }
    int clz = 0;
    while (!((uint32_t)input & (0x80000000u >> clz))) {
        ++clz;
    }
    const int pairs = (clz - 1) / 2 - 1;
    s -= pairs;
    input <<= 2 * pairs;
    /* Newton-Raphson for 1 / sqrt(input) in Q3.28 (values raw, products Q6 / Q9 rescaled to Q3) */
    const int32_t half_input = mn_rdbpot(input >> 1, 1);
    const int32_t half_three = (1 << 28) + (1 << 27);
    int32_t x = 1 << 28;
    for (int i = 0; i < 5; ++i) {
        const int32_t x3 = mn_sat_pot(mn_srdhm(mn_srdhm(x, x), x), 6);
        x = mn_sat_pot(mn_add_wrap(mn_srdhm(half_three, x), -mn_srdhm(half_input, x3)), 3);
    }
    x = mn_srdhm(x, 1518500250); /* sqrt(2) / 2 in Q0.31 */
    if (s < 0) {
        x = mn_shl_wrap(x, -s);
        s = 0;
    }
    *mult = x;
    *shift = -s;
}

/* float -> int8 for dynamic quantization: round half away from zero, clamp; NaN (only from a
 * non-finite input) to lo instead of the reference's undefined conversion. */
static int8_t quantize_dynamic_one(float v, int32_t lo, int32_t hi) {
    const float r = roundf(v);
    return (int8_t)(!(r > (float)lo) ? lo : r >= (float)hi ? hi : (int32_t)r);
}

float mn_quantize_dynamic_s8(const float *x, size_t n, int8_t *q, int asymmetric, int32_t *zero_point) {
    float lo = n ? x[0] : 0.0f, hi = lo;
    for (size_t i = 1; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    *zero_point = 0;
    if (!asymmetric) {
        const float range = fabsf(lo) < fabsf(hi) ? fabsf(hi) : fabsf(lo);
        if (range == 0.0f) {
            memset(q, 0, n);
            return 1.0f;
        }
        const float inv = 127.0f / range;
        for (size_t i = 0; i < n; ++i) {
            q[i] = quantize_dynamic_one(x[i] * inv, -127, 127);
        }
        return range / 127.0f;
    }
    /* the range always includes 0; scale and zero point in double, as the reference */
    const double rmin = lo < 0.0f ? (double)lo : 0.0, rmax = hi > 0.0f ? (double)hi : 0.0;
    if (rmin == rmax) {
        memset(q, 0, n);
        return 1.0f;
    }
    const double scale = (rmax - rmin) / 255.0;
    const double zp_min = -128.0 - rmin / scale, zp_max = 127.0 - rmax / scale;
    /* rmin <= 0 <= rmax: the reference's error terms 128 + |rmin / scale| and 127 + |rmax / scale| */
    const double zp = 128.0 - rmin / scale < 127.0 + rmax / scale ? zp_min : zp_max;
    const int32_t z = !(zp > -128.0) ? -128 : zp >= 127.0 ? 127 : (int32_t)MN_ROUND_F64(zp);   /* NaN: -128 */
    const float sf = (float)scale;
    const float inv = 1.0f / sf;
    for (size_t i = 0; i < n; ++i) {
        q[i] = quantize_dynamic_one((float)z + x[i] * inv, -128, 127);
    }
    *zero_point = z;
    return sf;
}
