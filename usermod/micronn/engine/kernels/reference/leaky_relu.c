/* LEAKY_RELU reference kernel (TFLite QuantizeLeakyRelu): x >= 0 is rescaled with the multiplier
 * of in_scale / out_scale, x < 0 with that of in_scale * alpha / out_scale (products and
 * quotients in float, as TFLite); a negative alpha uses |alpha|'s multiplier and negates.
 * int16 requires zero points 0. float32: x > 0 ? x : x * alpha. */
#include "mn_ref.h"

#if MICRONN_OP_LEAKY_RELU

#define DEFINE_LEAKY_Q(NAME, T, LO, HI) \
    void NAME(size_t n, const mn_leaky_q_t *p, const T *in, T *out) { \
        for (size_t i = 0; i < n; ++i) { \
            const int32_t x = (int32_t)in[i] - p->in_zp; \
            int32_t v; \
            if (x >= 0) { \
                v = mn_mul_by_qm(x, p->mult_id, p->shift_id); \
            } else { \
                v = mn_mul_by_qm(x, p->mult_alpha, p->shift_alpha); \
                v = p->alpha_neg ? -v : v; \
            } \
            out[i] = (T)mn_clamp_i32(p->out_zp + v, LO, HI); \
        } \
    }

DEFINE_LEAKY_Q(mn_leaky_relu_s8, int8_t, INT8_MIN, INT8_MAX)
DEFINE_LEAKY_Q(mn_leaky_relu_s16, int16_t, INT16_MIN, INT16_MAX)

void mn_leaky_relu_f32(size_t n, float alpha, const float *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = x > 0.0f ? x : x * alpha;
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    float alpha;
    uint8_t dtype;
    mn_leaky_q_t q;
} leaky_data_t;

static mn_status_t leaky_relu_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8 && dt != MN_INT16) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, leaky_data_t, ctx, 1);
    d->n = n;
    d->dtype = (uint8_t)dt;
    d->alpha = mn_opt_f32(node, MN_LEAKY_RELU_ALPHA, 0.0f);
    if (!(d->alpha == d->alpha) || !(mn_absf(d->alpha) < 1e30f)) {
        return mn_fail(ctx, MN_ERR_MODEL, "alpha is not finite");
    }
    if (dt != MN_FLOAT32) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        d->q.in_zp = mn_tensor_zero_point(in, 0);
        d->q.out_zp = mn_tensor_zero_point(out, 0);
        d->q.alpha_neg = d->alpha < 0.0f;
        const float alpha_m = mn_tensor_scale(in, 0) * mn_absf(d->alpha) / mn_tensor_scale(out, 0);
        mn_quantize_multiplier((double)alpha_m, &d->q.mult_alpha, &d->q.shift_alpha);
        mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) / mn_tensor_scale(out, 0)), &d->q.mult_id, &d->q.shift_id);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t leaky_relu_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const leaky_data_t *d = (const leaky_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_leaky_relu_s8(d->n, &d->q, (const int8_t *)in, (int8_t *)out);
    } else if (d->dtype == MN_INT16) {
        mn_leaky_relu_s16(d->n, &d->q, (const int16_t *)in, (int16_t *)out);
    } else {
        mn_leaky_relu_f32(d->n, d->alpha, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_LEAKY_RELU = { NULL, leaky_relu_prepare, leaky_relu_eval, NULL, NULL };

#endif /* MICRONN_OP_LEAKY_RELU */
