/* TANH reference kernel, as TFLite's reference kernel:
 * float32: tanhf; int8: a 256-entry table built in prepare from tanhf (any output scale);
 * int16: the sigmoid table shared with LOGISTIC (tanh(x) = 2 sigmoid(2x) - 1) with linear
 * interpolation; zero points 0, output scale 2^-15; input scales 2^-12 and 2^-11 are used
 * directly, any other is rescaled with a multiplier and a rounding right shift. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_TANH

void mn_tanh_f32(size_t n, const float *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = tanhf(in[i]);
    }
}

void mn_tanh_q_s16(size_t n, const mn_sig16_t *p, const int16_t *in, int16_t *out) {
    int32_t mult = p->mult;
    int shift = p->shift;
    if (mult == 0) {
        mult = 3 << shift;
        shift = 0;
    }
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    for (size_t i = 0; i < n; ++i) {
        const int32_t x = ((int32_t)in[i] * mult + round) >> shift;
        const uint32_t a = (uint32_t)(x < 0 ? -x : x);
        const uint32_t uh = a >> 8;
        int32_t r;
        if (uh >= 255) {
            r = 0xFFFF << 8;
        } else {
            const uint32_t ua = mn_sigmoid_table_u16[uh], ub = mn_sigmoid_table_u16[uh + 1];
            r = (int32_t)((ua << 8) + (a & 0xffu) * (ub - ua));
        }
        r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        out[i] = (int16_t)(r >> 8);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    mn_sig16_t s16;
    uint8_t dtype;
    int8_t lut[];   /* int8 only */
} tanh_data_t;

static float tanh_fn(float x, const void *arg) {
    (void)arg;
    return tanhf(x);
}

static mn_status_t tanh_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8 && dt != MN_INT16) {
        return ref_fail_dtype(ctx, "input", in);
    }
    tanh_data_t *d = (tanh_data_t *)mn_alloc_persistent(ctx, sizeof *d + (dt == MN_INT8 ? 256u : 0u));
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->n = n;
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        mn_lut_s8_init(d->lut, mn_tensor_scale(in, 0), mn_tensor_zero_point(in, 0), mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), tanh_fn, NULL);
    } else if (dt == MN_INT16) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        REF_TRY(ref_sig16_prepare(ctx, in, out, 1, &d->s16));
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t tanh_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const tanh_data_t *d = (const tanh_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_lut_s8(d->n, d->lut, (const int8_t *)in, (int8_t *)out);
    } else if (d->dtype == MN_INT16) {
        mn_tanh_q_s16(d->n, &d->s16, (const int16_t *)in, (int16_t *)out);
    } else {
        mn_tanh_f32(d->n, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_TANH = { NULL, tanh_prepare, tanh_eval, NULL, NULL };

#endif /* MICRONN_OP_TANH */
