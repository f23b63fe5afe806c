/* Lookup tables shared by the activation kernels (LOGISTIC, TANH, ELU, GELU, LOG, SOFTMAX
 * int16): TFLite's table generation reproduced step by step, so that tables, and therefore
 * outputs, are identical to its reference kernels. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_LOGISTIC || MICRONN_OP_TANH || MICRONN_OP_ELU || MICRONN_OP_GELU || MICRONN_OP_LOG || \
    MICRONN_OP_EXP
#define MN_NEED_LUT_S8 1
#endif
#if MICRONN_OP_GELU || MICRONN_OP_LOG || MICRONN_OP_EXP
#define MN_NEED_LUT_S16 1
#endif
#define MN_COMMA ,

#if MN_NEED_LUT_S8

/* float -> int32 as x86's cvttss2si does it (what TFLite's static_cast compiles to): NaN and
 * values out of range give INT32_MIN; then clamped by the caller. */
static int32_t f2i_sat(float x) {
    return (x >= -2147483648.0f && x < 2147483648.0f) ? (int32_t)x : INT32_MIN;
}

void mn_lut_s8_init(int8_t *lut, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
    mn_lut_fn_t f, const void *arg) {
    const float inverse_scale = 1.0f / out_scale;
    for (int32_t v = INT8_MIN; v <= INT8_MAX; ++v) {
        const float x = in_scale * (float)(v - in_zp);
        const float rescaled = roundf(f(x, arg) * inverse_scale);
        const int32_t q = f2i_sat(rescaled + (float)out_zp);
        lut[(uint8_t)(int8_t)v] = (int8_t)mn_clamp_i32(q, INT8_MIN, INT8_MAX);
    }
}

void mn_lut_s8(size_t n, const int8_t *lut, const int8_t *in, int8_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = lut[(uint8_t)in[i]];
    }
}

#endif /* MN_NEED_LUT_S8 */

#if MICRONN_OP_SOFTMAX || MN_NEED_LUT_S16

/* Each of the 512 segments is biased by half the error of linear interpolation at its
 * midpoint, as TFLite does. FT is TFLite's FloatT (double for SOFTMAX, float elsewhere). */
#define DEFINE_LUT_S16_INIT(NAME, FT, ROUND, FN_DECL, CALL) \
    void NAME(int16_t *lut, FT in_scale, int32_t in_zp, FT out_scale, int32_t out_zp, FN_DECL) { \
        const FT in_min = in_scale * (FT)(INT16_MIN - in_zp); \
        const FT in_max = in_scale * (FT)(INT16_MAX - in_zp); \
        const FT out_min = out_scale * (FT)(INT16_MIN - out_zp); \
        const FT out_max = out_scale * (FT)(INT16_MAX - out_zp); \
        const int steps = MN_LUT_S16_SIZE - 1; \
        const FT step = (in_max - in_min) / (FT)steps; \
        const FT half_step = step / 2; \
        const FT inv = (FT)65536 / (out_max - out_min); \
        for (int i = 0; i < steps; ++i) { \
            const FT val = CALL(in_min + (FT)i * step); \
            const FT val_mid = CALL(in_min + (FT)i * step + half_step); \
            const FT val_next = CALL(in_min + (FT)(i + 1) * step); \
            const FT sample = ROUND(val * inv); \
            const FT mid_interp = ROUND((val_next * inv + ROUND(val * inv)) / 2); \
            const FT mid = ROUND(val_mid * inv); \
            const FT bias = ROUND((mid_interp - mid) / 2); \
            FT q = sample - bias; \
            q = q < INT16_MIN ? INT16_MIN : (q > INT16_MAX ? INT16_MAX : q); \
            lut[i] = (int16_t)q; \
        } \
        FT last = ROUND(CALL(in_max) * inv); \
        last = last < INT16_MIN ? INT16_MIN : (last > INT16_MAX ? INT16_MAX : last); \
        lut[steps] = (int16_t)last; \
    }

#if MICRONN_OP_SOFTMAX
#define CALL_F64(x) f(x)
DEFINE_LUT_S16_INIT(mn_lut_s16_init_f64, double, MN_ROUND_F64, double (*f)(double), CALL_F64)
#endif

#if MN_NEED_LUT_S16
#define CALL_F32(x) f(x, arg)
DEFINE_LUT_S16_INIT(mn_lut_s16_init, float, roundf, mn_lut_fn_t f MN_COMMA const void *arg, CALL_F32)

void mn_lut_s16(size_t n, const int16_t *lut, const int16_t *in, int16_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = mn_lut_s16_lookup(in[i], lut);
    }
}
#endif

#endif /* MICRONN_OP_SOFTMAX || MN_NEED_LUT_S16 */

#if MICRONN_OP_LOGISTIC || MICRONN_OP_TANH

int mn_checked_log2(float x, int *log2) {
    const float l = logf(x) * (1.0f / logf(2.0f));
    const float r = roundf(l);
    *log2 = (int)r;
    return mn_absf(l - r) < 1e-3f;
}

int mn_sig16_init(mn_sig16_t *p, float in_scale, float out_scale, int max_pot_shift) {
    int l2;
    const int pot = mn_checked_log2(in_scale, &l2);
    p->shift = 12 + l2;
    p->mult = 0;
    if (!(pot && p->shift >= 0 && p->shift <= max_pot_shift)) {
        /* rescale to 1 / (3 * 4096): the table covers [-10.7, 10.7] instead of [-8, 8] */
        double m = (double)in_scale * 4096.0 * 3.0;
        p->shift = 0;
        while (m <= 32767.0 / 2.0 && p->shift <= 30) {
            p->shift++;
            m *= 2.0;
        }
        if (!(m < 65536.0)) {
            return -2; /* x * mult would overflow int32 */
        }
        p->mult = (int32_t)m;
    }
    int ol2;
    if (!mn_checked_log2(out_scale, &ol2) || ol2 != -15) {
        return -1;
    }
    return 0;
}

/* sigmoid(i / 24) in unsigned Q0.16, i = 0..255: the values of TFLite's sigmoid_table_uint16
 * (not a plain rounding of the function, so they are listed; the int16 LOGISTIC and TANH results
 * depend on every entry). tanh(x) = 2 sigmoid(2x) - 1 lets TANH share it. */
const uint16_t mn_sigmoid_table_u16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

#endif /* MICRONN_OP_LOGISTIC || MICRONN_OP_TANH */
