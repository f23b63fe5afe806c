/* REVERSE_V2 reference kernel (TFLite reference_ops::Reverse, any set of axes): one strided copy
 * whose input strides run backwards along the reversed axes, planned in prepare. */
#include "mn_ref.h"

#if MICRONN_OP_REVERSE_V2

#include "ref_glue.h"

static mn_status_t reverse_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    if (out->ndim != in->ndim || mn_tensor_count(out) != mn_tensor_count(in)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape differs from the input's");
    }
    for (int k = 0; k < in->ndim; ++k) {
        if (out->dims[k] != in->dims[k]) {
            return mn_fail(ctx, MN_ERR_MODEL, "output dim %d is %d, the input's %d", k, (int)out->dims[k],
                (int)in->dims[k]);
        }
    }
    int32_t axes[MN_MAX_DIMS] = { 0 }, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "axis", axes, MN_MAX_DIMS, &n));
    mn_copy_plan_t plan;
    plan.ndim = in->ndim;
    for (int k = 0; k < in->ndim; ++k) {
        plan.dims[k] = in->dims[k];
    }
    mn_strides(plan.dims, plan.ndim, plan.in_stride);
    mn_strides(plan.dims, plan.ndim, plan.out_stride);
    int32_t offset = 0;
    unsigned seen = 0;
    for (int i = 0; i < n; ++i) {
        const int32_t a = axes[i] < 0 ? axes[i] + in->ndim : axes[i];
        if (a < 0 || a >= in->ndim || (seen & (1u << a))) {
            return mn_fail(ctx, MN_ERR_MODEL, "axis %d out of range or repeated for a %d-D input", (int)axes[i],
                in->ndim);
        }
        seen |= 1u << a;
        offset += (in->dims[a] - 1) * plan.in_stride[a];
        plan.in_stride[a] = -plan.in_stride[a];
    }
    return ref_copy_plan_done(ctx, node, &plan, offset, mn_dtype_size(in->dtype));
}

const mn_kernel_t mn_kernel_REVERSE_V2 = { NULL, reverse_prepare, ref_copy_eval, NULL, NULL };

#endif /* MICRONN_OP_REVERSE_V2 */
