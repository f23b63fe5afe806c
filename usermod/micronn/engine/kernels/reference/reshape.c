/* RESHAPE, SQUEEZE and EXPAND_DIMS reference kernels: the data does not change, only the shape
 * (stored in the model; axis inputs and squeeze_dims only restate it). */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_RESHAPE || MICRONN_OP_SQUEEZE || MICRONN_OP_EXPAND_DIMS

void mn_reshape_copy(size_t nbytes, const void *in, void *out) {
    if (in != out && nbytes) {
        memmove(out, in, nbytes);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

static mn_status_t reshape_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    /* The output shape is the one stored in the model (the converter
     * resolves -1); input 1 / new_shape only restate it. */
    if (in->dtype != out->dtype) {
        return ref_fail_combo(ctx, in, out);
    }
    if (mn_tensor_count(in) != mn_tensor_count(out) || mn_tensor_bytes(in) != mn_tensor_bytes(out)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u elements, input %u",
            (unsigned)mn_tensor_count(out), (unsigned)mn_tensor_count(in));
    }
    return MN_OK;
}

static mn_status_t reshape_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    mn_reshape_copy(mn_tensor_bytes(out), in->data, out->data);
    return MN_OK;
}

const mn_kernel_t mn_kernel_RESHAPE = { NULL, reshape_prepare, reshape_eval, NULL, NULL };
const mn_kernel_t mn_kernel_SQUEEZE = { NULL, reshape_prepare, reshape_eval, NULL, NULL };
const mn_kernel_t mn_kernel_EXPAND_DIMS = { NULL, reshape_prepare, reshape_eval, NULL, NULL };

#endif /* MICRONN_OP_RESHAPE || MICRONN_OP_SQUEEZE || MICRONN_OP_EXPAND_DIMS */
