/*
 * Portable int8 SVDF: the reference's steps with the input offset folded into a per-filter
 * constant at prepare (sum_c w[c] * (x[c] - zp) = sum_c w[c] * x[c] - zp * sum_c w[c], exact in
 * wrapping 32-bit arithmetic) and unrolled dot products for the feature and time matmuls.
 */
#include "generic.h"

#if MICRONN_OP_SVDF

static bool svdf_fits(const mn_svdf_params_t *p) {
    (void)p;
    return true;
}

static size_t svdf_data_bytes(const mn_svdf_params_t *p) {
    return sizeof(int32_t) * (size_t)p->filters;
}

static void svdf_precompute(const mn_svdf_params_t *p, const int8_t *w_feature, void *data) {
    mn_generic_fold_offset(p->filters, p->input_size, -p->input_zp, w_feature, NULL, (int32_t *)data);
}

static void svdf_run(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature,
    const int16_t *w_time, const int32_t *bias, int16_t *state, int32_t *scratch, int32_t *scratch_out,
    int8_t *output, const mn_vbuf_t *buf) {
    const int nb = p->batches, ni = p->input_size, nf = p->filters, nm = p->memory;
    const int32_t *const folded = (const int32_t *)buf->data;
    const int32_t mult1 = p->mult1;
    const int shift1 = p->shift1;
    mn_svdf_shift_state_s16(state, (size_t)nb * nf * nm);
    for (int b = 0; b < nb; ++b) {
        /* scratch holds the feature sums until the time weights overwrite it below */
        uint32_t *acc = (uint32_t *)scratch;
        mn_generic_matvec_acc(input + (size_t)b * ni, w_feature, folded, ni, nf, acc);
        int16_t *newest = state + (size_t)b * nf * nm + (nm - 1);
        for (int f = 0; f < nf; ++f) {
            const int32_t v = mn_mul_by_qm((int32_t)acc[f], mult1, shift1);
            newest[(size_t)f * nm] = (int16_t)mn_clamp_i32(v, INT16_MIN, INT16_MAX);
        }
    }
    for (int b = 0; b < nb; ++b) {
        const int16_t *s = state + (size_t)b * nf * nm;
        for (int f = 0; f < nf; ++f) {
            scratch[(size_t)b * nf + f] = mn_generic_dot_s16(w_time + (size_t)f * nm, s + (size_t)f * nm, nm);
        }
    }
    mn_svdf_s8_output(p, bias, scratch, scratch_out, output);
}

const mn_svdf_s8_variant_t mn_generic_svdf_s8 = {
    "generic.svdf_s8", svdf_fits, svdf_data_bytes, svdf_precompute, svdf_run,
};

#endif /* MICRONN_OP_SVDF */
