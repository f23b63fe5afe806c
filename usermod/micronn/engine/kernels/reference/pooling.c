/* AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D reference kernels (bit-exact with TFLite's
 * reference_integer_ops::AveragePool / MaxPool; L2 pooling is float32 only, as in TFLite). */
#include <float.h>
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_AVERAGE_POOL_2D || MICRONN_OP_MAX_POOL_2D || MICRONN_OP_L2_POOL_2D

#define POOL_WINDOW(g, oy, ox, fy0, fy1, fx0, fx1, iy0, ix0) \
    const int iy0 = (oy) * (g)->stride_h - (g)->pad_h; \
    const int ix0 = (ox) * (g)->stride_w - (g)->pad_w; \
    const int fy0 = iy0 < 0 ? -iy0 : 0; \
    const int fy1 = (g)->f_h < (g)->in_h - iy0 ? (g)->f_h : (g)->in_h - iy0; \
    const int fx0 = ix0 < 0 ? -ix0 : 0; \
    const int fx1 = (g)->f_w < (g)->in_w - ix0 ? (g)->f_w : (g)->in_w - ix0

/* Rounded integer mean as TFLite: (acc +/- count/2) / count, truncating. */
static inline int32_t rounded_mean(int32_t acc, int32_t count) {
    return acc > 0 ? mn_add_wrap(acc, count / 2) / count : mn_add_wrap(acc, -(count / 2)) / count;
}

#define DEFINE_AVG_POOL_INT(NAME, T) \
    int NAME(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max, \
        const T *input, T *output) { \
        const int C = g->channels; \
        for (int b = 0; b < g->batches; ++b) { \
            const T *in_b = input + (size_t)b * g->in_h * g->in_w * C; \
            for (int oy = 0; oy < g->out_h; ++oy) { \
                for (int ox = 0; ox < g->out_w; ++ox) { \
                    POOL_WINDOW(g, oy, ox, fy0, fy1, fx0, fx1, iy0, ix0); \
                    T *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C; \
                    for (int c = 0; c < C; ++c) { \
                        uint32_t acc = 0; \
                        int32_t count = 0; \
                        for (int fy = fy0; fy < fy1; ++fy) { \
                            for (int fx = fx0; fx < fx1; ++fx) { \
                                acc += (uint32_t)(int32_t)in_b[((size_t)(iy0 + fy) * g->in_w + (ix0 + fx)) * C + c]; \
                                ++count; \
                            } \
                        } \
                        if (count == 0) { \
                            return -1; \
                        } \
                        out_px[c] = (T)mn_clamp_i32(rounded_mean((int32_t)acc, count), act_min, act_max); \
                    } \
                } \
            } \
        } \
        return 0; \
    }

DEFINE_AVG_POOL_INT(mn_average_pool_s8, int8_t)
DEFINE_AVG_POOL_INT(mn_average_pool_s16, int16_t)

int mn_average_pool_f32(const mn_pool_geom_t *g, float act_min, float act_max,
    const float *input, float *output) {
    const int C = g->channels;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->in_h * g->in_w * C;
        for (int oy = 0; oy < g->out_h; ++oy) {
            for (int ox = 0; ox < g->out_w; ++ox) {
                POOL_WINDOW(g, oy, ox, fy0, fy1, fx0, fx1, iy0, ix0);
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C;
                for (int c = 0; c < C; ++c) {
                    float total = 0.0f;
                    int count = 0;
                    for (int fy = fy0; fy < fy1; ++fy) {
                        for (int fx = fx0; fx < fx1; ++fx) {
                            total += in_b[((size_t)(iy0 + fy) * g->in_w + (ix0 + fx)) * C + c];
                            ++count;
                        }
                    }
                    if (count == 0) {
                        return -1;
                    }
                    out_px[c] = mn_clamp_f32(total / (float)count, act_min, act_max);
                }
            }
        }
    }
    return 0;
}

#if MICRONN_OP_L2_POOL_2D
/* sqrt(mean of squares) over the window's inputs (TFLite's reference L2Pool). */
static int l2_pool_f32(const mn_pool_geom_t *g, float act_min, float act_max, const float *input, float *output) {
    const int C = g->channels;
    for (int b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->in_h * g->in_w * C;
        for (int oy = 0; oy < g->out_h; ++oy) {
            for (int ox = 0; ox < g->out_w; ++ox) {
                POOL_WINDOW(g, oy, ox, fy0, fy1, fx0, fx1, iy0, ix0);
                float *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C;
                for (int c = 0; c < C; ++c) {
                    float sum_squares = 0.0f;
                    int count = 0;
                    for (int fy = fy0; fy < fy1; ++fy) {
                        for (int fx = fx0; fx < fx1; ++fx) {
                            const float v = in_b[((size_t)(iy0 + fy) * g->in_w + (ix0 + fx)) * C + c];
                            sum_squares += v * v;
                            ++count;
                        }
                    }
                    if (count == 0) {
                        return -1;
                    }
                    out_px[c] = mn_clamp_f32(sqrtf(sum_squares / (float)count), act_min, act_max);
                }
            }
        }
    }
    return 0;
}
#endif

#define DEFINE_MAX_POOL(NAME, T, TACC, LOWEST, CLAMP) \
    void NAME(const mn_pool_geom_t *g, TACC act_min, TACC act_max, \
        const T *input, T *output) { \
        const int C = g->channels; \
        for (int b = 0; b < g->batches; ++b) { \
            const T *in_b = input + (size_t)b * g->in_h * g->in_w * C; \
            for (int oy = 0; oy < g->out_h; ++oy) { \
                for (int ox = 0; ox < g->out_w; ++ox) { \
                    POOL_WINDOW(g, oy, ox, fy0, fy1, fx0, fx1, iy0, ix0); \
                    T *out_px = output + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C; \
                    for (int c = 0; c < C; ++c) { \
                        T mx = LOWEST; \
                        for (int fy = fy0; fy < fy1; ++fy) { \
                            for (int fx = fx0; fx < fx1; ++fx) { \
                                const T v = in_b[((size_t)(iy0 + fy) * g->in_w + (ix0 + fx)) * C + c]; \
                                mx = v > mx ? v : mx; \
                            } \
                        } \
                        out_px[c] = (T)CLAMP(mx, act_min, act_max); \
                    } \
                } \
            } \
        } \
    }

DEFINE_MAX_POOL(mn_max_pool_s8, int8_t, int32_t, INT8_MIN, mn_clamp_i32)
DEFINE_MAX_POOL(mn_max_pool_s16, int16_t, int32_t, INT16_MIN, mn_clamp_i32)
DEFINE_MAX_POOL(mn_max_pool_f32, float, float, -FLT_MAX, mn_clamp_f32)

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_pool_geom_t g;
    int32_t qmin, qmax;
    float fmin, fmax;
    uint8_t dtype;
    const mn_pool_s8_variant_t *variant;   /* int8 compute variant (mn_variants.h); NULL: reference */
} pool_data_t;

static const char *pool_variant(const mn_node_t *node) {
    const pool_data_t *d = (const pool_data_t *)node->user_data;
    return d && d->variant ? d->variant->name : NULL;
}

static mn_status_t pool_prepare(mn_ctx_t *ctx, mn_node_t *node) {
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
    REF_ALLOC(d, pool_data_t, ctx, 1);
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
        if (in->zero_point != out->zero_point ||
            mn_absf(in->scale - out->scale) > 1e-6f * out->scale) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "%s input and output quantization differ (zero points %d/%d)",
                mn_dtype_name(in->dtype), (int)in->zero_point, (int)out->zero_point);
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

#if MICRONN_OP_AVERAGE_POOL_2D
static mn_status_t avg_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const pool_data_t *d = (const pool_data_t *)node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    int r = 0;
    if (d->variant) {
        r = d->variant->run(&d->g, d->qmin, d->qmax, (const int8_t *)in->data, (int8_t *)out->data);
    } else if (MICRONN_TYPE_INT8 && d->dtype == MN_INT8) {
        r = mn_average_pool_s8(&d->g, d->qmin, d->qmax, (const int8_t *)in->data, (int8_t *)out->data);
    } else if (MICRONN_TYPE_INT16 && d->dtype == MN_INT16) {
        r = mn_average_pool_s16(&d->g, d->qmin, d->qmax, (const int16_t *)in->data, (int16_t *)out->data);
    } else if (MICRONN_TYPE_FLOAT32) {   /* float32 (prepare refused the families not built) */
        r = mn_average_pool_f32(&d->g, d->fmin, d->fmax, (const float *)in->data, (float *)out->data);
    }
    if (r) {
        return mn_fail(ctx, MN_ERR_KERNEL, "a pooling window covers no input (padding larger than filter)");
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_AVERAGE_POOL_2D = { NULL, pool_prepare, avg_pool_eval, NULL, pool_variant };
#endif

#if MICRONN_OP_MAX_POOL_2D
static mn_status_t max_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const pool_data_t *d = (const pool_data_t *)node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    if (d->variant) {
        d->variant->run(&d->g, d->qmin, d->qmax, (const int8_t *)in->data, (int8_t *)out->data);
    } else if (MICRONN_TYPE_INT8 && d->dtype == MN_INT8) {
        mn_max_pool_s8(&d->g, d->qmin, d->qmax, (const int8_t *)in->data, (int8_t *)out->data);
    } else if (MICRONN_TYPE_INT16 && d->dtype == MN_INT16) {
        mn_max_pool_s16(&d->g, d->qmin, d->qmax, (const int16_t *)in->data, (int16_t *)out->data);
    } else if (MICRONN_TYPE_FLOAT32) {   /* float32 (prepare refused the families not built) */
        mn_max_pool_f32(&d->g, d->fmin, d->fmax, (const float *)in->data, (float *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_MAX_POOL_2D = { NULL, pool_prepare, max_pool_eval, NULL, pool_variant };
#endif

#if MICRONN_OP_L2_POOL_2D
static mn_status_t l2_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const pool_data_t *d = (const pool_data_t *)node->user_data;
    if (l2_pool_f32(&d->g, d->fmin, d->fmax, (const float *)mn_input(ctx, node, 0)->data,
            (float *)mn_output(ctx, node, 0)->data)) {
        return mn_fail(ctx, MN_ERR_KERNEL, "a pooling window covers no input (padding larger than filter)");
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_L2_POOL_2D = { NULL, pool_prepare, l2_pool_eval, NULL, pool_variant };
#endif

#endif /* MICRONN_OP_AVERAGE_POOL_2D || MICRONN_OP_MAX_POOL_2D || MICRONN_OP_L2_POOL_2D */
