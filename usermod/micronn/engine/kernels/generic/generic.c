/* The portable backend: its variant lists and shared helpers (generic.h). */
#include <string.h>

#include "generic.h"

int32_t mn_generic_dot_s8(const int8_t *a, const int8_t *b, int n) {
    uint32_t acc0 = 0, acc1 = 0;   /* wrap-around defined, as the reference accumulator */
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        acc0 += (uint32_t)((int32_t)a[i] * b[i]) + (uint32_t)((int32_t)a[i + 1] * b[i + 1]);
        acc1 += (uint32_t)((int32_t)a[i + 2] * b[i + 2]) + (uint32_t)((int32_t)a[i + 3] * b[i + 3]);
    }
    for (; i < n; ++i) {
        acc0 += (uint32_t)((int32_t)a[i] * b[i]);
    }
    return (int32_t)(acc0 + acc1);
}

/* Sum of n int8 values, eight per step: bytes biased to unsigned (x ^ 0x80) are added in two
 * 16-bit lanes (at most 4 * 255 per step, so 64 steps fit a lane), the bias removed at the end.
 * This is prepare-time work over every weight, so it is worth the few lines. */
int32_t mn_generic_sum_s8(const int8_t *p, int n) {
    uint32_t total = 0;
    int i = 0;
    while (i + 8 <= n) {
        uint32_t lanes = 0;
        const int end = n - i >= 512 ? i + 512 : n - 7;
        for (; i < end; i += 8) {
            uint32_t x, y;
            memcpy(&x, p + i, 4);
            memcpy(&y, p + i + 4, 4);
            x ^= 0x80808080u;
            y ^= 0x80808080u;
            lanes += (x & 0x00ff00ffu) + ((x >> 8) & 0x00ff00ffu) + (y & 0x00ff00ffu) + ((y >> 8) & 0x00ff00ffu);
        }
        total += (lanes & 0xffffu) + (lanes >> 16);
    }
    total -= 128u * (uint32_t)(i & ~7);
    for (; i < n; ++i) {
        total += (uint32_t)p[i];
    }
    return (int32_t)total;
}

void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded) {
    for (int o = 0; o < rows; ++o) {
        const uint32_t sum = (uint32_t)mn_generic_sum_s8(w + (size_t)o * cols, cols);
        folded[o] = (int32_t)((bias ? (uint32_t)bias[o] : 0u) + sum * (uint32_t)offset);
    }
}

/* Inlined into the matrix-vector loops: for short rows (SVDF's 16 inputs) the call would cost a
 * quarter of the work. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void dot4_s8(const int8_t *x, const int8_t *w, int cols, int32_t off, uint32_t acc[4]) {
    const int8_t *w0 = w, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
    const int8_t *const end = x + cols;
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    /* Pointer walks, four columns per step: without SIMD the loads and the loop bookkeeping are
     * what costs (GCC indexes every row from the counter otherwise), and four columns spread the
     * five pointer steps and the branch over 16 multiply-adds. */
    while (x + 4 <= end) {
        const int32_t v = x[0] + off, u = x[1] + off, y = x[2] + off, z = x[3] + off;
        a0 += (uint32_t)(w0[0] * v + w0[1] * u + w0[2] * y + w0[3] * z);
        a1 += (uint32_t)(w1[0] * v + w1[1] * u + w1[2] * y + w1[3] * z);
        a2 += (uint32_t)(w2[0] * v + w2[1] * u + w2[2] * y + w2[3] * z);
        a3 += (uint32_t)(w3[0] * v + w3[1] * u + w3[2] * y + w3[3] * z);
        x += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4;
    }
    while (x < end) {
        const int32_t v = *x++ + off;
        a0 += (uint32_t)(*w0++ * v);
        a1 += (uint32_t)(*w1++ * v);
        a2 += (uint32_t)(*w2++ * v);
        a3 += (uint32_t)(*w3++ * v);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

void mn_generic_dot4_s8(const int8_t *x, const int8_t *w, int cols, uint32_t acc[4]) {
    dot4_s8(x, w, cols, 0, acc);
}

void mn_generic_matvec_acc(const int8_t *x, const int8_t *w, const int32_t *init, int32_t off, int cols, int rows,
    uint32_t *acc) {
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        for (int k = 0; k < 4; ++k) {
            acc[o + k] = init ? (uint32_t)init[o + k] : 0u;
        }
        dot4_s8(x, w + (size_t)o * cols, cols, off, acc + o);
    }
    for (; o < rows; ++o) {
        const int8_t *row = w + (size_t)o * cols;
        acc[o] = (init ? (uint32_t)init[o] : 0u) + (uint32_t)mn_generic_dot_s8(x, row, cols) +
            (off ? (uint32_t)off * (uint32_t)mn_generic_sum_s8(row, cols) : 0u);
    }
}

void mn_generic_matvec_s8(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_generic_requant_t *rq, int8_t *out) {
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        uint32_t acc[4] = { (uint32_t)folded[o], (uint32_t)folded[o + 1], (uint32_t)folded[o + 2],
                            (uint32_t)folded[o + 3] };
        dot4_s8(x, w + (size_t)o * cols, cols, 0, acc);
        for (int k = 0; k < 4; ++k) {
            out[o + k] = mn_generic_out(rq, o + k, acc[k]);
        }
    }
    for (; o < rows; ++o) {
        const uint32_t acc = (uint32_t)folded[o] + (uint32_t)mn_generic_dot_s8(x, w + (size_t)o * cols, cols);
        out[o] = mn_generic_out(rq, o, acc);
    }
}

/* Float products keep each output's terms in the reference's order (sequential over the reduction
 * axis, bias added last): blocking only shares loads between outputs, so results match the
 * reference up to fused multiply-add contraction. */
static inline float gemm_out(float acc, const float *bias, int o, float lo, float hi) {
    return mn_clamp_f32(acc + (bias ? bias[o] : 0.0f), lo, hi);
}

void mn_generic_gemm_f32(const float *x, size_t x_stride, int n, const float *w, int cols, int rows,
    const float *bias, float lo, float hi, float *out) {
    int p = 0;
    for (; p + 2 <= n; p += 2) {
        const float *x0 = x + (size_t)p * x_stride, *x1 = x0 + x_stride;
        float *out0 = out + (size_t)p * rows, *out1 = out0 + rows;
        int o = 0;
        for (; o + 4 <= rows; o += 4) {
            const float *w0 = w + (size_t)o * cols, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
            for (int c = 0; c < cols; ++c) {
                const float u = x0[c], v = x1[c];
                const float f0 = w0[c], f1 = w1[c], f2 = w2[c], f3 = w3[c];
                a0 += u * f0, a1 += u * f1, a2 += u * f2, a3 += u * f3;
                b0 += v * f0, b1 += v * f1, b2 += v * f2, b3 += v * f3;
            }
            out0[o] = gemm_out(a0, bias, o, lo, hi), out0[o + 1] = gemm_out(a1, bias, o + 1, lo, hi);
            out0[o + 2] = gemm_out(a2, bias, o + 2, lo, hi), out0[o + 3] = gemm_out(a3, bias, o + 3, lo, hi);
            out1[o] = gemm_out(b0, bias, o, lo, hi), out1[o + 1] = gemm_out(b1, bias, o + 1, lo, hi);
            out1[o + 2] = gemm_out(b2, bias, o + 2, lo, hi), out1[o + 3] = gemm_out(b3, bias, o + 3, lo, hi);
        }
        for (; o < rows; ++o) {
            const float *wo = w + (size_t)o * cols;
            float a = 0.0f, b = 0.0f;
            for (int c = 0; c < cols; ++c) {
                a += x0[c] * wo[c], b += x1[c] * wo[c];
            }
            out0[o] = gemm_out(a, bias, o, lo, hi), out1[o] = gemm_out(b, bias, o, lo, hi);
        }
    }
    if (p < n) {
        const float *x0 = x + (size_t)p * x_stride;
        float *out0 = out + (size_t)p * rows;
        int o = 0;
        for (; o + 4 <= rows; o += 4) {
            float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
            mn_generic_dot4_f32(x0, w + (size_t)o * cols, cols, cols, acc);
            for (int k = 0; k < 4; ++k) {
                out0[o + k] = gemm_out(acc[k], bias, o + k, lo, hi);
            }
        }
        for (; o < rows; ++o) {
            out0[o] = gemm_out(mn_generic_dot_f32(x0, w + (size_t)o * cols, cols, 0.0f), bias, o, lo, hi);
        }
    }
}

void mn_generic_dot4_f32(const float *x, const float *w, size_t w_stride, int n, float acc[4]) {
    const float *w0 = w, *w1 = w0 + w_stride, *w2 = w1 + w_stride, *w3 = w2 + w_stride;
    float a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (int c = 0; c < n; ++c) {
        const float v = x[c];
        a0 += v * w0[c], a1 += v * w1[c], a2 += v * w2[c], a3 += v * w3[c];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

float mn_generic_dot_f32(const float *x, const float *w, int n, float acc) {
    for (int c = 0; c < n; ++c) {
        acc += x[c] * w[c];
    }
    return acc;
}

/* acc[k] += row k . x0, acc[4 + k] += row k . x1 for the four rows at w: two pixels share each
 * weight load (without SIMD, loads and pointer steps cost as much as the multiply-adds). */
static void dot4x2_s8(const int8_t *x0, const int8_t *x1, const int8_t *w, int cols, uint32_t acc[8]) {
    const int8_t *w0 = w, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
    const int8_t *const end = x0 + cols;
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    uint32_t b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
    while (x0 + 2 <= end) {
        const int32_t v = x0[0], u = x0[1], y = x1[0], z = x1[1];
        int32_t p = w0[0], q = w0[1];
        a0 += (uint32_t)(p * v + q * u);
        b0 += (uint32_t)(p * y + q * z);
        p = w1[0], q = w1[1];
        a1 += (uint32_t)(p * v + q * u);
        b1 += (uint32_t)(p * y + q * z);
        p = w2[0], q = w2[1];
        a2 += (uint32_t)(p * v + q * u);
        b2 += (uint32_t)(p * y + q * z);
        p = w3[0], q = w3[1];
        a3 += (uint32_t)(p * v + q * u);
        b3 += (uint32_t)(p * y + q * z);
        x0 += 2, x1 += 2, w0 += 2, w1 += 2, w2 += 2, w3 += 2;
    }
    if (x0 < end) {
        const int32_t v = x0[0], y = x1[0];
        a0 += (uint32_t)(w0[0] * v), b0 += (uint32_t)(w0[0] * y);
        a1 += (uint32_t)(w1[0] * v), b1 += (uint32_t)(w1[0] * y);
        a2 += (uint32_t)(w2[0] * v), b2 += (uint32_t)(w2[0] * y);
        a3 += (uint32_t)(w3[0] * v), b3 += (uint32_t)(w3[0] * y);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
}

void mn_generic_matvec2_s8(const int8_t *x0, const int8_t *x1, const int8_t *w, const int32_t *folded, int cols,
    int rows, const mn_generic_requant_t *rq, int8_t *out0, int8_t *out1) {
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        uint32_t acc[8];
        for (int k = 0; k < 4; ++k) {
            acc[k] = acc[4 + k] = (uint32_t)folded[o + k];
        }
        dot4x2_s8(x0, x1, w + (size_t)o * cols, cols, acc);
        for (int k = 0; k < 4; ++k) {
            out0[o + k] = mn_generic_out(rq, o + k, acc[k]);
            out1[o + k] = mn_generic_out(rq, o + k, acc[4 + k]);
        }
    }
    for (; o < rows; ++o) {
        const int8_t *wo = w + (size_t)o * cols;
        out0[o] = mn_generic_out(rq, o, (uint32_t)folded[o] + (uint32_t)mn_generic_dot_s8(x0, wo, cols));
        out1[o] = mn_generic_out(rq, o, (uint32_t)folded[o] + (uint32_t)mn_generic_dot_s8(x1, wo, cols));
    }
}

/* Variant lists: an op's list is empty (NULL) when the firmware does not link that op; in each,
 * the variants the firmware links (MICRONN_VARIANTS; the host's variant query uses these lists).
 * With the dsp backend compiled in (it is tried first), the int8 variants whose every case a dsp
 * variant also accepts could never be selected: they are left out, so the link drops them
 * (dsp.conv_s8 takes every ungrouped convolution, dsp's depthwise list every depthwise one,
 * dsp.fc_s8 every fully connected one, all with the same INT32_MIN multiplier check). */
#if defined(MICRONN_KERNELS_DSP) && MICRONN_KERNELS_DSP
#define BEHIND_DSP 1
#else
#define BEHIND_DSP 0
#endif
/* Likewise the lists of the type families the firmware is not built for (mn_config.h). */
#if MICRONN_OP_CONV_2D && MICRONN_TYPE_INT8
#if BEHIND_DSP
static const mn_conv_s8_variant_t *const conv_s8[] = { MN_VARIANT_ENTRY(generic, conv_s8) NULL };   /* grouped */
#else
static const mn_conv_s8_variant_t *const conv_s8[] = { MN_VARIANT_ENTRY(generic, conv_s8_1x1) MN_VARIANT_ENTRY(generic, conv_s8) NULL };
#endif
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif
#if MICRONN_OP_CONV_2D && MICRONN_TYPE_FLOAT32
static const mn_conv_f32_variant_t *const conv_f32[] = { MN_VARIANT_ENTRY(generic, conv_f32_1x1) MN_VARIANT_ENTRY(generic, conv_f32) NULL };
#define CONV_F32 conv_f32
#else
#define CONV_F32 NULL
#endif
#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8 && !BEHIND_DSP
static const mn_conv_s8_variant_t *const depthwise_s8[] = { MN_VARIANT_ENTRY(generic, depthwise_s8) NULL };
#define DEPTHWISE_S8 depthwise_s8
#else
#define DEPTHWISE_S8 NULL
#endif
#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_FLOAT32
static const mn_conv_f32_variant_t *const depthwise_f32[] = { MN_VARIANT_ENTRY(generic, depthwise_f32) NULL };
#define DEPTHWISE_F32 depthwise_f32
#else
#define DEPTHWISE_F32 NULL
#endif
#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_INT8 && !BEHIND_DSP
static const mn_fc_s8_variant_t *const fc_s8[] = { MN_VARIANT_ENTRY(generic, fc_s8) NULL };
#define FC_S8 fc_s8
#else
#define FC_S8 NULL
#endif
#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_FLOAT32
static const mn_fc_f32_variant_t *const fc_f32[] = { MN_VARIANT_ENTRY(generic, fc_f32) NULL };
#define FC_F32 fc_f32
#else
#define FC_F32 NULL
#endif
#if MICRONN_OP_SVDF
static const mn_svdf_s8_variant_t *const svdf_s8[] = { MN_VARIANT_ENTRY(generic, svdf_s8) NULL };
#define SVDF_S8 svdf_s8
#else
#define SVDF_S8 NULL
#endif

#if MICRONN_OP_QUANTIZE
static const mn_requant_variant_t *const requant[] = {
    MN_VARIANT_ENTRY(generic, requant_s16_s8) MN_VARIANT_ENTRY(generic, requant_s8_s8)
    MN_VARIANT_ENTRY(generic, requant_s16_s16) NULL,
};
#define REQUANT requant
#else
#define REQUANT NULL
#endif

/* int8 ADD / SUB / MUL (elementwise_s8.c): behind dsp, whose variants fit the same nodes, none */
#if (MICRONN_OP_ADD || MICRONN_OP_SUB) && MICRONN_TYPE_INT8 && !BEHIND_DSP
static const mn_add_s8_variant_t *const add_s8[] = { MN_VARIANT_ENTRY(generic, add_s8) NULL };
#define ADD_S8 add_s8
#else
#define ADD_S8 NULL
#endif

#if MICRONN_OP_MUL && MICRONN_TYPE_INT8 && !BEHIND_DSP
static const mn_mul_s8_variant_t *const mul_s8[] = { MN_VARIANT_ENTRY(generic, mul_s8) NULL };
#define MUL_S8 mul_s8
#else
#define MUL_S8 NULL
#endif

const mn_backend_t mn_backend_generic = {
    .name = "generic",
    .conv_s8 = CONV_S8,
    .depthwise_s8 = DEPTHWISE_S8,
    .conv_f32 = CONV_F32,
    .depthwise_f32 = DEPTHWISE_F32,
    .fc_s8 = FC_S8,
    .fc_f32 = FC_F32,
    .svdf_s8 = SVDF_S8,
    .requant = REQUANT,
    .add_s8 = ADD_S8,
    .mul_s8 = MUL_S8,
};
