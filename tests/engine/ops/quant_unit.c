/*
 * Hand-checked unit tests of mn_quant and a few pure reference kernels.
 * Built and run by test_quant_unit.py (also runnable by hand:
 *   see the command line in test_quant_unit.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mn_quant.h"
#include "mn_ref.h"

static int failures;

#define EXPECT_EQ(a, b) \
    do { \
        long long a_ = (long long)(a), b_ = (long long)(b); \
        if (a_ != b_) { \
            printf("%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
            failures++; \
        } \
    } while (0)

static void qm(double m, long long want_q, int want_s) {
    int32_t q;
    int s;
    mn_quantize_multiplier(m, &q, &s);
    if (q != want_q || s != want_s) {
        printf("quantize_multiplier(%.17g) = (%ld, %d), expected (%lld, %d)\n", m, (long)q, s, want_q, want_s);
        failures++;
    }
}

static void test_quantize_multiplier(void) {
    qm(0.0, 0, 0);
    qm(0.5, 1 << 30, 0);
    qm(1.0, 1 << 30, 1);
    qm(0.75, 1610612736, 0);
    qm(0.25, 1 << 30, -1);
    qm(3.0, 1610612736, 2);
    qm(-0.5, -(1 << 30), 0);
    qm(0.99999999999, 1 << 30, 1);            /* rounds up to 2^31: carried into the exponent */
    qm(1.0 / 3.0, 1431655765, -1);            /* 0.666..*2^31 = 1431655765.33 */
    qm(9.5367431640625e-07, 1 << 30, -19);    /* 2^-20 */
    qm(1e-12, 0, 0);                          /* below 2^-32: flushed to zero */
    qm(0.0000152587890625, 1 << 30, -15);     /* 2^-16 */
}

/* mn_quantize_multiplier (own frexp/round) against the libm formulation, many values. */
static void test_quantize_multiplier_vs_libm(void) {
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        const double mant = (double)(s >> 11) / 9007199254740992.0;      /* [0, 1) */
        const int ex = (int)((s >> 3) % 80) - 60;
        double m = ldexp(mant, ex);
        if (i % 7 == 0) {
            m = -m;
        }
        if (i % 11 == 0) {
            m = ldexp(1.0, ex) * (1.0 - ldexp(1.0, -33 - (int)(s % 20)));  /* near carries */
        }
        int32_t q;
        int sh;
        mn_quantize_multiplier(m, &q, &sh);
        int e;
        int64_t want_q = 0;
        int want_s = 0;
        if (m != 0.0) {
            const double f = frexp(m, &e);
            want_q = (int64_t)round(f * 2147483648.0);
            want_s = e;
            if (want_q == ((int64_t)1 << 31)) {
                want_q /= 2;
                ++want_s;
            }
            if (want_s < -31) {
                want_s = 0;
                want_q = 0;
            }
        }
        if (q != want_q || sh != want_s) {
            printf("quantize_multiplier(%.17g) = (%ld, %d), libm gives (%lld, %d)\n", m, (long)q, sh,
                (long long)want_q, want_s);
            failures++;
            return;
        }
    }
}

static void test_srdhm_rdbpot(void) {
    EXPECT_EQ(mn_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
    EXPECT_EQ(mn_srdhm(1 << 30, 1 << 30), 1 << 29);
    EXPECT_EQ(mn_srdhm(3, 1 << 30), 2);       /* 1.5 -> 2 */
    EXPECT_EQ(mn_srdhm(-3, 1 << 30), -1);     /* -1.5 -> -1 (nudge 1 - 2^30, truncating division) */
    EXPECT_EQ(mn_srdhm(-5, 1 << 30), -2);     /* -2.5 -> -2 */
    EXPECT_EQ(mn_srdhm(INT32_MAX, INT32_MAX), 2147483646);
    EXPECT_EQ(mn_srdhm(INT32_MIN, INT32_MAX), -2147483647);
    EXPECT_EQ(mn_srdhm(0, 12345), 0);

    EXPECT_EQ(mn_rdbpot(5, 1), 3);            /* 2.5 -> 3 */
    EXPECT_EQ(mn_rdbpot(-5, 1), -3);          /* -2.5 -> -3 */
    EXPECT_EQ(mn_rdbpot(-6, 2), -2);          /* -1.5 -> -2 */
    EXPECT_EQ(mn_rdbpot(7, 2), 2);            /* 1.75 -> 2 */
    EXPECT_EQ(mn_rdbpot(-7, 2), -2);
    EXPECT_EQ(mn_rdbpot(6, 2), 2);            /* 1.5 -> 2 */
    EXPECT_EQ(mn_rdbpot(5, 2), 1);            /* 1.25 -> 1 */
    EXPECT_EQ(mn_rdbpot(123, 0), 123);
    EXPECT_EQ(mn_rdbpot(INT32_MIN, 31), -1);
    EXPECT_EQ(mn_rdbpot(INT32_MAX, 31), 1);

    EXPECT_EQ(mn_mul_by_qm(100, 1 << 30, 0), 50);
    EXPECT_EQ(mn_mul_by_qm(100, 1 << 30, 2), 200);
    EXPECT_EQ(mn_mul_by_qm(100, 1 << 30, -3), 6);   /* 50 / 8 = 6.25 */
    EXPECT_EQ(mn_mul_by_qm(-100, 1 << 30, -3), -6);
    EXPECT_EQ(mn_mul_by_qm(-52, 1 << 30, -3), -3);  /* -26 / 8 = -3.25 */
    EXPECT_EQ(mn_mul_by_qm(-60, 1 << 30, -3), -4);  /* -30 / 8 = -3.75 */
    EXPECT_EQ(mn_mul_by_qm(12, 1610612736, 1), 18); /* 12 * 1.5 */
}

static void test_act_range(void) {
    int32_t lo, hi;
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_NONE, 0.1f, -10, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(lo, -128);
    EXPECT_EQ(hi, 127);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU, 0.1f, -10, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(lo, -10);
    EXPECT_EQ(hi, 127);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU6, 0.1f, -10, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(lo, -10);
    EXPECT_EQ(hi, 50);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU_N1_TO_1, 0.1f, -10, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(lo, -20);
    EXPECT_EQ(hi, 0);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU6, 0.01f, 0, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(hi, 127);                        /* 600 clipped to the type */
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU_N1_TO_1, 0.4f, 0, -128, 127, &lo, &hi), 0);
    EXPECT_EQ(lo, -3);                         /* round(-2.5) = -3, half away from zero */
    EXPECT_EQ(hi, 3);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_TANH, 0.1f, 0, -128, 127, &lo, &hi), -1);
    /* a bound past int32 at the output scale (6 / 1e-9): refused, as LiteRT refuses it */
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU6, 1e-9f, 0, -32768, 32767, &lo, &hi), -2);
    EXPECT_EQ(mn_act_range_quant(MN_FUSED_ACT_RELU_N1_TO_1, 1e-10f, 0, -32768, 32767, &lo, &hi), -2);
    float flo, fhi;
    EXPECT_EQ(mn_act_range_f32(MN_FUSED_ACT_RELU6, &flo, &fhi), 0);
    EXPECT_EQ(flo == 0.0f && fhi == 6.0f, 1);
    EXPECT_EQ(mn_act_range_f32(MN_FUSED_ACT_SIGN_BIT, &flo, &fhi), -1);
}

static void test_padding(void) {
    EXPECT_EQ(mn_conv_out_size(0, 7, 3, 2, 1), 4);   /* SAME */
    EXPECT_EQ(mn_conv_out_size(1, 7, 3, 2, 1), 3);   /* VALID */
    EXPECT_EQ(mn_conv_out_size(1, 7, 3, 1, 2), 3);   /* VALID, dilation 2: effective 5 */
    EXPECT_EQ(mn_conv_out_size(0, 7, 3, 1, 2), 7);
    EXPECT_EQ(mn_conv_out_size(1, 96, 3, 2, 1), 47);
    EXPECT_EQ(mn_conv_padding(2, 1, 7, 3, 4), 1);    /* total 2 */
    EXPECT_EQ(mn_conv_padding(2, 1, 8, 3, 4), 0);    /* total 1: leading 0 */
    EXPECT_EQ(mn_conv_padding(1, 2, 7, 3, 7), 2);    /* total 4 */
    EXPECT_EQ(mn_conv_padding(1, 1, 7, 3, 5), 0);    /* VALID */
}

static void test_conv_1x1(void) {
    /* 1x1x1x2 input, two output channels, per-channel multipliers 0.5 and 0.25 */
    const int8_t in[2] = { 10, -4 };
    const int8_t w[4] = { 1, 2, -3, 1 };
    const int32_t bias[2] = { 5, -6 };
    int32_t mult[2] = { 1 << 30, 1 << 30 };
    int8_t shift[2] = { 0, -1 };
    mn_conv_geom_t g = { 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 0, 0 };
    mn_conv_quant_t q = { -2, 3, -128, 127, mult, shift };
    int8_t out[2];
    mn_conv_s8_per_channel(&g, &q, in, w, bias, out);
    /* ch0: 1*(10-2) + 2*(-4-2) = -4, +5 = 1, *0.5 = 0.5 -> 1 (srdhm rounds up), +3 = 4
     * ch1: -3*8 + 1*(-6) = -30, -6 = -36, *0.25 = -9, +3 = -6 */
    EXPECT_EQ(out[0], 4);
    EXPECT_EQ(out[1], -6);
}

static void test_avg_pool_rounding(void) {
    const int8_t in[4] = { -3, -2, 3, 2 };   /* 1x2x2x1 -> windows of 1x2 */
    int8_t out[2];
    mn_pool_geom_t g = { 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 0, 0 };
    EXPECT_EQ(mn_average_pool_s8(&g, -128, 127, in, out), 0);
    EXPECT_EQ(out[0], -3);                    /* -5/2 = -2.5 -> -3 */
    EXPECT_EQ(out[1], 3);                     /* 5/2 = 2.5 -> 3 */
}

static void test_add(void) {
    mn_add_quant_t p;
    mn_add_quant_init(&p, 0.5f, 0, 0.25f, 0, 1.0f, 0, -128, 127);
    EXPECT_EQ(p.input1_mult, 1 << 30);
    EXPECT_EQ(p.input1_shift, 0);
    EXPECT_EQ(p.input2_mult, 1 << 30);
    EXPECT_EQ(p.input2_shift, -1);
    EXPECT_EQ(p.output_mult, 1 << 30);
    EXPECT_EQ(p.output_shift, -19);
    const int32_t d[1] = { 3 };
    mn_bcast_t b;
    EXPECT_EQ(mn_bcast_init(&b, d, 1, d, 1), 0);
    const int8_t a[3] = { 2, -7, 100 }, c[3] = { 4, 3, 100 };
    int8_t o[3];
    mn_add_s8(&p, &b, a, c, o);
    EXPECT_EQ(o[0], 2);                       /* 1.0 + 1.0 */
    EXPECT_EQ(o[1], -3);                      /* -3.5 + 0.75 = -2.75 -> -3 */
    EXPECT_EQ(o[2], 75);                      /* 50 + 25 */
    const int32_t d1[2] = { 2, 1 }, d2[1] = { 3 };
    EXPECT_EQ(mn_bcast_init(&b, d1, 2, d2, 1), 0);
    EXPECT_EQ(b.size, 6);
    EXPECT_EQ(b.broadcast, 1);
    const int32_t d3[1] = { 4 };
    EXPECT_EQ(mn_bcast_init(&b, d1, 2, d3, 1) == 0 && d1[1] == 1, 1);
    const int32_t d4[2] = { 2, 3 };
    EXPECT_EQ(mn_bcast_init(&b, d4, 2, d3, 1), -1);
}

static void test_requantize(void) {
    /* int16 (scale 1/65536, zp -32768) -> int32 (scale ~1/32768): x - zp, halved */
    mn_requant_t r = { -32768, 0, 1 << 30, 0 };
    const int16_t in[3] = { -32768, 0, 32767 };
    int32_t out[3];
    mn_requantize_s16_s32(3, &r, in, out);
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(out[1], 16384);
    EXPECT_EQ(out[2], 32768);                 /* 65535 / 2 = 32767.5 -> 32768 */
}

int main(void) {
    test_quantize_multiplier();
    test_quantize_multiplier_vs_libm();
    test_srdhm_rdbpot();
    test_act_range();
    test_padding();
    test_conv_1x1();
    test_avg_pool_rounding();
    test_add();
    test_requantize();
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
