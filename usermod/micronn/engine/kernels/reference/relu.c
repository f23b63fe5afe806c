/* RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1 reference kernels (TFLite ReluX): float32 clamps;
 * int8 (and int16 for RELU / RELU6, zero points 0) requantizes to the output scale with the
 * multiplier of in_scale / out_scale (divided in float, as TFLite) and clamps to the
 * activation's range on the output scale. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_RELU || MICRONN_OP_RELU6 || MICRONN_OP_RELU_N1_TO_1 || MICRONN_OP_RELU_0_TO_1

#define DEFINE_RELU_Q(NAME, T) \
    void NAME(size_t n, const mn_relu_q_t *p, const T *in, T *out) { \
        for (size_t i = 0; i < n; ++i) { \
            const int32_t v = p->out_zp + mn_mul_by_qm((int32_t)in[i] - p->in_zp, p->mult, p->shift); \
            out[i] = (T)mn_clamp_i32(v, p->lo, p->hi); \
        } \
    }

DEFINE_RELU_Q(mn_relu_q_s8, int8_t)
DEFINE_RELU_Q(mn_relu_q_s16, int16_t)

void mn_relu_f32(size_t n, float lo, float hi, const float *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = mn_clamp_f32(in[i], lo, hi);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    uint8_t dtype;
    float lo, hi;
    mn_relu_q_t q;
} relu_data_t;

/* TFLite QuantizedReluX: bounds on the output scale, rounded in float, within the type. */
static int32_t relu_bound(const mn_tensor_t *out, float v, int32_t qlim, int upper) {
    if (upper && isinf(v)) {
        return qlim;
    }
    const int32_t q = mn_tensor_zero_point(out, 0) + (int32_t)roundf(v / mn_tensor_scale(out, 0));
    return upper ? (q < qlim ? q : qlim) : (q > qlim ? q : qlim);
}

static mn_status_t relu_prepare_range(mn_ctx_t *ctx, mn_node_t *node, float lo, float hi, int int16_ok) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8 && !(dt == MN_INT16 && int16_ok)) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, relu_data_t, ctx, 1);
    d->n = n;
    d->dtype = (uint8_t)dt;
    d->lo = lo;
    d->hi = hi;
    if (dt != MN_FLOAT32) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        int32_t qmin, qmax;
        mn_qtype_range(ref_qtype(dt), &qmin, &qmax);
        if (!(mn_absf(lo / mn_tensor_scale(out, 0)) < 1e9f) || !(isinf(hi) || mn_absf(hi / mn_tensor_scale(out, 0)) < 1e9f)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output scale too small for the activation range");
        }
        d->q.lo = relu_bound(out, lo, qmin, 0);
        d->q.hi = relu_bound(out, hi, qmax, 1);
        d->q.in_zp = mn_tensor_zero_point(in, 0);
        d->q.out_zp = mn_tensor_zero_point(out, 0);
        mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) / mn_tensor_scale(out, 0)), &d->q.mult, &d->q.shift);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t relu_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const relu_data_t *d = (const relu_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_relu_q_s8(d->n, &d->q, (const int8_t *)in, (int8_t *)out);
    } else if (d->dtype == MN_INT16) {
        mn_relu_q_s16(d->n, &d->q, (const int16_t *)in, (int16_t *)out);
    } else {
        mn_relu_f32(d->n, d->lo, d->hi, (const float *)in, (float *)out);
    }
    return MN_OK;
}

#define DEFINE_RELU_KERNEL(OP, LO, HI, INT16_OK) \
    static mn_status_t prepare_##OP(mn_ctx_t *ctx, mn_node_t *node) { \
        return relu_prepare_range(ctx, node, LO, HI, INT16_OK); \
    } \
    const mn_kernel_t mn_kernel_##OP = { NULL, prepare_##OP, relu_eval, NULL, NULL };

#if MICRONN_OP_RELU
DEFINE_RELU_KERNEL(RELU, 0.0f, INFINITY, 1)
#endif
#if MICRONN_OP_RELU6
DEFINE_RELU_KERNEL(RELU6, 0.0f, 6.0f, 1)
#endif
#if MICRONN_OP_RELU_N1_TO_1
DEFINE_RELU_KERNEL(RELU_N1_TO_1, -1.0f, 1.0f, 0)
#endif
#if MICRONN_OP_RELU_0_TO_1
DEFINE_RELU_KERNEL(RELU_0_TO_1, 0.0f, 1.0f, 0)
#endif

#endif /* any RELU */
