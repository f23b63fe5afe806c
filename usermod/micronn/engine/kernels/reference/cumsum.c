/* CUMSUM reference kernel (TFLite reference_ops::CumSum): running sums along the constant axis,
 * optionally exclusive (each output leaves out its own element) and/or reversed. float32, int32
 * and int64 (integer sums wrap). */
#include "mn_ref.h"

#if MICRONN_OP_CUMSUM

#include "ref_glue.h"

typedef struct {
    int32_t outer, axis_size, inner;
    uint8_t dtype, exclusive, reverse;
} cumsum_data_t;

#define DEFINE_CUMSUM(NAME, T, UT) \
    static void NAME(const cumsum_data_t *d, const T *in, T *out) { \
        for (int32_t o = 0; o < d->outer; ++o) { \
            for (int32_t i = 0; i < d->inner; ++i) { \
                const size_t base = (size_t)o * d->axis_size * d->inner + i; \
                T acc = 0; \
                for (int32_t a = 0; a < d->axis_size; ++a) { \
                    const size_t k = base + (size_t)(d->reverse ? d->axis_size - 1 - a : a) * d->inner; \
                    if (d->exclusive) { \
                        out[k] = acc; \
                        acc = (T)((UT)acc + (UT)in[k]); \
                    } else { \
                        acc = (T)((UT)acc + (UT)in[k]); \
                        out[k] = acc; \
                    } \
                } \
            } \
        } \
    }

DEFINE_CUMSUM(cumsum_f32, float, float)
DEFINE_CUMSUM(cumsum_i32, int32_t, uint32_t)
DEFINE_CUMSUM(cumsum_i64, int64_t, uint64_t)

static mn_status_t cumsum_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    if (in->dtype != out->dtype) {
        return ref_fail_combo(ctx, in, out);
    }
    if (in->dtype != MN_FLOAT32 && in->dtype != MN_INT32 && in->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "input", in);
    }
    if (mn_tensor_count(out) != mn_tensor_count(in)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape differs from the input's");
    }
    int32_t axis = 0, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "axis", &axis, 1, &n));
    if (axis < 0) {
        axis += in->ndim;
    }
    if (n != 1 || axis < 0 || axis >= in->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis invalid for a %d-D input", in->ndim);
    }
    REF_ALLOC(d, cumsum_data_t, ctx, 1);
    d->outer = d->inner = 1;
    for (int k = 0; k < in->ndim; ++k) {
        if (k < axis) {
            d->outer *= in->dims[k];
        } else if (k > axis) {
            d->inner *= in->dims[k];
        }
    }
    d->axis_size = in->dims[axis];
    d->dtype = in->dtype;
    d->exclusive = mn_opt_bool(node, MN_CUMSUM_EXCLUSIVE, false);
    d->reverse = mn_opt_bool(node, MN_CUMSUM_REVERSE, false);
    node->user_data = d;
    return MN_OK;
}

static mn_status_t cumsum_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const cumsum_data_t *d = (const cumsum_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_FLOAT32) {
        cumsum_f32(d, (const float *)in, (float *)out);
    } else if (d->dtype == MN_INT32) {
        cumsum_i32(d, (const int32_t *)in, (int32_t *)out);
    } else {
        cumsum_i64(d, (const int64_t *)in, (int64_t *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_CUMSUM = { NULL, cumsum_prepare, cumsum_eval, NULL, NULL };

#endif /* MICRONN_OP_CUMSUM */
