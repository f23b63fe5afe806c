/* GATHER reference kernel (TFLite reference_ops::Gather with axis and batch_dims): for every batch,
 * outer slice and index, one run of `inner` elements is copied. Indices (int32/int64) are data and
 * are checked in eval: an index outside the axis fails the invoke, as in TFLite. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_GATHER

#include "ref_glue.h"

typedef struct {
    int32_t batches, outer, axis_size, coords, inner_bytes;
    uint8_t idx64;
} gather_data_t;

/* Index k of an int32/int64 index array. */
static inline int64_t index_at(const void *idx, int idx64, size_t k) {
    return idx64 ? ((const int64_t *)idx)[k] : ((const int32_t *)idx)[k];
}

static mn_status_t gather_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(params, ctx, node, 0, "params");
    REF_INPUT(indices, ctx, node, 1, "indices");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, params, out));
    if (indices->dtype != MN_INT32 && indices->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "indices", indices);
    }
    int axis = mn_opt_i32(node, MN_GATHER_AXIS, 0);
    int batch_dims = mn_opt_i32(node, MN_GATHER_BATCH_DIMS, 0);
    if (axis < 0) {
        axis += params->ndim;
    }
    if (batch_dims < 0) {
        batch_dims += indices->ndim;
    }
    if (axis < 0 || axis >= params->ndim || batch_dims < 0 || batch_dims > axis ||
        batch_dims > indices->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis %d / batch_dims %d invalid for %d-D params, %d-D indices",
            axis, batch_dims, params->ndim, indices->ndim);
    }
    /* output = params[:axis] + indices[batch_dims:] + params[axis+1:] */
    int o = 0;
    int32_t batches = 1, outer = 1, coords = 1, inner = 1;
    for (int k = 0; k < batch_dims; ++k) {
        if (indices->dims[k] != params->dims[k]) {
            return mn_fail(ctx, MN_ERR_MODEL, "batch dim %d differs: params %d, indices %d", k,
                (int)params->dims[k], (int)indices->dims[k]);
        }
        batches *= params->dims[k];
    }
    int ok = out->ndim == params->ndim - 1 + indices->ndim - batch_dims;
    for (int k = 0; ok && k < axis; ++k) {
        ok = out->dims[o++] == params->dims[k];
        outer *= k >= batch_dims ? params->dims[k] : 1;
    }
    for (int k = batch_dims; ok && k < indices->ndim; ++k) {
        ok = out->dims[o++] == indices->dims[k];
        coords *= indices->dims[k];
    }
    for (int k = axis + 1; ok && k < params->ndim; ++k) {
        ok = out->dims[o++] == params->dims[k];
        inner *= params->dims[k];
    }
    if (!ok) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match params/indices/axis");
    }
    REF_ALLOC(d, gather_data_t, ctx, 1);
    d->batches = batches;
    d->outer = outer;
    d->axis_size = params->dims[axis];
    d->coords = coords;
    d->inner_bytes = inner * (int32_t)mn_dtype_size(params->dtype);
    d->idx64 = indices->dtype == MN_INT64;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t gather_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const gather_data_t *d = (const gather_data_t *)node->user_data;
    const uint8_t *params = (const uint8_t *)mn_input(ctx, node, 0)->data;
    const void *idx = mn_input(ctx, node, 1)->data;
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    const size_t ib = (size_t)d->inner_bytes;
    for (int32_t b = 0; b < d->batches; ++b) {
        for (int32_t o = 0; o < d->outer; ++o) {
            const uint8_t *src = params + ((size_t)b * d->outer + o) * d->axis_size * ib;
            for (int32_t c = 0; c < d->coords; ++c) {
                const int64_t i = index_at(idx, d->idx64, (size_t)b * d->coords + c);
                if (i < 0 || i >= d->axis_size) {
                    return mn_fail(ctx, MN_ERR_KERNEL, "index %d out of range [0, %d)", (int)i, (int)d->axis_size);
                }
                memcpy(out, src + (size_t)i * ib, ib);
                out += ib;
            }
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_GATHER = { NULL, gather_prepare, gather_eval, NULL, NULL };

#endif /* MICRONN_OP_GATHER */
