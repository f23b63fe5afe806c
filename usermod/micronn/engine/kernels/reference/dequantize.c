/* DEQUANTIZE reference kernel (TFLite reference Dequantize: the scale is
 * widened to double, multiplied by (q - zero_point), then narrowed); per-channel int8 / uint8
 * (PerChannelDequantize, in float). */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_DEQUANTIZE

#define DEFINE_DEQUANT(NAME, TIN) \
    void NAME(size_t n, float scale, int32_t zp, const TIN *in, float *out) { \
        const double s = (double)scale; \
        for (size_t i = 0; i < n; ++i) { \
            out[i] = (float)(s * (double)((int32_t)in[i] - zp)); \
        } \
    }

DEFINE_DEQUANT(mn_dequantize_s8_f32, int8_t)
DEFINE_DEQUANT(mn_dequantize_u8_f32, uint8_t)
DEFINE_DEQUANT(mn_dequantize_s16_f32, int16_t)

#define DEFINE_DEQUANT_PC(NAME, TIN) \
    void NAME(size_t n, int channels, size_t inner, const float *scales, const int32_t *zps, \
        const TIN *in, float *out) { \
        for (size_t i = 0; i < n; ++i) { \
            const size_t c = (i / inner) % (size_t)channels; \
            out[i] = (float)((int32_t)in[i] - zps[c]) * scales[c]; \
        } \
    }

DEFINE_DEQUANT_PC(mn_dequantize_s8_f32_per_channel, int8_t)
DEFINE_DEQUANT_PC(mn_dequantize_u8_f32_per_channel, uint8_t)

/* IEEE 754 binary16 -> binary32, exact. */
static float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {
            /* subnormal: normalise */
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                --exp;
            }
            mant &= 0x3ffu;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void mn_dequantize_f16_f32(size_t n, const uint16_t *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = half_to_float(in[i]);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    float scale;
    int32_t zp;
    uint8_t dtype;
    /* per-channel int8 */
    int channels;
    size_t inner;
    const float *scales;
    const int32_t *zps;
} dequantize_data_t;

static mn_status_t dequantize_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    const size_t n = mn_tensor_count(in);
    if (mn_tensor_count(out) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    if (out->dtype != MN_FLOAT32) {
        return ref_fail_combo(ctx, in, out);
    }
    REF_ALLOC(d, dequantize_data_t, ctx, 1);
    d->n = n;
    d->dtype = in->dtype;
    if (in->dtype == MN_FLOAT16) {
        node->user_data = d;
        return MN_OK;
    }
    if (in->dtype != MN_INT8 && in->dtype != MN_UINT8 && in->dtype != MN_INT16) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_TRY(ref_need_quant(ctx, "input", in));
    d->scale = mn_tensor_scale(in, 0);
    d->zp = mn_tensor_zero_point(in, 0);
    if (mn_tensor_q_count(in) > 1) {
        if ((in->dtype != MN_INT8 && in->dtype != MN_UINT8) || in->q_dim < 0 || in->q_dim >= in->ndim ||
            in->dims[in->q_dim] != mn_tensor_q_count(in)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "per-channel dequantization of %s (%d scales, dim %d) not supported",
                mn_dtype_name(in->dtype), (int)mn_tensor_q_count(in), (int)in->q_dim);
        }
        d->channels = mn_tensor_q_count(in);
        size_t inner = 1;
        for (int k = in->q_dim + 1; k < in->ndim; ++k) {
            inner *= (size_t)in->dims[k];
        }
        d->inner = inner;
        REF_ALLOC(sc, float, ctx, d->channels);
        REF_ALLOC(zp, int32_t, ctx, d->channels);
        for (int c = 0; c < d->channels; ++c) {
            sc[c] = mn_tensor_scale(in, c);
            zp[c] = mn_tensor_zero_point(in, c);
        }
        d->scales = sc;
        d->zps = zp;
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t dequantize_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const dequantize_data_t *d = (const dequantize_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    float *out = (float *)mn_output(ctx, node, 0)->data;
    switch (d->dtype) {
        case MN_INT8:
            if (d->channels > 1) {
                mn_dequantize_s8_f32_per_channel(d->n, d->channels, d->inner, d->scales, d->zps,
                    (const int8_t *)in, out);
            } else {
                mn_dequantize_s8_f32(d->n, d->scale, d->zp, (const int8_t *)in, out);
            }
            break;
        case MN_UINT8:
            if (d->channels > 1) {
                mn_dequantize_u8_f32_per_channel(d->n, d->channels, d->inner, d->scales, d->zps,
                    (const uint8_t *)in, out);
                break;
            }
            mn_dequantize_u8_f32(d->n, d->scale, d->zp, (const uint8_t *)in, out);
            break;
        case MN_INT16:
            mn_dequantize_s16_f32(d->n, d->scale, d->zp, (const int16_t *)in, out);
            break;
        default:
            mn_dequantize_f16_f32(d->n, (const uint16_t *)in, out);
            break;
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_DEQUANTIZE = { NULL, dequantize_prepare, dequantize_eval, NULL, NULL };

#endif /* MICRONN_OP_DEQUANTIZE */
