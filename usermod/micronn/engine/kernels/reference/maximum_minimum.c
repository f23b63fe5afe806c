/* MAXIMUM and MINIMUM reference kernels: elementwise max / min of the raw values (TFLite compares
 * quantized values directly; the inputs and the output share one quantization). */
#include "mn_ref.h"

#if MICRONN_OP_MAXIMUM || MICRONN_OP_MINIMUM

#define MAXMIN_LOOP(T) \
    do { \
        const T *x_ = (const T *)in1, *y_ = (const T *)in2; \
        T *z_ = (T *)out; \
        if (is_max) { \
            MN_BCAST_FOR(b, z_[k] = x_[o1] > y_[o2] ? x_[o1] : y_[o2]); \
        } else { \
            MN_BCAST_FOR(b, z_[k] = x_[o1] < y_[o2] ? x_[o1] : y_[o2]); \
        } \
    } while (0)

void mn_maxmin(int dtype, int is_max, const mn_bcast_t *b, const void *in1, const void *in2, void *out) {
    switch (dtype) {
        case MN_INT8:
            MAXMIN_LOOP(int8_t);
            break;
        case MN_INT16:
            MAXMIN_LOOP(int16_t);
            break;
        case MN_INT32:
            MAXMIN_LOOP(int32_t);
            break;
        default:
            MAXMIN_LOOP(float);
            break;
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    uint8_t dtype, is_max;
} maxmin_data_t;

static mn_status_t maxmin_prepare(mn_ctx_t *ctx, mn_node_t *node, int is_max) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, maxmin_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    if (in1->dtype != out->dtype) {
        return ref_fail_combo(ctx, in1, out);
    }
    const int t = in1->dtype;
    if (t != MN_FLOAT32 && t != MN_INT8 && t != MN_INT16 && t != MN_INT32) {
        return ref_fail_dtype(ctx, "input", in1);
    }
    d->dtype = (uint8_t)t;
    d->is_max = (uint8_t)is_max;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t maxmin_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const maxmin_data_t *d = (const maxmin_data_t *)node->user_data;
    mn_maxmin(d->dtype, d->is_max, &d->b, mn_input(ctx, node, 0)->data, mn_input(ctx, node, 1)->data,
        mn_output(ctx, node, 0)->data);
    return MN_OK;
}

#endif

#if MICRONN_OP_MAXIMUM
static mn_status_t maximum_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return maxmin_prepare(ctx, node, 1);
}
const mn_kernel_t mn_kernel_MAXIMUM = { NULL, maximum_prepare, maxmin_eval, NULL, NULL };
#endif

#if MICRONN_OP_MINIMUM
static mn_status_t minimum_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return maxmin_prepare(ctx, node, 0);
}
const mn_kernel_t mn_kernel_MINIMUM = { NULL, minimum_prepare, maxmin_eval, NULL, NULL };
#endif
