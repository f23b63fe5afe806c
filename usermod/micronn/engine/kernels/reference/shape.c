/* SHAPE reference kernel: the input's dims as int32 or int64 (written in eval: the output lives in
 * the planned arena). */
#include "mn_ref.h"

#if MICRONN_OP_SHAPE

#include "ref_glue.h"

static mn_status_t shape_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    if (out->dtype != MN_INT32 && out->dtype != MN_INT64) {
        return ref_fail_dtype(ctx, "output", out);
    }
    if (mn_tensor_count(out) != (size_t)in->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u values for a %d-D input", (unsigned)mn_tensor_count(out),
            in->ndim);
    }
    return MN_OK;
}

static mn_status_t shape_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    for (int k = 0; k < in->ndim; ++k) {
        if (out->dtype == MN_INT64) {
            ((int64_t *)out->data)[k] = in->dims[k];
        } else {
            ((int32_t *)out->data)[k] = in->dims[k];
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SHAPE = { NULL, shape_prepare, shape_eval, NULL, NULL };

#endif /* MICRONN_OP_SHAPE */
