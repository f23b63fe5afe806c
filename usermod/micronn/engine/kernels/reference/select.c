/* SELECT and SELECT_V2 reference kernels: out = condition ? x : y, copying raw elements (x, y and
 * the output share dtype and quantization). SELECT_V2 broadcasts all three inputs (numpy rules);
 * SELECT takes same-shape inputs, or a rank-1 condition that picks whole slices along x's first
 * dimension (TFLite's RankOneSelect). */
#include "mn_ref.h"

#if MICRONN_OP_SELECT || MICRONN_OP_SELECT_V2

#define SELECT_LOOP(T) \
    MN_BCAST_FOR(b, ((T *)out)[k] = cond[o1] ? ((const T *)x)[o2] : ((const T *)y)[o3])

void mn_select(int size, const mn_bcast_t *b, const uint8_t *cond, const void *x, const void *y, void *out) {
    if (size == 1) {
        SELECT_LOOP(uint8_t);
    } else if (size == 2) {
        SELECT_LOOP(uint16_t);
    } else {
        SELECT_LOOP(uint32_t);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    uint8_t size;
} select_data_t;

static mn_status_t select_prepare(mn_ctx_t *ctx, mn_node_t *node, int v2) {
    REF_INPUT(cond, ctx, node, 0, "condition");
    REF_INPUT(x, ctx, node, 1, "x");
    REF_INPUT(y, ctx, node, 2, "y");
    REF_OUTPUT(out, ctx, node, 0);
    if (cond->dtype != MN_BOOL) {
        return ref_fail_dtype(ctx, "condition", cond);
    }
    if (x->dtype != y->dtype || x->dtype != out->dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "x, y and output dtypes differ (%s, %s, %s)",
            mn_dtype_name(x->dtype), mn_dtype_name(y->dtype), mn_dtype_name(out->dtype));
    }
    const size_t size = mn_dtype_size(x->dtype);
    if (size != 1 && size != 2 && size != 4) {
        return ref_fail_dtype(ctx, "x", x);
    }
    REF_ALLOC(d, select_data_t, ctx, 1);
    d->size = (uint8_t)size;
    const int32_t *cdims = cond->dims;
    int cn = cond->ndim;
    int32_t rank_one[MN_ADD_MAX_DIMS];
    if (!v2) {
        int same = x->ndim == y->ndim && cond->ndim == x->ndim;
        for (int i = 0; same && i < x->ndim; ++i) {
            same = x->dims[i] == y->dims[i] && cond->dims[i] == x->dims[i];
        }
        if (!same) {
            if (cond->ndim != 1 || x->ndim < 1 || x->ndim > MN_ADD_MAX_DIMS || cond->dims[0] != x->dims[0]) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED, "SELECT needs x-shaped inputs or a rank-1 condition "
                    "along x's first dimension (use SELECT_V2 to broadcast)");
            }
            /* the condition's one dimension lines up with x's first one */
            rank_one[0] = cond->dims[0];
            for (int i = 1; i < x->ndim; ++i) {
                rank_one[i] = 1;
            }
            cdims = rank_one;
            cn = x->ndim;
        }
    }
    REF_TRY(ref_bcast_status(ctx, mn_bcast_init3(&d->b, cdims, cn, x->dims, x->ndim, y->dims, y->ndim),
        cond->ndim, x->ndim, y->ndim));
    if (mn_tensor_count(out) != (size_t)d->b.size) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u elements, broadcast gives %d",
            (unsigned)mn_tensor_count(out), (int)d->b.size);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t select_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const select_data_t *d = (const select_data_t *)node->user_data;
    mn_select(d->size, &d->b, (const uint8_t *)mn_input(ctx, node, 0)->data, mn_input(ctx, node, 1)->data,
        mn_input(ctx, node, 2)->data, mn_output(ctx, node, 0)->data);
    return MN_OK;
}

#endif

#if MICRONN_OP_SELECT
static mn_status_t select_prepare_v1(mn_ctx_t *ctx, mn_node_t *node) {
    return select_prepare(ctx, node, 0);
}
const mn_kernel_t mn_kernel_SELECT = { NULL, select_prepare_v1, select_eval, NULL, NULL };
#endif

#if MICRONN_OP_SELECT_V2
static mn_status_t select_prepare_v2(mn_ctx_t *ctx, mn_node_t *node) {
    return select_prepare(ctx, node, 1);
}
const mn_kernel_t mn_kernel_SELECT_V2 = { NULL, select_prepare_v2, select_eval, NULL, NULL };
#endif
