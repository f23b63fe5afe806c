/* TRANSPOSE reference kernel (TFLite reference_ops::Transpose, up to 6-D): one strided copy,
 * planned in prepare, for every element size. */
#include "mn_ref.h"

#if MICRONN_OP_TRANSPOSE

#include "ref_glue.h"

static mn_status_t transpose_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t perm[MN_MAX_DIMS] = { 0 }, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "perm", perm, MN_MAX_DIMS, &n));
    if (n != in->ndim || out->ndim != in->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "perm has %d entries for a %d-D input (%d-D output)",
            (int)n, in->ndim, out->ndim);
    }
    int32_t in_strides[MN_MAX_DIMS];
    mn_strides(in->dims, in->ndim, in_strides);
    mn_copy_plan_t plan;
    unsigned seen = 0;
    for (int k = 0; k < n; ++k) {
        int32_t p = perm[k] < 0 ? perm[k] + n : perm[k];
        if (p < 0 || p >= n || (seen & (1u << p))) {
            return mn_fail(ctx, MN_ERR_MODEL, "perm is not a permutation (entry %d = %d)", k, (int)perm[k]);
        }
        seen |= 1u << p;
        if (out->dims[k] != in->dims[p]) {
            return mn_fail(ctx, MN_ERR_MODEL, "output dim %d is %d, perm gives %d", k, (int)out->dims[k],
                (int)in->dims[p]);
        }
        plan.dims[k] = in->dims[p];
        plan.in_stride[k] = in_strides[p];
    }
    plan.ndim = n;
    mn_strides(plan.dims, n, plan.out_stride);
    return ref_copy_plan_done(ctx, node, &plan, 0, mn_dtype_size(in->dtype));
}

const mn_kernel_t mn_kernel_TRANSPOSE = { NULL, transpose_prepare, ref_copy_eval, NULL, NULL };

#endif /* MICRONN_OP_TRANSPOSE */
