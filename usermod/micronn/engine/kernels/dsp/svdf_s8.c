/*
 * SVDF int8 (int16 state) on Armv7E-M. Per batch, four filters per pass (then two, then one):
 *   feature matmul (dsp_dot_4rows): each input word split once into its even and odd int16 pairs
 *   with the input offset added (SXTAB16), met by the four filters' weight words (SXTB16 +
 *   SMLAD); nothing is kept per filter;
 *   state shift + time weights fused per filter: with an even memory, the shifted memory's word j
 *   is the old memory's halfwords 2j+1, 2j+2 (one unaligned load), stored back in place and fed
 *   to SMLAD with the time weights; the last word takes the new activation. The shift of the
 *   whole buffer is the same as per filter (the value crossing a boundary is overwritten).
 * 16 filters per pass, their sums on the stack: then the units they complete (bias, rank
 * reduction, requantization), so nothing is kept per filter or unit in the arena (no scratch).
 * All sums wrap modulo 2^32 (SMLAD), like the reference's int32 accumulators.
 */
#include "dsp.h"

#if MICRONN_OP_SVDF

static inline void st32(void *p, uint32_t v) {
    memcpy(p, &v, 4);
}

/* Shift one filter's memory s (nm even) by one, the new activation last, and return its dot
 * product with the time weights wt. */
static inline int32_t shift_dot(int16_t *s, const int16_t *wt, int nm, int16_t newest) {
    int32_t acc = 0;
    int j = 0;
    for (; j + 2 < nm; j += 2) {
        const int32_t n = dsp_ld32(s + j + 1);
        st32(s + j, (uint32_t)n);
        acc = __smlad(dsp_ld32(wt + j), n, acc);
    }
    const int32_t n = (int32_t)((uint16_t)s[j + 1] | ((uint32_t)(uint16_t)newest << 16));
    st32(s + j, (uint32_t)n);
    return __smlad(dsp_ld32(wt + j), n, acc);
}

static void svdf_run(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature, const int16_t *w_time,
    const int32_t *bias, int16_t *state, int8_t *output, const mn_vbuf_t *buf) {
    (void)buf;
    const int nb = p->batches, ni = p->input_size, nf = p->filters, nu = p->units, nm = p->memory;
    const int32_t off = -p->input_zp;
    const int32_t mult1 = p->mult1, mult2 = p->mult2, out_zp = p->output_zp;
    const int shift1 = p->shift1, shift2 = p->shift2;
    for (int b = 0; b < nb; ++b) {
        const int8_t *in = input + (size_t)b * ni;
        int16_t *s = state + (size_t)b * nf * nm;
        int8_t *out = output + (size_t)b * nu;
        mn_svdf_units_t us = { 0, 0, 0 };
        for (int f0 = 0; f0 < nf; f0 += MN_SVDF_BLOCK) {
            const int n = nf - f0 < MN_SVDF_BLOCK ? nf - f0 : MN_SVDF_BLOCK;
            int32_t t[MN_SVDF_BLOCK];
            for (int k = 0, rows; k < n; k += rows) {
                /* four rows, then two, then one (the spare accumulators repeat a row) */
                rows = n - k >= 4 ? 4 : n - k >= 2 ? 2 : 1;
                const int f = f0 + k;
                const int8_t *w = w_feature + (size_t)f * ni;
                int32_t acc[4] = { 0, 0, 0, 0 };
                dsp_dot_4rows(in, w, rows == 4 ? w + 2 * ni : w, rows > 1 ? ni : 0, ni, off, acc);
                for (int r = 0; r < rows; ++r) {
                    const int32_t v = dsp_requant(acc[r], mult1, shift1);
                    const int16_t a = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
                    t[k + r] = shift_dot(s + (size_t)(f + r) * nm, w_time + (size_t)(f + r) * nm, nm, a);
                }
            }
            if (p->rank == 1) {   /* units are filters */
                for (int k = 0; k < n; ++k) {
                    const uint32_t sum = (uint32_t)t[k] + (bias ? (uint32_t)bias[f0 + k] : 0u);
                    out[f0 + k] = dsp_out((int32_t)sum, mult2, shift2, out_zp, INT8_MIN, INT8_MAX);
                }
            } else {
                mn_svdf_s8_units(p, bias, t, n, out, &us);
            }
        }
    }
}

const mn_svdf_s8_variant_t mn_dsp_svdf_s8 = {
    "dsp.svdf_s8", mn_dsp_svdf_s8_fits, NULL, NULL, svdf_run,
};

#endif /* MICRONN_OP_SVDF */
