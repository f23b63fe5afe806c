/* DEPTHWISE_CONV_2D reference kernel (bit-exact with TFLite's
 * reference_integer_ops::DepthwiseConvPerChannel for int8 and int16x8). */
#include "mn_ref.h"
#include "../mn_variants.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D

/* int8: a selectable compute function ("ref.depthwise_s8", mn_variants.h), left out of a firmware whose
 * models' nodes all run optimized variants. */
#if MN_REF_DEPTHWISE_S8
void mn_depthwise_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w;
    const int dm = g->depth_mult;
    const int out_c = g->out_c; /* == in_c * dm */
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
                for (int ic = 0; ic < in_c; ++ic) {
                    for (int m = 0; m < dm; ++m) {
                        const int oc = m + ic * dm;
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
                                const int32_t iv = in_b[((size_t)iy * in_w + ix) * in_c + ic];
                                const int32_t fv = filter[((size_t)fy * f_w + fx) * out_c + oc];
                                acc += (uint32_t)(fv * (iv + in_off));
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
}
#endif

void mn_depthwise_conv_s16_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int16_t *input, const int8_t *filter, const mn_bias16_t *bias, int16_t *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w;
    const int dm = g->depth_mult;
    const int out_c = g->out_c;
    const int32_t act_min = q->act_min, act_max = q->act_max;
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    for (int b = 0; b < g->batches; ++b) {
        const int16_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                int16_t *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int ic = 0; ic < in_c; ++ic) {
                    for (int m = 0; m < dm; ++m) {
                        const int oc = m + ic * dm;
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
                                acc += (int32_t)in_b[((size_t)iy * in_w + ix) * in_c + ic] *
                                    (int32_t)filter[((size_t)fy * f_w + fx) * out_c + oc];
                            }
                        }
                        const int32_t v = mn_requant16(acc, bias, oc, q->mult[oc], q->shift[oc]);
                        out_px[oc] = (int16_t)mn_clamp_i32(v, act_min, act_max);
                    }
                }
            }
        }
    }
}

void mn_depthwise_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w;
    const int dm = g->depth_mult;
    const int out_c = g->out_c;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int ic = 0; ic < in_c; ++ic) {
                    for (int m = 0; m < dm; ++m) {
                        const int oc = m + ic * dm;
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
                                total += in_b[((size_t)iy * in_w + ix) * in_c + ic] *
                                    filter[((size_t)fy * f_w + fx) * out_c + oc];
                            }
                        }
                        const float bv = bias ? bias[oc] : 0.0f;
                        out_px[oc] = mn_clamp_f32(total + bv, act_min, act_max);
                    }
                }
            }
        }
    }
}

void mn_depthwise_conv_hybrid(const mn_conv_geom_t *g, const mn_conv_hybrid_t *h, const float *input,
    const int8_t *filter, const float *bias, float *output, int8_t *qbuf) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c;
    const int f_h = g->f_h, f_w = g->f_w;
    const int dm = g->depth_mult;
    const int out_c = g->out_c;
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    const size_t in_size = (size_t)in_h * in_w * in_c;
    const float *const scales = h->scales;
    for (int b = 0; b < g->batches; ++b) {
        int32_t zp;
        const float row_scale = mn_quantize_dynamic_s8(input + (size_t)b * in_size, in_size, qbuf, h->per_channel, &zp);
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * out_c;
                for (int ic = 0; ic < in_c; ++ic) {
                    for (int m = 0; m < dm; ++m) {
                        const int oc = m + ic * dm;
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
                                const int32_t iv = qbuf[((size_t)iy * in_w + ix) * in_c + ic];
                                const int32_t fv = filter[((size_t)fy * f_w + fx) * out_c + oc];
                                acc += (uint32_t)(fv * (iv - zp));
                            }
                        }
                        float v = (float)(int32_t)acc * (scales[oc] * row_scale);
                        if (bias) {
                            v += bias[oc];
                        }
                        out_px[oc] = mn_clamp_f32(v, h->act_min, h->act_max);
                    }
                }
            }
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

static mn_status_t dw_eval(mn_ctx_t *ctx, mn_node_t *node) {
    return ref_conv_eval(ctx, node, MN_REF_DEPTHWISE_S8 ? REF_FAMILY_FN(INT8, mn_depthwise_conv_s8_per_channel) : NULL,
        REF_FAMILY_FN(INT16, mn_depthwise_conv_s16_per_channel), REF_FAMILY_FN(FLOAT32, mn_depthwise_conv_f32),
        REF_FAMILY_FN(HYBRID, mn_depthwise_conv_hybrid));
}

const mn_kernel_t mn_kernel_DEPTHWISE_CONV_2D = { NULL, ref_conv_prepare, dw_eval, NULL, ref_conv_variant };

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
