/* The Armv7E-M DSP backend: its variant lists and the shared SIMD helpers (dsp.h). */
#include "dsp.h"

bool dsp_fast_requant_ok(const int8_t *shift, int n, const int32_t *bias, int taps) {
    int64_t max_bias = 0;
    for (int i = 0; i < n; ++i) {
        const int64_t b = bias ? (bias[i] < 0 ? -(int64_t)bias[i] : bias[i]) : 0;
        max_bias = b > max_bias ? b : max_bias;
        if (shift[i] >= 0) {
            return false;
        }
    }
    return max_bias + (int64_t)taps * 255 * 128 < ((int64_t)1 << 30);
}

int8_t dsp_out_exact(int32_t acc, int32_t mult, int shift, int32_t out_off, int32_t lo, int32_t hi) {
    return dsp_out(acc, mult, shift, out_off, lo, hi);
}

/* Expand n int8 to int16 + offset: groups of four as two words [x0 x2] [x1 x3] at dst and
 * dst + gap, next group at dst + step; the tail one value every tail_step. */
static void expand(const int8_t *src, int16_t *dst, int n, int32_t offset, int gap, int step, int tail_step) {
    const int32_t off2 = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
    int i = 0;
    for (; i + 4 <= n; i += 4, dst += step) {
        const int32_t x = dsp_ld32(src + i);
        const int32_t even = __sadd16(__sxtb16(x), off2), odd = __sadd16(dsp_sxtb16_ror8(x), off2);
        memcpy(dst, &even, 4);
        memcpy(dst + gap, &odd, 4);
    }
    for (; i < n; ++i, dst += tail_step) {
        *dst = (int16_t)(src[i] + offset);
    }
}

void dsp_expand_pair(const int8_t *src, int16_t *pair, int which, int n, int32_t offset) {
    /* groups: column 1 two halfwords after column 0; tail pairs: one halfword after */
    const int n4 = n & ~3;
    expand(src, pair + 2 * which, n4, offset, 4, 8, 2);
    for (int i = n4; i < n; ++i) {
        pair[2 * i + which] = (int16_t)(src[i] + offset);   /* tail pairs: one halfword apart */
    }
}

/* int8 variants only: none when the firmware is built without that type family (mn_config.h);
 * each list in dsp_fits.h's order, with the variants the firmware links (MICRONN_VARIANTS) */
#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8
static const mn_conv_s8_variant_t *const conv_s8[] = { MN_DSP_CONV_S8(MN_VARIANT_ENTRY) NULL };
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8
static const mn_conv_s8_variant_t *const depthwise_s8[] = { MN_DSP_DEPTHWISE_S8(MN_VARIANT_ENTRY) NULL };
#define DEPTHWISE_S8 depthwise_s8
#else
#define DEPTHWISE_S8 NULL
#endif

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8
static const mn_fc_s8_variant_t *const fc_s8[] = { MN_DSP_FC_S8(MN_VARIANT_ENTRY) NULL };
#define FC_S8 fc_s8
#else
#define FC_S8 NULL
#endif

#if MICRONN_OP_SVDF
static const mn_svdf_s8_variant_t *const svdf_s8[] = { MN_DSP_SVDF_S8(MN_VARIANT_ENTRY) NULL };
#define SVDF_S8 svdf_s8
#else
#define SVDF_S8 NULL
#endif

#if (MICRONN_OP_ADD || MICRONN_OP_SUB) && MICRONN_TYPE_INT8
static const mn_add_s8_variant_t *const add_s8[] = { MN_DSP_ADD_S8(MN_VARIANT_ENTRY) NULL };
#define ADD_S8 add_s8
#else
#define ADD_S8 NULL
#endif

#if MICRONN_OP_MUL && MICRONN_TYPE_INT8
static const mn_mul_s8_variant_t *const mul_s8[] = { MN_DSP_MUL_S8(MN_VARIANT_ENTRY) NULL };
#define MUL_S8 mul_s8
#else
#define MUL_S8 NULL
#endif

const mn_backend_t mn_backend_dsp = {
    .name = "dsp",
    .conv_s8 = CONV_S8,
    .depthwise_s8 = DEPTHWISE_S8,
    .fc_s8 = FC_S8,
    .svdf_s8 = SVDF_S8,
    .add_s8 = ADD_S8,
    .mul_s8 = MUL_S8,
};
