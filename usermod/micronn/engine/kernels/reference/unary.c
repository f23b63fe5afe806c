/* Elementwise unary math: ABS, CEIL, COS, ELU, EXP, FLOOR, GELU, LOG, NEG, ROUND, RSQRT, SIN,
 * SQRT, SQUARE. One float function per op (mn_unary_fn) is used for float32 and, where TFLite
 * quantizes an op through a lookup table (int8: ELU, EXP, GELU, LOG; int16: EXP, GELU, LOG), to
 * build that table in prepare exactly as TFLite does. ABS int8/int16 requantizes |x - zp|; NEG of
 * int8/int16/int32 and ABS of int32 / unquantized int16 work on the raw integers. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_ABS || MICRONN_OP_CEIL || MICRONN_OP_COS || MICRONN_OP_ELU || MICRONN_OP_EXP || \
    MICRONN_OP_FLOOR || MICRONN_OP_GELU || MICRONN_OP_LOG || MICRONN_OP_NEG || MICRONN_OP_ROUND || \
    MICRONN_OP_RSQRT || MICRONN_OP_SIN || MICRONN_OP_SQRT || MICRONN_OP_SQUARE

/* Round half to even (TFLite RoundToNearest); |x| >= 2^23 is already an integer. */
static float round_even(float x) {
    const float f = floorf(x);
    const float diff = x - f;
    if (diff < 0.5f || (diff == 0.5f && ((int32_t)f & 1) == 0)) {
        return f;
    }
    return f + 1.0f;
}

#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_SQRT1_2 0.70710678118654752f

float mn_unary_fn(int op, float x) {
    switch (op) {
        case MN_UNARY_ABS: return fabsf(x);
        case MN_UNARY_CEIL: return ceilf(x);
        case MN_UNARY_COS: return cosf(x);
        case MN_UNARY_ELU: return x < 0.0f ? expm1f(x) : x;
        case MN_UNARY_EXP: return expf(x);
        case MN_UNARY_FLOOR: return floorf(x);
        /* 0.5 x erfc(-x / sqrt(2)): no cancellation for large negative x, as TFLite */
        case MN_UNARY_GELU: return 0.5f * x * erfcf(x * -GELU_SQRT1_2);
        case MN_UNARY_GELU_TANH:
            return 0.5f * x * (1.0f + tanhf(GELU_SQRT_2_OVER_PI * (x + 0.044715f * x * x * x)));
        case MN_UNARY_LOG: return logf(x);
        case MN_UNARY_NEG: return -x;
        case MN_UNARY_ROUND: return round_even(x);
        case MN_UNARY_RSQRT: return 1.0f / sqrtf(x);
        case MN_UNARY_SIN: return sinf(x);
        case MN_UNARY_SQRT: return sqrtf(x);
        default: return x * x;  /* MN_UNARY_SQUARE */
    }
}

/* The switch is hoisted out of the loop: one tight loop per op. */
#define UNARY_LOOP(OP) \
    case OP: \
        for (size_t i = 0; i < n; ++i) { \
            out[i] = mn_unary_fn(OP, in[i]); \
        } \
        break;

void mn_unary_f32(int op, size_t n, const float *in, float *out) {
    switch (op) {
        UNARY_LOOP(MN_UNARY_ABS)
        UNARY_LOOP(MN_UNARY_CEIL)
        UNARY_LOOP(MN_UNARY_COS)
        UNARY_LOOP(MN_UNARY_ELU)
        UNARY_LOOP(MN_UNARY_EXP)
        UNARY_LOOP(MN_UNARY_FLOOR)
        UNARY_LOOP(MN_UNARY_GELU)
        UNARY_LOOP(MN_UNARY_GELU_TANH)
        UNARY_LOOP(MN_UNARY_LOG)
        UNARY_LOOP(MN_UNARY_NEG)
        UNARY_LOOP(MN_UNARY_ROUND)
        UNARY_LOOP(MN_UNARY_RSQRT)
        UNARY_LOOP(MN_UNARY_SIN)
        UNARY_LOOP(MN_UNARY_SQRT)
        UNARY_LOOP(MN_UNARY_SQUARE)
        default: break;
    }
}

#define DEFINE_ABS_Q(NAME, T, LO, HI) \
    void NAME(size_t n, const mn_requant_t *r, const T *in, T *out) { \
        for (size_t i = 0; i < n; ++i) { \
            const int32_t x = (int32_t)in[i] - r->in_zp; \
            const int32_t a = x < 0 ? -x : x; \
            const int32_t v = r->mult ? mn_mul_by_qm(a, r->mult, r->shift) : a; \
            out[i] = (T)mn_clamp_i32(v + r->out_zp, LO, HI); \
        } \
    }

DEFINE_ABS_Q(mn_abs_q_s8, int8_t, INT8_MIN, INT8_MAX)
DEFINE_ABS_Q(mn_abs_q_s16, int16_t, INT16_MIN, INT16_MAX)

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

enum { MODE_F32, MODE_LUT8, MODE_LUT16, MODE_ABS_Q, MODE_INT, MODE_SQRT_Q, MODE_RSQRT_Q };

typedef struct {
    size_t n;
    uint8_t op, dtype, mode;
    uint8_t nonneg;     /* SQRT / RSQRT: inputs below the zero point are an error, as in TFLite */
    float in_scale, out_scale;  /* MODE_SQRT_Q */
    mn_requant_t r;     /* MODE_ABS_Q, MODE_RSQRT_Q */
    int16_t lut[];      /* MODE_LUT8: 256 int8, MODE_LUT16: 513 int16 */
} unary_data_t;

static float lut_fn(float x, const void *arg) {
    return mn_unary_fn(*(const int *)arg, x);
}

/* TFLite's LOG table maps x <= 0 to the lowest output value instead of -inf / NaN. */
typedef struct {
    int op;
    float out_min;
} log_arg_t;

static float log_lut_fn(float x, const void *arg) {
    return x <= 0.0f ? ((const log_arg_t *)arg)->out_min : logf(x);
}

/* TFLite's int16 RSQRT table maps x <= 0 to the largest output. */
static float rsqrt_lut_fn(float x, const void *arg) {
    return x <= 0.0f ? (float)INT16_MAX * ((const log_arg_t *)arg)->out_min : 1.0f / sqrtf(x);
}

/* Quantized SQRT (LiteRT): sqrt of the dequantized input on the output scale, truncated. */
#define DEFINE_SQRT_Q(NAME, T, LO, HI) \
    static void NAME(const unary_data_t *d, const T *in, T *out) { \
        for (size_t i = 0; i < d->n; ++i) { \
            const float r = sqrtf(d->in_scale * (float)((int32_t)in[i] - d->r.in_zp)); \
            const float q = r / d->out_scale; \
            const int32_t v = q < 2147483520.0f ? (int32_t)q : INT32_MAX; \
            out[i] = (T)mn_clamp_i32(mn_add_wrap(v, d->r.out_zp), LO, HI); \
        } \
    }

DEFINE_SQRT_Q(sqrt_q_s8, int8_t, INT8_MIN, INT8_MAX)
DEFINE_SQRT_Q(sqrt_q_s16, int16_t, INT16_MIN, INT16_MAX)

/* int8 RSQRT (TFLite RsqrtEvalQuantizedInt8): fixed-point 1 / sqrt(x - zp) kept 2^20 larger, then
 * the multiplier of 1 / (sqrt(in_scale) * out_scale). x == zp gives the largest output. */
static void rsqrt_q_s8(const unary_data_t *d, const int8_t *in, int8_t *out) {
    for (size_t i = 0; i < d->n; ++i) {
        const int32_t v = (int32_t)in[i] - d->r.in_zp;
        if (v == 0) {
            out[i] = INT8_MAX;
            continue;
        }
        int32_t m;
        int sh;
        mn_inv_sqrt_q(v, &m, &sh);
        const int32_t data = mn_mul_by_qm(1, m, sh + 20);
        const int32_t o = mn_mul_by_qm(data, d->r.mult, d->r.shift - 20) + d->r.out_zp;
        out[i] = (int8_t)mn_clamp_i32(o, INT8_MIN, INT8_MAX);
    }
}

/* Index of the first input below the zero point, or -1. */
static long first_negative(const unary_data_t *d, const void *in) {
    for (size_t i = 0; i < d->n; ++i) {
        const int32_t x = d->dtype == MN_INT8 ? ((const int8_t *)in)[i] : ((const int16_t *)in)[i];
        if (x < d->r.in_zp) {
            return (long)i;
        }
    }
    return -1;
}

/* Bit i set: op i takes int8 (lut8) / int16 (lut16) through a table. */
#define LUT8_OPS ((1u << MN_UNARY_ELU) | (1u << MN_UNARY_EXP) | (1u << MN_UNARY_GELU) | \
    (1u << MN_UNARY_GELU_TANH) | (1u << MN_UNARY_LOG))
#define LUT16_OPS ((1u << MN_UNARY_EXP) | (1u << MN_UNARY_GELU) | (1u << MN_UNARY_GELU_TANH) | \
    (1u << MN_UNARY_LOG) | (1u << MN_UNARY_RSQRT))

static mn_status_t unary_prepare_op(mn_ctx_t *ctx, mn_node_t *node, int op) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    int mode;
    if (dt == MN_FLOAT32) {
        mode = MODE_F32;
    } else if (dt == MN_INT8 && (LUT8_OPS >> op & 1u)) {
        mode = MODE_LUT8;
    } else if (dt == MN_INT16 && (LUT16_OPS >> op & 1u)) {
        mode = MODE_LUT16;
    } else if ((dt == MN_INT8 || (dt == MN_INT16 && mn_tensor_q_count(in) > 0)) && op == MN_UNARY_ABS) {
        mode = MODE_ABS_Q;
    } else if ((dt == MN_INT8 || dt == MN_INT16) && op == MN_UNARY_SQRT) {
        mode = MODE_SQRT_Q;
    } else if (dt == MN_INT8 && op == MN_UNARY_RSQRT) {
        mode = MODE_RSQRT_Q;
    } else if (((dt == MN_INT8 || dt == MN_INT16 || dt == MN_INT32) && op == MN_UNARY_NEG) ||
               ((dt == MN_INT32 || dt == MN_INT16) && op == MN_UNARY_ABS)) {
        /* NEG of int8/int16 negates the raw values, ignoring quantization (as LiteRT) */
        mode = MODE_INT;
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    const size_t extra = mode == MODE_LUT8 ? 256u : (mode == MODE_LUT16 ? 2u * MN_LUT_S16_SIZE : 0u);
    unary_data_t *d = (unary_data_t *)mn_alloc_persistent(ctx, sizeof *d + extra);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->n = n;
    d->op = (uint8_t)op;
    d->dtype = (uint8_t)dt;
    d->mode = (uint8_t)mode;
    if (mode != MODE_F32 && mode != MODE_INT) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        d->r.in_zp = mn_tensor_zero_point(in, 0);
        d->r.out_zp = mn_tensor_zero_point(out, 0);
        d->nonneg = op == MN_UNARY_SQRT || op == MN_UNARY_RSQRT;
    }
    if (mode == MODE_LUT8 || mode == MODE_LUT16) {
        log_arg_t arg = { op, 0.0f };
        mn_lut_fn_t f = lut_fn;
        if (op == MN_UNARY_LOG) {
            arg.out_min = (float)((mode == MODE_LUT8 ? INT8_MIN : INT16_MIN) - mn_tensor_zero_point(out, 0)) * mn_tensor_scale(out, 0);
            f = log_lut_fn;
        } else if (op == MN_UNARY_RSQRT) {
            arg.out_min = mn_tensor_scale(out, 0);
            f = rsqrt_lut_fn;
        }
        if (mode == MODE_LUT8) {
            mn_lut_s8_init((int8_t *)(void *)d->lut, mn_tensor_scale(in, 0), mn_tensor_zero_point(in, 0), mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), f, &arg);
        } else {
            mn_lut_s16_init(d->lut, mn_tensor_scale(in, 0), mn_tensor_zero_point(in, 0), mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), f, &arg);
        }
    } else if (mode == MODE_ABS_Q) {
        d->r.mult = 0;
        if (mn_tensor_scale(in, 0) != mn_tensor_scale(out, 0)) {
            mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) / mn_tensor_scale(out, 0)), &d->r.mult, &d->r.shift);
        }
    } else if (mode == MODE_SQRT_Q) {
        d->in_scale = mn_tensor_scale(in, 0);
        d->out_scale = mn_tensor_scale(out, 0);
    } else if (mode == MODE_RSQRT_Q) {
        mn_quantize_multiplier(1.0 / (double)(sqrtf(mn_tensor_scale(in, 0)) * mn_tensor_scale(out, 0)), &d->r.mult, &d->r.shift);
    }
    node->user_data = d;
    return MN_OK;
}

/* Raw integer ABS / NEG, wrapping at the type's minimum like the C++ reference in practice. */
#define INT_UNARY(T, UT) \
    { \
        const T *a = (const T *)in; \
        T *b = (T *)out; \
        for (size_t i = 0; i < d->n; ++i) { \
            b[i] = (neg || a[i] < 0) ? (T)(UT)(0u - (UT)a[i]) : a[i]; \
        } \
    }

static mn_status_t unary_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const unary_data_t *d = (const unary_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->nonneg) {
        const long bad = first_negative(d, in);
        if (bad >= 0) {
            return mn_fail(ctx, MN_ERR_KERNEL, "input %ld is below the zero point: %s of a negative value",
                bad, d->op == MN_UNARY_SQRT ? "SQRT" : "RSQRT");
        }
    }
    switch (d->mode) {
        case MODE_SQRT_Q:
            if (d->dtype == MN_INT8) {
                sqrt_q_s8(d, (const int8_t *)in, (int8_t *)out);
            } else {
                sqrt_q_s16(d, (const int16_t *)in, (int16_t *)out);
            }
            break;
        case MODE_RSQRT_Q:
            rsqrt_q_s8(d, (const int8_t *)in, (int8_t *)out);
            break;
        case MODE_F32:
            mn_unary_f32(d->op, d->n, (const float *)in, (float *)out);
            break;
        case MODE_LUT8:
            mn_lut_s8(d->n, (const int8_t *)(const void *)d->lut, (const int8_t *)in, (int8_t *)out);
            break;
        case MODE_LUT16:
            mn_lut_s16(d->n, d->lut, (const int16_t *)in, (int16_t *)out);
            break;
        case MODE_ABS_Q:
            if (d->dtype == MN_INT8) {
                mn_abs_q_s8(d->n, &d->r, (const int8_t *)in, (int8_t *)out);
            } else {
                mn_abs_q_s16(d->n, &d->r, (const int16_t *)in, (int16_t *)out);
            }
            break;
        default: {
            const int neg = d->op == MN_UNARY_NEG;
            if (d->dtype == MN_INT8) {
                INT_UNARY(int8_t, uint8_t)
            } else if (d->dtype == MN_INT16) {
                INT_UNARY(int16_t, uint16_t)
            } else {
                INT_UNARY(int32_t, uint32_t)
            }
            break;
        }
    }
    return MN_OK;
}

#if MICRONN_OP_GELU
static mn_status_t gelu_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return unary_prepare_op(ctx, node,
        mn_opt_bool(node, MN_GELU_APPROXIMATE, false) ? MN_UNARY_GELU_TANH : MN_UNARY_GELU);
}
#endif

#define DEFINE_UNARY_KERNEL(OP, CODE) \
    static mn_status_t prepare_##OP(mn_ctx_t *ctx, mn_node_t *node) { \
        return unary_prepare_op(ctx, node, CODE); \
    } \
    const mn_kernel_t mn_kernel_##OP = { NULL, prepare_##OP, unary_eval, NULL, NULL };

#if MICRONN_OP_ABS
DEFINE_UNARY_KERNEL(ABS, MN_UNARY_ABS)
#endif
#if MICRONN_OP_CEIL
DEFINE_UNARY_KERNEL(CEIL, MN_UNARY_CEIL)
#endif
#if MICRONN_OP_COS
DEFINE_UNARY_KERNEL(COS, MN_UNARY_COS)
#endif
#if MICRONN_OP_ELU
DEFINE_UNARY_KERNEL(ELU, MN_UNARY_ELU)
#endif
#if MICRONN_OP_EXP
DEFINE_UNARY_KERNEL(EXP, MN_UNARY_EXP)
#endif
#if MICRONN_OP_FLOOR
DEFINE_UNARY_KERNEL(FLOOR, MN_UNARY_FLOOR)
#endif
#if MICRONN_OP_GELU
const mn_kernel_t mn_kernel_GELU = { NULL, gelu_prepare, unary_eval, NULL, NULL };
#endif
#if MICRONN_OP_LOG
DEFINE_UNARY_KERNEL(LOG, MN_UNARY_LOG)
#endif
#if MICRONN_OP_NEG
DEFINE_UNARY_KERNEL(NEG, MN_UNARY_NEG)
#endif
#if MICRONN_OP_ROUND
DEFINE_UNARY_KERNEL(ROUND, MN_UNARY_ROUND)
#endif
#if MICRONN_OP_RSQRT
DEFINE_UNARY_KERNEL(RSQRT, MN_UNARY_RSQRT)
#endif
#if MICRONN_OP_SIN
DEFINE_UNARY_KERNEL(SIN, MN_UNARY_SIN)
#endif
#if MICRONN_OP_SQRT
DEFINE_UNARY_KERNEL(SQRT, MN_UNARY_SQRT)
#endif
#if MICRONN_OP_SQUARE
DEFINE_UNARY_KERNEL(SQUARE, MN_UNARY_SQUARE)
#endif

#endif /* any unary op */
