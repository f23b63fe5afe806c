/* The Helium backend: its variant lists and shared helpers (mve.h). */
#include "mve.h"

int32_t mn_mve_dot(const int8_t *x, const int8_t *w, int n) {
    int32_t acc = 0;
    int c = 0;
    for (; c + 16 <= n; c += 16) {
        acc = vmladavaq_s8(acc, vldrbq_s8(x + c), vldrbq_s8(w + c));
    }
    if (c < n) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - c));
        acc = vmladavaq_s8(acc, vldrbq_z_s8(x + c, p), vldrbq_z_s8(w + c, p));
    }
    return acc;
}

int32_t mn_mve_sum(const int8_t *x, int n) {
    int32_t acc = 0;
    for (int c = 0; c < n; c += 16) {
        acc = vaddvaq_s8(acc, vldrbq_z_s8(x + c, vctp8q((uint32_t)(n - c))));
    }
    return acc;
}

/* Requantize four accumulators (channels o..o+3, plus folded[o..o+3]) and store them. */
static inline __attribute__((always_inline)) void matvec_store4(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
    const int32_t *folded, const int32_t *mult, const int8_t *shift, int32_t out_off, int32_t act_min,
    int32_t act_max, int o, int8_t *out, bool left) {
    int32x4_t acc = vsetq_lane_s32(a0, vdupq_n_s32(0), 0);
    acc = vsetq_lane_s32(a1, acc, 1);
    acc = vsetq_lane_s32(a2, acc, 2);
    acc = vsetq_lane_s32(a3, acc, 3);
    acc = vaddq_s32(acc, vldrwq_s32(folded + o));
    vstrbq_s32(out + o, mn_mve_requant_x(acc, vldrwq_s32(mult + o), vldrbq_s32(shift + o), out_off, act_min, act_max,
        left));
}

static inline __attribute__((always_inline)) void matvec(const int8_t *x, const int8_t *w, const int32_t *folded,
    int cols, int rows, const mn_conv_quant_t *q, int8_t *out, bool left) {
    /* locals: the int8 output stores may alias *q, which would force reloads */
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    int o = 0;
    if (cols <= 16) {
        /* one vector per row; the input vector stays in a register and is zero past cols, so the
         * weight loads need no predication while 16 bytes from the fourth row stay inside w */
        const mve_pred16_t p = vctp8q((uint32_t)cols);
        const int8x16_t xv = vldrbq_z_s8(x, p);
        const size_t end = (size_t)rows * cols;
        for (; o + 4 <= rows; o += 4) {
            const int8_t *w0 = w + (size_t)o * cols;
            int32_t a0, a1, a2, a3;
            if ((size_t)(o + 3) * cols + 16 <= end) {
                a0 = vmladavq_s8(xv, vldrbq_s8(w0));
                a1 = vmladavq_s8(xv, vldrbq_s8(w0 + cols));
                a2 = vmladavq_s8(xv, vldrbq_s8(w0 + 2 * cols));
                a3 = vmladavq_s8(xv, vldrbq_s8(w0 + 3 * cols));
            } else {
                a0 = vmladavq_s8(xv, vldrbq_z_s8(w0, p));
                a1 = vmladavq_s8(xv, vldrbq_z_s8(w0 + cols, p));
                a2 = vmladavq_s8(xv, vldrbq_z_s8(w0 + 2 * cols, p));
                a3 = vmladavq_s8(xv, vldrbq_z_s8(w0 + 3 * cols, p));
            }
            matvec_store4(a0, a1, a2, a3, folded, mult, shift, out_off, act_min, act_max, o, out, left);
        }
    } else {
        for (; o + 4 <= rows; o += 4) {
            int32_t acc[4] = { 0, 0, 0, 0 };
            mn_mve_dot4(x, w + (size_t)o * cols, cols, acc);
            matvec_store4(acc[0], acc[1], acc[2], acc[3], folded, mult, shift, out_off, act_min, act_max, o, out,
                left);
        }
    }
    for (; o < rows; ++o) {
        const int32_t acc = (int32_t)((uint32_t)folded[o] + (uint32_t)mn_mve_dot(x, w + (size_t)o * cols, cols));
        out[o] = (int8_t)mn_clamp_i32(mn_add_wrap(mn_mul_by_qm(acc, mult[o], shift[o]), out_off), act_min, act_max);
    }
}

void mn_mve_matvec(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_conv_quant_t *q, int8_t *out, bool left) {
    if (left) {
        matvec(x, w, folded, cols, rows, q, out, true);
    } else {
        matvec(x, w, folded, cols, rows, q, out, false);
    }
}

static inline __attribute__((always_inline)) void matmul_short(const int8_t *x, size_t x_step, int n_px,
    const int8_t *w, const int32_t *folded, int cols, int rows, const mn_conv_quant_t *q, int8_t *out, size_t out_step,
    bool left) {
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    const mve_pred16_t p = vctp8q((uint32_t)cols);
    const size_t end = (size_t)rows * cols;
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        const int8_t *w0 = w + (size_t)o * cols;
        int8x16_t wv0, wv1, wv2, wv3;
        if ((size_t)(o + 3) * cols + 16 <= end) {   /* the input is zero past cols: no predication needed */
            wv0 = vldrbq_s8(w0);
            wv1 = vldrbq_s8(w0 + cols);
            wv2 = vldrbq_s8(w0 + 2 * cols);
            wv3 = vldrbq_s8(w0 + 3 * cols);
        } else {
            wv0 = vldrbq_z_s8(w0, p);
            wv1 = vldrbq_z_s8(w0 + cols, p);
            wv2 = vldrbq_z_s8(w0 + 2 * cols, p);
            wv3 = vldrbq_z_s8(w0 + 3 * cols, p);
        }
        const int8_t *px = x;
        int8_t *op = out + o;
        for (int i = 0; i < n_px; ++i) {
            const int8x16_t xv = vldrbq_z_s8(px, p);
            int32x4_t acc = vsetq_lane_s32(vmladavq_s8(xv, wv0), vdupq_n_s32(0), 0);
            acc = vsetq_lane_s32(vmladavq_s8(xv, wv1), acc, 1);
            acc = vsetq_lane_s32(vmladavq_s8(xv, wv2), acc, 2);
            acc = vsetq_lane_s32(vmladavq_s8(xv, wv3), acc, 3);
            acc = vaddq_s32(acc, vldrwq_s32(folded + o));
            vstrbq_s32(op, mn_mve_requant_x(acc, vldrwq_s32(mult + o), vldrbq_s32(shift + o), out_off, act_min,
                act_max, left));
            px += x_step;
            op += out_step;
        }
    }
    for (; o < rows; ++o) {
        const int8_t *px = x;
        int8_t *op = out + o;
        for (int i = 0; i < n_px; ++i) {
            const int32_t acc = (int32_t)((uint32_t)folded[o] + (uint32_t)mn_mve_dot(px, w + (size_t)o * cols, cols));
            *op = (int8_t)mn_clamp_i32(mn_add_wrap(mn_mul_by_qm(acc, mult[o], shift[o]), out_off), act_min, act_max);
            px += x_step;
            op += out_step;
        }
    }
}

void mn_mve_matmul_short(const int8_t *x, size_t x_step, int n_px, const int8_t *w, const int32_t *folded, int cols,
    int rows, const mn_conv_quant_t *q, int8_t *out, size_t out_step) {
    if (mn_mve_any_left(q->shift, rows)) {
        matmul_short(x, x_step, n_px, w, folded, cols, rows, q, out, out_step, true);
    } else {
        matmul_short(x, x_step, n_px, w, folded, cols, rows, q, out, out_step, false);
    }
}

void mn_mve_conv_im2col(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *folded, int8_t *col, int8_t *output) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c, f_h = g->f_h, f_w = g->f_w;
    const int dil_h = g->dil_h, dil_w = g->dil_w, out_c = g->out_c, k = mn_mve_conv_k(g);
    const bool left = mn_mve_any_left(q->shift, out_c);
    const int8_t zp = (int8_t)-q->input_offset;   /* the input's zero point: x + off == 0 */
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                const bool x_inside = ix0 >= 0 && ix0 + (f_w - 1) * dil_w < in_w;
                int8_t *dst = col;
                for (int fy = 0; fy < f_h; ++fy) {
                    const int iy = iy0 + dil_h * fy;
                    if (iy < 0 || iy >= in_h) {
                        mn_mve_fill(dst, zp, f_w * in_c);
                    } else if (x_inside && dil_w == 1) {   /* one contiguous run of input */
                        mn_mve_copy(dst, in_b + ((size_t)iy * in_w + ix0) * in_c, f_w * in_c);
                    } else {
                        for (int fx = 0; fx < f_w; ++fx) {
                            const int ix = ix0 + dil_w * fx;
                            if (ix < 0 || ix >= in_w) {
                                mn_mve_fill(dst + fx * in_c, zp, in_c);
                            } else {
                                mn_mve_copy(dst + fx * in_c, in_b + ((size_t)iy * in_w + ix) * in_c, in_c);
                            }
                        }
                    }
                    dst += f_w * in_c;
                }
                mn_mve_matvec(col, filter, folded, k, out_c, q, out, left);
                out += out_c;
            }
        }
    }
}

void mn_mve_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded) {
    for (int o = 0; o < rows; ++o) {
        const uint32_t sum = (uint32_t)mn_mve_sum(w + (size_t)o * cols, cols);
        folded[o] = (int32_t)((bias ? (uint32_t)bias[o] : 0u) + sum * (uint32_t)offset);
    }
}

void mn_mve_copy(int8_t *dst, const int8_t *src, int n) {
    for (int i = 0; i < n; i += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - i));
        vstrbq_p_s8(dst + i, vldrbq_z_s8(src + i, p), p);
    }
}

void mn_mve_fill(int8_t *dst, int8_t v, int n) {
    const int8x16_t vv = vdupq_n_s8(v);
    for (int i = 0; i < n; i += 16) {
        vstrbq_p_s8(dst + i, vv, vctp8q((uint32_t)(n - i)));
    }
}

#if __ARM_FEATURE_MVE & 2
/* Lane r = sum_c x[c] * w[r * w_stride + c] for four rows r. Each row's four partial-sum lanes are
 * added by a transposing reload (VLD4: lane r of vector k is row r's lane k), three vector adds
 * for all four rows instead of twelve scalar moves and adds. */
static inline __attribute__((always_inline)) float32x4_t dot4_f32(const float *x, const float *w, size_t w_stride,
    int n) {
    const float *w0 = w, *w1 = w0 + w_stride, *w2 = w1 + w_stride, *w3 = w2 + w_stride;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    /* zeroing tail loads: the dead lanes add 0 * 0 */
    for (int c = 0; c < n; c += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - c));
        const float32x4_t xv = vldrwq_z_f32(x + c, p);
        a0 = vfmaq_f32(a0, xv, vldrwq_z_f32(w0 + c, p));
        a1 = vfmaq_f32(a1, xv, vldrwq_z_f32(w1 + c, p));
        a2 = vfmaq_f32(a2, xv, vldrwq_z_f32(w2 + c, p));
        a3 = vfmaq_f32(a3, xv, vldrwq_z_f32(w3 + c, p));
    }
    float t[16];
    vst1q_f32(t, a0), vst1q_f32(t + 4, a1), vst1q_f32(t + 8, a2), vst1q_f32(t + 12, a3);
    const float32x4x4_t v = vld4q_f32(t);
    return vaddq_f32(vaddq_f32(v.val[0], v.val[1]), vaddq_f32(v.val[2], v.val[3]));
}

void mn_mve_dot4_f32(const float *x, const float *w, size_t w_stride, int n, float acc[4]) {
    vst1q_f32(acc, vaddq_f32(vld1q_f32(acc), dot4_f32(x, w, w_stride, n)));
}

float mn_mve_dot_f32(const float *x, const float *w, int n, float acc) {
    float32x4_t a = vdupq_n_f32(0.0f);
    for (int c = 0; c < n; c += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - c));
        a = vfmaq_f32(a, vldrwq_z_f32(x + c, p), vldrwq_z_f32(w + c, p));
    }
    return acc + ((vgetq_lane_f32(a, 0) + vgetq_lane_f32(a, 1)) + (vgetq_lane_f32(a, 2) + vgetq_lane_f32(a, 3)));
}

void mn_mve_gemm_f32(const float *x, size_t x_stride, int n, const float *w, int cols, int rows, const float *bias,
    float lo, float hi, float *out) {
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    for (int p = 0; p < n; ++p, x += x_stride, out += rows) {
        int o = 0;
        for (; o + 4 <= rows; o += 4) {
            float32x4_t acc = dot4_f32(x, w + (size_t)o * cols, (size_t)cols, cols);
            if (bias) {
                acc = vaddq_f32(acc, vld1q_f32(bias + o));
            }
            vst1q_f32(out + o, mn_mve_clamp_f32(acc, vlo, vhi));
        }
        for (; o < rows; ++o) {
            out[o] = mn_clamp_f32(mn_mve_dot_f32(x, w + (size_t)o * cols, cols, 0.0f) + (bias ? bias[o] : 0.0f), lo, hi);
        }
    }
}
#define MVE_F32 1
#else
#define MVE_F32 0
#endif

/* The lists of the type families the firmware is built for (mn_config.h), each in mve_fits.h's
 * order, with the variants the firmware links (MICRONN_VARIANTS). */
#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8
static const mn_conv_s8_variant_t *const conv_s8[] = { MN_MVE_CONV_S8(MN_VARIANT_ENTRY) NULL };
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif

#if MICRONN_OP_CONV_2D && MICRONN_TYPE_FLOAT32 && MVE_F32
#if MICRONN_KERNELS_GENERIC
static const mn_conv_f32_variant_t *const conv_f32[] = { MN_MVE_CONV_F32(MN_VARIANT_ENTRY) NULL };
#else   /* mve.conv_f32 runs generic's tap walk */
static const mn_conv_f32_variant_t *const conv_f32[] = { MN_VARIANT_ENTRY(mve, conv_f32_1x1) NULL };
#endif
#define CONV_F32 conv_f32
#else
#define CONV_F32 NULL
#endif

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8
static const mn_conv_s8_variant_t *const depthwise_s8[] = { MN_MVE_DEPTHWISE_S8(MN_VARIANT_ENTRY) NULL };
#define DEPTHWISE_S8 depthwise_s8
#else
#define DEPTHWISE_S8 NULL
#endif

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_FLOAT32 && MVE_F32
static const mn_conv_f32_variant_t *const depthwise_f32[] = { MN_MVE_DEPTHWISE_F32(MN_VARIANT_ENTRY) NULL };
#define DEPTHWISE_F32 depthwise_f32
#else
#define DEPTHWISE_F32 NULL
#endif

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8
static const mn_fc_s8_variant_t *const fc_s8[] = { MN_MVE_FC_S8(MN_VARIANT_ENTRY) NULL };
#define FC_S8 fc_s8
#else
#define FC_S8 NULL
#endif

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_FLOAT32 && MVE_F32
static const mn_fc_f32_variant_t *const fc_f32[] = { MN_MVE_FC_F32(MN_VARIANT_ENTRY) NULL };
#define FC_F32 fc_f32
#else
#define FC_F32 NULL
#endif

#if MICRONN_OP_SVDF
static const mn_svdf_s8_variant_t *const svdf_s8[] = { MN_MVE_SVDF_S8(MN_VARIANT_ENTRY) NULL };
#define SVDF_S8 svdf_s8
#else
#define SVDF_S8 NULL
#endif

#if (MICRONN_OP_ADD || MICRONN_OP_SUB) && MICRONN_TYPE_INT8
static const mn_add_s8_variant_t *const add_s8[] = { MN_MVE_ADD_S8(MN_VARIANT_ENTRY) NULL };
#define ADD_S8 add_s8
#else
#define ADD_S8 NULL
#endif

#if MICRONN_OP_MUL && MICRONN_TYPE_INT8
static const mn_mul_s8_variant_t *const mul_s8[] = { MN_MVE_MUL_S8(MN_VARIANT_ENTRY) NULL };
#define MUL_S8 mul_s8
#else
#define MUL_S8 NULL
#endif

const mn_backend_t mn_backend_mve = {
    .name = "mve",
    .conv_s8 = CONV_S8,
    .depthwise_s8 = DEPTHWISE_S8,
    .conv_f32 = CONV_F32,
    .depthwise_f32 = DEPTHWISE_F32,
    .fc_s8 = FC_S8,
    .fc_f32 = FC_F32,
    .svdf_s8 = SVDF_S8,
    .add_s8 = ADD_S8,
    .mul_s8 = MUL_S8,
};
