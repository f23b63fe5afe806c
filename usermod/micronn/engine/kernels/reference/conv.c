/* CONV_2D reference kernel (bit-exact with TFLite's reference_integer_ops::
 * ConvPerChannel for int8 and int16x8; same formula as reference_ops::Conv for float). */
#include "mn_ref.h"

#if MICRONN_OP_CONV_2D

void mn_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w, f_in_c = g->f_in_c;
    const int out_c = g->out_c;
    const int groups = in_c / f_in_c;
    const int per_group = out_c / groups;
    const int32_t in_off = q->input_offset;
    /* Locals, not q->/g-> loads: the int8 output stores may alias anything, so fields read
     * through the structs would be reloaded for every output element. */
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int8_t *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int oc = 0; oc < out_c; ++oc) {
                    const int c0 = (oc / per_group) * f_in_c;
                    const int8_t *f_oc = filter + (size_t)oc * f_h * f_w * f_in_c;
                    uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
                    for (int fy = 0; fy < f_h; ++fy) {
                        const int iy = iy0 + dil_h * fy;
                        if (iy < 0 || iy >= in_h) {
                            continue;
                        }
                        for (int fx = 0; fx < f_w; ++fx) {
                            const int ix = ix0 + dil_w * fx;
                            if (ix < 0 || ix >= in_w) {
                                continue;
                            }
                            const int8_t *ip = in_b + ((size_t)iy * in_w + ix) * in_c + c0;
                            const int8_t *fp = f_oc + ((size_t)fy * f_w + fx) * f_in_c;
                            for (int ic = 0; ic < f_in_c; ++ic) {
                                acc += (uint32_t)((int32_t)fp[ic] * ((int32_t)ip[ic] + in_off));
                            }
                        }
                    }
                    if (bias) {
                        acc += (uint32_t)bias[oc];
                    }
                    int32_t v = mn_mul_by_qm((int32_t)acc, mult[oc], shift[oc]);
                    v = mn_add_wrap(v, out_off);
                    out_px[oc] = (int8_t)mn_clamp_i32(v, act_min, act_max);
                }
            }
        }
    }
}

void mn_conv_s16_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int16_t *input, const int8_t *filter, const mn_bias16_t *bias, int16_t *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w, f_in_c = g->f_in_c;
    const int out_c = g->out_c;
    const int per_group = out_c / (in_c / f_in_c);
    const int32_t act_min = q->act_min, act_max = q->act_max;
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    for (int b = 0; b < g->batches; ++b) {
        const int16_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int16_t *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int oc = 0; oc < out_c; ++oc) {
                    const int c0 = (oc / per_group) * f_in_c;
                    const int8_t *f_oc = filter + (size_t)oc * f_h * f_w * f_in_c;
                    int64_t acc = 0;
                    for (int fy = 0; fy < f_h; ++fy) {
                        const int iy = iy0 + dil_h * fy;
                        if (iy < 0 || iy >= in_h) {
                            continue;
                        }
                        for (int fx = 0; fx < f_w; ++fx) {
                            const int ix = ix0 + dil_w * fx;
                            if (ix < 0 || ix >= in_w) {
                                continue;
                            }
                            const int16_t *ip = in_b + ((size_t)iy * in_w + ix) * in_c + c0;
                            const int8_t *fp = f_oc + ((size_t)fy * f_w + fx) * f_in_c;
                            for (int ic = 0; ic < f_in_c; ++ic) {
                                acc += (int32_t)fp[ic] * (int32_t)ip[ic];
                            }
                        }
                    }
                    const int32_t v = mn_requant16(acc, bias, oc, q->mult[oc], q->shift[oc]);
                    out_px[oc] = (int16_t)mn_clamp_i32(v, act_min, act_max);
                }
            }
        }
    }
}

void mn_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w, f_in_c = g->f_in_c;
    const int out_c = g->out_c;
    const int groups = in_c / f_in_c;
    const int per_group = out_c / groups;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int oc = 0; oc < out_c; ++oc) {
                    const int c0 = (oc / per_group) * f_in_c;
                    const float *f_oc = filter + (size_t)oc * f_h * f_w * f_in_c;
                    float total = 0.0f;
                    for (int fy = 0; fy < f_h; ++fy) {
                        const int iy = iy0 + g->dil_h * fy;
                        if (iy < 0 || iy >= in_h) {
                            continue;
                        }
                        for (int fx = 0; fx < f_w; ++fx) {
                            const int ix = ix0 + g->dil_w * fx;
                            if (ix < 0 || ix >= in_w) {
                                continue;
                            }
                            const float *ip = in_b + ((size_t)iy * in_w + ix) * in_c + c0;
                            const float *fp = f_oc + ((size_t)fy * f_w + fx) * f_in_c;
                            for (int ic = 0; ic < f_in_c; ++ic) {
                                total += ip[ic] * fp[ic];
                            }
                        }
                    }
                    const float bv = bias ? bias[oc] : 0.0f;
                    out_px[oc] = mn_clamp_f32(total + bv, act_min, act_max);
                }
            }
        }
    }
}

void mn_conv_hybrid(const mn_conv_geom_t *g, const mn_conv_hybrid_t *h, const float *input,
    const int8_t *filter, const float *bias, float *output, int8_t *qbuf) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w, f_in_c = g->f_in_c;
    const int out_c = g->out_c;
    const int per_group = out_c / (in_c / f_in_c);
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    const size_t in_size = (size_t)in_h * in_w * in_c;
    const float *const scales = h->scales;
    for (int b = 0; b < g->batches; ++b) {
        int32_t zp;
        float row_scale = mn_quantize_dynamic_s8(input + (size_t)b * in_size, in_size, qbuf, h->per_channel, &zp);
        if (!h->per_channel) {
            row_scale *= scales[0];   /* float product first, as TFLite */
        }
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int oc = 0; oc < out_c; ++oc) {
                    const int c0 = (oc / per_group) * f_in_c;
                    const int8_t *f_oc = filter + (size_t)oc * f_h * f_w * f_in_c;
                    uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
                    for (int fy = 0; fy < f_h; ++fy) {
                        const int iy = iy0 + dil_h * fy;
                        if (iy < 0 || iy >= in_h) {
                            continue;   /* padding adds nothing, also with an input zero point */
                        }
                        for (int fx = 0; fx < f_w; ++fx) {
                            const int ix = ix0 + dil_w * fx;
                            if (ix < 0 || ix >= in_w) {
                                continue;
                            }
                            const int8_t *ip = qbuf + ((size_t)iy * in_w + ix) * in_c + c0;
                            const int8_t *fp = f_oc + ((size_t)fy * f_w + fx) * f_in_c;
                            for (int ic = 0; ic < f_in_c; ++ic) {
                                acc += (uint32_t)((int32_t)fp[ic] * ((int32_t)ip[ic] - zp));
                            }
                        }
                    }
                    float v = h->per_channel ? (float)(int32_t)acc * scales[oc] * row_scale
                                             : (float)(int32_t)acc * row_scale;
                    if (bias) {
                        v += bias[oc];
                    }
                    out_px[oc] = mn_clamp_f32(v, h->act_min, h->act_max);
                }
            }
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef ref_conv_data_t conv_data_t;   /* ref_glue.h */

static mn_status_t conv_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(filter, ctx, node, 1, "filter");
    mn_tensor_t *bias = mn_input(ctx, node, 2);
    REF_OUTPUT(out, ctx, node, 0);

    const int padding = mn_opt_i8(node, MN_CONV2D_PADDING, MN_PADDING_SAME);
    const int stride_w = mn_opt_i32(node, MN_CONV2D_STRIDE_W, 1);
    const int stride_h = mn_opt_i32(node, MN_CONV2D_STRIDE_H, 1);
    const int act = mn_opt_i8(node, MN_CONV2D_ACTIVATION, MN_ACT_NONE);
    const int dil_w = mn_opt_i32(node, MN_CONV2D_DILATION_W, 1);
    const int dil_h = mn_opt_i32(node, MN_CONV2D_DILATION_H, 1);

    REF_TRY(ref_conv_check_opts(ctx, in, filter, out, padding, stride_h, stride_w, dil_h, dil_w));
    int32_t *mult = NULL;
    int8_t *shift = NULL;
    bool fill;
    /* per-channel entries (out_c): multipliers/shifts, or the float scales of a hybrid filter */
    const int32_t n_tables = in->dtype != MN_FLOAT32 || filter->dtype == MN_INT8 ? filter->dims[0] : 0;
    conv_data_t *d = (conv_data_t *)ref_alloc_with_tables(ctx, node, sizeof(conv_data_t), n_tables, &mult, &shift, &fill);
    if (!d) {
        return MN_ERR_ARENA;
    }
    mn_conv_geom_t geom, *g = &geom;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->in_c = in->dims[3];
    g->out_c = filter->dims[0];
    g->f_h = filter->dims[1];
    g->f_w = filter->dims[2];
    g->f_in_c = filter->dims[3];
    g->depth_mult = 1;
    g->stride_h = stride_h;
    g->stride_w = stride_w;
    g->dil_h = dil_h;
    g->dil_w = dil_w;
    if (g->f_in_c < 1 || g->in_c < g->f_in_c || g->in_c % g->f_in_c != 0 || g->out_c % (g->in_c / g->f_in_c) != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "filter depth %d does not divide input depth %d into groups",
            (int)g->f_in_c, (int)g->in_c);
    }
    REF_TRY(ref_conv_prepare_common(ctx, node, in, filter, bias, out, padding, act, 0, g, d, mult, shift, fill));
    if (d->g.dtype == MN_FLOAT32 && d->g.mode && g->in_c != g->f_in_c) {
        /* grouped: TFLite's per-channel hybrid path, which needs one scale per output channel */
        if (filter->q_count != g->out_c) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "grouped hybrid conv needs %d filter scales (has %d)",
                (int)g->out_c, (int)filter->q_count);
        }
        d->g.mode = REF_HYBRID_CHANNEL;
    }
    if (in->dtype == MN_INT16) {   /* without a bias tensor: int32 accumulation if the options say so */
        d->g.mode = mn_opt_i8(node, MN_CONV2D_QUANTIZED_BIAS_TYPE, 0) == MN_INT32;
    }
    return ref_conv_select(ctx, node, d, g, filter, bias, false);
}

static mn_status_t conv_eval(mn_ctx_t *ctx, mn_node_t *node) {
    return ref_conv_eval(ctx, node, REF_FAMILY_FN(INT8, mn_conv_s8_per_channel), REF_FAMILY_FN(INT16, mn_conv_s16_per_channel),
        REF_FAMILY_FN(FLOAT32, mn_conv_f32), REF_FAMILY_FN(HYBRID, mn_conv_hybrid));
}

const mn_kernel_t mn_kernel_CONV_2D = { NULL, conv_prepare, conv_eval, NULL, ref_conv_variant };

#endif /* MICRONN_OP_CONV_2D */
