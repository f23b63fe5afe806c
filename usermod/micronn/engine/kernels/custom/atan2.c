/*
 * Custom op "Atan2" (TFLite's custom op of that name, tensorflow/lite/kernels/atan2_custom.cc
 * semantics): output = atan2(y, x) elementwise, float32, y and x of the same shape.
 *
 * This file is the worked example of a custom-op kernel built into the engine. All it needs:
 *   1. a line in mn_custom_ops.h: MN_CUSTOM_OP(Atan2, 1, "float32");
 *   2. this file, defining `const mn_kernel_t mn_kernel_Atan2` inside #if MICRONN_OP_Atan2,
 *      using only the kernel API of mn_kernel.h.
 * A model refers to it by OperatorCode {builtin_code: CUSTOM, custom_code: "Atan2"}; its
 * custom_options bytes (none here) would come from mn_custom_options(ctx, node, &len).
 */
#include <math.h>

#include "mn_kernel.h"

#if MICRONN_OP_Atan2

static mn_status_t atan2_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 2 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 2 inputs (y, x) and 1 output, got %d and %d",
            mn_num_inputs(node), mn_num_outputs(node));
    }
    const mn_tensor_t *y = mn_input(ctx, node, 0), *x = mn_input(ctx, node, 1), *out = mn_output(ctx, node, 0);
    if (!y || !x || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (y->dtype != MN_FLOAT32 || x->dtype != MN_FLOAT32 || out->dtype != MN_FLOAT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s, %s -> %s not supported (float32 only)",
            mn_dtype_name(y->dtype), mn_dtype_name(x->dtype), mn_dtype_name(out->dtype));
    }
    size_t n = mn_tensor_count(out);
    if (mn_tensor_count(y) != n || mn_tensor_count(x) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "y, x and output must have the same number of elements "
            "(%zu, %zu, %zu)", mn_tensor_count(y), mn_tensor_count(x), n);
    }
    return MN_OK;
}

static mn_status_t atan2_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_tensor_t *out = mn_output(ctx, node, 0);
    const float *y = mn_input(ctx, node, 0)->data, *x = mn_input(ctx, node, 1)->data;
    float *o = out->data;
    for (size_t i = 0, n = mn_tensor_count(out); i < n; i++) {
        o[i] = atan2f(y[i], x[i]);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_Atan2 = { NULL, atan2_prepare, atan2_eval, NULL, NULL };

#endif
