/* Kernel variant selection over the backends compiled in (mn_variants.h). */
#include "../micronn.h"
#include "mn_variants.h"


/* Most specific instruction set first; NULL-terminated (and never empty). */
static const mn_backend_t *const backend_list[] = {
#if MICRONN_KERNELS_MVE
    &mn_backend_mve,
#endif
#if MICRONN_KERNELS_DSP
    &mn_backend_dsp,
#endif
#if MICRONN_KERNELS_GENERIC
    &mn_backend_generic,
#endif
    NULL,
};

const mn_backend_t *const *mn_backends(int *n) {
    *n = 0;
    while (backend_list[*n]) {
        ++*n;
    }
    return backend_list;
}

const char *mn_kernel_backend(size_t i) {
    int n;
    mn_backends(&n);
    return i < (size_t)n ? backend_list[i]->name : NULL;
}

/* First variant of list FIELD (element type TYPE), over all backends, whose fits FITS_ARGS holds. */
#define MN_SELECT(TYPE, FIELD, FITS_ARGS) \
    for (const mn_backend_t *const *b_ = ctx && ctx->variants ? ctx->variants : backend_list; *b_; ++b_) { \
        for (const TYPE *const *v_ = (*b_)->FIELD; v_ && *v_; ++v_) { \
            if ((*v_)->fits FITS_ARGS) { \
                return *v_; \
            } \
        } \
    } \
    return NULL

const mn_conv_s8_variant_t *mn_select_conv_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    MN_SELECT(mn_conv_s8_variant_t, conv_s8, (g, q));
}

const mn_conv_s8_variant_t *mn_select_depthwise_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    MN_SELECT(mn_conv_s8_variant_t, depthwise_s8, (g, q));
}

const mn_conv_f32_variant_t *mn_select_conv_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g) {
    MN_SELECT(mn_conv_f32_variant_t, conv_f32, (g));
}

const mn_conv_f32_variant_t *mn_select_depthwise_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g) {
    MN_SELECT(mn_conv_f32_variant_t, depthwise_f32, (g));
}

const mn_fc_s8_variant_t *mn_select_fc_s8(const mn_ctx_t *ctx, const mn_fc_params_t *p) {
    MN_SELECT(mn_fc_s8_variant_t, fc_s8, (p));
}

const mn_fc_f32_variant_t *mn_select_fc_f32(const mn_ctx_t *ctx, const mn_fc_params_t *p) {
    MN_SELECT(mn_fc_f32_variant_t, fc_f32, (p));
}

const mn_add_s8_variant_t *mn_select_add_s8(const mn_ctx_t *ctx, const mn_add_quant_t *p, const mn_bcast_t *b) {
    MN_SELECT(mn_add_s8_variant_t, add_s8, (p, b));
}

const mn_pool_s8_variant_t *mn_select_avgpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g) {
    MN_SELECT(mn_pool_s8_variant_t, avgpool_s8, (g));
}

const mn_pool_s8_variant_t *mn_select_maxpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g) {
    MN_SELECT(mn_pool_s8_variant_t, maxpool_s8, (g));
}

const mn_softmax_s8_variant_t *mn_select_softmax_s8(const mn_ctx_t *ctx, const mn_softmax_q_t *p, int outer, int depth) {
    MN_SELECT(mn_softmax_s8_variant_t, softmax_s8, (p, outer, depth));
}

const mn_svdf_s8_variant_t *mn_select_svdf_s8(const mn_ctx_t *ctx, const mn_svdf_params_t *p) {
    MN_SELECT(mn_svdf_s8_variant_t, svdf_s8, (p));
}

const mn_requant_variant_t *mn_select_requant(const mn_ctx_t *ctx, int in_dtype, int out_dtype, const mn_requant_t *r) {
    MN_SELECT(mn_requant_variant_t, requant, (in_dtype, out_dtype, r));
}
