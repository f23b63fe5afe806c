/* RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR reference kernels (TFLite reference_ops::
 * ResizeBilinear / ResizeBilinearInteger / ResizeNearestNeighbor), NHWC. Float and uint8 bilinear
 * interpolate in float (uint8 adds 0.5 and truncates); int8/int16 use TFLite's integer version
 * (coordinates in 1/1024 steps, 20-bit weights, rounding half away from zero). Nearest neighbour
 * picks source pixels with TFLite's float formula and copies whole pixels, for any dtype. The size
 * input must be constant (it sets the output shape). */
#include <math.h>
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_RESIZE_BILINEAR || MICRONN_OP_RESIZE_NEAREST_NEIGHBOR

#include "ref_glue.h"

typedef struct {
    mn_resize_geom_t g;
    uint8_t dtype, es;
} resize_data_t;

/* ---- bilinear ---- */

static void interp_f(int32_t v, float scale, int half, int32_t size, float *s, int32_t *lo, int32_t *hi) {
    *s = half ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
    const int32_t f = (int32_t)floorf(*s);
    const int32_t c = (int32_t)ceilf(*s);
    *lo = f > 0 ? f : 0;
    *hi = c < size - 1 ? c : size - 1;
}

static void resize_scales_f(const mn_resize_geom_t *g, float *sh, float *sw) {
    *sh = (float)g->in_h / (float)g->out_h;
    *sw = (float)g->in_w / (float)g->out_w;
    if (g->align_corners && g->out_h > 1) {
        *sh = (float)(g->in_h - 1) / (float)(g->out_h - 1);
    }
    if (g->align_corners && g->out_w > 1) {
        *sw = (float)(g->in_w - 1) / (float)(g->out_w - 1);
    }
}

#define IN_AT(b, y, x) (input + (((size_t)(b) * g->in_h + (y)) * g->in_w + (x)) * g->depth)

#define DEFINE_BILINEAR_F(NAME, T, ROUND) \
    void NAME(const mn_resize_geom_t *g, const T *input, T *output) { \
        float sh, sw; \
        resize_scales_f(g, &sh, &sw); \
        for (int b = 0; b < g->batches; ++b) { \
            for (int y = 0; y < g->out_h; ++y) { \
                float iy; \
                int32_t y0, y1; \
                interp_f(y, sh, g->half_pixel, g->in_h, &iy, &y0, &y1); \
                const float dy = iy - (float)y0; \
                for (int x = 0; x < g->out_w; ++x) { \
                    float ix; \
                    int32_t x0, x1; \
                    interp_f(x, sw, g->half_pixel, g->in_w, &ix, &x0, &x1); \
                    const float dx = ix - (float)x0; \
                    const T *p00 = IN_AT(b, y0, x0), *p10 = IN_AT(b, y1, x0); \
                    const T *p01 = IN_AT(b, y0, x1), *p11 = IN_AT(b, y1, x1); \
                    for (int c = 0; c < g->depth; ++c) { \
                        const float v = (float)p00[c] * (1 - dy) * (1 - dx) + (float)p10[c] * dy * (1 - dx) + \
                            (float)p01[c] * (1 - dy) * dx + (float)p11[c] * dy * dx + ROUND; \
                        *output++ = (T)v; \
                    } \
                } \
            } \
        } \
    }

DEFINE_BILINEAR_F(mn_resize_bilinear_f32, float, 0.0f)
DEFINE_BILINEAR_F(mn_resize_bilinear_u8, uint8_t, 0.5f)

static int32_t scale_10(int32_t in, int32_t out, int align) {
    if (align && out > 1) {
        return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    }
    return ((1 << 10) * in + out / 2) / out;
}

static void interp_i(int32_t v, int32_t scale, int half, int32_t size, int32_t *s, int32_t *lo, int32_t *hi) {
    *s = half ? v * scale + scale / 2 - (1 << 9) : v * scale;
    const int32_t l = *s / (1 << 10);
    const int32_t h = (*s + (1 << 10) - 1) / (1 << 10);
    *lo = l > 0 ? l : 0;
    *hi = h < size - 1 ? h : size - 1;
}

#define DEFINE_BILINEAR_I(NAME, T) \
    void NAME(const mn_resize_geom_t *g, const T *input, T *output) { \
        const int32_t sh = scale_10(g->in_h, g->out_h, g->align_corners); \
        const int32_t sw = scale_10(g->in_w, g->out_w, g->align_corners); \
        for (int b = 0; b < g->batches; ++b) { \
            for (int y = 0; y < g->out_h; ++y) { \
                int32_t iy, y0, y1; \
                interp_i(y, sh, g->half_pixel, g->in_h, &iy, &y0, &y1); \
                const int64_t wy1 = iy - (1 << 10) * y0, wy0 = (1 << 10) - wy1; \
                for (int x = 0; x < g->out_w; ++x) { \
                    int32_t ix, x0, x1; \
                    interp_i(x, sw, g->half_pixel, g->in_w, &ix, &x0, &x1); \
                    const int64_t wx1 = ix - (1 << 10) * x0, wx0 = (1 << 10) - wx1; \
                    const T *p00 = IN_AT(b, y0, x0), *p10 = IN_AT(b, y1, x0); \
                    const T *p01 = IN_AT(b, y0, x1), *p11 = IN_AT(b, y1, x1); \
                    for (int c = 0; c < g->depth; ++c) { \
                        const int64_t acc = p00[c] * wy0 * wx0 + p10[c] * wy1 * wx0 + p01[c] * wy0 * wx1 + \
                            p11[c] * wy1 * wx1; \
                        const int64_t round = acc > 0 ? (1 << 19) : -(1 << 19); \
                        *output++ = (T)((acc + round) / (1 << 20)); \
                    } \
                } \
            } \
        } \
    }

DEFINE_BILINEAR_I(mn_resize_bilinear_s8, int8_t)
DEFINE_BILINEAR_I(mn_resize_bilinear_s16, int16_t)

/* ---- nearest neighbour ---- */

static int32_t nearest(int32_t v, int32_t in, int32_t out, int align, int half) {
    const float scale = (align && out > 1) ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
    const float s = ((float)v + (half ? 0.5f : 0.0f)) * scale;
    int32_t r = align ? (int32_t)mn_roundf(s) : (int32_t)floorf(s);
    r = r < in - 1 ? r : in - 1;
    return half && r < 0 ? 0 : r;
}

void mn_resize_nearest(const mn_resize_geom_t *g, size_t es, const void *in, void *out) {
    const uint8_t *input = (const uint8_t *)in;
    uint8_t *o = (uint8_t *)out;
    const size_t px = (size_t)g->depth * es;
    for (int b = 0; b < g->batches; ++b) {
        for (int y = 0; y < g->out_h; ++y) {
            const int32_t sy = nearest(y, g->in_h, g->out_h, g->align_corners, g->half_pixel);
            for (int x = 0; x < g->out_w; ++x) {
                const int32_t sx = nearest(x, g->in_w, g->out_w, g->align_corners, g->half_pixel);
                memcpy(o, input + (((size_t)b * g->in_h + sy) * g->in_w + sx) * px, px);
                o += px;
            }
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

static mn_status_t resize_prepare(mn_ctx_t *ctx, mn_node_t *node, int bilinear) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t size[2] = { 0, 0 }, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "size", size, 2, &n));
    if (in->ndim != 4 || out->ndim != 4 || n != 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "input/output must be 4-D and size 2 values");
    }
    const int align = bilinear ? mn_opt_bool(node, MN_RESIZE_BILINEAR_ALIGN_CORNERS, false)
                               : mn_opt_bool(node, MN_RESIZE_NN_ALIGN_CORNERS, false);
    const int half = bilinear ? mn_opt_bool(node, MN_RESIZE_BILINEAR_HALF_PIXEL, false)
                              : mn_opt_bool(node, MN_RESIZE_NN_HALF_PIXEL, false);
    if (align && half) {
        return mn_fail(ctx, MN_ERR_MODEL, "align_corners and half_pixel_centers are exclusive");
    }
    if (size[0] < 1 || size[1] < 1 || out->dims[0] != in->dims[0] || out->dims[1] != size[0] ||
        out->dims[2] != size[1] || out->dims[3] != in->dims[3]) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match size [%d, %d]", (int)size[0],
            (int)size[1]);
    }
    if (bilinear && in->dtype != MN_FLOAT32 && in->dtype != MN_UINT8 && in->dtype != MN_INT8 &&
        in->dtype != MN_INT16) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, resize_data_t, ctx, 1);
    mn_resize_geom_t *g = &d->g;
    g->batches = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->depth = in->dims[3];
    g->out_h = size[0];
    g->out_w = size[1];
    g->align_corners = align;
    g->half_pixel = half;
    d->dtype = in->dtype;
    d->es = (uint8_t)mn_dtype_size(in->dtype);
    node->user_data = d;
    return MN_OK;
}

#if MICRONN_OP_RESIZE_BILINEAR
static mn_status_t bilinear_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return resize_prepare(ctx, node, 1);
}
static mn_status_t bilinear_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const resize_data_t *d = (const resize_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    switch (d->dtype) {
        case MN_INT8: mn_resize_bilinear_s8(&d->g, (const int8_t *)in, (int8_t *)out); break;
        case MN_INT16: mn_resize_bilinear_s16(&d->g, (const int16_t *)in, (int16_t *)out); break;
        case MN_UINT8: mn_resize_bilinear_u8(&d->g, (const uint8_t *)in, (uint8_t *)out); break;
        default: mn_resize_bilinear_f32(&d->g, (const float *)in, (float *)out); break;
    }
    return MN_OK;
}
const mn_kernel_t mn_kernel_RESIZE_BILINEAR = { NULL, bilinear_prepare, bilinear_eval, NULL, NULL };
#endif

#if MICRONN_OP_RESIZE_NEAREST_NEIGHBOR
static mn_status_t nearest_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return resize_prepare(ctx, node, 0);
}
static mn_status_t nearest_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const resize_data_t *d = (const resize_data_t *)node->user_data;
    mn_resize_nearest(&d->g, d->es, mn_input(ctx, node, 0)->data, mn_output(ctx, node, 0)->data);
    return MN_OK;
}
const mn_kernel_t mn_kernel_RESIZE_NEAREST_NEIGHBOR = { NULL, nearest_prepare, nearest_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_RESIZE_BILINEAR || MICRONN_OP_RESIZE_NEAREST_NEIGHBOR */
