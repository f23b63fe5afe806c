/* EMBEDDING_LOOKUP reference kernel (TFLite embedding_lookup.cc): output row i is row ids[i] of
 * value. Same value/output dtype: rows are copied (any element size). int8 value with a
 * float32 output (hybrid): rows are scaled by the value's scale (per tensor, or per row when value
 * is quantized per channel along dim 0), zero point ignored, as TFLite. Ids (int32) are checked in
 * eval. (uint8 hybrid values are refused: TFLite reads their bytes as int8.) */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_EMBEDDING_LOOKUP

#include "ref_glue.h"

typedef struct {
    int32_t n_ids, rows, row_elems;
    uint8_t es, hybrid;
} embedding_data_t;

static mn_status_t embedding_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(ids, ctx, node, 0, "ids");
    REF_INPUT(value, ctx, node, 1, "value");
    REF_OUTPUT(out, ctx, node, 0);
    if (ids->dtype != MN_INT32 || ids->ndim != 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "ids must be 1-D int32 (got %d-D %s)", ids->ndim,
            mn_dtype_name(ids->dtype));
    }
    if (value->ndim < 2 || out->ndim != value->ndim || out->dims[0] != ids->dims[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "value must be at least 2-D and the output [ids, value rows...]");
    }
    for (int k = 1; k < value->ndim; ++k) {
        if (out->dims[k] != value->dims[k]) {
            return mn_fail(ctx, MN_ERR_MODEL, "output dim %d differs from value's", k);
        }
    }
    REF_ALLOC(d, embedding_data_t, ctx, 1);
    d->n_ids = ids->dims[0];
    d->rows = value->dims[0];
    d->row_elems = (int32_t)(mn_tensor_count(value) / (size_t)(d->rows ? d->rows : 1));
    if (value->dtype == out->dtype) {
        REF_TRY(ref_same_dtype(ctx, value, out));
    } else if (value->dtype == MN_INT8 && out->dtype == MN_FLOAT32) {
        if (mn_tensor_q_count(value) != 1 && !(mn_tensor_q_count(value) == d->rows && value->q_dim == 0)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid value needs a per-tensor or per-row scale");
        }
        d->hybrid = 1;
    } else {
        return ref_fail_combo(ctx, value, out);
    }
    d->es = (uint8_t)mn_dtype_size(value->dtype);
    node->user_data = d;
    return MN_OK;
}

static mn_status_t embedding_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const embedding_data_t *d = (const embedding_data_t *)node->user_data;
    const int32_t *ids = (const int32_t *)mn_input(ctx, node, 0)->data;
    const mn_tensor_t *value = mn_input(ctx, node, 1);
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    const size_t row_bytes = (size_t)d->row_elems * d->es;
    for (int32_t i = 0; i < d->n_ids; ++i) {
        const int32_t r = ids[i];
        if (r < 0 || r >= d->rows) {
            return mn_fail(ctx, MN_ERR_KERNEL, "id %d out of range [0, %d)", (int)r, (int)d->rows);
        }
        const uint8_t *src = (const uint8_t *)value->data + (size_t)r * row_bytes;
        if (!d->hybrid) {
            memcpy(out + (size_t)i * row_bytes, src, row_bytes);
            continue;
        }
        const float scale = mn_tensor_scale(value, mn_tensor_q_count(value) > 1 ? r : 0);
        float *o = (float *)(void *)out + (size_t)i * d->row_elems;
        for (int32_t k = 0; k < d->row_elems; ++k) {
            o[k] = (float)(int8_t)src[k] * scale;
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_EMBEDDING_LOOKUP = { NULL, embedding_prepare, embedding_eval, NULL, NULL };

#endif /* MICRONN_OP_EMBEDDING_LOOKUP */
