/* TRANSPOSE reference kernel (TFLite reference_ops::Transpose, up to 6-D): one strided copy,
 * planned in prepare, for every element size. */
#include "mn_ref.h"

#if MICRONN_OP_TRANSPOSE

#include "ref_glue.h"

typedef struct {
    mn_copy_plan_t plan;
    uint8_t es;
} transpose_data_t;

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
    REF_ALLOC(d, transpose_data_t, ctx, 1);
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
        d->plan.dims[k] = in->dims[p];
        d->plan.in_stride[k] = in_strides[p];
    }
    d->plan.ndim = n;
    mn_strides(d->plan.dims, n, d->plan.out_stride);
    mn_copy_plan_simplify(&d->plan);
    d->es = (uint8_t)mn_dtype_size(in->dtype);
    node->user_data = d;
    return MN_OK;
}

static mn_status_t transpose_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const transpose_data_t *d = (const transpose_data_t *)node->user_data;
    mn_copy_strided(&d->plan, d->es, mn_input(ctx, node, 0)->data, mn_output(ctx, node, 0)->data);
    return MN_OK;
}

const mn_kernel_t mn_kernel_TRANSPOSE = { NULL, transpose_prepare, transpose_eval, NULL };

#endif /* MICRONN_OP_TRANSPOSE */
