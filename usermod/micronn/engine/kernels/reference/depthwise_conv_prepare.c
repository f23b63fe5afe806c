/* DEPTHWISE_CONV_2D reference kernel: prepare (depthwise_conv.c: compute and eval). Prepare-time only:
 * built with the port's optimisation setting, not the kernels' MICRONN_COPT (micropython.mk). */
#include "mn_ref.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D

#include "ref_glue.h"

mn_status_t ref_dwconv_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(filter, ctx, node, 1, "filter");
    mn_tensor_t *bias = mn_input(ctx, node, 2);
    REF_OUTPUT(out, ctx, node, 0);

    const int padding = mn_opt_i8(node, MN_DWCONV_PADDING, MN_PADDING_SAME);
    const int stride_w = mn_opt_i32(node, MN_DWCONV_STRIDE_W, 1);
    const int stride_h = mn_opt_i32(node, MN_DWCONV_STRIDE_H, 1);
    const int act = mn_opt_i8(node, MN_DWCONV_ACTIVATION, MN_ACT_NONE);
    const int dil_w = mn_opt_i32(node, MN_DWCONV_DILATION_W, 1);
    const int dil_h = mn_opt_i32(node, MN_DWCONV_DILATION_H, 1);

    REF_TRY(ref_conv_check_opts(ctx, in, filter, out, padding, stride_h, stride_w, dil_h, dil_w));
    int32_t *mult = NULL;
    int8_t *shift = NULL;
    bool fill;
    /* per-channel entries (out_c): multipliers/shifts, or the float scales of a hybrid filter */
    const int32_t n_tables = in->dtype != MN_FLOAT32 || filter->dtype == MN_INT8 ? filter->dims[3] : 0;
    ref_conv_data_t *d = (ref_conv_data_t *)ref_alloc_with_tables(ctx, node, sizeof(ref_conv_data_t), n_tables, &mult, &shift, &fill);
    if (!d) {
        return MN_ERR_ARENA;
    }
    mn_conv_geom_t geom, *g = &geom;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->in_c = in->dims[3];
    g->f_h = filter->dims[1];
    g->f_w = filter->dims[2];
    g->out_c = filter->dims[3];
    g->f_in_c = 1;
    if (filter->dims[0] != 1 || g->in_c < 1 || g->out_c % g->in_c != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter shape [%d,%d,%d,%d] does not fit input depth %d",
            (int)filter->dims[0], g->f_h, g->f_w, g->out_c, g->in_c);
    }
    g->depth_mult = g->out_c / g->in_c;
    g->stride_h = stride_h;
    g->stride_w = stride_w;
    g->dil_h = dil_h;
    g->dil_w = dil_w;
    if (in->dtype == MN_INT16 && bias && bias->dtype != MN_INT64) {   /* TFLite: int64 only here */
        return ref_fail_dtype(ctx, "bias (with int16 input)", bias);
    }
    REF_TRY(ref_conv_prepare_common(ctx, node, in, filter, bias, out, padding, act, 3, g, d, mult, shift, fill));
    if (d->g.dtype == MN_FLOAT32 && d->g.mode) {
        /* TFLite has only the per-channel hybrid path here (with one scale it reads past it) */
        if (filter->q_count != g->out_c) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid depthwise conv needs %d filter scales (has %d)",
                (int)g->out_c, (int)filter->q_count);
        }
        d->g.mode = REF_HYBRID_CHANNEL;
    }
    return ref_conv_select(ctx, node, d, g, filter, bias, true);
}

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
