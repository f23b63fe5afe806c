/* The portable backend: its variant lists and shared helpers (generic.h). */
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

void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded) {
    for (int o = 0; o < rows; ++o) {
        uint32_t sum = 0;
        for (int c = 0; c < cols; ++c) {
            sum += (uint32_t)w[(size_t)o * cols + c];
        }
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
