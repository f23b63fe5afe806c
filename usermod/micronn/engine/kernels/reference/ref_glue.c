/* The prepare-time checks of ref_glue.h, out of line: the kernels' prepare functions call them
 * (a few times each), and inlined they would be copied into every caller. */
#include "ref_glue.h"

mn_status_t ref_fail_dtype(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t) {
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s dtype %s not supported", what, mn_dtype_name(t->dtype));
}

mn_status_t ref_fail_combo(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out) {
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input dtype %s with output dtype %s not supported",
        mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
}

mn_status_t ref_act_range_q(mn_ctx_t *ctx, int act, const mn_tensor_t *out,
    int32_t *lo, int32_t *hi) {
    int32_t qmin, qmax;
    mn_qtype_range(ref_qtype(out->dtype), &qmin, &qmax);
    if (!(mn_tensor_scale(out, 0) > 0.0f)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output of dtype %s is not quantized (scale 0)",
            mn_dtype_name(out->dtype));
    }
    const int r = mn_act_range_quant(act, mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), qmin, qmax, lo, hi);
    if (r == -2) {
        return mn_fail(ctx, MN_ERR_MODEL, "fused activation %s: its bounds do not quantize into int32 (output scale too small)",
            mn_fused_act_name(act));
    }
    if (r) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported",
            mn_fused_act_name(act));
    }
    return MN_OK;
}

mn_status_t ref_act_range_f(mn_ctx_t *ctx, int act, float *lo, float *hi) {
    if (mn_act_range_f32(act, lo, hi)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported",
            mn_fused_act_name(act));
    }
    return MN_OK;
}

int32_t ref_asymmetric_channel(const mn_tensor_t *t) {
    const uint8_t *zp = mn_tensor_zero_points(t);
    const int32_t n = zp ? mn_tensor_q_count(t) : 0;
    for (int32_t ch = 0; ch < n; ++ch) {
        if ((int32_t)mn_ld_u64(zp + 8 * (size_t)ch) != 0) {
            return ch;
        }
    }
    return -1;
}

mn_status_t ref_need_quant(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t) {
    if (mn_tensor_q_count(t) < 1 || !(mn_tensor_scale(t, 0) > 0.0f) || !(mn_tensor_scale(t, 0) < 3.0e38f)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (dtype %s) has no usable quantization scale",
            what, mn_dtype_name(t->dtype));
    }
    if (t->dtype == MN_INT8 || t->dtype == MN_UINT8 || t->dtype == MN_INT16) {
        int32_t lo, hi;
        mn_qtype_range(ref_qtype(t->dtype), &lo, &hi);
        if (mn_tensor_zero_point(t, 0) < lo || mn_tensor_zero_point(t, 0) > hi) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s zero point %d out of range for %s",
                what, (int)mn_tensor_zero_point(t, 0), mn_dtype_name(t->dtype));
        }
    }
    return MN_OK;
}
