/* TRANSPOSE_CONV reference kernel (bit-exact with TFLite's reference_ops::TransposeConv for float32
 * and reference_integer_ops::TransposeConv for int8 and int16x8).
 *
 * TFLite scatters every input pixel into an output-sized accumulator buffer. Here each output
 * element gathers the same terms in the same order (input row, column, channel ascending, one filter
 * tap each), which gives the same sums, float ones included, with no scratch buffer. */
#include "mn_ref.h"

#if MICRONN_OP_TRANSPOSE_CONV

/* Input positions i (inclusive range [*lo, *hi]) whose filter window covers output coordinate o:
 * 0 <= o + pad - i * stride < f, 0 <= i < n. pad >= 0. */
static inline void tconv_range(int o, int pad, int stride, int f, int n, int *lo, int *hi) {
    const int t = o + pad;
    const int first = t - f + 1;
    const int last = t / stride;
    *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
    *hi = last < n - 1 ? last : n - 1;
}

/* The gather loop: for every output element, acc (ACC_T, starting at 0) takes TERM for each
 * contributing (input pixel, channel) with ip / fp pointing at the input pixel / filter tap;
 * the element is then FINISH. */
#define TCONV_LOOP(ACC_T, IN_T, FILT_T, OUT_T, TERM, FINISH) \
    for (int b = 0; b < g->batches; ++b) { \
        const IN_T *in_b = input + (size_t)b * g->in_h * g->in_w * in_c; \
        for (int oy = 0; oy < g->out_h; ++oy) { \
            int y0, y1; \
            tconv_range(oy, g->pad_h, g->stride_h, g->f_h, g->in_h, &y0, &y1); \
            for (int ox = 0; ox < g->out_w; ++ox) { \
                int x0, x1; \
                tconv_range(ox, g->pad_w, g->stride_w, g->f_w, g->in_w, &x0, &x1); \
                OUT_T *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c; \
                for (int oc = 0; oc < out_c; ++oc) { \
                    ACC_T acc = 0; \
                    for (int iy = y0; iy <= y1; ++iy) { \
                        const int fy = oy + g->pad_h - iy * g->stride_h; \
                        for (int ix = x0; ix <= x1; ++ix) { \
                            const int fx = ox + g->pad_w - ix * g->stride_w; \
                            const IN_T *ip = in_b + ((size_t)iy * g->in_w + ix) * in_c; \
                            const FILT_T *fp = filter + (((size_t)oc * g->f_h + fy) * g->f_w + fx) * in_c; \
                            for (int ic = 0; ic < in_c; ++ic) { \
                                TERM; \
                            } \
                        } \
                    } \
                    out_px[oc] = FINISH; \
                } \
            } \
        } \
    }

void mn_transpose_conv_s8(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output) {
    const int in_c = g->in_c, out_c = g->out_c;
    const int32_t in_off = q->input_offset, out_off = q->output_offset;
    const int32_t act_min = q->act_min, act_max = q->act_max;
    TCONV_LOOP(uint32_t, int8_t, int8_t, int8_t,
        acc += (uint32_t)((int32_t)fp[ic] * ((int32_t)ip[ic] + in_off)),   /* int32, wrap-around defined */
        (int8_t)mn_clamp_i32(mn_add_wrap(mn_mul_by_qm((int32_t)(acc + (bias ? (uint32_t)bias[oc] : 0u)),
            q->mult[oc], q->shift[oc]), out_off), act_min, act_max))
}

void mn_transpose_conv_s16(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int16_t *input,
    const int8_t *filter, const mn_bias16_t *bias, int16_t *output) {
    const int in_c = g->in_c, out_c = g->out_c;
    const int32_t act_min = q->act_min, act_max = q->act_max;
    TCONV_LOOP(int64_t, int16_t, int8_t, int16_t,
        acc += (int32_t)fp[ic] * (int32_t)ip[ic],
        (int16_t)mn_clamp_i32(mn_requant16(acc, bias, oc, q->mult[oc], q->shift[oc]), act_min, act_max))
}

void mn_transpose_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output) {
    const int in_c = g->in_c, out_c = g->out_c;
    TCONV_LOOP(float, float, float, float,
        acc += ip[ic] * fp[ic],
        mn_clamp_f32(bias ? acc + bias[oc] : acc, act_min, act_max))
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

/* Inputs: 0 output shape (int32 [4]), 1 filter [out_c, f_h, f_w, in_c], 2 input, 3 bias. A constant
 * output shape must match the output tensor; one computed at run time (a converter's SHAPE ->
 * STRIDED_SLICE -> PACK chain) is taken from the output tensor in prepare, as TFLM does, and its
 * values are checked against it on each invoke (the arena holds that shape only). */
static bool tconv_runtime_shape(const mn_tensor_t *os) {
    return os && !(os->flags & MN_TF_CONST);
}

static mn_status_t tconv_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(filter, ctx, node, 1, "filter");
    REF_INPUT(in, ctx, node, 2, "input");
    mn_tensor_t *bias = mn_input(ctx, node, 3);
    REF_OUTPUT(out, ctx, node, 0);
    int32_t shape[4], n = 0;
    const mn_tensor_t *os = mn_input(ctx, node, 0);
    if (tconv_runtime_shape(os)) {
        if (os->dtype != MN_INT32 || mn_tensor_count(os) != 4 || out->ndim != 4) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output shape (input 0) computed at run time must be int32 "
                "with 4 values for a 4-D output (got %s, %u values)", mn_dtype_name(os->dtype),
                (unsigned)mn_tensor_count(os));
        }
        for (n = 0; n < 4; ++n) {
            shape[n] = out->dims[n];
        }
    } else {
        REF_TRY(ref_const_ints(ctx, node, 0, "output shape", shape, 4, &n));
    }

    const int padding = mn_opt_i8(node, MN_TCONV_PADDING, MN_PADDING_SAME);
    const int stride_w = mn_opt_i32(node, MN_TCONV_STRIDE_W, 1);
    const int stride_h = mn_opt_i32(node, MN_TCONV_STRIDE_H, 1);
    const int act = mn_opt_i8(node, MN_TCONV_ACTIVATION, MN_ACT_NONE);
    if (in->ndim != 4 || filter->ndim != 4 || out->ndim != 4 || n != 4) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input/filter/output/output shape must be 4-D (got %d/%d/%d/%d)",
            in->ndim, filter->ndim, out->ndim, (int)n);
    }
    for (int i = 0; i < 4; ++i) {
        if (shape[i] != out->dims[i]) {
            return mn_fail(ctx, MN_ERR_MODEL, "output shape input [%d,%d,%d,%d] does not match the output tensor",
                (int)shape[0], (int)shape[1], (int)shape[2], (int)shape[3]);
        }
    }
    if (padding != MN_PADDING_SAME && padding != MN_PADDING_VALID) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "padding %d not supported", padding);
    }
    /* Bounds keep o + pad - i * stride in int (sizes are int16 in practice). */
    if (stride_w < 1 || stride_h < 1 || stride_w > 4096 || stride_h > 4096) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "stride %dx%d not supported", stride_h, stride_w);
    }
    mn_conv_geom_t geom = { 0 }, *g = &geom;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->in_c = in->dims[3];
    g->out_c = filter->dims[0];
    g->f_h = filter->dims[1];
    g->f_w = filter->dims[2];
    g->f_in_c = filter->dims[3];
    g->out_h = out->dims[1];
    g->out_w = out->dims[2];
    g->stride_h = stride_h;
    g->stride_w = stride_w;
    g->dil_h = g->dil_w = g->depth_mult = 1;
    if (g->in_h < 1 || g->in_w < 1 || g->in_c < 1 || g->f_h < 1 || g->f_w < 1 || g->out_c < 1 || g->out_h < 1 ||
        g->out_w < 1 || g->in_h > 32767 || g->in_w > 32767 || g->out_h > 32767 || g->out_w > 32767 ||
        g->f_h > 32767 || g->f_w > 32767) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input %dx%dx%d, filter %dx%d or output %dx%dx%d empty or too large",
            g->in_h, g->in_w, g->in_c, g->f_h, g->f_w, g->out_h, g->out_w, g->out_c);
    }
    if (g->f_in_c != g->in_c || out->dims[0] != g->batches || out->dims[3] != g->out_c) {
        return mn_fail(ctx, MN_ERR_MODEL, "filter [%d,%d,%d,%d] does not fit input depth %d / output [%d,..,%d]",
            g->out_c, g->f_h, g->f_w, g->f_in_c, g->in_c, (int)out->dims[0], (int)out->dims[3]);
    }
    if (bias && (int32_t)mn_tensor_count(bias) != g->out_c) {
        return mn_fail(ctx, MN_ERR_MODEL, "bias has %d elements, expected %d", (int)mn_tensor_count(bias), g->out_c);
    }
    /* TFLite: padding from the output size, as a forward conv of the output would have it */
    g->pad_h = mn_conv_padding(stride_h, 1, g->out_h, g->f_h, mn_conv_out_size(padding, g->out_h, g->f_h, stride_h, 1));
    g->pad_w = mn_conv_padding(stride_w, 1, g->out_w, g->f_w, mn_conv_out_size(padding, g->out_w, g->f_w, stride_w, 1));

    int32_t *mult = NULL;
    int8_t *shift = NULL;
    bool fill;
    const int32_t n_tables = in->dtype != MN_FLOAT32 ? g->out_c : 0;
    ref_conv_data_t *d = (ref_conv_data_t *)ref_alloc_with_tables(ctx, node, sizeof *d, n_tables, &mult, &shift,
        &fill);
    if (!d) {
        return MN_ERR_ARENA;
    }
    REF_TRY(ref_conv_prepare_quant(ctx, in, filter, bias, out, act, g->out_c, 0, d, mult, shift, fill));
    REF_TRY(ref_conv_keep(ctx, node, d, mult, n_tables));
    if (in->dtype == MN_INT16) {   /* without a bias tensor: int32 accumulation if the options say so */
        d->g.mode = mn_opt_i8(node, MN_TCONV_QUANTIZED_BIAS_TYPE, 0) == MN_INT32;
    }
    REF_TRY(ref_geom_store(ctx, g, &d->g));
    node->user_data = d;
    return MN_OK;
}

static mn_status_t tconv_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_conv_data_t *d = (const ref_conv_data_t *)node->user_data;
    mn_conv_geom_t geom;
    const mn_conv_geom_t *g = ref_geom_load(&d->g, &geom);
    const mn_tensor_t *filter = mn_input(ctx, node, 1);
    const mn_tensor_t *in = mn_input(ctx, node, 2);
    const mn_tensor_t *bias = mn_input(ctx, node, 3);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    const mn_tensor_t *os = mn_input(ctx, node, 0);
    if (tconv_runtime_shape(os)) {
        const int32_t *v = (const int32_t *)os->data;
        if (v[0] != out->dims[0] || v[1] != out->dims[1] || v[2] != out->dims[2] || v[3] != out->dims[3]) {
            return mn_fail(ctx, MN_ERR_ARG, "output shape (input 0) is [%d,%d,%d,%d] at run time, the output tensor "
                "[%d,%d,%d,%d]", (int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)out->dims[0], (int)out->dims[1],
                (int)out->dims[2], (int)out->dims[3]);
        }
    }
    if (d->g.dtype == MN_FLOAT32) {
        mn_transpose_conv_f32(g, d->u.f.min, d->u.f.max, (const float *)in->data, (const float *)filter->data,
            bias ? (const float *)bias->data : NULL, (float *)out->data);
        return MN_OK;
    }
    mn_conv_quant_t q;
    ref_conv_quant(d, g->out_c, &q);
    if (d->g.dtype == MN_INT8) {
        mn_transpose_conv_s8(g, &q, (const int8_t *)in->data, (const int8_t *)filter->data,
            bias ? (const int32_t *)bias->data : NULL, (int8_t *)out->data);
    } else {
        const mn_bias16_t b = ref_bias16(bias, d->g.mode);
        mn_transpose_conv_s16(g, &q, (const int16_t *)in->data, (const int8_t *)filter->data, &b,
            (int16_t *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_TRANSPOSE_CONV = { NULL, tconv_prepare, tconv_eval, NULL, NULL };

#endif /* MICRONN_OP_TRANSPOSE_CONV */
