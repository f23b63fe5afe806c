/* ADD and SUB reference kernels (bit-exact with TFLite's reference kernels).
 * int8 / int16 general scales: inputs shifted left (20 bits for int8, 15 for int16), rescaled by
 * per-input multipliers, added or subtracted, rescaled to the output. int16 with power-of-two
 * scales (pot_scale_int16, TFLite's LSTM-style path): one input is rounding-shifted right onto
 * the other's scale, then a saturating 16-bit add/subtract. float32 / int32: plain, with the
 * fused activation. */
#include "mn_ref.h"

#if MICRONN_OP_ADD || MICRONN_OP_SUB

/* int8 inputs are shifted left by 20 bits, int16 (zero points 0) by 15: both keep the sum of two
 * rescaled inputs inside int32. */
static void addsub_quant_init(mn_add_quant_t *p, int left_shift, float in1_scale, int32_t in1_zp,
    float in2_scale, int32_t in2_zp, float out_scale, int32_t out_zp,
    int32_t act_min, int32_t act_max) {
    p->input1_offset = -in1_zp;
    p->input2_offset = -in2_zp;
    p->output_offset = out_zp;
    p->left_shift = left_shift;
    const double twice_max = 2.0 * (double)(in1_scale > in2_scale ? in1_scale : in2_scale);
    const double m1 = (double)in1_scale / twice_max;
    const double m2 = (double)in2_scale / twice_max;
    const double mo = twice_max / ((double)(1 << p->left_shift) * (double)out_scale);
    mn_quantize_multiplier(m1, &p->input1_mult, &p->input1_shift);
    mn_quantize_multiplier(m2, &p->input2_mult, &p->input2_shift);
    mn_quantize_multiplier(mo, &p->output_mult, &p->output_shift);
    p->act_min = act_min;
    p->act_max = act_max;
}

/* One quantized element; sub selects input1 - input2 (the scaled values are subtracted, as
 * TFLite does, rather than negating a multiplier). */
void mn_add_quant_init(mn_add_quant_t *p, float in1_scale, int32_t in1_zp,
    float in2_scale, int32_t in2_zp, float out_scale, int32_t out_zp,
    int32_t act_min, int32_t act_max) {
    addsub_quant_init(p, 20, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp, act_min, act_max);
}

void mn_add_quant_init_s16(mn_add_quant_t *p, float in1_scale, float in2_scale, float out_scale,
    int32_t act_min, int32_t act_max) {
    addsub_quant_init(p, 15, in1_scale, 0, in2_scale, 0, out_scale, 0, act_min, act_max);
}

static inline int32_t addsub_one(const mn_add_quant_t *p, int32_t a, int32_t b, int sub) {
    const int32_t x1 = mn_shl_wrap(p->input1_offset + a, p->left_shift);
    const int32_t x2 = mn_shl_wrap(p->input2_offset + b, p->left_shift);
    const int32_t s1 = mn_mul_by_qm(x1, p->input1_mult, p->input1_shift);
    const int32_t s2 = mn_mul_by_qm(x2, p->input2_mult, p->input2_shift);
    const int32_t s = sub ? (int32_t)((uint32_t)s1 - (uint32_t)s2) : mn_add_wrap(s1, s2);
    const int32_t raw = mn_add_wrap(mn_mul_by_qm(s, p->output_mult, p->output_shift), p->output_offset);
    return mn_clamp_i32(raw, p->act_min, p->act_max);
}

void mn_add_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out) {
    MN_BCAST_FOR(b, out[k] = (int8_t)addsub_one(p, in1[o1], in2[o2], 0));
}

void mn_sub_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out) {
    MN_BCAST_FOR(b, out[k] = (int8_t)addsub_one(p, in1[o1], in2[o2], 1));
}

void mn_addsub_s16(const mn_add_quant_t *p, const mn_bcast_t *b, int sub,
    const int16_t *in1, const int16_t *in2, int16_t *out) {
    MN_BCAST_FOR(b, out[k] = (int16_t)addsub_one(p, in1[o1], in2[o2], sub));
}

void mn_addsub_s16_pot(const mn_addsub_pot_t *p, size_t n, int sub,
    const int16_t *in1, const int16_t *in2, int16_t *out) {
    const int r1 = p->right_shift1, r2 = p->right_shift2;
    for (size_t k = 0; k < n; ++k) {
        const int32_t a = mn_rdbpot(in1[k], r1);
        const int32_t c = mn_rdbpot(in2[k], r2);
        const int32_t v = mn_clamp_i32(sub ? a - c : a + c, INT16_MIN, INT16_MAX);
        out[k] = (int16_t)mn_clamp_i32(v, p->act_min, p->act_max);
    }
}

void mn_add_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out) {
    MN_BCAST_FOR(b, out[k] = mn_clamp_f32(in1[o1] + in2[o2], act_min, act_max));
}

void mn_sub_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out) {
    MN_BCAST_FOR(b, out[k] = mn_clamp_f32(in1[o1] - in2[o2], act_min, act_max));
}

void mn_addsub_s32(const mn_bcast_t *b, int sub, int32_t act_min, int32_t act_max,
    const int32_t *in1, const int32_t *in2, int32_t *out) {
    MN_BCAST_FOR(b, {
        const uint32_t x = (uint32_t)in1[o1], y = (uint32_t)in2[o2];
        out[k] = mn_clamp_i32((int32_t)(sub ? x - y : x + y), act_min, act_max);
    });
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    union {
        mn_add_quant_t q;       /* int8, int16 general scales */
        mn_addsub_pot_t pot;    /* int16 power-of-two scales */
        struct {
            float min, max;
        } f;
        struct {
            int32_t min, max;
        } i;
    } u;
    uint8_t dtype, sub, pot;
} add_data_t;

/* TFLite CheckedLog2: is x a power of two (to 1e-3 in log2), and which. */
static int pot_log2(float x, int *log2) {
    const float l = logf(x) * (1.0f / logf(2.0f));
    const float r = roundf(l);
    *log2 = (int)r;
    return fabsf(l - r) < 1e-3f;
}

static mn_status_t prepare_s16(mn_ctx_t *ctx, mn_node_t *node, add_data_t *d, const mn_tensor_t *in1,
    const mn_tensor_t *in2, const mn_tensor_t *out, int32_t lo, int32_t hi) {
    if (mn_tensor_zero_point(in1, 0) || mn_tensor_zero_point(in2, 0) || mn_tensor_zero_point(out, 0)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 zero points must be 0 (have %d, %d, %d)",
            (int)mn_tensor_zero_point(in1, 0), (int)mn_tensor_zero_point(in2, 0), (int)mn_tensor_zero_point(out, 0));
    }
    int l1, l2, lo2;
    if (mn_opt_bool(node, MN_ADD_POT_SCALE_INT16, true) && pot_log2(mn_tensor_scale(in1, 0), &l1)
        && pot_log2(mn_tensor_scale(in2, 0), &l2) && pot_log2(mn_tensor_scale(out, 0), &lo2)) {
        const int s1 = l1 - lo2, s2 = l2 - lo2;
        if (d->b.broadcast) {
            /* LiteRT's reference kernel has no broadcasting form of this path (it aborts). */
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 power-of-two scales with broadcast shapes "
                "not supported (set pot_scale_int16=false)");
        }
        if ((s1 != 0 && s2 != 0) || s1 > 0 || s2 > 0 || s1 < -31 || s2 < -31) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 power-of-two scales: one input must have "
                "the output's scale and the other a smaller one (shifts %d, %d)", s1, s2);
        }
        d->pot = 1;
        d->u.pot.right_shift1 = -s1;
        d->u.pot.right_shift2 = -s2;
        d->u.pot.act_min = lo;
        d->u.pot.act_max = hi;
        return MN_OK;
    }
    mn_add_quant_init_s16(&d->u.q, mn_tensor_scale(in1, 0), mn_tensor_scale(in2, 0), mn_tensor_scale(out, 0), lo, hi);
    return MN_OK;
}

static mn_status_t addsub_prepare(mn_ctx_t *ctx, mn_node_t *node, int sub) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, add_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    const int act = mn_opt_i8(node, MN_ADD_ACTIVATION, MN_ACT_NONE);
    if (in1->dtype != out->dtype) {
        return ref_fail_combo(ctx, in1, out);
    }
    d->dtype = in1->dtype;
    d->sub = (uint8_t)sub;
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
        if (in1->dtype == MN_INT16) {
            REF_TRY(prepare_s16(ctx, node, d, in1, in2, out, lo, hi));
        } else {
            mn_add_quant_init(&d->u.q, mn_tensor_scale(in1, 0), mn_tensor_zero_point(in1, 0), mn_tensor_scale(in2, 0), mn_tensor_zero_point(in2, 0),
                mn_tensor_scale(out, 0), mn_tensor_zero_point(out, 0), lo, hi);
            /* an optimized variant for the shape (kernels/mn_variants.h), 0: the reference */
            node->variant = mn_variant_id_add_s8(mn_select_add_s8(ctx, &d->u.q, &d->b));
        }
    } else {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t addsub_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const add_data_t *d = (const add_data_t *)node->user_data;
    const void *a = mn_input(ctx, node, 0)->data;
    const void *c = mn_input(ctx, node, 1)->data;
    void *o = mn_output(ctx, node, 0)->data;
    switch (d->dtype) {
        case MN_INT8:
            if (node->variant) {
                mn_variant_add_s8(node->variant)->run(&d->u.q, &d->b, d->sub, (const int8_t *)a, (const int8_t *)c,
                    (int8_t *)o);
            } else {
                (d->sub ? mn_sub_s8 : mn_add_s8)(&d->u.q, &d->b, (const int8_t *)a, (const int8_t *)c, (int8_t *)o);
            }
            break;
        case MN_INT16:
            if (d->pot) {
                mn_addsub_s16_pot(&d->u.pot, (size_t)d->b.size, d->sub, (const int16_t *)a, (const int16_t *)c, (int16_t *)o);
            } else {
                mn_addsub_s16(&d->u.q, &d->b, d->sub, (const int16_t *)a, (const int16_t *)c, (int16_t *)o);
            }
            break;
        case MN_INT32:
            mn_addsub_s32(&d->b, d->sub, d->u.i.min, d->u.i.max, (const int32_t *)a, (const int32_t *)c,
                (int32_t *)o);
            break;
        default:
            (d->sub ? mn_sub_f32 : mn_add_f32)(&d->b, d->u.f.min, d->u.f.max, (const float *)a, (const float *)c,
                (float *)o);
            break;
    }
    return MN_OK;
}

static const char *addsub_variant(const mn_node_t *node) {
    const add_data_t *d = (const add_data_t *)node->user_data;
    const mn_add_s8_variant_t *v = d && d->dtype == MN_INT8 ? mn_variant_add_s8(node->variant) : NULL;
    return v ? v->name : NULL;
}

#endif /* MICRONN_OP_ADD || MICRONN_OP_SUB */

#if MICRONN_OP_ADD
static mn_status_t add_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return addsub_prepare(ctx, node, 0);
}
const mn_kernel_t mn_kernel_ADD = { NULL, add_prepare, addsub_eval, NULL, addsub_variant };
#endif

#if MICRONN_OP_SUB
static mn_status_t sub_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return addsub_prepare(ctx, node, 1);
}
const mn_kernel_t mn_kernel_SUB = { NULL, sub_prepare, addsub_eval, NULL, addsub_variant };
#endif
