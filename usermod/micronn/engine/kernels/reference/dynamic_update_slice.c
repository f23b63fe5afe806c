/* DYNAMIC_UPDATE_SLICE reference kernel (TFLite's dynamic_update_slice.cc): the output is the
 * operand with `update` written at start_indices, each index clamped to [0, operand dim - update
 * dim] as TFLite does. The indices are a run-time input: prepare plans the copy of the update
 * (its strides into the output's), eval computes the offset and copies. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_DYNAMIC_UPDATE_SLICE

#include "ref_glue.h"

typedef struct {
    mn_copy_plan_t plan;          /* the update's elements into the output */
    int32_t max_start[MN_MAX_DIMS];   /* operand dim - update dim */
    int32_t out_stride[MN_MAX_DIMS];
    size_t bytes;                 /* the operand's */
    uint8_t ndim, es;
} dus_data_t;

static mn_status_t dus_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(op, ctx, node, 0, "operand");
    REF_INPUT(up, ctx, node, 1, "update");
    REF_INPUT(idx, ctx, node, 2, "start_indices");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, op, out));
    REF_TRY(ref_same_dtype(ctx, op, up));
    if (idx->dtype != MN_INT32 && idx->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "start_indices", idx);
    }
    const int nd = op->ndim;
    if (up->ndim != nd || out->ndim != nd || (int)mn_tensor_count(idx) != nd || nd > MN_MAX_DIMS) {
        return mn_fail(ctx, MN_ERR_MODEL, "operand %d-D, update %d-D, output %d-D, %u start indices: they must agree",
            nd, up->ndim, out->ndim, (unsigned)mn_tensor_count(idx));
    }
    REF_ALLOC(d, dus_data_t, ctx, 1);
    for (int k = 0; k < nd; ++k) {
        if (out->dims[k] != op->dims[k] || up->dims[k] > op->dims[k]) {
            return mn_fail(ctx, MN_ERR_MODEL, "dim %d: operand %d, update %d, output %d", k, (int)op->dims[k],
                (int)up->dims[k], (int)out->dims[k]);
        }
        d->max_start[k] = op->dims[k] - up->dims[k];
        d->plan.dims[k] = up->dims[k];
    }
    d->plan.ndim = nd;
    mn_strides(up->dims, nd, d->plan.in_stride);
    mn_strides(op->dims, nd, d->plan.out_stride);
    memcpy(d->out_stride, d->plan.out_stride, sizeof d->out_stride);
    mn_copy_plan_simplify(&d->plan);
    d->ndim = (uint8_t)nd;
    d->es = (uint8_t)mn_dtype_size(op->dtype);
    d->bytes = mn_tensor_count(op) * d->es;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t dus_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const dus_data_t *d = (const dus_data_t *)node->user_data;
    const mn_tensor_t *op = mn_input(ctx, node, 0), *up = mn_input(ctx, node, 1), *idx = mn_input(ctx, node, 2);
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    if (out != op->data) {
        memmove(out, op->data, d->bytes);
    }
    ptrdiff_t offset = 0;
    for (int k = 0; k < d->ndim; ++k) {
        int64_t s = idx->dtype == MN_INT32 ? ((const int32_t *)idx->data)[k] : ((const int64_t *)idx->data)[k];
        s = s < 0 ? 0 : (s > d->max_start[k] ? d->max_start[k] : s);
        offset += (ptrdiff_t)s * d->out_stride[k];
    }
    mn_copy_strided(&d->plan, d->es, up->data, out + offset * (ptrdiff_t)d->es);
    return MN_OK;
}

const mn_kernel_t mn_kernel_DYNAMIC_UPDATE_SLICE = { NULL, dus_prepare, dus_eval, NULL, NULL };

#endif /* MICRONN_OP_DYNAMIC_UPDATE_SLICE */
