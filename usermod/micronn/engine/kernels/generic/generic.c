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

/* Sum of n int8 values, four per step: bytes biased to unsigned (x ^ 0x80) are added in two 16-bit
 * lanes (at most 2 * 255 per step, so 128 steps fit a lane), the bias removed at the end. This is
 * prepare-time work over every weight, so it is worth the few lines. */
int32_t mn_generic_sum_s8(const int8_t *p, int n) {
    uint32_t total = 0;
    int i = 0;
    while (i + 4 <= n) {
        uint32_t lanes = 0;
        const int end = n - i >= 512 ? i + 512 : n - 3;
        for (; i < end; i += 4) {
            uint32_t x;
            memcpy(&x, p + i, 4);
            x ^= 0x80808080u;
            lanes += (x & 0x00ff00ffu) + ((x >> 8) & 0x00ff00ffu);
        }
        total += (lanes & 0xffffu) + (lanes >> 16);
    }
    total -= 128u * (uint32_t)(i & ~3);
    for (; i < n; ++i) {
        total += (uint32_t)p[i];
    }
    return (int32_t)total;
}

bool mn_generic_mults_ok(const int32_t *mult, int n) {
    for (int i = 0; i < n; ++i) {
        if (mult[i] == INT32_MIN) {
            return false;
        }
    }
    return true;
}

void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded) {
    for (int o = 0; o < rows; ++o) {
        const uint32_t sum = (uint32_t)mn_generic_sum_s8(w + (size_t)o * cols, cols);
        folded[o] = (int32_t)((bias ? (uint32_t)bias[o] : 0u) + sum * (uint32_t)offset);
    }
}

void mn_generic_dot4_s8(const int8_t *x, const int8_t *w, int cols, uint32_t acc[4]) {
    const int8_t *w0 = w, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
    const int8_t *const end = x + cols;
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    /* Pointer walks, two columns per step: without SIMD the loads and the loop bookkeeping are
     * what costs (GCC indexes every row from the counter otherwise). */
    while (x + 2 <= end) {
        const int32_t v = x[0], u = x[1];
        a0 += (uint32_t)(w0[0] * v + w0[1] * u);
        a1 += (uint32_t)(w1[0] * v + w1[1] * u);
        a2 += (uint32_t)(w2[0] * v + w2[1] * u);
        a3 += (uint32_t)(w3[0] * v + w3[1] * u);
        x += 2, w0 += 2, w1 += 2, w2 += 2, w3 += 2;
    }
    if (x < end) {
        const int32_t v = x[0];
        a0 += (uint32_t)(w0[0] * v);
        a1 += (uint32_t)(w1[0] * v);
        a2 += (uint32_t)(w2[0] * v);
        a3 += (uint32_t)(w3[0] * v);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

void mn_generic_matvec_acc(const int8_t *x, const int8_t *w, const int32_t *init, int cols, int rows, uint32_t *acc) {
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        for (int k = 0; k < 4; ++k) {
            acc[o + k] = init ? (uint32_t)init[o + k] : 0u;
        }
        mn_generic_dot4_s8(x, w + (size_t)o * cols, cols, acc + o);
    }
    for (; o < rows; ++o) {
        acc[o] = (init ? (uint32_t)init[o] : 0u) + (uint32_t)mn_generic_dot_s8(x, w + (size_t)o * cols, cols);
    }
}

void mn_generic_matvec_s8(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_generic_requant_t *rq, int8_t *out) {
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        uint32_t acc[4] = { (uint32_t)folded[o], (uint32_t)folded[o + 1], (uint32_t)folded[o + 2],
                            (uint32_t)folded[o + 3] };
        mn_generic_dot4_s8(x, w + (size_t)o * cols, cols, acc);
        for (int k = 0; k < 4; ++k) {
            out[o + k] = mn_generic_out(rq, o + k, acc[k]);
        }
    }
    for (; o < rows; ++o) {
        const uint32_t acc = (uint32_t)folded[o] + (uint32_t)mn_generic_dot_s8(x, w + (size_t)o * cols, cols);
        out[o] = mn_generic_out(rq, o, acc);
    }
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

/* Variant lists: an op's list is empty (NULL) when the firmware does not link that op. */
#if MICRONN_OP_CONV_2D
static const mn_conv_s8_variant_t *const conv_s8[] = { &mn_generic_conv_s8_1x1, &mn_generic_conv_s8, NULL };
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif
#if MICRONN_OP_DEPTHWISE_CONV_2D
static const mn_conv_s8_variant_t *const depthwise_s8[] = { &mn_generic_depthwise_s8, NULL };
#define DEPTHWISE_S8 depthwise_s8
#else
#define DEPTHWISE_S8 NULL
#endif
#if MICRONN_OP_FULLY_CONNECTED
static const mn_fc_s8_variant_t *const fc_s8[] = { &mn_generic_fc_s8, NULL };
#define FC_S8 fc_s8
#else
#define FC_S8 NULL
#endif
#if MICRONN_OP_SVDF
static const mn_svdf_s8_variant_t *const svdf_s8[] = { &mn_generic_svdf_s8, NULL };
#define SVDF_S8 svdf_s8
#else
#define SVDF_S8 NULL
#endif

const mn_backend_t mn_backend_generic = {
    .name = "generic",
    .conv_s8 = CONV_S8,
    .depthwise_s8 = DEPTHWISE_S8,
    .fc_s8 = FC_S8,
    .svdf_s8 = SVDF_S8,
};
