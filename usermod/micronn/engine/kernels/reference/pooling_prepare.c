/* AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D reference kernels: prepare (pooling.c: compute and eval).
 * Prepare-time only: built with the port's optimisation setting, not the kernels' MICRONN_COPT
 * (micropython.mk). */
#include "mn_ref.h"

#if MICRONN_OP_AVERAGE_POOL_2D || MICRONN_OP_MAX_POOL_2D || MICRONN_OP_L2_POOL_2D

#include "ref_glue.h"

const char *ref_pool_variant(const mn_node_t *node) {
    const ref_pool_data_t *d = (const ref_pool_data_t *)node->user_data;
    return d && d->variant ? d->variant->name : NULL;
}

mn_status_t ref_pool_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    const int padding = mn_opt_i8(node, MN_POOL_PADDING, MN_PADDING_SAME);
    const int stride_w = mn_opt_i32(node, MN_POOL_STRIDE_W, 1);
    const int stride_h = mn_opt_i32(node, MN_POOL_STRIDE_H, 1);
    const int f_w = mn_opt_i32(node, MN_POOL_FILTER_W, 1);
    const int f_h = mn_opt_i32(node, MN_POOL_FILTER_H, 1);
    const int act = mn_opt_i8(node, MN_POOL_ACTIVATION, MN_ACT_NONE);

    if (in->ndim != 4 || out->ndim != 4) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input/output must be 4-D (got %d/%d)", in->ndim, out->ndim);
    }
    if (padding != MN_PADDING_SAME && padding != MN_PADDING_VALID) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "padding %d not supported", padding);
    }
    if (stride_w < 1 || stride_h < 1 || f_w < 1 || f_h < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "stride %dx%d / filter %dx%d not supported",
            stride_h, stride_w, f_h, f_w);
    }
    if (in->dtype != out->dtype) {
        return ref_fail_combo(ctx, in, out);
    }
    REF_TRY(mn_check_family(ctx, in->dtype, -1));
    if (mn_tensor_count(in) == 0 || mn_tensor_count(out) == 0) {
        /* no data to point at (the kernels would index a NULL tensor) */
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty input or output");
    }
    REF_ALLOC(d, ref_pool_data_t, ctx, 1);
    mn_pool_geom_t *g = &d->g;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->channels = in->dims[3];
    g->f_h = f_h;
    g->f_w = f_w;
    g->stride_h = stride_h;
    g->stride_w = stride_w;
    g->out_h = mn_conv_out_size(padding, g->in_h, f_h, stride_h, 1);
    g->out_w = mn_conv_out_size(padding, g->in_w, f_w, stride_w, 1);
    if (out->dims[0] != g->batches || out->dims[1] != g->out_h || out->dims[2] != g->out_w ||
        out->dims[3] != g->channels) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match (expected [%d,%d,%d,%d])",
            g->batches, g->out_h, g->out_w, g->channels);
    }
    g->pad_h = mn_conv_padding(stride_h, 1, g->in_h, f_h, g->out_h);
    g->pad_w = mn_conv_padding(stride_w, 1, g->in_w, f_w, g->out_w);
    d->dtype = in->dtype;
    if (node->builtin == MN_BUILTIN_L2_POOL_2D && in->dtype != MN_FLOAT32) {
        return ref_fail_dtype(ctx, "input", in);
    }
    if (in->dtype == MN_FLOAT32) {
        REF_TRY(ref_act_range_f(ctx, act, &d->fmin, &d->fmax));
    } else if (in->dtype == MN_INT8 || in->dtype == MN_INT16) {
        REF_TRY(ref_need_quant(ctx, "output", out));
        /* The integer kernels work on raw values: input and output must share
         * their quantization (TFLite requires the same). */
        if (mn_tensor_zero_point(in, 0) != mn_tensor_zero_point(out, 0) ||
            mn_absf(mn_tensor_scale(in, 0) - mn_tensor_scale(out, 0)) > 1e-6f * mn_tensor_scale(out, 0)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "%s input and output quantization differ (zero points %d/%d)",
                mn_dtype_name(in->dtype), (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
        }
        REF_TRY(ref_act_range_q(ctx, act, out, &d->qmin, &d->qmax));
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    if (MICRONN_TYPE_INT8 && in->dtype == MN_INT8) {
        /* (a firmware with one of the two ops links only its selection) */
        if (MICRONN_OP_MAX_POOL_2D && node->builtin == MN_BUILTIN_MAX_POOL_2D) {
            d->variant = mn_select_maxpool_s8(ctx, g);
        } else if (MICRONN_OP_AVERAGE_POOL_2D && node->builtin == MN_BUILTIN_AVERAGE_POOL_2D) {
            d->variant = mn_select_avgpool_s8(ctx, g);
        }
    }
    node->user_data = d;
    return MN_OK;
}

#endif /* MICRONN_OP_AVERAGE_POOL_2D || MICRONN_OP_MAX_POOL_2D || MICRONN_OP_L2_POOL_2D */
