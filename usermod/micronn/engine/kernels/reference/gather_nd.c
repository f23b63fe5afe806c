/* GATHER_ND reference kernel (TFLite reference_ops::GatherNd): each index tuple (last dim of
 * indices, int32/int64) selects a slice of params, copied whole. Tuples are checked in eval: one
 * outside params fails the invoke, as in TFLite. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_GATHER_ND

#include "ref_glue.h"

typedef struct {
    int32_t n_tuples, k, slice_bytes;
    int32_t dims[MN_MAX_DIMS], strides[MN_MAX_DIMS];   /* of params' first k dims, strides in slices */
    uint8_t idx64;
} gather_nd_data_t;

static mn_status_t gather_nd_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(params, ctx, node, 0, "params");
    REF_INPUT(indices, ctx, node, 1, "indices");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, params, out));
    if (indices->dtype != MN_INT32 && indices->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "indices", indices);
    }
    if (indices->ndim < 1 || params->ndim < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "params and indices must be at least 1-D");
    }
    const int k = indices->dims[indices->ndim - 1];
    if (k < 1 || k > params->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "index depth %d for %d-D params", k, params->ndim);
    }
    int ok = out->ndim == indices->ndim - 1 + params->ndim - k, o = 0;
    int32_t n_tuples = 1, slice = 1;
    for (int i = 0; ok && i < indices->ndim - 1; ++i) {
        ok = out->dims[o++] == indices->dims[i];
        n_tuples *= indices->dims[i];
    }
    for (int i = k; ok && i < params->ndim; ++i) {
        ok = out->dims[o++] == params->dims[i];
        slice *= params->dims[i];
    }
    if (!ok) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match params/indices");
    }
    REF_ALLOC(d, gather_nd_data_t, ctx, 1);
    d->n_tuples = n_tuples;
    d->k = k;
    d->slice_bytes = slice * (int32_t)mn_dtype_size(params->dtype);
    memcpy(d->dims, params->dims, sizeof(int32_t) * (size_t)k);
    mn_strides(d->dims, k, d->strides);
    d->idx64 = indices->dtype == MN_INT64;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t gather_nd_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const gather_nd_data_t *d = (const gather_nd_data_t *)node->user_data;
    const uint8_t *params = (const uint8_t *)mn_input(ctx, node, 0)->data;
    const void *idx = mn_input(ctx, node, 1)->data;
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    const size_t sb = (size_t)d->slice_bytes;
    for (int32_t t = 0; t < d->n_tuples; ++t) {
        size_t from = 0;
        for (int j = 0; j < d->k; ++j) {
            const size_t at = (size_t)t * d->k + j;
            const int64_t i = d->idx64 ? ((const int64_t *)idx)[at] : ((const int32_t *)idx)[at];
            if (i < 0 || i >= d->dims[j]) {
                return mn_fail(ctx, MN_ERR_KERNEL, "index %d out of range [0, %d) in dim %d", (int)i,
                    (int)d->dims[j], j);
            }
            from += (size_t)i * d->strides[j];
        }
        memcpy(out + (size_t)t * sb, params + from * sb, sb);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_GATHER_ND = { NULL, gather_nd_prepare, gather_nd_eval, NULL, NULL };

#endif /* MICRONN_OP_GATHER_ND */
