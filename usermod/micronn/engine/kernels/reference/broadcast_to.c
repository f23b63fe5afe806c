/* BROADCAST_TO and BROADCAST_ARGS reference kernels. BROADCAST_TO is one strided copy with zero
 * input strides on the broadcast dims (any element size; the target shape is the model's output
 * shape). BROADCAST_ARGS computes the numpy broadcast of two int32/int64 shape vectors in eval
 * (they may be activations; their lengths, hence the output's, are static). */
#include "mn_ref.h"

#if MICRONN_OP_BROADCAST_TO || MICRONN_OP_BROADCAST_ARGS

#include "ref_glue.h"

#if MICRONN_OP_BROADCAST_TO
static mn_status_t broadcast_to_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    const int n = out->ndim, lead = out->ndim - in->ndim;
    if (lead < 0 || n > MN_COPY_MAX_DIMS) {
        return mn_fail(ctx, MN_ERR_MODEL, "cannot broadcast %d-D to %d-D", in->ndim, out->ndim);
    }
    mn_copy_plan_t plan;
    int32_t in_strides[MN_MAX_DIMS];
    mn_strides(in->dims, in->ndim, in_strides);
    for (int k = 0; k < n; ++k) {
        const int32_t s = k >= lead ? in->dims[k - lead] : 1;
        if (s != out->dims[k] && s != 1) {
            return mn_fail(ctx, MN_ERR_MODEL, "input dim %d (%d) cannot broadcast to %d", k - lead, (int)s,
                (int)out->dims[k]);
        }
        plan.dims[k] = out->dims[k];
        plan.in_stride[k] = s == 1 ? 0 : in_strides[k - lead];
    }
    plan.ndim = n;
    mn_strides(plan.dims, n, plan.out_stride);
    return ref_copy_plan_done(ctx, node, &plan, 0, mn_dtype_size(in->dtype));
}

const mn_kernel_t mn_kernel_BROADCAST_TO = { NULL, broadcast_to_prepare, ref_copy_eval, NULL, NULL };
#endif

#if MICRONN_OP_BROADCAST_ARGS
static mn_status_t broadcast_args_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(s0, ctx, node, 0, "shape0");
    REF_INPUT(s1, ctx, node, 1, "shape1");
    REF_OUTPUT(out, ctx, node, 0);
    if ((s0->dtype != MN_INT32 && s0->dtype != MN_INT64) || s1->dtype != s0->dtype || out->dtype != s0->dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "shapes must all be int32 or all int64");
    }
    const size_t n0 = mn_tensor_count(s0), n1 = mn_tensor_count(s1);
    if (s0->ndim != 1 || s1->ndim != 1 || mn_tensor_count(out) != (n0 > n1 ? n0 : n1)) {
        return mn_fail(ctx, MN_ERR_MODEL, "inputs must be 1-D and the output as long as the longer one");
    }
    return MN_OK;
}

static int64_t shape_at(const mn_tensor_t *t, size_t k) {
    return t->dtype == MN_INT64 ? ((const int64_t *)t->data)[k] : ((const int32_t *)t->data)[k];
}

static mn_status_t broadcast_args_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *s0 = mn_input(ctx, node, 0), *s1 = mn_input(ctx, node, 1);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    const size_t n0 = mn_tensor_count(s0), n1 = mn_tensor_count(s1), n = mn_tensor_count(out);
    for (size_t k = 0; k < n; ++k) {
        /* right-aligned; missing leading dims are 1 */
        const int64_t a = k + n0 >= n ? shape_at(s0, k + n0 - n) : 1;
        const int64_t b = k + n1 >= n ? shape_at(s1, k + n1 - n) : 1;
        if (a != b && a != 1 && b != 1) {
            return mn_fail(ctx, MN_ERR_KERNEL, "shapes are not broadcastable (%d vs %d at dim %d)", (int)a, (int)b,
                (int)k);
        }
        const int64_t r = a == 1 ? b : a;
        if (out->dtype == MN_INT64) {
            ((int64_t *)out->data)[k] = r;
        } else {
            ((int32_t *)out->data)[k] = (int32_t)r;
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_BROADCAST_ARGS = { NULL, broadcast_args_prepare, broadcast_args_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_BROADCAST_TO || MICRONN_OP_BROADCAST_ARGS */
