/* READ_VARIABLE (TFLite's / TFLM's): copies the resource variable of input 0 (a VAR_HANDLE of the
 * same subgraph) to the output, whose dtype and size must be the variable's (mn_resource.c).
 * Reading a variable no assignment has set yet (since prepare or mn_interp_reset) is an error. */
#include "mn_kernel.h"

#if MICRONN_OP_READ_VARIABLE

static mn_status_t read_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1 || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes a resource handle and gives one output");
    }
    int32_t id = mn_resource_of(ctx, node, 0);
    if (id < 0) {
        return ctx->err.status;
    }
    const mn_resource_t *r = mn_resource_get(ctx, id);
    if (!r->sized) {
        return mn_fail(ctx, MN_ERR_MODEL, "variable '%s' is never assigned (no ASSIGN_VARIABLE gives it a value)",
            r->shared_name);
    }
    if (r->dtype != out->dtype || r->bytes != mn_tensor_bytes(out)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output is %s (%zu bytes), variable '%s' is %s (%zu bytes)",
            mn_dtype_name(out->dtype), mn_tensor_bytes(out), r->shared_name, mn_dtype_name(r->dtype), r->bytes);
    }
    int32_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    *d = id;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t read_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_resource_t *r = mn_resource_get(ctx, *(const int32_t *)node->user_data);
    if (!r->assigned) {
        return mn_fail(ctx, MN_ERR_KERNEL, "variable '%s' read before it was assigned", r->shared_name);
    }
    memcpy(mn_output(ctx, node, 0)->data, r->data, r->bytes);
    return MN_OK;
}

const mn_kernel_t mn_kernel_READ_VARIABLE = { NULL, read_prepare, read_eval, NULL, NULL };

#endif
