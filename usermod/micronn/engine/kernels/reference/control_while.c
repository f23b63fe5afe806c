/* WHILE (TFLite's / TFLM's): the op's inputs are the loop variables; the cond subgraph maps them
 * to one bool, the body subgraph to their next values (WhileOptions). The op's outputs hold the
 * values between iterations (copied into cond and body, body outputs copied back), so they are
 * the last values when cond says false (the inputs themselves when it does so at once). Each
 * subgraph runs in a nested interpreter (mn_nested.c). A loop that never ends is stopped by
 * mn_config_t.should_stop, polled before every iteration (and by the subgraphs' ops). */
#include "mn_kernel.h"

#if MICRONN_OP_WHILE

typedef struct {
    mn_nested_t cond, body;
} while_data_t;

static mn_status_t while_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (!node->options) {
        return mn_fail(ctx, MN_ERR_MODEL, "WhileOptions missing (cond/body subgraph indices)");
    }
    const int n = mn_num_inputs(node);
    if (mn_num_outputs(node) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "has %d inputs and %d outputs (one output per loop variable)", n,
            mn_num_outputs(node));
    }
    for (int i = 0; i < n; i++) {
        const mn_tensor_t *in = mn_input(ctx, node, i), *out = mn_output(ctx, node, i);
        if (!in || !out || in->dtype != out->dtype || mn_tensor_bytes(in) != mn_tensor_bytes(out)) {
            return mn_fail(ctx, MN_ERR_MODEL, "loop variable %d: input and output differ in dtype or size", i);
        }
    }
    while_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    node->user_data = d;
    mn_status_t s = mn_nested_open(ctx, &d->cond, mn_opt_i32(node, MN_WHILE_COND_SUBGRAPH, 0), "cond");
    if (s == MN_OK) {
        s = mn_nested_check_io(ctx, node, &d->cond, false, 0, n);
    }
    if (s == MN_OK) {
        mn_tensor_t c;
        if (mn_model_num_outputs(&d->cond.model) != 1 || mn_nested_io(&d->cond, true, 0, &c) != MN_OK
            || c.dtype != MN_BOOL || mn_tensor_count(&c) != 1) {
            return mn_fail(ctx, MN_ERR_MODEL, "cond subgraph %u must have one output, a bool scalar",
                (unsigned)d->cond.index);
        }
        s = mn_nested_open(ctx, &d->body, mn_opt_i32(node, MN_WHILE_BODY_SUBGRAPH, 0), "body");
    }
    if (s == MN_OK) {
        s = mn_nested_check_io(ctx, node, &d->body, false, 0, n);
    }
    if (s == MN_OK) {
        s = mn_nested_check_io(ctx, node, &d->body, true, 0, n);
    }
    if (s == MN_OK) {
        /* cond and body take turns, their operands copied in and out: shared activations */
        mn_nested_t *const both[2] = { &d->cond, &d->body };
        s = mn_nested_prepare_shared(ctx, both, 2, NULL);
    }
    return s;
}

static mn_status_t while_eval(mn_ctx_t *ctx, mn_node_t *node) {
    while_data_t *d = node->user_data;
    for (int i = 0; i < mn_num_inputs(node); i++) {
        mn_tensor_t *in = mn_input(ctx, node, i), *out = mn_output(ctx, node, i);
        memcpy(out->data, in->data, mn_tensor_bytes(out));
    }
    for (uint32_t iteration = 0;; iteration++) {
        if (ctx->cfg.should_stop && ctx->cfg.should_stop(ctx->cfg.stop_user)) {
            return mn_fail(ctx, MN_ERR_ABORTED, "stopped after %u iterations (should_stop)", (unsigned)iteration);
        }
        mn_nested_copy_in(&d->cond, ctx, node, true, 0);
        mn_status_t s = mn_nested_invoke(ctx, &d->cond);
        if (s != MN_OK) {
            return s;
        }
        if (!*(const uint8_t *)mn_nested_tensor(&d->cond, true, 0)->data) {
            return MN_OK;
        }
        mn_nested_copy_in(&d->body, ctx, node, true, 0);
        if ((s = mn_nested_invoke(ctx, &d->body)) != MN_OK) {
            return s;
        }
        mn_nested_copy_out(&d->body, ctx, node);
    }
}

static void while_free(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    while_data_t *d = node->user_data;
    if (d) {
        mn_nested_free(&d->cond);
        mn_nested_free(&d->body);
    }
}

const mn_kernel_t mn_kernel_WHILE = { NULL, while_prepare, while_eval, while_free, NULL };

#endif
