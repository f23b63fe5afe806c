/* DIV, FLOOR_DIV and FLOOR_MOD reference kernels (TFLite's reference semantics). Integer division
 * by zero fails the invoke, as in TFLite, instead of trapping. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_DIV || MICRONN_OP_FLOOR_DIV || MICRONN_OP_FLOOR_MOD

static inline float div_f32(int op, float a, float b) {
    if (op == MN_DIV) {
        return a / b;
    }
    if (op == MN_FLOOR_DIV) {
        return (float)MN_FLOOR_F64((double)a / (double)b);
    }
    const float m = fmodf(a, b);
    return (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) ? m + b : m;
}

void mn_div_f32(int op, const mn_bcast_t *b, float act_min, float act_max, const float *in1, const float *in2,
    float *out) {
    MN_BCAST_FOR(b, out[k] = mn_clamp_f32(div_f32(op, in1[o1], in2[o2]), act_min, act_max));
}

/* a / b and a % b for b != 0 in C (truncating); INT32_MIN / -1 wraps as the hardware would. */
static inline int32_t div_i32(int op, int32_t a, int32_t c) {
    if (c == -1) {
        const int32_t neg = (int32_t)(0u - (uint32_t)a);
        return op == MN_FLOOR_MOD ? 0 : neg;
    }
    const int32_t q = a / c, r = a % c;
    if (op == MN_DIV) {
        return q;
    }
    const int fix = r != 0 && ((r < 0) != (c < 0));
    return op == MN_FLOOR_DIV ? q - fix : (fix ? r + c : r);
}

#define DIV_INT_LOOP(T) \
    do { \
        const T *x_ = (const T *)in1, *y_ = (const T *)in2; \
        T *z_ = (T *)out; \
        int bad_ = 0; \
        MN_BCAST_FOR(b, { \
            const int32_t c_ = y_[o2]; \
            bad_ |= c_ == 0; \
            z_[k] = (T)mn_clamp_i32(c_ ? div_i32(op, x_[o1], c_) : 0, act_min, act_max); \
        }); \
        return bad_ ? -1 : 0; \
    } while (0)

int mn_div_int(int op, int size, const mn_bcast_t *b, int32_t act_min, int32_t act_max, const void *in1,
    const void *in2, void *out) {
    if (size == 1) {
        DIV_INT_LOOP(int8_t);
    } else if (size == 2) {
        DIV_INT_LOOP(int16_t);
    }
    DIV_INT_LOOP(int32_t);
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    float fmin, fmax;
    int32_t imin, imax;
    uint8_t dtype, op;
} div_data_t;

static mn_status_t div_prepare(mn_ctx_t *ctx, mn_node_t *node, int op) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, div_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    if (in1->dtype != out->dtype) {
        return ref_fail_combo(ctx, in1, out);
    }
    d->dtype = in1->dtype;
    d->op = (uint8_t)op;
    /* Only DIV has a fused activation (DivOptions); FloorDiv/FloorModOptions are empty. */
    const int act = op == MN_DIV ? mn_opt_i8(node, MN_DIV_ACTIVATION, MN_ACT_NONE) : MN_ACT_NONE;
    const int t = in1->dtype;
    if (t == MN_FLOAT32) {
        REF_TRY(ref_act_range_f(ctx, act, &d->fmin, &d->fmax));
    } else if (t == MN_INT32 || (op != MN_DIV && (t == MN_INT8 || t == MN_INT16))) {
        REF_TRY(ref_act_range_i32(ctx, act, &d->imin, &d->imax));
    } else {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t div_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const div_data_t *d = (const div_data_t *)node->user_data;
    const void *a = mn_input(ctx, node, 0)->data;
    const void *c = mn_input(ctx, node, 1)->data;
    void *o = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_FLOAT32) {
        mn_div_f32(d->op, &d->b, d->fmin, d->fmax, (const float *)a, (const float *)c, (float *)o);
    } else if (mn_div_int(d->op, (int)mn_dtype_size(d->dtype), &d->b, d->imin, d->imax, a, c, o)) {
        return mn_fail(ctx, MN_ERR_KERNEL, "integer division by zero");
    }
    return MN_OK;
}

#endif

#if MICRONN_OP_DIV
static mn_status_t div_prepare_div(mn_ctx_t *ctx, mn_node_t *node) {
    return div_prepare(ctx, node, MN_DIV);
}
const mn_kernel_t mn_kernel_DIV = { NULL, div_prepare_div, div_eval, NULL, NULL };
#endif

#if MICRONN_OP_FLOOR_DIV
static mn_status_t div_prepare_floor_div(mn_ctx_t *ctx, mn_node_t *node) {
    return div_prepare(ctx, node, MN_FLOOR_DIV);
}
const mn_kernel_t mn_kernel_FLOOR_DIV = { NULL, div_prepare_floor_div, div_eval, NULL, NULL };
#endif

#if MICRONN_OP_FLOOR_MOD
static mn_status_t div_prepare_floor_mod(mn_ctx_t *ctx, mn_node_t *node) {
    return div_prepare(ctx, node, MN_FLOOR_MOD);
}
const mn_kernel_t mn_kernel_FLOOR_MOD = { NULL, div_prepare_floor_mod, div_eval, NULL, NULL };
#endif
