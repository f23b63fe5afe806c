/* FILL and ZEROS_LIKE reference kernels: every output element is a copy of one value (FILL's
 * value input, read in eval since it may be an activation; ZEROS_LIKE: all bytes 0). The output
 * shape is the model's; FILL's dims input only restates it. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_FILL || MICRONN_OP_ZEROS_LIKE

#include "ref_glue.h"

#if MICRONN_OP_FILL
/* inputs: dims, value */
static mn_status_t fill_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(dims, ctx, node, 0, "dims");
    REF_INPUT(value, ctx, node, 1, "value");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, value, out));
    if (mn_tensor_count(value) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "value must be a scalar");
    }
    if (dims->flags & MN_TF_CONST) {
        int32_t d[MN_MAX_DIMS] = { 0 }, n = 0;
        REF_TRY(ref_const_ints(ctx, node, 0, "dims", d, MN_MAX_DIMS, &n));
        int ok = n == out->ndim;
        for (int k = 0; ok && k < n; ++k) {
            ok = d[k] == out->dims[k];
        }
        if (!ok) {
            return mn_fail(ctx, MN_ERR_MODEL, "dims do not match the output shape");
        }
    }
    return MN_OK;
}

static mn_status_t fill_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *value = mn_input(ctx, node, 1);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    mn_fill_elems(out->data, mn_tensor_count(out), mn_tensor_bytes(value), value->data);
    return MN_OK;
}

const mn_kernel_t mn_kernel_FILL = { NULL, fill_prepare, fill_eval, NULL, NULL };
#endif

#if MICRONN_OP_ZEROS_LIKE
static mn_status_t zeros_like_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    if (mn_tensor_bytes(in) != mn_tensor_bytes(out)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from the input's");
    }
    return MN_OK;
}

static mn_status_t zeros_like_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *out = mn_output(ctx, node, 0);
    if (mn_tensor_bytes(out)) {
        memset(out->data, 0, mn_tensor_bytes(out));
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_ZEROS_LIKE = { NULL, zeros_like_prepare, zeros_like_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_FILL || MICRONN_OP_ZEROS_LIKE */
