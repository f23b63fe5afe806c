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
