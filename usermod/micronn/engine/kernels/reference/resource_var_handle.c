/* VAR_HANDLE (TFLite's / TFLM's): the handle of the resource variable named by VarHandleOptions
 * (container, shared_name), one variable per name for the whole model (mn_resource.c). Output:
 * a resource tensor (an int32 id is written when it has room for one). */
#include "mn_kernel.h"

#if MICRONN_OP_VAR_HANDLE

static mn_status_t var_handle_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    if (mn_num_inputs(node) != 0 || mn_num_outputs(node) != 1 || !out
        || (out->dtype != MN_RESOURCE && out->dtype != MN_INT32)) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes no input and gives one resource (or int32) tensor");
    }
    int32_t id = mn_resource_handle(ctx, node);
    if (id < 0) {
        return ctx->err.status;
    }
    int32_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    *d = id;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t var_handle_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *out = mn_output(ctx, node, 0);
    if (mn_tensor_bytes(out) >= sizeof(int32_t)) {
        memcpy(out->data, node->user_data, sizeof(int32_t));
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_VAR_HANDLE = { NULL, var_handle_prepare, var_handle_eval, NULL, NULL };

#endif
