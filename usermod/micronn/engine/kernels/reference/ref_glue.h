/*
 * ref_glue.h — small helpers shared by the reference kernels' prepare/eval
 * glue (the part that talks to the interpreter through mn_kernel.h).
 */
#ifndef MN_REF_GLUE_H
#define MN_REF_GLUE_H

#include <math.h>

#include "../../mn_kernel.h"
#include "mn_ref.h"

/* Fetch a required tensor or fail with a message naming it. */
#define REF_INPUT(var, ctx, node, i, what) \
    mn_tensor_t *var = mn_input((ctx), (node), (i)); \
    if (!var) { \
        return mn_fail((ctx), MN_ERR_MODEL, "missing %s (input %d)", (what), (i)); \
    }
#define REF_OUTPUT(var, ctx, node, i) \
    mn_tensor_t *var = mn_output((ctx), (node), (i)); \
    if (!var) { \
        return mn_fail((ctx), MN_ERR_MODEL, "missing output %d", (i)); \
    }

static inline mn_status_t ref_fail_dtype(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t) {
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s dtype %s not supported", what, mn_dtype_name(t->dtype));
}

static inline mn_status_t ref_fail_combo(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out) {
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input dtype %s with output dtype %s not supported",
        mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
}

static inline int ref_qtype(int32_t dtype) {
    switch (dtype) {
        case MN_UINT8: return MN_QTYPE_UINT8;
        case MN_INT16: return MN_QTYPE_INT16;
        case MN_INT32: return MN_QTYPE_INT32;
        default: return MN_QTYPE_INT8;
    }
}

/* Quantized activation range of `out` for fused activation `act`. */
static inline mn_status_t ref_act_range_q(mn_ctx_t *ctx, int act, const mn_tensor_t *out,
    int32_t *lo, int32_t *hi) {
    int32_t qmin, qmax;
    mn_qtype_range(ref_qtype(out->dtype), &qmin, &qmax);
    if (!(out->scale > 0.0f)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output of dtype %s is not quantized (scale 0)",
            mn_dtype_name(out->dtype));
    }
    if (mn_act_range_quant(act, out->scale, out->zero_point, qmin, qmax, lo, hi)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported",
            mn_fused_act_name(act));
    }
    return MN_OK;
}

static inline mn_status_t ref_act_range_f(mn_ctx_t *ctx, int act, float *lo, float *hi) {
    if (mn_act_range_f32(act, lo, hi)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported",
            mn_fused_act_name(act));
    }
    return MN_OK;
}

/* Checks that a quantized tensor has a usable per-tensor scale (finite, > 0) and
 * a zero point inside its type's range. */
static inline mn_status_t ref_need_quant(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t) {
    if (t->q_count < 1 || !(t->scale > 0.0f) || !(t->scale < 3.0e38f)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (dtype %s) has no usable quantization scale",
            what, mn_dtype_name(t->dtype));
    }
    if (t->dtype == MN_INT8 || t->dtype == MN_UINT8 || t->dtype == MN_INT16) {
        int32_t lo, hi;
        mn_qtype_range(ref_qtype(t->dtype), &lo, &hi);
        if (t->zero_point < lo || t->zero_point > hi) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s zero point %d out of range for %s",
                what, (int)t->zero_point, mn_dtype_name(t->dtype));
        }
    }
    return MN_OK;
}

#define REF_TRY(expr) \
    do { \
        mn_status_t st_ = (expr); \
        if (st_ != MN_OK) { \
            return st_; \
        } \
    } while (0)

#define REF_ALLOC(var, type, ctx, count) \
    type *var = (type *)mn_alloc_persistent((ctx), sizeof(type) * (size_t)(count)); \
    if (!var) { \
        return MN_ERR_ARENA; \
    }

#endif /* MN_REF_GLUE_H */
