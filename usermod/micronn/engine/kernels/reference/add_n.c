/* ADD_N reference kernel (TFLite's): the elementwise sum of N same-shape tensors, float32 or int32
 * (int32 wraps around). Summed in input order from zero, as reference_ops::AddN. */
#include "mn_ref.h"

#if MICRONN_OP_ADD_N

#include "ref_glue.h"

typedef struct {
    size_t count;
    uint8_t dtype;
} add_n_data_t;

static int same_shape(const mn_tensor_t *a, const mn_tensor_t *b) {
    if (a->ndim != b->ndim) {
        return 0;
    }
    for (int i = 0; i < a->ndim; ++i) {
        if (a->dims[i] != b->dims[i]) {
            return 0;
        }
    }
    return 1;
}

static mn_status_t add_n_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    const int n = mn_num_inputs(node);
    if (n < 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "needs at least 2 inputs (got %d)", n);
    }
    REF_OUTPUT(out, ctx, node, 0);
    if (out->dtype != MN_FLOAT32 && out->dtype != MN_INT32) {
        return ref_fail_dtype(ctx, "output", out);
    }
    for (int i = 0; i < n; ++i) {
        REF_INPUT(in, ctx, node, i, "input");
        if (in->dtype != out->dtype) {
            return ref_fail_combo(ctx, in, out);
        }
        if (!same_shape(in, out)) {
            return mn_fail(ctx, MN_ERR_MODEL, "input %d shape differs from the output's (no broadcasting)", i);
        }
    }
    REF_ALLOC(d, add_n_data_t, ctx, 1);
    d->count = mn_tensor_count(out);
    d->dtype = out->dtype;
    node->user_data = d;
    return MN_OK;
}

/* ((0 + in0) + in1) + ...: each input added to the output in turn (ADD_N is never planned in
 * place, so the output does not alias an input). */
static mn_status_t add_n_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const add_n_data_t *d = (const add_n_data_t *)node->user_data;
    const int n = mn_num_inputs(node);
    void *o = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_FLOAT32) {
        float *of = (float *)o;
        const float *a = (const float *)mn_input(ctx, node, 0)->data;
        for (size_t k = 0; k < d->count; ++k) {
            of[k] = 0.0f + a[k];
        }
        for (int i = 1; i < n; ++i) {
            a = (const float *)mn_input(ctx, node, i)->data;
            for (size_t k = 0; k < d->count; ++k) {
                of[k] += a[k];
            }
        }
    } else {
        uint32_t *ou = (uint32_t *)o;   /* int32 wrap-around */
        const int32_t *a = (const int32_t *)mn_input(ctx, node, 0)->data;
        for (size_t k = 0; k < d->count; ++k) {
            ou[k] = (uint32_t)a[k];
        }
        for (int i = 1; i < n; ++i) {
            a = (const int32_t *)mn_input(ctx, node, i)->data;
            for (size_t k = 0; k < d->count; ++k) {
                ou[k] += (uint32_t)a[k];
            }
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_ADD_N = { NULL, add_n_prepare, add_n_eval, NULL, NULL };

#endif /* MICRONN_OP_ADD_N */
