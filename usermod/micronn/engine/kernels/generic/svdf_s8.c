/*
 * Portable int8 SVDF: the reference's steps with the input offset added to each input as it is
 * loaded, 16 filters per pass with their sums on the stack (no arena scratch: nothing kept per
 * filter or unit), unrolled dot products for the feature and time matmuls, the state shift fused
 * into the time matmul and the cheaper exact requantization (mn_generic_requant).
 */
#include "generic.h"

#if MICRONN_OP_SVDF

static bool svdf_fits(const mn_svdf_params_t *p) {
    return p->mult1 != INT32_MIN && p->mult2 != INT32_MIN;   /* mn_generic_requant exact */
}

/* Shifts one filter's memory s[0..nm) left by one, stores the newest value and returns the time-
 * weighted sum, in one pass: shifting each filter's memory is what the reference's whole-buffer
 * shift amounts to, since the value crossing into a filter's last slot is overwritten by the
 * newest one. Four slots per step; the last group of one to four slots ends with the newest value
 * (memory sizes are usually multiples of four, so that group is one more full step). */
static uint32_t svdf_shift_dot(int16_t *s, const int16_t *wt, int nm, int32_t newest) {
    uint32_t a0 = 0, a1 = 0;
    int16_t *const end = s + ((nm - 1) & ~3);
    while (s < end) {
        const int32_t v0 = s[1], v1 = s[2], v2 = s[3], v3 = s[4];
        s[0] = (int16_t)v0, s[1] = (int16_t)v1, s[2] = (int16_t)v2, s[3] = (int16_t)v3;
        a0 += (uint32_t)(wt[0] * v0) + (uint32_t)(wt[2] * v2);
        a1 += (uint32_t)(wt[1] * v1) + (uint32_t)(wt[3] * v3);
        s += 4, wt += 4;
    }
    if ((nm & 3) == 0) {
        const int32_t v0 = s[1], v1 = s[2], v2 = s[3];
        s[0] = (int16_t)v0, s[1] = (int16_t)v1, s[2] = (int16_t)v2, s[3] = (int16_t)newest;
        a0 += (uint32_t)(wt[0] * v0) + (uint32_t)(wt[2] * v2);
        a1 += (uint32_t)(wt[1] * v1) + (uint32_t)(wt[3] * newest);
        return a0 + a1;
    }
    for (int k = (nm - 1) & 3; k > 0; --k) {
        const int32_t v0 = s[1];
        *s++ = (int16_t)v0;
        a0 += (uint32_t)(*wt++ * v0);
    }
    *s = (int16_t)newest;
    return a0 + a1 + (uint32_t)(wt[0] * newest);
}

/* Per batch row, MN_SVDF_BLOCK filters per pass: their feature sums, then per filter the state shift
 * and time-weighted sum, then the units they complete (bias, rank reduction, rescale; no fused
 * activation on this path, as the reference): nothing is kept per filter or unit in the arena. */
static void svdf_run(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature,
    const int16_t *w_time, const int32_t *bias, int16_t *state, int8_t *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int nb = p->batches, ni = p->input_size, nf = p->filters, nm = p->memory;
    const int32_t mult1 = p->mult1, mult2 = p->mult2, out_zp = p->output_zp;
    const int shift1 = p->shift1, shift2 = p->shift2;
    for (int b = 0; b < nb; ++b) {
        const int8_t *in = input + (size_t)b * ni;
        int16_t *s = state + (size_t)b * nf * nm;
        int8_t *out = output + (size_t)b * p->units;
        mn_svdf_units_t us = { 0, 0, 0 };
        for (int f0 = 0; f0 < nf; f0 += MN_SVDF_BLOCK) {
            const int n = nf - f0 < MN_SVDF_BLOCK ? nf - f0 : MN_SVDF_BLOCK;
            uint32_t acc[MN_SVDF_BLOCK];
            mn_generic_matvec_acc(in, w_feature + (size_t)f0 * ni, NULL, -p->input_zp, ni, n, acc);
            for (int k = 0; k < n; ++k) {
                const int f = f0 + k;
                const int32_t v = mn_clamp_i32(mn_generic_requant((int32_t)acc[k], mult1, shift1), INT16_MIN, INT16_MAX);
                acc[k] = svdf_shift_dot(s + (size_t)f * nm, w_time + (size_t)f * nm, nm, v);
            }
            if (p->rank == 1) {   /* units are filters */
                for (int k = 0; k < n; ++k) {
                    const uint32_t sum = acc[k] + (bias ? (uint32_t)bias[f0 + k] : 0u);
                    const int32_t y = mn_add_wrap(mn_generic_requant((int32_t)sum, mult2, shift2), out_zp);
                    out[f0 + k] = (int8_t)mn_clamp_i32(y, INT8_MIN, INT8_MAX);
                }
            } else {
                mn_svdf_s8_units(p, bias, (const int32_t *)acc, n, out, &us);
            }
        }
    }
}

const mn_svdf_s8_variant_t mn_generic_svdf_s8 = {
    "generic.svdf_s8", svdf_fits, NULL, NULL, svdf_run,
};

#endif /* MICRONN_OP_SVDF */
