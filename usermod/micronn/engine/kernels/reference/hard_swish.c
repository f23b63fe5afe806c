/* HARD_SWISH reference kernel: x * relu6(x + 3) / 6.
 * int8 is TFLite's reference int16 fixed-point path: the input on a "hires" scale (x * 2^7), a
 * "reluish" factor in [0, 1] from a saturating rescale of x to [-3, 3] -> [-1, 1], multiplied with
 * truncating (not rounding) doubling high multiply, then the output exponent and zero point.
 * float32 computes x * min(6, max(0, x + 3)) / 6 in float. */
#include "mn_ref.h"

#if MICRONN_OP_HARD_SWISH

void mn_hard_swish_f32(size_t n, const float *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        const float r = x + 3.0f;
        out[i] = x * (r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r)) / 6.0f;
    }
}

static int16_t sat_shl_s16(int16_t v, int amount) {
    const int64_t r = (int64_t)v * ((int64_t)1 << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

/* SQDMULH-like: like mn_srdhm_s16 but rounding toward zero. */
static int16_t sat_dhm_s16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) {
        return INT16_MAX;
    }
    return (int16_t)(((int32_t)a * b) / (1 << 15));
}

static int16_t rdbpot_s16(int16_t x, int e) {
    return (int16_t)mn_rdbpot(x, e > 31 ? 31 : e);
}

void mn_hard_swish_s8(size_t n, const mn_hard_swish_q_t *p, const int8_t *in, int8_t *out) {
    for (size_t i = 0; i < n; ++i) {
        const int16_t hires = (int16_t)(((int32_t)in[i] - p->in_zp) * (1 << 7));
        const int16_t preshift_out = mn_srdhm_s16(hires, p->out_mult);
        int16_t reluish = hires;
        if (p->relu_exp > 0) {
            /* all but the last bit of left shift before the multiply, so that saturation in it
             * cannot change the result; the last bit after */
            reluish = sat_shl_s16(reluish, p->relu_exp - 1);
        }
        reluish = mn_srdhm_s16(reluish, p->relu_mult);
        if (p->relu_exp > 0) {
            reluish = sat_shl_s16(reluish, 1);
        }
        if (p->relu_exp < 0) {
            reluish = rdbpot_s16(reluish, -p->relu_exp);
        }
        reluish = (int16_t)((reluish + (1 << 15)) >> 1);
        const int16_t v = rdbpot_s16(sat_dhm_s16(reluish, preshift_out), -p->out_exp);
        out[i] = (int8_t)mn_clamp_i32((int16_t)(v + p->out_zp), INT8_MIN, INT8_MAX);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    uint8_t dtype;
    mn_hard_swish_q_t q;
} hard_swish_data_t;

/* TFLite DownScaleInt32ToInt16Multiplier: round to the high 16 bits, saturating. */
static int16_t mult_to_s16(int32_t m) {
    if (m >= INT32_MAX - (1 << 15)) {
        return INT16_MAX;
    }
    return (int16_t)((m + (1 << 15)) >> 16);
}

static mn_status_t hard_swish_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, hard_swish_data_t, ctx, 1);
    d->n = n;
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        const float hires_scale = (1.0f / 128.0f) * mn_tensor_scale(in, 0);
        int32_t m;
        mn_quantize_multiplier((double)(hires_scale / mn_tensor_scale(out, 0)), &m, &d->q.out_exp);
        d->q.out_mult = mult_to_s16(m);
        if (d->q.out_exp > 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input scale / output scale >= 128 not supported");
        }
        mn_quantize_multiplier((double)(hires_scale / (3.0f / 32768.0f)), &m, &d->q.relu_exp);
        d->q.relu_mult = mult_to_s16(m);
        d->q.in_zp = mn_tensor_zero_point(in, 0);
        d->q.out_zp = mn_tensor_zero_point(out, 0);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t hard_swish_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const hard_swish_data_t *d = (const hard_swish_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_hard_swish_s8(d->n, &d->q, (const int8_t *)in, (int8_t *)out);
    } else {
        mn_hard_swish_f32(d->n, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_HARD_SWISH = { NULL, hard_swish_prepare, hard_swish_eval, NULL, NULL };

#endif /* MICRONN_OP_HARD_SWISH */
