/*
 * Portable QUANTIZE requantization between int8 and int16 (mn_requantize_s8_s8 / _s16_s8 /
 * _s16_s16): the reference's per-element steps with the cheaper exact multiply
 * (mn_generic_requant) and the parameters in registers.
 */
#include "generic.h"

#if MICRONN_OP_QUANTIZE

/* The input minus its zero point cannot overflow for int8 / int16 input. */
#define DEFINE_REQUANT(NAME, IN_DT, TIN, OUT_DT, TOUT, LO, HI) \
    static bool NAME##_fits(int in_dtype, int out_dtype, const mn_requant_t *r) { \
        return in_dtype == IN_DT && out_dtype == OUT_DT && r->mult != INT32_MIN; \
    } \
    static void NAME##_run(size_t n, const mn_requant_t *r, const void *in, void *out) { \
        const TIN *src = (const TIN *)in; \
        TOUT *dst = (TOUT *)out; \
        const int32_t in_zp = r->in_zp, out_zp = r->out_zp, mult = r->mult; \
        const int shift = r->shift; \
        for (size_t i = 0; i < n; ++i) { \
            const int32_t y = mn_add_wrap(mn_generic_requant((int32_t)src[i] - in_zp, mult, shift), out_zp); \
            dst[i] = (TOUT)mn_clamp_i32(y, LO, HI); \
        } \
    } \
    const mn_requant_variant_t mn_generic_##NAME = { "generic." #NAME, NAME##_fits, NAME##_run };

DEFINE_REQUANT(requant_s8_s8, MN_INT8, int8_t, MN_INT8, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(requant_s16_s8, MN_INT16, int16_t, MN_INT8, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(requant_s16_s16, MN_INT16, int16_t, MN_INT16, int16_t, INT16_MIN, INT16_MAX)

#endif /* MICRONN_OP_QUANTIZE */
