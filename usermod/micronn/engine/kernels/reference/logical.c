/* LOGICAL_AND, LOGICAL_OR (broadcast) and LOGICAL_NOT reference kernels on bool tensors. */
#include "mn_ref.h"

#if MICRONN_OP_LOGICAL_AND || MICRONN_OP_LOGICAL_OR || MICRONN_OP_LOGICAL_NOT

void mn_logical_and(const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2, uint8_t *out) {
    MN_BCAST_FOR(b, out[k] = (uint8_t)(in1[o1] && in2[o2]));
}

void mn_logical_or(const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2, uint8_t *out) {
    MN_BCAST_FOR(b, out[k] = (uint8_t)(in1[o1] || in2[o2]));
}

void mn_logical_not(size_t n, const uint8_t *in, uint8_t *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = (uint8_t)!in[i];
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

#if MICRONN_OP_LOGICAL_AND || MICRONN_OP_LOGICAL_OR
static mn_status_t logical_binary_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(b, mn_bcast_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, b, &in1, &in2, &out));
    if (in1->dtype != MN_BOOL) {
        return ref_fail_dtype(ctx, "input", in1);
    }
    if (out->dtype != MN_BOOL) {
        return ref_fail_dtype(ctx, "output", out);
    }
    node->user_data = b;
    return MN_OK;
}
#endif

#endif

#if MICRONN_OP_LOGICAL_AND
static mn_status_t logical_and_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_logical_and((const mn_bcast_t *)node->user_data, (const uint8_t *)mn_input(ctx, node, 0)->data,
        (const uint8_t *)mn_input(ctx, node, 1)->data, (uint8_t *)mn_output(ctx, node, 0)->data);
    return MN_OK;
}
const mn_kernel_t mn_kernel_LOGICAL_AND = { NULL, logical_binary_prepare, logical_and_eval, NULL, NULL };
#endif

#if MICRONN_OP_LOGICAL_OR
static mn_status_t logical_or_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_logical_or((const mn_bcast_t *)node->user_data, (const uint8_t *)mn_input(ctx, node, 0)->data,
        (const uint8_t *)mn_input(ctx, node, 1)->data, (uint8_t *)mn_output(ctx, node, 0)->data);
    return MN_OK;
}
const mn_kernel_t mn_kernel_LOGICAL_OR = { NULL, logical_binary_prepare, logical_or_eval, NULL, NULL };
#endif

#if MICRONN_OP_LOGICAL_NOT
static mn_status_t logical_not_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    if (in->dtype != MN_BOOL || out->dtype != MN_BOOL) {
        return ref_fail_combo(ctx, in, out);
    }
    if (mn_tensor_count(in) != mn_tensor_count(out)) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    return MN_OK;
}
static mn_status_t logical_not_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_logical_not(mn_tensor_count(in), (const uint8_t *)in->data, (uint8_t *)mn_output(ctx, node, 0)->data);
    return MN_OK;
}
const mn_kernel_t mn_kernel_LOGICAL_NOT = { NULL, logical_not_prepare, logical_not_eval, NULL, NULL };
#endif
