/* Helium float32 fully connected: four units per pass over each input row (mn_mve_gemm_f32). */
#include "mve.h"

#if MICRONN_OP_FULLY_CONNECTED && MICRONN_TYPE_FLOAT32 && (__ARM_FEATURE_MVE & 2)

static void fc_run(const mn_fc_params_t *p, float act_min, float act_max, const float *input,
    const float *weights, const float *bias, float *output) {
    mn_mve_gemm_f32(input, (size_t)p->depth, p->batches, weights, p->depth, p->units, bias, act_min, act_max, output);
}

const mn_fc_f32_variant_t mn_mve_fc_f32 = {
    "mve.fc_f32", mn_mve_fc_f32_fits, fc_run,
};

#endif /* MICRONN_OP_FULLY_CONNECTED && MVE float */
