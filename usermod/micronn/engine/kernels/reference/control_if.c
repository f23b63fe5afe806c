/* IF (TFLite's / TFLM's): input 0 is the condition (one bool, or one int32 / int8: nonzero is
 * true); the other inputs are passed to the then or the else subgraph (IfOptions), whose outputs
 * become the op's. Each branch runs in a nested interpreter (mn_nested.c) with its own plan;
 * inputs are copied in, outputs copied out. */
#include "mn_kernel.h"

#if MICRONN_OP_IF

typedef struct {
    mn_nested_t branch[2];      /* then, else */
} if_data_t;

static mn_status_t if_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (!node->options) {
        return mn_fail(ctx, MN_ERR_MODEL, "IfOptions missing (then/else subgraph indices)");
    }
    const mn_tensor_t *cond = mn_input(ctx, node, 0);
    if (!cond || mn_tensor_count(cond) != 1
        || (cond->dtype != MN_BOOL && cond->dtype != MN_INT32 && cond->dtype != MN_INT8)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "condition must be one bool, int32 or int8 value");
    }
    if_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    node->user_data = d;
    static const char *const what[2] = { "then", "else" };
    for (int b = 0; b < 2; b++) {
        mn_nested_t *n = &d->branch[b];
        mn_status_t s = mn_nested_open(ctx, n, mn_opt_i32(node, b ? MN_IF_ELSE_SUBGRAPH : MN_IF_THEN_SUBGRAPH, 0),
            what[b]);
        if (s == MN_OK) {
            s = mn_nested_check_io(ctx, node, n, false, 1, mn_num_inputs(node) - 1);
        }
        if (s == MN_OK) {
            s = mn_nested_check_io(ctx, node, n, true, 0, mn_num_outputs(node));
        }
        if (s != MN_OK) {
            return s;
        }
    }
    mn_nested_t *const both[2] = { &d->branch[0], &d->branch[1] };
    return mn_nested_prepare_shared(ctx, both, 2, NULL);   /* one runs at a time: shared activations */
}

static mn_status_t if_eval(mn_ctx_t *ctx, mn_node_t *node) {
    if_data_t *d = node->user_data;
    const mn_tensor_t *cond = mn_input(ctx, node, 0);
    bool c = cond->dtype == MN_INT32 ? *(const int32_t *)cond->data != 0 : *(const uint8_t *)cond->data != 0;
    mn_nested_t *n = &d->branch[c ? 0 : 1];
    mn_nested_copy_in(n, ctx, node, false, 1);
    mn_status_t s = mn_nested_invoke(ctx, n);
    if (s != MN_OK) {
        return s;
    }
    mn_nested_copy_out(n, ctx, node);
    return MN_OK;
}

static void if_free(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    if_data_t *d = node->user_data;
    if (d) {
        mn_nested_free(&d->branch[0]);
        mn_nested_free(&d->branch[1]);
    }
}

const mn_kernel_t mn_kernel_IF = { NULL, if_prepare, if_eval, if_free, NULL };

#endif
