/* SQUARED_DIFFERENCE reference kernel (TFLite's): (a - b)^2. int8: both inputs are shifted left by
 * 7 and rescaled onto a common scale, the difference squared and rescaled to the output. */
#include "mn_ref.h"

#if MICRONN_OP_SQUARED_DIFFERENCE

#define SQDIFF_LEFT_SHIFT 7

void mn_sqdiff_quant_init(mn_sqdiff_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp,
    float out_scale, int32_t out_zp) {
    p->input1_offset = -in1_zp;
    p->input2_offset = -in2_zp;
    p->output_offset = out_zp;
    const double twice_max = 2.0 * (double)(in1_scale > in2_scale ? in1_scale : in2_scale);
    mn_quantize_multiplier((double)in1_scale / twice_max, &p->input1_mult, &p->input1_shift);
    mn_quantize_multiplier((double)in2_scale / twice_max, &p->input2_mult, &p->input2_shift);
    /* (1 << 14) * out_scale is formed in float, as in TFLite (exact: a power of two). */
    const float denom = (float)(1 << (2 * SQDIFF_LEFT_SHIFT)) * out_scale;
    mn_quantize_multiplier(twice_max * twice_max / (double)denom, &p->output_mult, &p->output_shift);
}

static inline int8_t sqdiff_one(const mn_sqdiff_quant_t *p, int32_t a, int32_t b) {
    const int32_t s1 = mn_mul_by_qm((p->input1_offset + a) * (1 << SQDIFF_LEFT_SHIFT), p->input1_mult,
        p->input1_shift);
    const int32_t s2 = mn_mul_by_qm((p->input2_offset + b) * (1 << SQDIFF_LEFT_SHIFT), p->input2_mult,
        p->input2_shift);
    const int32_t diff = s1 - s2;
    const int32_t raw = mn_add_wrap(mn_mul_by_qm(diff * diff, p->output_mult, p->output_shift), p->output_offset);
    return (int8_t)mn_clamp_i32(raw, INT8_MIN, INT8_MAX);
}

void mn_sqdiff_s8(const mn_sqdiff_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    MN_BCAST_FOR(b, out[k] = sqdiff_one(p, in1[o1], in2[o2]));
}

void mn_sqdiff_f32(const mn_bcast_t *b, const float *in1, const float *in2, float *out) {
    MN_BCAST_FOR(b, {
        const float t = in1[o1] - in2[o2];
        out[k] = t * t;
    });
}

void mn_sqdiff_s32(const mn_bcast_t *b, const int32_t *in1, const int32_t *in2, int32_t *out) {
    MN_BCAST_FOR(b, {
        const uint32_t t = (uint32_t)in1[o1] - (uint32_t)in2[o2];
        out[k] = (int32_t)(t * t);
    });
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    mn_sqdiff_quant_t q;
    uint8_t dtype;
} sqdiff_data_t;

static mn_status_t sqdiff_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, sqdiff_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    if (in1->dtype != out->dtype) {
        return ref_fail_combo(ctx, in1, out);
    }
    d->dtype = in1->dtype;
    if (in1->dtype == MN_INT8) {
        REF_TRY(ref_need_quant(ctx, "input1", in1));
        REF_TRY(ref_need_quant(ctx, "input2", in2));
        REF_TRY(ref_need_quant(ctx, "output", out));
        mn_sqdiff_quant_init(&d->q, mn_tensor_scale(in1, 0), mn_tensor_zero_point(in1, 0), mn_tensor_scale(in2, 0), mn_tensor_zero_point(in2, 0), mn_tensor_scale(out, 0),
            mn_tensor_zero_point(out, 0));
    } else if (in1->dtype != MN_FLOAT32 && in1->dtype != MN_INT32) {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t sqdiff_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const sqdiff_data_t *d = (const sqdiff_data_t *)node->user_data;
    const void *a = mn_input(ctx, node, 0)->data;
    const void *c = mn_input(ctx, node, 1)->data;
    void *o = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_sqdiff_s8(&d->q, &d->b, (const int8_t *)a, (const int8_t *)c, (int8_t *)o);
    } else if (d->dtype == MN_INT32) {
        mn_sqdiff_s32(&d->b, (const int32_t *)a, (const int32_t *)c, (int32_t *)o);
    } else {
        mn_sqdiff_f32(&d->b, (const float *)a, (const float *)c, (float *)o);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SQUARED_DIFFERENCE = { NULL, sqdiff_prepare, sqdiff_eval, NULL, NULL };

#endif /* MICRONN_OP_SQUARED_DIFFERENCE */
