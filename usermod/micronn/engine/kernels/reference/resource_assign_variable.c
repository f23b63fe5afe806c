/* ASSIGN_VARIABLE (TFLite's / TFLM's): copies input 1 into the resource variable of input 0 (a
 * VAR_HANDLE of the same subgraph). The variable's dtype and size were fixed at prepare by the
 * model's first assignment to it, and its memory allocated then (mn_resource.c). */
#include "mn_kernel.h"

#if MICRONN_OP_ASSIGN_VARIABLE

static mn_status_t assign_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *val = mn_input(ctx, node, 1);
    if (mn_num_inputs(node) != 2 || !val || mn_num_outputs(node) != 0) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes a resource handle and a value, gives no output");
    }
    int32_t id = mn_resource_of(ctx, node, 0);
    if (id < 0) {
        return ctx->err.status;
    }
    const mn_resource_t *r = mn_resource_get(ctx, id);
    if (!r->sized || r->dtype != val->dtype || r->bytes != mn_tensor_bytes(val)) {
        return mn_fail(ctx, MN_ERR_MODEL, "variable '%s' is not sized for this %s value (%zu bytes)", r->shared_name,
            mn_dtype_name(val->dtype), mn_tensor_bytes(val));
    }
    int32_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    *d = id;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t assign_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_resource_t *r = mn_resource_get(ctx, *(const int32_t *)node->user_data);
    const mn_tensor_t *val = mn_input(ctx, node, 1);
    memcpy(r->data, val->data, r->bytes);
    r->assigned = true;
    return MN_OK;
}

const mn_kernel_t mn_kernel_ASSIGN_VARIABLE = { NULL, assign_prepare, assign_eval, NULL, NULL };

#endif
