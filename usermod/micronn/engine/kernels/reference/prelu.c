/* PRELU reference kernel: x >= 0 ? x : x * alpha, alpha broadcast to the input's shape.
 * int8 (TFLite reference Prelu / BroadcastPrelu4DSlow): x - zp >= 0 is rescaled with the
 * multiplier of in_scale / out_scale, otherwise (x - zp) * (alpha - alpha_zp) with that of
 * in_scale * alpha_scale / out_scale (products and quotients in float, as TFLite). */
#include "mn_ref.h"

#if MICRONN_OP_PRELU

/* Calls BODY with o (output / input offset) and a (alpha offset) over the whole input, in order. */
#define PRELU_LOOP(p, BODY) \
    do { \
        int32_t idx_[MN_PRELU_MAX_DIMS] = {0}; \
        int32_t a = 0; \
        for (int32_t o = 0; o < (p)->size; ++o) { \
            BODY; \
            for (int d_ = (p)->ndims - 1; d_ >= 0; --d_) { \
                a += (p)->alpha_stride[d_]; \
                if (++idx_[d_] < (p)->dims[d_]) { \
                    break; \
                } \
                a -= (p)->alpha_stride[d_] * (p)->dims[d_]; \
                idx_[d_] = 0; \
            } \
        } \
    } while (0)

int mn_prelu_shape_init(mn_prelu_shape_t *p, const int32_t *in_dims, int in_n, const int32_t *alpha_dims, int alpha_n) {
    if (in_n > MN_PRELU_MAX_DIMS || alpha_n > in_n) {
        return -1;
    }
    p->ndims = in_n;
    int32_t stride = 1, size = 1;
    for (int i = in_n - 1; i >= 0; --i) {
        const int k = i - (in_n - alpha_n);
        const int32_t ad = k >= 0 ? alpha_dims[k] : 1;
        if (ad != in_dims[i] && ad != 1) {
            return -1;
        }
        p->dims[i] = in_dims[i];
        p->alpha_stride[i] = ad == 1 ? 0 : stride;
        stride *= ad;
        size *= in_dims[i];
    }
    p->size = size;
    return 0;
}

void mn_prelu_s8(const mn_prelu_shape_t *s, const mn_prelu_q_t *q, const int8_t *in, const int8_t *alpha, int8_t *out) {
    PRELU_LOOP(s, {
        const int32_t x = in[o] - q->in_zp;
        int32_t v;
        if (x >= 0) {
            v = mn_mul_by_qm(x, q->mult_pos, q->shift_pos);
        } else {
            v = mn_mul_by_qm(x * (alpha[a] - q->alpha_zp), q->mult_neg, q->shift_neg);
        }
        out[o] = (int8_t)mn_clamp_i32(v + q->out_zp, INT8_MIN, INT8_MAX);
    });
}

void mn_prelu_f32(const mn_prelu_shape_t *s, const float *in, const float *alpha, float *out) {
    PRELU_LOOP(s, out[o] = in[o] >= 0.0f ? in[o] : in[o] * alpha[a]);
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_prelu_shape_t s;
    mn_prelu_q_t q;
    uint8_t dtype;
} prelu_data_t;

static mn_status_t prelu_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(alpha, ctx, node, 1, "alpha");
    REF_OUTPUT(out, ctx, node, 0);
    const int dt = in->dtype;
    if (alpha->dtype != dt || out->dtype != dt) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "mixed dtypes: input %s, alpha %s, output %s",
            mn_dtype_name(dt), mn_dtype_name(alpha->dtype), mn_dtype_name(out->dtype));
    }
    if (dt != MN_FLOAT32 && dt != MN_INT8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, prelu_data_t, ctx, 1);
    if (mn_prelu_shape_init(&d->s, in->dims, in->ndim, alpha->dims, alpha->ndim) ||
        mn_tensor_count(out) != mn_tensor_count(in)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "alpha of rank %d does not broadcast to the input (rank %d, at most %d)",
            (int)alpha->ndim, (int)in->ndim, MN_PRELU_MAX_DIMS);
    }
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "alpha", alpha));
        REF_TRY(ref_need_quant(ctx, "output", out));
        d->q.in_zp = mn_tensor_zero_point(in, 0);
        d->q.alpha_zp = mn_tensor_zero_point(alpha, 0);
        d->q.out_zp = mn_tensor_zero_point(out, 0);
        mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) / mn_tensor_scale(out, 0)), &d->q.mult_pos, &d->q.shift_pos);
        mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) * mn_tensor_scale(alpha, 0) / mn_tensor_scale(out, 0)), &d->q.mult_neg, &d->q.shift_neg);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t prelu_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const prelu_data_t *d = (const prelu_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    const void *alpha = mn_input(ctx, node, 1)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_prelu_s8(&d->s, &d->q, (const int8_t *)in, (const int8_t *)alpha, (int8_t *)out);
    } else {
        mn_prelu_f32(&d->s, (const float *)in, (const float *)alpha, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_PRELU = { NULL, prelu_prepare, prelu_eval, NULL, NULL };

#endif /* MICRONN_OP_PRELU */
