/* QUANTIZE reference kernel: float -> int8/uint8/int16, per tensor (TFLite AffineQuantize) or per
 * channel (PerChannelQuantize), and int -> int requantization (TFLite reference Requantize):
 * int8/uint8 -> int8/uint8, int16 -> int8/int16/int32, int32 -> int8/int16. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_QUANTIZE

/* round(x / scale) + zp, clamped; like TFLite but saturating instead of
 * undefined for values beyond int32. */
static inline int32_t affine_q(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
    const float r = roundf(x / scale);
    int32_t v;
    if (r >= 2147483520.0f) {
        v = INT32_MAX;
    } else if (r <= -2147483648.0f) {
        v = INT32_MIN;
    } else if (r != r) {
        v = 0;
    } else {
        v = (int32_t)r;
    }
    /* v + zp without overflow */
    const int64_t s = (int64_t)v + zp;
    return s < lo ? lo : (s > hi ? hi : (int32_t)s);
}

void mn_quantize_f32_s8(size_t n, float scale, int32_t zp, const float *in, int8_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = (int8_t)affine_q(in[i], scale, zp, INT8_MIN, INT8_MAX);
    }
}

void mn_quantize_f32_u8(size_t n, float scale, int32_t zp, const float *in, uint8_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = (uint8_t)affine_q(in[i], scale, zp, 0, 255);
    }
}

void mn_quantize_f32_s16(size_t n, float scale, int32_t zp, const float *in, int16_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = (int16_t)affine_q(in[i], scale, zp, INT16_MIN, INT16_MAX);
    }
}

#define DEFINE_REQUANT(NAME, TIN, TOUT, LO, HI) \
    void NAME(size_t n, const mn_requant_t *r, const TIN *in, TOUT *out) { \
        for (size_t i = 0; i < n; ++i) { \
            /* wraps like TFLite's int32 arithmetic for int32 input */ \
            const int32_t x = (int32_t)((uint32_t)(int32_t)in[i] - (uint32_t)r->in_zp); \
            const int32_t y = mn_add_wrap(mn_mul_by_qm(x, r->mult, r->shift), r->out_zp); \
            out[i] = (TOUT)mn_clamp_i32(y, LO, HI); \
        } \
    }

DEFINE_REQUANT(mn_requantize_s8_s8, int8_t, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(mn_requantize_s8_u8, int8_t, uint8_t, 0, 255)
DEFINE_REQUANT(mn_requantize_s8_s16, int8_t, int16_t, INT16_MIN, INT16_MAX)
DEFINE_REQUANT(mn_requantize_u8_s8, uint8_t, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(mn_requantize_s16_s8, int16_t, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(mn_requantize_s16_s16, int16_t, int16_t, INT16_MIN, INT16_MAX)
DEFINE_REQUANT(mn_requantize_s16_s32, int16_t, int32_t, INT32_MIN, INT32_MAX)
DEFINE_REQUANT(mn_requantize_u8_u8, uint8_t, uint8_t, 0, 255)
DEFINE_REQUANT(mn_requantize_s32_s8, int32_t, int8_t, INT8_MIN, INT8_MAX)
DEFINE_REQUANT(mn_requantize_s32_s16, int32_t, int16_t, INT16_MIN, INT16_MAX)

/* Per-channel float quantization: element i is in channel (i / inner) % channels. */
#define DEFINE_QUANT_PC(NAME, TOUT, LO, HI) \
    void NAME(size_t n, int channels, size_t inner, const float *scales, const int32_t *zps, \
        const float *in, TOUT *out) { \
        for (size_t i = 0; i < n; ++i) { \
            const size_t c = (i / inner) % (size_t)channels; \
            out[i] = (TOUT)affine_q(in[i], scales[c], zps[c], LO, HI); \
        } \
    }

DEFINE_QUANT_PC(mn_quantize_f32_s8_per_channel, int8_t, INT8_MIN, INT8_MAX)
DEFINE_QUANT_PC(mn_quantize_f32_u8_per_channel, uint8_t, 0, 255)
DEFINE_QUANT_PC(mn_quantize_f32_s16_per_channel, int16_t, INT16_MIN, INT16_MAX)

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

/* One of the three parameter sets, pointer-free (MN_TABLE_KDATA: a model made by `micronn plan
 * --tables` carries it); 24 bytes, then with per-channel float input the scales and zero points
 * (quantize_pc_scales / quantize_pc_zps). The requantization variant is node->variant. */
typedef struct {
    uint32_t n;
    union {
        mn_requant_t r;                    /* integer input */
        struct {
            float scale;
            int32_t zp;
        } f;                               /* float input, per-tensor */
        struct {
            int32_t channels;
            uint32_t inner;
        } pc;                              /* float input, per-channel (per_channel) */
    } q;
    uint8_t in_dtype, out_dtype, per_channel;
} quantize_data_t;

#define QUANTIZE_HEAD ((sizeof(quantize_data_t) + 7u) & ~(size_t)7u)

static const float *quantize_pc_scales(const quantize_data_t *d) {
    return (const float *)((const uint8_t *)d + QUANTIZE_HEAD);
}

static const int32_t *quantize_pc_zps(const quantize_data_t *d) {
    return (const int32_t *)(quantize_pc_scales(d) + d->q.pc.channels);
}

static const char *quantize_variant(const mn_node_t *node) {
    const mn_requant_variant_t *v = mn_variant_requant(node->variant);
    return v ? v->name : NULL;
}

/* Per-channel output scales and zero points (float input only, as TFLite), after the struct. */
static mn_status_t quantize_prepare_per_channel(mn_ctx_t *ctx, mn_node_t *node, const mn_tensor_t *out,
    quantize_data_t *head) {
    if (out->q_dim < 0 || out->q_dim >= out->ndim || out->dims[out->q_dim] != mn_tensor_q_count(out)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "per-channel output quantization: %d scales do not match dim %d",
            (int)mn_tensor_q_count(out), (int)out->q_dim);
    }
    const int32_t channels = mn_tensor_q_count(out);
    size_t inner = 1;
    for (int k = out->q_dim + 1; k < out->ndim; ++k) {
        inner *= (size_t)out->dims[k];
    }
    if (inner > UINT32_MAX) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "per-channel output quantization: %zu elements per channel", inner);
    }
    head->per_channel = 1;
    head->q.pc.channels = channels;
    head->q.pc.inner = (uint32_t)inner;
    const size_t bytes = QUANTIZE_HEAD + 8u * (size_t)channels;
    void *block;
    bool fill;
    if (!mn_table_alloc(ctx, node, MN_TABLE_KDATA, 0, bytes, &block, &fill)) {
        return MN_ERR_ARENA;
    }
    quantize_data_t *d = (quantize_data_t *)block;
    memcpy(d, head, sizeof *head);
    float *sc = (float *)quantize_pc_scales(d);
    int32_t *zp = (int32_t *)quantize_pc_zps(d);
    int32_t lo, hi;
    mn_qtype_range(ref_qtype(out->dtype), &lo, &hi);
    for (int c = 0; c < channels; ++c) {
        sc[c] = mn_tensor_scale(out, c);
        zp[c] = mn_tensor_zero_point(out, c);
        if (!(sc[c] > 0.0f) || zp[c] < lo || zp[c] > hi) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output channel %d has no usable scale / zero point", c);
        }
    }
    node->user_data = (void *)mn_table_keep(ctx, node, MN_TABLE_KDATA, block, bytes);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

static mn_status_t quantize_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    const size_t n = mn_tensor_count(in);
    if (mn_tensor_count(out) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    if (n > UINT32_MAX) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%zu elements (at most 2^32 - 1)", n);
    }
    REF_TRY(ref_need_quant(ctx, "output", out));
    quantize_data_t d;
    memset(&d, 0, sizeof d);   /* padding too: the model's copy is compared byte for byte */
    d.n = (uint32_t)n;
    d.in_dtype = in->dtype;
    d.out_dtype = out->dtype;
    const int i = in->dtype, o = out->dtype;
    if (i == MN_FLOAT32) {
        if (o != MN_INT8 && o != MN_UINT8 && o != MN_INT16) {
            return ref_fail_combo(ctx, in, out);
        }
        if (mn_tensor_q_count(out) > 1) {
            return quantize_prepare_per_channel(ctx, node, out, &d);
        }
        d.q.f.scale = mn_tensor_scale(out, 0);
        d.q.f.zp = mn_tensor_zero_point(out, 0);
    } else if (((i == MN_INT8 || i == MN_UINT8) && (o == MN_INT8 || o == MN_UINT8)) || (i == MN_INT8 && o == MN_INT16) ||
               (i == MN_INT16 && (o == MN_INT8 || o == MN_INT16 || o == MN_INT32)) ||
               (i == MN_INT32 && (o == MN_INT8 || o == MN_INT16))) {
        REF_TRY(ref_need_quant(ctx, "input", in));
        if (mn_tensor_q_count(out) > 1 || mn_tensor_q_count(in) > 1) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "per-channel requantization not supported");
        }
        if (i == MN_INT16 && o == MN_INT16 && (mn_tensor_zero_point(in, 0) != 0 || mn_tensor_zero_point(out, 0) != 0)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 zero points must be 0 (input %d, output %d)",
                (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
        }
        const double eff = (double)mn_tensor_scale(in, 0) / (double)mn_tensor_scale(out, 0);
        mn_quantize_multiplier(eff, &d.q.r.mult, &d.q.r.shift);
        d.q.r.in_zp = mn_tensor_zero_point(in, 0);
        d.q.r.out_zp = mn_tensor_zero_point(out, 0);
        node->variant = mn_variant_id_requant(mn_select_requant(ctx, i, o, &d.q.r));
    } else {
        return ref_fail_combo(ctx, in, out);
    }
    node->user_data = (void *)mn_kernel_data(ctx, node, &d, sizeof d);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

static void quantize_float(const quantize_data_t *d, const float *in, void *out) {
    if (d->per_channel) {
        const int32_t c = d->q.pc.channels;
        const size_t inner = d->q.pc.inner;
        if (d->out_dtype == MN_INT8) {
            mn_quantize_f32_s8_per_channel(d->n, c, inner, quantize_pc_scales(d), quantize_pc_zps(d), in,
                (int8_t *)out);
        } else if (d->out_dtype == MN_UINT8) {
            mn_quantize_f32_u8_per_channel(d->n, c, inner, quantize_pc_scales(d), quantize_pc_zps(d), in,
                (uint8_t *)out);
        } else {
            mn_quantize_f32_s16_per_channel(d->n, c, inner, quantize_pc_scales(d), quantize_pc_zps(d), in,
                (int16_t *)out);
        }
    } else if (d->out_dtype == MN_INT8) {
        mn_quantize_f32_s8(d->n, d->q.f.scale, d->q.f.zp, in, (int8_t *)out);
    } else if (d->out_dtype == MN_UINT8) {
        mn_quantize_f32_u8(d->n, d->q.f.scale, d->q.f.zp, in, (uint8_t *)out);
    } else {
        mn_quantize_f32_s16(d->n, d->q.f.scale, d->q.f.zp, in, (int16_t *)out);
    }
}

static mn_status_t quantize_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const quantize_data_t *d = (const quantize_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    const int i = d->in_dtype, o = d->out_dtype;
    if (node->variant) {
        mn_variant_requant(node->variant)->run(d->n, &d->q.r, in, out);
    } else if (i == MN_FLOAT32) {
        quantize_float(d, (const float *)in, out);
    } else if (i == MN_INT8) {
        if (o == MN_INT8) {
            mn_requantize_s8_s8(d->n, &d->q.r, (const int8_t *)in, (int8_t *)out);
        } else if (o == MN_INT16) {
            mn_requantize_s8_s16(d->n, &d->q.r, (const int8_t *)in, (int16_t *)out);
        } else {
            mn_requantize_s8_u8(d->n, &d->q.r, (const int8_t *)in, (uint8_t *)out);
        }
    } else if (i == MN_UINT8) {
        if (o == MN_INT8) {
            mn_requantize_u8_s8(d->n, &d->q.r, (const uint8_t *)in, (int8_t *)out);
        } else {
            mn_requantize_u8_u8(d->n, &d->q.r, (const uint8_t *)in, (uint8_t *)out);
        }
    } else if (i == MN_INT32) {
        if (o == MN_INT8) {
            mn_requantize_s32_s8(d->n, &d->q.r, (const int32_t *)in, (int8_t *)out);
        } else {
            mn_requantize_s32_s16(d->n, &d->q.r, (const int32_t *)in, (int16_t *)out);
        }
    } else {
        if (o == MN_INT8) {
            mn_requantize_s16_s8(d->n, &d->q.r, (const int16_t *)in, (int8_t *)out);
        } else if (o == MN_INT16) {
            mn_requantize_s16_s16(d->n, &d->q.r, (const int16_t *)in, (int16_t *)out);
        } else {
            mn_requantize_s16_s32(d->n, &d->q.r, (const int16_t *)in, (int32_t *)out);
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_QUANTIZE = { NULL, quantize_prepare, quantize_eval, NULL, quantize_variant };

#endif /* MICRONN_OP_QUANTIZE */
