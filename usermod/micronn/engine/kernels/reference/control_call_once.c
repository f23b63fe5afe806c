/* CALL_ONCE (TFLite's / TFLM's): runs the init subgraph (CallOnceOptions; no inputs, no outputs:
 * it typically assigns resource variables) at the op's first invoke, and never again until the
 * interpreter is reset (mn_interp_reset). Nested interpreter: mn_nested.c. */
#include "mn_kernel.h"

#if MICRONN_OP_CALL_ONCE

typedef struct {
    mn_nested_t init;
    uint32_t ran;               /* 1 + the top interpreter's reset count when it last ran; 0 never */
} call_once_data_t;

static mn_status_t call_once_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (!node->options) {
        return mn_fail(ctx, MN_ERR_MODEL, "CallOnceOptions missing (init subgraph index)");
    }
    if (mn_num_inputs(node) || mn_num_outputs(node)) {
        return mn_fail(ctx, MN_ERR_MODEL, "has %d inputs and %d outputs, takes none", mn_num_inputs(node),
            mn_num_outputs(node));
    }
    call_once_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    node->user_data = d;
    mn_nested_t *n = &d->init;
    mn_status_t s = mn_nested_open(ctx, n, mn_opt_i32(node, MN_CALL_ONCE_INIT_SUBGRAPH, 0), "init");
    if (s == MN_OK) {
        s = mn_nested_check_io(ctx, node, n, false, 0, 0);
    }
    if (s == MN_OK) {
        s = mn_nested_check_io(ctx, node, n, true, 0, 0);
    }
    if (s == MN_OK) {
        s = mn_nested_prepare(ctx, n, NULL);
    }
    return s;
}

static mn_status_t call_once_eval(mn_ctx_t *ctx, mn_node_t *node) {
    call_once_data_t *d = node->user_data;
    uint32_t now = mn_nested_root(ctx)->resets + 1;
    if (d->ran == now) {
        return MN_OK;
    }
    mn_status_t s = mn_nested_invoke(ctx, &d->init);
    if (s == MN_OK) {
        d->ran = now;
    }
    return s;
}

static void call_once_free(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    call_once_data_t *d = node->user_data;
    if (d) {
        mn_nested_free(&d->init);
    }
}

const mn_kernel_t mn_kernel_CALL_ONCE = { NULL, call_once_prepare, call_once_eval, call_once_free, NULL };

#endif
