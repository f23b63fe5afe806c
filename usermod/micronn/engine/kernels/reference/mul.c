/* MUL reference kernel (bit-exact with TFLite's reference kernel): quantized
 * out = zp_out + MultiplyByQuantizedMultiplier((a - zp1) * (b - zp2), s1 * s2 / s_out),
 * float32 / int32 a plain product with the fused activation. */
#include "mn_ref.h"

#if MICRONN_OP_MUL

void mn_mul_quant_init(mn_mul_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp,
    float out_scale, int32_t out_zp, int32_t act_min, int32_t act_max) {
    p->input1_offset = -in1_zp;
    p->input2_offset = -in2_zp;
    p->output_offset = out_zp;
    /* TFLite forms the real multiplier in float, then widens it. */
    const float real = in1_scale * in2_scale / out_scale;
    mn_quantize_multiplier((double)real, &p->mult, &p->shift);
    p->act_min = act_min;
    p->act_max = act_max;
}

static inline int32_t mul_one(const mn_mul_quant_t *p, int32_t a, int32_t b) {
    const int32_t prod = (int32_t)((uint32_t)(p->input1_offset + a) * (uint32_t)(p->input2_offset + b));
    const int32_t raw = mn_add_wrap(mn_mul_by_qm(prod, p->mult, p->shift), p->output_offset);
    return mn_clamp_i32(raw, p->act_min, p->act_max);
}

void mn_mul_s8(const mn_mul_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2, int8_t *out) {
    MN_BCAST_FOR(b, out[k] = (int8_t)mul_one(p, in1[o1], in2[o2]));
}

void mn_mul_s16(const mn_mul_quant_t *p, const mn_bcast_t *b, const int16_t *in1, const int16_t *in2,
    int16_t *out) {
    MN_BCAST_FOR(b, out[k] = (int16_t)mul_one(p, in1[o1], in2[o2]));
}

void mn_mul_f32(const mn_bcast_t *b, float act_min, float act_max, const float *in1, const float *in2,
    float *out) {
    MN_BCAST_FOR(b, out[k] = mn_clamp_f32(in1[o1] * in2[o2], act_min, act_max));
}

void mn_mul_s32(const mn_bcast_t *b, int32_t act_min, int32_t act_max, const int32_t *in1, const int32_t *in2,
    int32_t *out) {
    MN_BCAST_FOR(b, out[k] = mn_clamp_i32((int32_t)((uint32_t)in1[o1] * (uint32_t)in2[o2]), act_min, act_max));
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    union {
        mn_mul_quant_t q;
        struct {
            float min, max;
        } f;
        struct {
            int32_t min, max;
        } i;
    } u;
    uint8_t dtype;
} mul_data_t;

static mn_status_t mul_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, mul_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    const int act = mn_opt_i8(node, MN_MUL_ACTIVATION, MN_ACT_NONE);
    if (in1->dtype != out->dtype) {
        return ref_fail_combo(ctx, in1, out);
    }
    d->dtype = in1->dtype;
    node->variant = 0;
    if (in1->dtype == MN_FLOAT32) {
        REF_TRY(ref_act_range_f(ctx, act, &d->u.f.min, &d->u.f.max));
    } else if (in1->dtype == MN_INT32) {
        REF_TRY(ref_act_range_i32(ctx, act, &d->u.i.min, &d->u.i.max));
    } else if (in1->dtype == MN_INT8 || in1->dtype == MN_INT16) {
        REF_TRY(ref_need_quant(ctx, "input1", in1));
        REF_TRY(ref_need_quant(ctx, "input2", in2));
        REF_TRY(ref_need_quant(ctx, "output", out));
        int32_t lo, hi;
        REF_TRY(ref_act_range_q(ctx, act, out, &lo, &hi));
        mn_mul_quant_init(&d->u.q, mn_tensor_scale(in1, 0), mn_tensor_zero_point(in1, 0), mn_tensor_scale(in2, 0), mn_tensor_zero_point(in2, 0), mn_tensor_scale(out, 0),
            mn_tensor_zero_point(out, 0), lo, hi);
        if (in1->dtype == MN_INT8) {   /* an optimized variant (kernels/mn_variants.h), 0: the reference */
            node->variant = mn_variant_id_mul_s8(mn_select_mul_s8(ctx, &d->u.q, &d->b));
        }
    } else {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t mul_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mul_data_t *d = (const mul_data_t *)node->user_data;
    const void *a = mn_input(ctx, node, 0)->data;
    const void *c = mn_input(ctx, node, 1)->data;
    void *o = mn_output(ctx, node, 0)->data;
    switch (d->dtype) {
        case MN_INT8:
            if (node->variant) {
                mn_variant_mul_s8(node->variant)->run(&d->u.q, &d->b, (const int8_t *)a, (const int8_t *)c, (int8_t *)o);
            } else {
                mn_mul_s8(&d->u.q, &d->b, (const int8_t *)a, (const int8_t *)c, (int8_t *)o);
            }
            break;
        case MN_INT16:
            mn_mul_s16(&d->u.q, &d->b, (const int16_t *)a, (const int16_t *)c, (int16_t *)o);
            break;
        case MN_INT32:
            mn_mul_s32(&d->b, d->u.i.min, d->u.i.max, (const int32_t *)a, (const int32_t *)c, (int32_t *)o);
            break;
        default:
            mn_mul_f32(&d->b, d->u.f.min, d->u.f.max, (const float *)a, (const float *)c, (float *)o);
            break;
    }
    return MN_OK;
}

static const char *mul_variant(const mn_node_t *node) {
    const mul_data_t *d = (const mul_data_t *)node->user_data;
    const mn_mul_s8_variant_t *v = d && d->dtype == MN_INT8 ? mn_variant_mul_s8(node->variant) : NULL;
    return v ? v->name : NULL;
}

const mn_kernel_t mn_kernel_MUL = { NULL, mul_prepare, mul_eval, NULL, mul_variant };

#endif /* MICRONN_OP_MUL */
