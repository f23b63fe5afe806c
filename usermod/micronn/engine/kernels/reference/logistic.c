/* LOGISTIC reference kernel, as TFLite's reference kernel:
 * float32: 1 / (1 + exp(-x)), exp(x) below -9 and 1 above 16.62 (LiteRT's cutoffs);
 * int8: a 256-entry table built in prepare from the float function (output scale 1/256);
 * int16: the shared sigmoid table with linear interpolation (input zero point 0, output scale
 * 1/32768 and zero point 0); a power-of-two input scale 2^-12 is used directly, any other is
 * rescaled to 1/(3 * 4096) with a multiplier and a rounding right shift. */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_LOGISTIC

void mn_logistic_f32(size_t n, const float *in, float *out) {
    for (size_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = x > 16.619047164916992188f ? 1.0f : (x < -9.0f ? expf(x) : 1.0f / (1.0f + expf(-x)));
    }
}

void mn_logistic_q_s16(size_t n, const mn_sig16_t *p, const int16_t *in, int16_t *out) {
    int32_t mult = p->mult;
    int shift = p->shift;
    if (mult == 0) {
        mult = 3 << shift;
        shift = 0;
    }
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    for (size_t i = 0; i < n; ++i) {
        /* x in units of 1 / (3 * 4096 * 4): the table step 1/24 is 2^9 units */
        const int32_t x = ((int32_t)in[i] * mult + round) >> shift;
        const uint32_t a = (uint32_t)(x < 0 ? -x : x);
        const uint32_t uh = a >> 9;
        uint32_t r;
        if (uh >= 255) {
            r = 0x7FFFu << 10;
        } else {
            const uint32_t ua = mn_sigmoid_table_u16[uh], ub = mn_sigmoid_table_u16[uh + 1];
            r = (ua << 9) + (a & 0x1ffu) * (ub - ua);
        }
        r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
        out[i] = (int16_t)(r >> 10);
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    size_t n;
    mn_sig16_t s16;
    uint8_t dtype;
    int8_t lut[];   /* int8 only */
} logistic_data_t;

static float logistic_fn(float x, const void *arg) {
    (void)arg;
    return 1.0f / (1.0f + expf(-x));
}

static mn_status_t logistic_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8 && dt != MN_INT16) {
        return ref_fail_dtype(ctx, "input", in);
    }
    logistic_data_t *d = (logistic_data_t *)mn_alloc_persistent(ctx, sizeof *d + (dt == MN_INT8 ? 256u : 0u));
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->n = n;
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        if (mn_tensor_scale(out, 0) != 1.0f / 256) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int8 output scale must be 1/256");
        }
        mn_lut_s8_init(d->lut, mn_tensor_scale(in, 0), mn_tensor_zero_point(in, 0), mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), logistic_fn, NULL);
    } else if (dt == MN_INT16) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        REF_TRY(ref_sig16_prepare(ctx, in, out, 0, &d->s16));
        if (mn_tensor_scale(out, 0) != 1.0f / 32768) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 output scale must be 1/32768");
        }
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t logistic_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const logistic_data_t *d = (const logistic_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_lut_s8(d->n, d->lut, (const int8_t *)in, (int8_t *)out);
    } else if (d->dtype == MN_INT16) {
        mn_logistic_q_s16(d->n, &d->s16, (const int16_t *)in, (int16_t *)out);
    } else {
        mn_logistic_f32(d->n, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_LOGISTIC = { NULL, logistic_prepare, logistic_eval, NULL, NULL };

#endif /* MICRONN_OP_LOGISTIC */
