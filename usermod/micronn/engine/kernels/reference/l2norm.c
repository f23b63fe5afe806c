/* L2_NORMALIZATION reference kernel, along the last dimension.
 * float32: x / max(sqrt(sum x^2), 1e-6), as TFLite.
 * int8 (TFLite reference_integer_ops::L2Normalization): sum of squared (x - zp) in int32, its
 * inverse square root as a multiplier and shift from TFLite's fixed-point Newton iteration
 * (GetInvSqrtQuantizedMultiplierExp), output on the fixed scale 1/128, zero point 0. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_L2_NORMALIZATION

void mn_l2norm_s8(int outer, int depth, int32_t in_zp, const int8_t *input, int8_t *output) {
    for (int i = 0; i < outer; ++i) {
        const int8_t *in = input + (size_t)i * depth;
        int8_t *out = output + (size_t)i * depth;
        int32_t acc = 0;
        for (int j = 0; j < depth; ++j) {
            const int32_t v = in[j] - in_zp;
            acc = mn_add_wrap(acc, v * v);
        }
        int32_t mult;
        int shift;
        mn_inv_sqrt_q(acc, &mult, &shift);
        for (int j = 0; j < depth; ++j) {
            const int32_t v = mn_mul_by_qm(in[j] - in_zp, mult, shift + 7);
            out[j] = (int8_t)mn_clamp_i32(v, INT8_MIN, INT8_MAX);
        }
    }
}

void mn_l2norm_f32(int outer, int depth, const float *input, float *output) {
    for (int i = 0; i < outer; ++i) {
        const float *in = input + (size_t)i * depth;
        float *out = output + (size_t)i * depth;
        float sum = 0.0f;
        for (int j = 0; j < depth; ++j) {
            sum += in[j] * in[j];
        }
        float norm = sqrtf(sum);
        norm = norm < 1e-6f ? 1e-6f : norm;
        for (int j = 0; j < depth; ++j) {
            out[j] = in[j] / norm;
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    int outer, depth;
    int32_t in_zp;
    uint8_t dtype;
} l2norm_data_t;

static mn_status_t l2norm_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    const int act = mn_opt_i8(node, MN_L2NORM_ACTIVATION, MN_ACT_NONE);
    if (act != MN_ACT_NONE) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported", mn_fused_act_name(act));
    }
    if (in->ndim < 1 || in->ndim > 4) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input of rank %d (1 to 4 supported)", (int)in->ndim);
    }
    const int32_t depth = mn_dim(in, -1);
    if (depth < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty last dimension");
    }
    REF_ALLOC(d, l2norm_data_t, ctx, 1);
    d->depth = depth;
    d->outer = (int)(n / (size_t)depth);
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        if (mn_tensor_scale(out, 0) != 1.0f / 128 || mn_tensor_zero_point(out, 0) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int8 output must have scale 1/128 and zero point 0");
        }
        d->in_zp = mn_tensor_zero_point(in, 0);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t l2norm_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const l2norm_data_t *d = (const l2norm_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_l2norm_s8(d->outer, d->depth, d->in_zp, (const int8_t *)in, (int8_t *)out);
    } else {
        mn_l2norm_f32(d->outer, d->depth, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_L2_NORMALIZATION = { NULL, l2norm_prepare, l2norm_eval, NULL, NULL };

#endif /* MICRONN_OP_L2_NORMALIZATION */
