/* Prepare of the CONV_2D and DEPTHWISE_CONV_2D reference kernels (conv.c, depthwise_conv.c: compute
 * and eval; ref_conv.c: their shared eval); its dtype/quantization step also TRANSPOSE_CONV's. Prepare-time only: built with the port's
 * optimisation setting, not the kernels' MICRONN_COPT (micropython.mk). */
#include "mn_ref.h"

#if MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D || MICRONN_OP_TRANSPOSE_CONV

#include "ref_glue.h"

mn_status_t ref_conv_prepare_quant(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *filter,
    const mn_tensor_t *bias, const mn_tensor_t *out, int act, int32_t out_c, int32_t filter_q_dim,
    ref_conv_data_t *d, int32_t *mult, int8_t *shift, bool fill) {
    d->g.dtype = in->dtype;

    /* CONV_2D and DEPTHWISE_CONV_2D check the type family first (mn_check_family); TRANSPOSE_CONV,
     * whose paths are not split by family, needs them all. */
    if ((MICRONN_TYPE_FLOAT32 || MICRONN_OP_TRANSPOSE_CONV) && in->dtype == MN_FLOAT32) {
        if (filter->dtype != MN_FLOAT32) {
            return ref_fail_dtype(ctx, "filter (with float32 input)", filter);
        }
        if (bias && bias->dtype != MN_FLOAT32) {
            return ref_fail_dtype(ctx, "bias (with float32 input)", bias);
        }
        if (out->dtype != MN_FLOAT32) {
            return ref_fail_combo(ctx, in, out);
        }
        REF_TRY(ref_act_range_f(ctx, act, &d->u.f.min, &d->u.f.max));
        d->g.mode = REF_HYBRID_NONE;
    } else if (in->dtype == MN_INT8 || in->dtype == MN_INT16) {
        /* int16x8: int8 filter, int64 (or int32) bias, symmetric int16 activations */
        const bool wide = (MICRONN_TYPE_INT16 || MICRONN_OP_TRANSPOSE_CONV) && in->dtype == MN_INT16;
        if (filter->dtype != MN_INT8) {
            return ref_fail_dtype(ctx, wide ? "filter (with int16 input)" : "filter (with int8 input)", filter);
        }
        if (wide) {
            REF_TRY(ref_check_bias16(ctx, bias));
        } else if (bias && bias->dtype != MN_INT32) {
            return ref_fail_dtype(ctx, "bias (with int8 input)", bias);
        }
        if (out->dtype != in->dtype) {
            return ref_fail_combo(ctx, in, out);
        }
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "filter", filter));
        REF_TRY(ref_need_quant(ctx, "output", out));
        if (wide && (mn_tensor_zero_point(in, 0) != 0 || mn_tensor_zero_point(out, 0) != 0)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 input/output zero points %d/%d not supported (must be 0)",
                (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
        }
        const int32_t nq = mn_tensor_q_count(filter);
        if (nq != 1 && nq != out_c) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter has %d scales for %d output channels",
                (int)nq, (int)out_c);
        }
        if (nq > 1 && filter->q_dim != filter_q_dim) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter quantized_dimension %d not supported (need %d)",
                (int)filter->q_dim, (int)filter_q_dim);
        }
        const int32_t asym = ref_asymmetric_channel(filter);
        if (asym >= 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter zero point %d not supported (int8 filters are symmetric)",
                (int)mn_tensor_zero_point(filter, asym));
        }
        if (fill) {
            /* one call per layer: per-channel scales read in place, a per-tensor scale computed once */
            if (nq > 1 && mn_tensor_scales(filter)) {
                mn_conv_multipliers_le(mn_tensor_scale(in, 0), mn_tensor_scales(filter), out_c, mn_tensor_scale(out, 0), mult, shift);
            } else {
                const float fs = mn_tensor_scale(filter, 0);
                mn_conv_multipliers(mn_tensor_scale(in, 0), &fs, 1, mn_tensor_scale(out, 0), out_c, mult, shift);
            }
        }
        for (int32_t c = 0; wide && c < out_c; ++c) {
            /* mn_mul_by_qm64's range; checked in a sizing run too (no table), so that it fails as prepare will */
            int32_t m_c;
            int8_t s_c = fill ? shift[c] : 0;
            if (!fill) {
                const float fs = mn_tensor_scale(filter, nq > 1 ? c : 0);
                mn_conv_multipliers(mn_tensor_scale(in, 0), &fs, 1, mn_tensor_scale(out, 0), 1, &m_c, &s_c);
            }
            if (s_c > 14) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output multiplier 2^%d too large", (int)s_c);
            }
        }
        int32_t act_min, act_max;
        REF_TRY(ref_act_range_q(ctx, act, out, &act_min, &act_max));
        d->u.q.input_offset = (int16_t)-mn_tensor_zero_point(in, 0);   /* ref_need_quant: int8 range, or 0 (int16) */
        d->u.q.output_offset = (int16_t)mn_tensor_zero_point(out, 0);
        d->u.q.act_min = (int16_t)act_min;                 /* within the output type's range */
        d->u.q.act_max = (int16_t)act_max;
        d->g.mode = 0;                                  /* the kernel sets it from its options */
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    return MN_OK;
}

#endif

#if MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D

/* Hybrid (float32 input, int8 filter): dtypes, symmetric filter quantization per tensor or along
 * filter_q_dim, the float filter scales into the mult table (out_c floats), which path TFLite takes. */
static mn_status_t conv_prepare_hybrid(mn_ctx_t *ctx, const mn_tensor_t *filter, const mn_tensor_t *bias,
    const mn_tensor_t *out, int act, int32_t out_c, int32_t filter_q_dim, ref_conv_data_t *d, int32_t *mult, bool fill) {
    d->g.dtype = MN_FLOAT32;
    if (bias && bias->dtype != MN_FLOAT32) {
        return ref_fail_dtype(ctx, "bias (with float32 input)", bias);
    }
    if (out->dtype != MN_FLOAT32) {
        return ref_fail_dtype(ctx, "output (with float32 input)", out);
    }
    REF_TRY(ref_need_quant(ctx, "filter", filter));
    const int32_t nq = mn_tensor_q_count(filter);
    if (nq != 1 && (nq != out_c || filter->q_dim != filter_q_dim)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter has %d scales along dimension %d for %d output channels",
            (int)nq, (int)filter->q_dim, (int)out_c);
    }
    uint8_t mode = REF_HYBRID_TENSOR;
    for (int32_t c = 0; c < nq; ++c) {
        if (mn_tensor_zero_point(filter, c) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid filter zero point %d not supported (must be 0)",
                (int)mn_tensor_zero_point(filter, c));
        }
        if (mn_tensor_scale(filter, c) != mn_tensor_scale(filter, 0)) {
            mode = REF_HYBRID_CHANNEL;   /* TFLite: per-channel only when the scales differ */
        }
    }
    REF_TRY(ref_act_range_f(ctx, act, &d->u.f.min, &d->u.f.max));
    d->g.mode = mode;
    float *scales = (float *)(void *)mult;
    for (int32_t c = 0; c < out_c && fill; ++c) {
        scales[c] = mn_tensor_scale(filter, nq > 1 ? c : 0);
    }
    return MN_OK;
}

/* Ranks (4-D input/filter/output), padding, strides and dilations. */
static mn_status_t ref_conv_check_opts(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *filter,
    const mn_tensor_t *out, int padding, int stride_h, int stride_w, int dil_h, int dil_w) {
    if (in->ndim != 4 || filter->ndim != 4 || out->ndim != 4) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input/filter/output must be 4-D (got %d/%d/%d)",
            in->ndim, filter->ndim, out->ndim);
    }
    if (padding != MN_PADDING_SAME && padding != MN_PADDING_VALID) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "padding %d not supported", padding);
    }
    if (stride_w < 1 || stride_h < 1 || dil_w < 1 || dil_h < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "stride %dx%d / dilation %dx%d not supported",
            stride_h, stride_w, dil_h, dil_w);
    }
    return MN_OK;
}

/* Largest input coordinate span (out - 1) * stride + (f - 1) * dilation + 1, plus the input size,
 * that prepare accepts: the eval loops form out * stride - pad + dilation * f in int32, which then
 * stays within +-2^30. Real models are many orders of magnitude below. */
static int conv_extent_ok(int32_t in, int32_t out, int32_t f, int stride, int dil) {
    const int64_t span = ((int64_t)out - 1) * stride + ((int64_t)f - 1) * dil + 1;
    return span + in <= ((int64_t)1 << 30);
}

/*
 * The rest of prepare once the kernel has filled *g up to strides and dilations (batches, input,
 * filter and output depth, depth_mult): output size and padding, output shape and bias checks,
 * dtypes, quantization (per-tensor or per-channel along filter dimension `filter_q_dim`), the
 * n = g->out_c multipliers/shifts into mult/shift (computed when `fill`, then kept: d->mult),
 * activation range and offsets into *d, and the geometry. Sets node->user_data = d on success.
 */
static mn_status_t ref_conv_prepare_common(mn_ctx_t *ctx, mn_node_t *node, const mn_tensor_t *in,
    const mn_tensor_t *filter, const mn_tensor_t *bias, const mn_tensor_t *out, int padding, int act,
    int32_t filter_q_dim, mn_conv_geom_t *g, ref_conv_data_t *d, int32_t *mult, int8_t *shift, bool fill) {
    REF_TRY(mn_check_family(ctx, in->dtype, filter->dtype));
    /* Empty tensors have no data (NULL): the eval loops would form NULL + 0. */
    if (g->in_h < 1 || g->in_w < 1 || g->in_c < 1 || g->f_h < 1 || g->f_w < 1 || g->out_c < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty input %dx%dx%d, filter %dx%d or output depth %d",
            g->in_h, g->in_w, g->in_c, g->f_h, g->f_w, g->out_c);
    }
    g->out_h = mn_conv_out_size(padding, g->in_h, g->f_h, g->stride_h, g->dil_h);
    g->out_w = mn_conv_out_size(padding, g->in_w, g->f_w, g->stride_w, g->dil_w);
    if (!conv_extent_ok(g->in_h, g->out_h, g->f_h, g->stride_h, g->dil_h)
        || !conv_extent_ok(g->in_w, g->out_w, g->f_w, g->stride_w, g->dil_w)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "stride %dx%d / dilation %dx%d too large for a %dx%d filter",
            g->stride_h, g->stride_w, g->dil_h, g->dil_w, g->f_h, g->f_w);
    }
    if (out->dims[0] != g->batches || out->dims[1] != g->out_h || out->dims[2] != g->out_w ||
        out->dims[3] != g->out_c) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match (expected [%d,%d,%d,%d])",
            g->batches, g->out_h, g->out_w, g->out_c);
    }
    g->pad_h = mn_conv_padding(g->stride_h, g->dil_h, g->in_h, g->f_h, g->out_h);
    g->pad_w = mn_conv_padding(g->stride_w, g->dil_w, g->in_w, g->f_w, g->out_w);
    if (bias && (int32_t)mn_tensor_count(bias) != g->out_c) {
        return mn_fail(ctx, MN_ERR_MODEL, "bias has %d elements, expected %d",
            (int)mn_tensor_count(bias), g->out_c);
    }
    if (MICRONN_TYPE_HYBRID && in->dtype == MN_FLOAT32 && filter->dtype == MN_INT8) {
        REF_TRY(conv_prepare_hybrid(ctx, filter, bias, out, act, g->out_c, filter_q_dim, d, mult, fill));
    } else {
        REF_TRY(ref_conv_prepare_quant(ctx, in, filter, bias, out, act, g->out_c, filter_q_dim, d, mult, shift,
            fill));
    }
    REF_TRY(ref_conv_keep(ctx, node, d, mult, d->g.dtype == MN_FLOAT32 && !d->g.mode ? 0 : g->out_c));
    REF_TRY(ref_geom_store(ctx, g, &d->g));
    node->user_data = d;
    return MN_OK;
}

/* An int8 node runs the reference compute function: fine when the firmware links it (MN_REF_*,
 * mn_variants.h), refused otherwise. `record`: the node did not ask mn_select_*() (a variant query
 * records the function then). */
static mn_status_t conv_ref_s8(mn_ctx_t *ctx, bool depthwise, bool record) {
    const char *name = depthwise ? "ref.depthwise_s8" : "ref.conv_s8";
    bool linked = depthwise ? MN_REF_DEPTHWISE_S8 : MN_REF_CONV_S8;
    if (record) {
        linked = mn_variant_ref(ctx, name, linked);
    }
    if (linked) {
        return MN_OK;
    }
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "this firmware links no int8 variant that fits, nor %s "
        "(rebuild with VARIANTS=all or MODELS= including this model)", name);
}

/* Last step of conv/depthwise prepare: choose the compute variant for geometry *g (mn_variants.h)
 * and set up its persistent data and scratch. */
static mn_status_t ref_conv_select(mn_ctx_t *ctx, const mn_node_t *node, ref_conv_data_t *d, const mn_conv_geom_t *g,
    const mn_tensor_t *filter, const mn_tensor_t *bias, bool depthwise) {
    size_t scratch = 0;
    d->scratch = -1;
    d->vdata = NULL;
    d->variant.s8 = NULL;
    d->variant.f32 = NULL;
    if (MICRONN_TYPE_HYBRID && d->g.dtype == MN_FLOAT32 && d->g.mode) {   /* reference only; one quantized input image */
        return mn_request_scratch(ctx, (size_t)g->in_h * (size_t)g->in_w * (size_t)g->in_c, &d->scratch);
    }
    if (!ref_weights_constant(filter, bias) || d->g.dtype == MN_INT16) {   /* int16x8: reference only */
        return MICRONN_TYPE_INT8 && d->g.dtype == MN_INT8 ? conv_ref_s8(ctx, depthwise, true) : MN_OK;
    }
    /* int8 or float32 here (mn_check_family refused the families not built) */
    if (MICRONN_TYPE_INT8 && (!MICRONN_TYPE_FLOAT32 || d->g.dtype == MN_INT8)) {
        mn_conv_quant_t q;
        ref_conv_quant(d, g->out_c, &q);
        const mn_conv_s8_variant_t *v = depthwise ? mn_select_depthwise_s8(ctx, g, &q) : mn_select_conv_s8(ctx, g, &q);
        d->variant.s8 = v;
        if (!v) {
            return conv_ref_s8(ctx, depthwise, false);
        }
        scratch = v->scratch_bytes ? v->scratch_bytes(g) : 0;
        const size_t data = v->data_bytes ? v->data_bytes(g) : 0;
        if (data) {
            void *vd;
            bool fill;
            if (!mn_table_alloc(ctx, node, MN_TABLE_VARIANT, 0, data, &vd, &fill)) {
                return MN_ERR_ARENA;
            }
            if (fill) {
                v->precompute(g, &q, (const int8_t *)filter->data, bias ? (const int32_t *)bias->data : NULL, vd);
            }
            if (!(d->vdata = mn_table_keep(ctx, node, MN_TABLE_VARIANT, vd, data))) {
                return MN_ERR_ARENA;
            }
        }
    } else if (MICRONN_TYPE_FLOAT32) {
        const mn_conv_f32_variant_t *v = depthwise ? mn_select_depthwise_f32(ctx, g) : mn_select_conv_f32(ctx, g);
        d->variant.f32 = v;
        scratch = v && v->scratch_bytes ? v->scratch_bytes(g) : 0;
    }
    return scratch ? mn_request_scratch(ctx, scratch, &d->scratch) : MN_OK;
}

/*
 * Prepare of CONV_2D and DEPTHWISE_CONV_2D, one function for both (node->builtin says which). Their
 * options tables differ only in DepthwiseConv2DOptions' depth_multiplier before the activation (the
 * multiplier itself is read from the filter shape), their filters in layout: [out_c, f_h, f_w,
 * f_in_c] (groups when f_in_c divides the input depth) and [1, f_h, f_w, out_c] (depth multiplier
 * out_c / in_c); then the steps above.
 */
mn_status_t ref_conv_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    /* (a firmware with one of the two ops compiles only its paths) */
    const bool dw = !MICRONN_OP_CONV_2D || (MICRONN_OP_DEPTHWISE_CONV_2D && node->builtin == MN_BUILTIN_DEPTHWISE_CONV_2D);
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(filter, ctx, node, 1, "filter");
    mn_tensor_t *bias = mn_input(ctx, node, 2);
    REF_OUTPUT(out, ctx, node, 0);

    const int padding = mn_opt_i8(node, MN_CONV2D_PADDING, MN_PADDING_SAME);   /* = MN_DWCONV_PADDING, ... */
    const int stride_w = mn_opt_i32(node, MN_CONV2D_STRIDE_W, 1);
    const int stride_h = mn_opt_i32(node, MN_CONV2D_STRIDE_H, 1);
    const int act = mn_opt_i8(node, dw ? MN_DWCONV_ACTIVATION : MN_CONV2D_ACTIVATION, MN_ACT_NONE);
    const int dil_w = mn_opt_i32(node, dw ? MN_DWCONV_DILATION_W : MN_CONV2D_DILATION_W, 1);
    const int dil_h = mn_opt_i32(node, dw ? MN_DWCONV_DILATION_H : MN_CONV2D_DILATION_H, 1);

    REF_TRY(ref_conv_check_opts(ctx, in, filter, out, padding, stride_h, stride_w, dil_h, dil_w));
    int32_t *mult = NULL;
    int8_t *shift = NULL;
    bool fill;
    const int32_t out_c = filter->dims[dw ? 3 : 0];
    /* per-channel entries (out_c): multipliers/shifts, or the float scales of a hybrid filter */
    const int32_t n_tables = in->dtype != MN_FLOAT32 || filter->dtype == MN_INT8 ? out_c : 0;
    ref_conv_data_t *d = (ref_conv_data_t *)ref_alloc_with_tables(ctx, node, sizeof(ref_conv_data_t), n_tables,
        &mult, &shift, &fill);
    if (!d) {
        return MN_ERR_ARENA;
    }
    mn_conv_geom_t geom, *g = &geom;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->in_c = in->dims[3];
    g->out_c = out_c;
    g->f_h = filter->dims[1];
    g->f_w = filter->dims[2];
    g->f_in_c = dw ? 1 : filter->dims[3];
    g->stride_h = stride_h;
    g->stride_w = stride_w;
    g->dil_h = dil_h;
    g->dil_w = dil_w;
    if (dw) {
        if (filter->dims[0] != 1 || g->in_c < 1 || g->out_c % g->in_c != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter shape [%d,%d,%d,%d] does not fit input depth %d",
                (int)filter->dims[0], g->f_h, g->f_w, g->out_c, g->in_c);
        }
        g->depth_mult = g->out_c / g->in_c;
        if (in->dtype == MN_INT16 && bias && bias->dtype != MN_INT64) {   /* TFLite: int64 only here */
            return ref_fail_dtype(ctx, "bias (with int16 input)", bias);
        }
    } else {
        g->depth_mult = 1;
        if (g->f_in_c < 1 || g->in_c < g->f_in_c || g->in_c % g->f_in_c != 0 || g->out_c % (g->in_c / g->f_in_c) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter depth %d does not divide input depth %d into groups",
                (int)g->f_in_c, (int)g->in_c);
        }
    }
    REF_TRY(ref_conv_prepare_common(ctx, node, in, filter, bias, out, padding, act, dw ? 3 : 0, g, d, mult, shift,
        fill));
    if (d->g.dtype == MN_FLOAT32 && d->g.mode && (dw || g->in_c != g->f_in_c)) {
        /* depthwise: TFLite has only the per-channel hybrid path (with one scale it reads past it);
         * grouped conv: TFLite's per-channel hybrid path, which needs one scale per output channel */
        if (mn_tensor_q_count(filter) != g->out_c) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s needs %d filter scales (has %d)",
                dw ? "hybrid depthwise conv" : "grouped hybrid conv", (int)g->out_c, (int)mn_tensor_q_count(filter));
        }
        d->g.mode = REF_HYBRID_CHANNEL;
    }
    if (!dw && in->dtype == MN_INT16) {   /* without a bias tensor: int32 accumulation if the options say so */
        d->g.mode = mn_opt_i8(node, MN_CONV2D_QUANTIZED_BIAS_TYPE, 0) == MN_INT32;
    }
    return ref_conv_select(ctx, node, d, g, filter, bias, dw);
}

const char *ref_conv_variant(const mn_node_t *node) {
    const ref_conv_data_t *d = (const ref_conv_data_t *)node->user_data;
    if (!d) {
        return NULL;
    }
    if (d->g.dtype == MN_INT16) {
        return NULL;
    }
    return d->g.dtype == MN_INT8 ? (d->variant.s8 ? d->variant.s8->name : NULL)
                                 : (d->variant.f32 ? d->variant.f32->name : NULL);
}

#endif /* MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D */
