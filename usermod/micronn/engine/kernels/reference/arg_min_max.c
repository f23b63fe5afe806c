/* ARG_MAX and ARG_MIN reference kernels (TFLite reference_ops::ArgMinMax): index of the first
 * largest (smallest) value along the constant axis, written as int32 or int64. Quantized inputs
 * compare raw values (the order is the same for any positive scale). */
#include "mn_ref.h"

#if MICRONN_OP_ARG_MAX || MICRONN_OP_ARG_MIN

#include "ref_glue.h"

typedef struct {
    int32_t outer, axis_size, inner;
    uint8_t dtype, out64, is_min;
} arg_data_t;

#define DEFINE_ARG(NAME, T) \
    static void NAME(const arg_data_t *d, const T *in, void *out) { \
        for (int32_t o = 0; o < d->outer; ++o) { \
            for (int32_t i = 0; i < d->inner; ++i) { \
                const T *p = in + (size_t)o * d->axis_size * d->inner + i; \
                T best = p[0]; \
                int32_t at = 0; \
                for (int32_t a = 1; a < d->axis_size; ++a) { \
                    const T v = p[(size_t)a * d->inner]; \
                    if (d->is_min ? v < best : v > best) { \
                        best = v; \
                        at = a; \
                    } \
                } \
                const size_t k = (size_t)o * d->inner + i; \
                if (d->out64) { \
                    ((int64_t *)out)[k] = at; \
                } else { \
                    ((int32_t *)out)[k] = at; \
                } \
            } \
        } \
    }

DEFINE_ARG(arg_f32, float)
DEFINE_ARG(arg_s8, int8_t)
DEFINE_ARG(arg_u8, uint8_t)
DEFINE_ARG(arg_s16, int16_t)
DEFINE_ARG(arg_i32, int32_t)
DEFINE_ARG(arg_i64, int64_t)

static mn_status_t arg_prepare(mn_ctx_t *ctx, mn_node_t *node, int is_min) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    int32_t axis = 0, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "axis", &axis, 1, &n));
    if (n != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis must be a single value");
    }
    if (axis < 0) {
        axis += in->ndim;
    }
    if (axis < 0 || axis >= in->ndim || in->dims[axis] < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis %d invalid for a %d-D input", (int)axis, in->ndim);
    }
    switch (in->dtype) {
        case MN_FLOAT32: case MN_INT8: case MN_UINT8: case MN_INT16: case MN_INT32: case MN_INT64: break;
        default: return ref_fail_dtype(ctx, "input", in);
    }
    if (out->dtype != MN_INT32 && out->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "output", out);
    }
    int ok = out->ndim == in->ndim - 1;
    REF_ALLOC(d, arg_data_t, ctx, 1);
    d->outer = d->inner = 1;
    for (int k = 0, o = 0; ok && k < in->ndim; ++k) {
        if (k == axis) {
            continue;
        }
        ok = out->dims[o++] == in->dims[k];
        if (k < axis) {
            d->outer *= in->dims[k];
        } else {
            d->inner *= in->dims[k];
        }
    }
    if (!ok) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape must be the input's without axis %d", (int)axis);
    }
    d->axis_size = in->dims[axis];
    d->dtype = in->dtype;
    d->out64 = out->dtype == MN_INT64;
    d->is_min = (uint8_t)is_min;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t arg_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const arg_data_t *d = (const arg_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    switch (d->dtype) {
        case MN_FLOAT32: arg_f32(d, (const float *)in, out); break;
        case MN_INT8: arg_s8(d, (const int8_t *)in, out); break;
        case MN_UINT8: arg_u8(d, (const uint8_t *)in, out); break;
        case MN_INT16: arg_s16(d, (const int16_t *)in, out); break;
        case MN_INT32: arg_i32(d, (const int32_t *)in, out); break;
        default: arg_i64(d, (const int64_t *)in, out); break;
    }
    return MN_OK;
}

#if MICRONN_OP_ARG_MAX
static mn_status_t arg_max_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return arg_prepare(ctx, node, 0);
}
const mn_kernel_t mn_kernel_ARG_MAX = { NULL, arg_max_prepare, arg_eval, NULL, NULL };
#endif
#if MICRONN_OP_ARG_MIN
static mn_status_t arg_min_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return arg_prepare(ctx, node, 1);
}
const mn_kernel_t mn_kernel_ARG_MIN = { NULL, arg_min_prepare, arg_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_ARG_MAX || MICRONN_OP_ARG_MIN */
