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
static int32_t sum_s8(const int8_t *p, int n) {
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

void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded) {
    for (int o = 0; o < rows; ++o) {
        const uint32_t sum = (uint32_t)sum_s8(w + (size_t)o * cols, cols);
        folded[o] = (int32_t)((bias ? (uint32_t)bias[o] : 0u) + sum * (uint32_t)offset);
    }
}

void mn_generic_matvec_s8(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_generic_requant_t *rq, int8_t *out) {
    const int32_t out_off = rq->out_off, act_min = rq->act_min, act_max = rq->act_max;
    for (int o = 0; o < rows; ++o) {
        const int32_t acc = (int32_t)((uint32_t)folded[o] + (uint32_t)mn_generic_dot_s8(x, w + (size_t)o * cols, cols));
        int32_t v = mn_mul_by_qm(acc, rq->mult[o], rq->shift[o]);
        v = mn_add_wrap(v, out_off);
        out[o] = (int8_t)mn_clamp_i32(v, act_min, act_max);
    }
}

#if MICRONN_OP_CONV_2D
static const mn_conv_s8_variant_t *const conv_s8[] = {
    &mn_generic_conv_s8_1x1,
    NULL,
};
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif

const mn_backend_t mn_backend_generic = {
    .name = "generic",
    .conv_s8 = CONV_S8,
};
