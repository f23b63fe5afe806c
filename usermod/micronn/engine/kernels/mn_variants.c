/* Kernel variant selection over the backends compiled in (mn_variants.h). */
#include <string.h>

#include "../micronn.h"
#include "../mn_builtin.h"
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

bool mn_variant_mults_ok(const int32_t *mult, int n) {
    for (int i = 0; i < n; ++i) {
        if (mult[i] == INT32_MIN) {
            return false;
        }
    }
    return true;
}

#ifndef MICRONN_VARIANT_QUERY
#define MICRONN_VARIANT_QUERY 0
#endif

#if MICRONN_VARIANT_QUERY
#include "dsp/dsp_fits.h"
#include "mve/mve_fits.h"

/* The dsp and mve variants as the query sees them: name and fits() only (their compute code needs
 * the instruction set), from the same lists as the firmware's (<backend>_fits.h). */
#define Q_VARIANT(TYPE, b, v) static const TYPE qv_##b##_##v = { .name = #b "." #v, .fits = mn_##b##_##v##_fits };
#define Q_CONV_S8(b, v) Q_VARIANT(mn_conv_s8_variant_t, b, v)
#define Q_CONV_F32(b, v) Q_VARIANT(mn_conv_f32_variant_t, b, v)
#define Q_FC_S8(b, v) Q_VARIANT(mn_fc_s8_variant_t, b, v)
#define Q_FC_F32(b, v) Q_VARIANT(mn_fc_f32_variant_t, b, v)
#define Q_SVDF_S8(b, v) Q_VARIANT(mn_svdf_s8_variant_t, b, v)
#define Q_ADD_S8(b, v) Q_VARIANT(mn_add_s8_variant_t, b, v)
#define Q_MUL_S8(b, v) Q_VARIANT(mn_mul_s8_variant_t, b, v)
#define Q_REF(b, v) &qv_##b##_##v,

MN_DSP_CONV_S8(Q_CONV_S8)
MN_DSP_DEPTHWISE_S8(Q_CONV_S8)
MN_DSP_FC_S8(Q_FC_S8)
MN_DSP_SVDF_S8(Q_SVDF_S8)
MN_DSP_ADD_S8(Q_ADD_S8)
MN_DSP_MUL_S8(Q_MUL_S8)
static const mn_conv_s8_variant_t *const q_dsp_conv_s8[] = { MN_DSP_CONV_S8(Q_REF) NULL };
static const mn_conv_s8_variant_t *const q_dsp_depthwise_s8[] = { MN_DSP_DEPTHWISE_S8(Q_REF) NULL };
static const mn_fc_s8_variant_t *const q_dsp_fc_s8[] = { MN_DSP_FC_S8(Q_REF) NULL };
static const mn_svdf_s8_variant_t *const q_dsp_svdf_s8[] = { MN_DSP_SVDF_S8(Q_REF) NULL };
static const mn_add_s8_variant_t *const q_dsp_add_s8[] = { MN_DSP_ADD_S8(Q_REF) NULL };
static const mn_mul_s8_variant_t *const q_dsp_mul_s8[] = { MN_DSP_MUL_S8(Q_REF) NULL };
static const mn_backend_t q_backend_dsp = {
    .name = "dsp", .conv_s8 = q_dsp_conv_s8, .depthwise_s8 = q_dsp_depthwise_s8, .fc_s8 = q_dsp_fc_s8,
    .svdf_s8 = q_dsp_svdf_s8, .add_s8 = q_dsp_add_s8, .mul_s8 = q_dsp_mul_s8,
};

MN_MVE_CONV_S8(Q_CONV_S8)
MN_MVE_CONV_F32(Q_CONV_F32)
MN_MVE_DEPTHWISE_S8(Q_CONV_S8)
MN_MVE_DEPTHWISE_F32(Q_CONV_F32)
MN_MVE_FC_S8(Q_FC_S8)
MN_MVE_FC_F32(Q_FC_F32)
MN_MVE_SVDF_S8(Q_SVDF_S8)
MN_MVE_ADD_S8(Q_ADD_S8)
MN_MVE_MUL_S8(Q_MUL_S8)
static const mn_conv_s8_variant_t *const q_mve_conv_s8[] = { MN_MVE_CONV_S8(Q_REF) NULL };
static const mn_conv_f32_variant_t *const q_mve_conv_f32[] = { MN_MVE_CONV_F32(Q_REF) NULL };
static const mn_conv_s8_variant_t *const q_mve_depthwise_s8[] = { MN_MVE_DEPTHWISE_S8(Q_REF) NULL };
static const mn_conv_f32_variant_t *const q_mve_depthwise_f32[] = { MN_MVE_DEPTHWISE_F32(Q_REF) NULL };
static const mn_fc_s8_variant_t *const q_mve_fc_s8[] = { MN_MVE_FC_S8(Q_REF) NULL };
static const mn_fc_f32_variant_t *const q_mve_fc_f32[] = { MN_MVE_FC_F32(Q_REF) NULL };
static const mn_svdf_s8_variant_t *const q_mve_svdf_s8[] = { MN_MVE_SVDF_S8(Q_REF) NULL };
static const mn_add_s8_variant_t *const q_mve_add_s8[] = { MN_MVE_ADD_S8(Q_REF) NULL };
static const mn_mul_s8_variant_t *const q_mve_mul_s8[] = { MN_MVE_MUL_S8(Q_REF) NULL };
static const mn_backend_t q_backend_mve = {
    .name = "mve", .conv_s8 = q_mve_conv_s8, .depthwise_s8 = q_mve_depthwise_s8, .conv_f32 = q_mve_conv_f32,
    .depthwise_f32 = q_mve_depthwise_f32, .fc_s8 = q_mve_fc_s8, .fc_f32 = q_mve_fc_f32, .svdf_s8 = q_mve_svdf_s8,
    .add_s8 = q_mve_add_s8, .mul_s8 = q_mve_mul_s8,
};

#define Q_MAX_HITS 64
static struct {
    bool on;
    const mn_backend_t *list[4];
    const char *hit[Q_MAX_HITS];
    size_t n_hit;
} query;

int mn_variants_query_begin(const char *kernels) {
    size_t n = 0;
    memset(&query, 0, sizeof query);
    for (const char *p = kernels ? kernels : ""; *p;) {
        while (*p == ' ') {
            ++p;
        }
        size_t len = strcspn(p, " ");
        const mn_backend_t *b = NULL;
        if (len == 3 && strncmp(p, "dsp", 3) == 0) {
            b = &q_backend_dsp;
        } else if (len == 3 && strncmp(p, "mve", 3) == 0) {
            b = &q_backend_mve;
        } else if (len == 7 && strncmp(p, "generic", 7) == 0 && MICRONN_KERNELS_GENERIC) {
            b = &mn_backend_generic;   /* the one this host build compiles */
        } else if (len != 0 && !(len == 9 && strncmp(p, "reference", 9) == 0)) {
            return -1;
        }
        if (b && n < 3) {
            query.list[n++] = b;
        }
        p += len;
    }
    query.on = true;
    return 0;
}

const char *mn_variants_query_name(size_t i) {
    return i < query.n_hit ? query.hit[i] : NULL;
}

void mn_variants_query_end(void) {
    memset(&query, 0, sizeof query);
}

static bool query_active(const mn_ctx_t *ctx) {
    return query.on && !(ctx && ctx->variants) && !(ctx && mn_sizing_only(ctx));
}

static void query_record(const char *name) {
    for (size_t i = 0; i < query.n_hit; ++i) {
        if (strcmp(query.hit[i], name) == 0) {
            return;
        }
    }
    if (query.n_hit < Q_MAX_HITS) {
        query.hit[query.n_hit++] = name;
    }
}

static void query_record_ref(const char *name) {
    if (name) {
        query_record(name);
    }
}

/* In a query: record the first variant of the query's backends that fits (none: the selectable
 * reference function REF, when not NULL), and return NULL. */
#define MN_QUERY(TYPE, FIELD, FITS_ARGS, REF) \
    if (query_active(ctx)) { \
        for (const mn_backend_t *const *b_ = query.list; *b_; ++b_) { \
            for (const TYPE *const *v_ = (*b_)->FIELD; v_ && *v_; ++v_) { \
                if ((*v_)->fits FITS_ARGS) { \
                    query_record((*v_)->name); \
                    return NULL; \
                } \
            } \
        } \
        query_record_ref(REF); \
        return NULL; \
    }
#else
#define MN_QUERY(TYPE, FIELD, FITS_ARGS, REF)
#endif /* MICRONN_VARIANT_QUERY */

bool mn_variant_ref(const mn_ctx_t *ctx, const char *name, bool linked) {
#if MICRONN_VARIANT_QUERY
    if (query_active(ctx)) {
        query_record(name);
    }
#else
    (void)ctx;
    (void)name;
#endif
    return linked;
}

/* First variant of list FIELD (element type TYPE), over all backends, whose fits FITS_ARGS holds;
 * REF: the name of the selectable reference function (mn_variants.h), or NULL. */
#define MN_SELECT(TYPE, FIELD, FITS_ARGS, REF) \
    MN_QUERY(TYPE, FIELD, FITS_ARGS, REF) \
    for (const mn_backend_t *const *b_ = ctx && ctx->variants ? ctx->variants : backend_list; *b_; ++b_) { \
        for (const TYPE *const *v_ = (*b_)->FIELD; v_ && *v_; ++v_) { \
            if ((*v_)->fits FITS_ARGS) { \
                return *v_; \
            } \
        } \
    } \
    return NULL

const mn_conv_s8_variant_t *mn_select_conv_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    MN_SELECT(mn_conv_s8_variant_t, conv_s8, (g, q), "ref.conv_s8");
}

const mn_conv_s8_variant_t *mn_select_depthwise_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q) {
    MN_SELECT(mn_conv_s8_variant_t, depthwise_s8, (g, q), "ref.depthwise_s8");
}

const mn_conv_f32_variant_t *mn_select_conv_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g) {
    MN_SELECT(mn_conv_f32_variant_t, conv_f32, (g), NULL);
}

const mn_conv_f32_variant_t *mn_select_depthwise_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g) {
    MN_SELECT(mn_conv_f32_variant_t, depthwise_f32, (g), NULL);
}

const mn_fc_s8_variant_t *mn_select_fc_s8(const mn_ctx_t *ctx, const mn_fc_params_t *p) {
    MN_SELECT(mn_fc_s8_variant_t, fc_s8, (p), NULL);
}

const mn_fc_f32_variant_t *mn_select_fc_f32(const mn_ctx_t *ctx, const mn_fc_params_t *p) {
    MN_SELECT(mn_fc_f32_variant_t, fc_f32, (p), NULL);
}

const mn_add_s8_variant_t *mn_select_add_s8(const mn_ctx_t *ctx, const mn_add_quant_t *p, const mn_bcast_t *b) {
    MN_SELECT(mn_add_s8_variant_t, add_s8, (p, b), NULL);
}

const mn_mul_s8_variant_t *mn_select_mul_s8(const mn_ctx_t *ctx, const mn_mul_quant_t *p, const mn_bcast_t *b) {
    MN_SELECT(mn_mul_s8_variant_t, mul_s8, (p, b), NULL);
}

const mn_pool_s8_variant_t *mn_select_avgpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g) {
    MN_SELECT(mn_pool_s8_variant_t, avgpool_s8, (g), NULL);
}

const mn_pool_s8_variant_t *mn_select_maxpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g) {
    MN_SELECT(mn_pool_s8_variant_t, maxpool_s8, (g), NULL);
}

const mn_softmax_s8_variant_t *mn_select_softmax_s8(const mn_ctx_t *ctx, const mn_softmax_q_t *p, int outer, int depth) {
    MN_SELECT(mn_softmax_s8_variant_t, softmax_s8, (p, outer, depth), NULL);
}

const mn_svdf_s8_variant_t *mn_select_svdf_s8(const mn_ctx_t *ctx, const mn_svdf_params_t *p) {
    MN_SELECT(mn_svdf_s8_variant_t, svdf_s8, (p), NULL);
}

const mn_requant_variant_t *mn_select_requant(const mn_ctx_t *ctx, int in_dtype, int out_dtype, const mn_requant_t *r) {
    MN_SELECT(mn_requant_variant_t, requant, (in_dtype, out_dtype, r), NULL);
}

/* Position of v in list FIELD over the backends compiled in, as mn_node_t.variant (0: none; a
 * delegate picks from these backends too). */
#define MN_VARIANT_ID(TYPE, FIELD, v) \
    for (int b_ = 0; (v) && backend_list[b_]; ++b_) { \
        const TYPE *const *l_ = backend_list[b_]->FIELD; \
        for (int i_ = 0; l_ && l_[i_] && i_ < 32; ++i_) { \
            if (l_[i_] == (v)) { \
                return (uint8_t)(1 + 32 * b_ + i_); \
            } \
        } \
    } \
    return 0

#define MN_VARIANT_AT(FIELD, id) \
    return (id) ? backend_list[((id) - 1) / 32]->FIELD[((id) - 1) % 32] : NULL

uint8_t mn_variant_id_fc_s8(const mn_fc_s8_variant_t *v) {
    MN_VARIANT_ID(mn_fc_s8_variant_t, fc_s8, v);
}

uint8_t mn_variant_id_fc_f32(const mn_fc_f32_variant_t *v) {
    MN_VARIANT_ID(mn_fc_f32_variant_t, fc_f32, v);
}

uint8_t mn_variant_id_svdf_s8(const mn_svdf_s8_variant_t *v) {
    MN_VARIANT_ID(mn_svdf_s8_variant_t, svdf_s8, v);
}

uint8_t mn_variant_id_requant(const mn_requant_variant_t *v) {
    MN_VARIANT_ID(mn_requant_variant_t, requant, v);
}

uint8_t mn_variant_id_add_s8(const mn_add_s8_variant_t *v) {
    MN_VARIANT_ID(mn_add_s8_variant_t, add_s8, v);
}

uint8_t mn_variant_id_mul_s8(const mn_mul_s8_variant_t *v) {
    MN_VARIANT_ID(mn_mul_s8_variant_t, mul_s8, v);
}

const mn_fc_s8_variant_t *mn_variant_fc_s8(uint8_t id) {
    MN_VARIANT_AT(fc_s8, id);
}

const mn_fc_f32_variant_t *mn_variant_fc_f32(uint8_t id) {
    MN_VARIANT_AT(fc_f32, id);
}

const mn_svdf_s8_variant_t *mn_variant_svdf_s8(uint8_t id) {
    MN_VARIANT_AT(svdf_s8, id);
}

const mn_requant_variant_t *mn_variant_requant(uint8_t id) {
    MN_VARIANT_AT(requant, id);
}

const mn_add_s8_variant_t *mn_variant_add_s8(uint8_t id) {
    MN_VARIANT_AT(add_s8, id);
}

const mn_mul_s8_variant_t *mn_variant_mul_s8(uint8_t id) {
    MN_VARIANT_AT(mul_s8, id);
}

/* The compute classes of mn_backend_t and the builtin ops whose kernels select from them (ADD's
 * class serves SUB too). */
#define MN_VARIANT_CLASSES(X) \
    X(conv_s8, MN_BUILTIN_CONV_2D, -1) X(conv_f32, MN_BUILTIN_CONV_2D, -1) \
    X(depthwise_s8, MN_BUILTIN_DEPTHWISE_CONV_2D, -1) X(depthwise_f32, MN_BUILTIN_DEPTHWISE_CONV_2D, -1) \
    X(fc_s8, MN_BUILTIN_FULLY_CONNECTED, -1) X(fc_f32, MN_BUILTIN_FULLY_CONNECTED, -1) \
    X(add_s8, MN_BUILTIN_ADD, MN_BUILTIN_SUB) X(mul_s8, MN_BUILTIN_MUL, -1) \
    X(avgpool_s8, MN_BUILTIN_AVERAGE_POOL_2D, -1) X(maxpool_s8, MN_BUILTIN_MAX_POOL_2D, -1) \
    X(softmax_s8, MN_BUILTIN_SOFTMAX, -1) X(svdf_s8, MN_BUILTIN_SVDF, -1) X(requant, MN_BUILTIN_QUANTIZE, -1)

const char *mn_variant_of_op(int32_t builtin, size_t i) {
#if MICRONN_VARIANT_QUERY
    /* the host's view: every backend the query knows (dsp and mve from their fits lists) */
    const mn_backend_t *const all[] = { &q_backend_mve, &q_backend_dsp,
    #if MICRONN_KERNELS_GENERIC
        &mn_backend_generic,
    #endif
        NULL };
#else
    const mn_backend_t *const *all = backend_list;
#endif
    size_t n = 0;
    for (const mn_backend_t *const *b = all; *b; ++b) {
#define MN_CLASS_NAMES(FIELD, OP1, OP2) \
        if ((builtin == (OP1) || builtin == (OP2)) && (*b)->FIELD) { \
            for (size_t k = 0; (*b)->FIELD[k]; ++k, ++n) { \
                if (n == i) { \
                    return (*b)->FIELD[k]->name; \
                } \
            } \
        }
        MN_VARIANT_CLASSES(MN_CLASS_NAMES)
#undef MN_CLASS_NAMES
    }
    return NULL;
}
