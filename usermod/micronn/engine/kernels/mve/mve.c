/* The Helium backend: its variant lists and shared helpers (mve.h). */
#include "mve.h"

/* VMLADAVA accumulates 16 int8 products into a 32-bit scalar, wrapping like the reference. The
 * tail is loaded with zeroing predication, so its dead lanes add nothing. */
void mn_mve_dot4(const int8_t *x, const int8_t *w, int cols, int32_t acc[4]) {
    const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int c = 0;
    for (; c + 16 <= cols; c += 16) {
        const int8x16_t xv = vldrbq_s8(x + c);
        a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w0 + c));
        a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1 + c));
        a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2 + c));
        a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3 + c));
    }
    if (c < cols) {
        const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
        const int8x16_t xv = vldrbq_z_s8(x + c, p);
        a0 = vmladavaq_s8(a0, xv, vldrbq_z_s8(w0 + c, p));
        a1 = vmladavaq_s8(a1, xv, vldrbq_z_s8(w1 + c, p));
        a2 = vmladavaq_s8(a2, xv, vldrbq_z_s8(w2 + c, p));
        a3 = vmladavaq_s8(a3, xv, vldrbq_z_s8(w3 + c, p));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

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

void mn_mve_matvec(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_conv_quant_t *q, int8_t *out) {
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    int o = 0;
    for (; o + 4 <= rows; o += 4) {
        int32_t acc[4] = { folded[o], folded[o + 1], folded[o + 2], folded[o + 3] };
        mn_mve_dot4(x, w + (size_t)o * cols, cols, acc);
        const int32x4_t v = mn_mve_requant(vldrwq_s32(acc), vldrwq_s32(mult + o), vldrbq_s32(shift + o), out_off,
            act_min, act_max);
        vstrbq_s32(out + o, v);
    }
    for (; o < rows; ++o) {
        const int32_t acc = (int32_t)((uint32_t)folded[o] + (uint32_t)mn_mve_dot(x, w + (size_t)o * cols, cols));
        out[o] = (int8_t)mn_clamp_i32(mn_add_wrap(mn_mul_by_qm(acc, mult[o], shift[o]), out_off), act_min, act_max);
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

#if MICRONN_OP_CONV_2D
static const mn_conv_s8_variant_t *const conv_s8[] = {
    &mn_mve_conv_s8_1x1,
    &mn_mve_conv_s8_im2col,
    NULL,
};
#define CONV_S8 conv_s8
#else
#define CONV_S8 NULL
#endif

#if MICRONN_OP_DEPTHWISE_CONV_2D
static const mn_conv_s8_variant_t *const depthwise_s8[] = {
    &mn_mve_depthwise_s8_m1,
    &mn_mve_depthwise_s8_mult,
    NULL,
};
#define DEPTHWISE_S8 depthwise_s8
#else
#define DEPTHWISE_S8 NULL
#endif

#if MICRONN_OP_FULLY_CONNECTED
static const mn_fc_s8_variant_t *const fc_s8[] = {
    &mn_mve_fc_s8,
    NULL,
};
#define FC_S8 fc_s8
#else
#define FC_S8 NULL
#endif

const mn_backend_t mn_backend_mve = {
    .name = "mve",
    .conv_s8 = CONV_S8,
    .depthwise_s8 = DEPTHWISE_S8,
    .fc_s8 = FC_S8,
};
