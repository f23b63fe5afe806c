/* PAD and PADV2 reference kernels (TFLite reference_ops::Pad): the output is filled with the pad
 * value, then the input is copied into its interior with one strided copy. The pad value is the
 * output zero point for quantized PAD, 0 otherwise, or PADV2's constant_values (raw, read in eval:
 * it may be an activation). */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_PAD || MICRONN_OP_PADV2

#include "ref_glue.h"

typedef struct {
    mn_copy_plan_t plan;
    int32_t out_offset;     /* elements before the first copied one */
    uint8_t es;
    uint8_t pad[8];         /* PAD's value (and PADV2's when constant_values is omitted) */
} pad_data_t;

static mn_status_t pad_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t pads[2 * MN_MAX_DIMS] = { 0 }, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "paddings", pads, 2 * MN_MAX_DIMS, &n));
    const int rank = in->ndim;
    if (n != 2 * rank || out->ndim != rank) {
        return mn_fail(ctx, MN_ERR_MODEL, "paddings has %d values for a %d-D input (%d-D output)", (int)n,
            rank, out->ndim);
    }
    REF_ALLOC(d, pad_data_t, ctx, 1);
    int32_t in_strides[MN_MAX_DIMS], out_strides[MN_MAX_DIMS];
    mn_strides(in->dims, rank, in_strides);
    mn_strides(out->dims, rank, out_strides);
    d->out_offset = 0;
    for (int k = 0; k < rank; ++k) {
        if (pads[2 * k] < 0 || pads[2 * k + 1] < 0 ||
            out->dims[k] != in->dims[k] + pads[2 * k] + pads[2 * k + 1]) {
            return mn_fail(ctx, MN_ERR_MODEL, "paddings [%d, %d] of dim %d do not give the output's %d",
                (int)pads[2 * k], (int)pads[2 * k + 1], k, (int)out->dims[k]);
        }
        d->out_offset += pads[2 * k] * out_strides[k];
        d->plan.dims[k] = in->dims[k];
        d->plan.in_stride[k] = in_strides[k];
        d->plan.out_stride[k] = out_strides[k];
    }
    d->plan.ndim = rank;
    mn_copy_plan_simplify(&d->plan);
    d->es = (uint8_t)mn_dtype_size(in->dtype);
    ref_pad_value(out, d->pad);
    const mn_tensor_t *cv = mn_input(ctx, node, 2);
    if (cv && (cv->dtype != in->dtype || mn_tensor_count(cv) != 1)) {
        return mn_fail(ctx, MN_ERR_MODEL, "constant_values must be one %s value", mn_dtype_name(in->dtype));
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t pad_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const pad_data_t *d = (const pad_data_t *)node->user_data;
    mn_tensor_t *out = mn_output(ctx, node, 0);
    const mn_tensor_t *cv = mn_input(ctx, node, 2);
    mn_fill_elems(out->data, mn_tensor_bytes(out) / d->es, d->es, cv ? cv->data : d->pad);
    mn_copy_strided(&d->plan, d->es, mn_input(ctx, node, 0)->data,
        (uint8_t *)out->data + (size_t)d->out_offset * d->es);
    return MN_OK;
}

#if MICRONN_OP_PAD
const mn_kernel_t mn_kernel_PAD = { NULL, pad_prepare, pad_eval, NULL, NULL };
#endif
#if MICRONN_OP_PADV2
const mn_kernel_t mn_kernel_PADV2 = { NULL, pad_prepare, pad_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_PAD || MICRONN_OP_PADV2 */
