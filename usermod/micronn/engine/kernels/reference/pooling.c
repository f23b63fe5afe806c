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

#if MICRONN_OP_AVERAGE_POOL_2D
static mn_status_t avg_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_pool_data_t *d = (const ref_pool_data_t *)node->user_data;
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

const mn_kernel_t mn_kernel_AVERAGE_POOL_2D = { NULL, ref_pool_prepare, avg_pool_eval, NULL, ref_pool_variant };
#endif

#if MICRONN_OP_MAX_POOL_2D
static mn_status_t max_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_pool_data_t *d = (const ref_pool_data_t *)node->user_data;
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

const mn_kernel_t mn_kernel_MAX_POOL_2D = { NULL, ref_pool_prepare, max_pool_eval, NULL, ref_pool_variant };
#endif

#if MICRONN_OP_L2_POOL_2D
static mn_status_t l2_pool_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_pool_data_t *d = (const ref_pool_data_t *)node->user_data;
    if (l2_pool_f32(&d->g, d->fmin, d->fmax, (const float *)mn_input(ctx, node, 0)->data,
            (float *)mn_output(ctx, node, 0)->data)) {
        return mn_fail(ctx, MN_ERR_KERNEL, "a pooling window covers no input (padding larger than filter)");
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_L2_POOL_2D = { NULL, ref_pool_prepare, l2_pool_eval, NULL, ref_pool_variant };
#endif

#endif /* MICRONN_OP_AVERAGE_POOL_2D || MICRONN_OP_MAX_POOL_2D || MICRONN_OP_L2_POOL_2D */
