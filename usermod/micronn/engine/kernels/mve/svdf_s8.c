/*
 * Helium int8 SVDF (int16 state), the reference's steps vectorised:
 *   state shift: one forward pass of 8-lane copies (each load reads ahead of the stores);
 *   then 16 filters per pass (their sums on the stack, nothing in the arena): the feature matmul
 *   over the input (mn_mve_dot4), the input zero point folded into a per-filter constant (-zp *
 *   sum of the filter's weights, prepare), requantized four at a time and scattered into the
 *   newest memory slot of each filter; their time weights by VMLADAV over int16 (wrapping 32-bit
 *   sums, as the reference); the units they complete requantized (rank 1: four at a time).
 */
#include "mve.h"

#if MICRONN_OP_SVDF

static size_t svdf_data_bytes(const mn_svdf_params_t *p) {
    return sizeof(int32_t) * (size_t)p->filters;
}

static void svdf_precompute(const mn_svdf_params_t *p, const int8_t *w_feature, void *data) {
    mn_mve_fold_offset(p->filters, p->input_size, -p->input_zp, w_feature, NULL, (int32_t *)data);
}

static inline __attribute__((always_inline)) int32_t dot_s16(const int16_t *a, const int16_t *b, int n) {
    int32_t acc = 0;
    for (int i = 0; i < n; i += 8) {
        const mve_pred16_t pr = vctp16q((uint32_t)(n - i));
        acc = vmladavaq_s16(acc, vldrhq_z_s16(a + i, pr), vldrhq_z_s16(b + i, pr));
    }
    return acc;
}

static void svdf_run(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature, const int16_t *w_time,
    const int32_t *bias, int16_t *state, int8_t *output, const mn_vbuf_t *buf) {
    const int nb = p->batches, ni = p->input_size, nf = p->filters, nu = p->units, nm = p->memory;
    const int32_t *const folded = (const int32_t *)buf->data;
    const int32_t mult1 = p->mult1, shift1 = p->shift1, mult2 = p->mult2, shift2 = p->shift2, out_zp = p->output_zp;

    const int total = nb * nf * nm;
    for (int i = 0; i + 1 < total; i += 8) {
        const mve_pred16_t pr = vctp16q((uint32_t)(total - 1 - i));
        vstrhq_p_s16(state + i, vldrhq_z_s16(state + i + 1, pr), pr);
    }

    const uint32x4_t slots = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)nm);   /* one filter's memory apart */
    for (int b = 0; b < nb; ++b) {
        const int8_t *in = input + (size_t)b * ni;
        const int16_t *s = state + (size_t)b * nf * nm;
        int16_t *newest = state + (size_t)b * nf * nm + (nm - 1);
        int8_t *out = output + (size_t)b * nu;
        mn_svdf_units_t us = { 0, 0, 0 };
        for (int f0 = 0; f0 < nf; f0 += MN_SVDF_BLOCK) {
            const int n = nf - f0 < MN_SVDF_BLOCK ? nf - f0 : MN_SVDF_BLOCK;
            int32_t t[MN_SVDF_BLOCK];
            int f = f0;
            for (; f + 4 <= f0 + n; f += 4) {
                int32_t a[4] = { 0, 0, 0, 0 };
                mn_mve_dot4(in, w_feature + (size_t)f * ni, ni, a);
                const int32x4_t acc = vaddq_s32(vldrwq_s32(a), vldrwq_s32(folded + f));
                const int32x4_t v = mn_mve_requant(acc, vdupq_n_s32(mult1), vdupq_n_s32(shift1), 0, INT16_MIN, INT16_MAX);
                vstrhq_scatter_shifted_offset_s32(newest + (size_t)f * nm, slots, v);
            }
            for (; f < f0 + n; ++f) {
                const int32_t acc = mn_add_wrap(folded[f], mn_mve_dot(in, w_feature + (size_t)f * ni, ni));
                newest[(size_t)f * nm] = (int16_t)mn_clamp_i32(mn_mul_by_qm(acc, mult1, shift1), INT16_MIN, INT16_MAX);
            }
            if (nm == 8) {   /* one full vector per filter (a common memory size) */
                for (int k = 0; k < n; ++k) {
                    t[k] = vmladavq_s16(vldrhq_s16(w_time + (size_t)(f0 + k) * 8), vldrhq_s16(s + (size_t)(f0 + k) * 8));
                }
            } else {
                for (int k = 0; k < n; ++k) {
                    t[k] = dot_s16(w_time + (size_t)(f0 + k) * nm, s + (size_t)(f0 + k) * nm, nm);
                }
            }
            if (p->rank == 1) {   /* units are filters: bias, requantization and the int8 store four at a time */
                for (int k = 0; k < n; k += 4) {
                    const mve_pred16_t pr = vctp32q((uint32_t)(n - k));
                    int32x4_t acc = vldrwq_z_s32(t + k, pr);
                    if (bias) {
                        acc = vaddq_s32(acc, vldrwq_z_s32(bias + f0 + k, pr));
                    }
                    vstrbq_p_s32(out + f0 + k, mn_mve_requant(acc, vdupq_n_s32(mult2), vdupq_n_s32(shift2), out_zp,
                        INT8_MIN, INT8_MAX), pr);
                }
            } else {
                mn_svdf_s8_units(p, bias, t, n, out, &us);
            }
        }
    }
}

const mn_svdf_s8_variant_t mn_mve_svdf_s8 = {
    "mve.svdf_s8", mn_mve_svdf_s8_fits, svdf_data_bytes, svdf_precompute, svdf_run,
};

#endif /* MICRONN_OP_SVDF */
