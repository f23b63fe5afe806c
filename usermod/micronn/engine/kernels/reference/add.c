/* ADD reference kernel (bit-exact with TFLite's reference int8 Add /
 * BroadcastAdd6DSlow: inputs shifted left by 20, rescaled by per-input
 * multipliers, summed, rescaled to the output). */
#include "mn_ref.h"

#if MICRONN_OP_ADD

int mn_bcast_init(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2) {
    const int n = n1 > n2 ? n1 : n2;
    if (n > MN_ADD_MAX_DIMS) {
        return -1;
    }
    b->ndims = n;
    b->broadcast = 0;
    if (n1 != n2) {
        b->broadcast = 1;
    }
    /* Counts in 64 bits: partial products of a verified shape with a zero dimension ([0, 45,
     * 134217732]) may exceed int32, and the output count may exceed it when both inputs fit. */
    int64_t s1 = 1, s2 = 1, size = 1;
    for (int i = n - 1; i >= 0; --i) {
        const int k1 = i - (n - n1), k2 = i - (n - n2);
        const int32_t a = k1 >= 0 ? d1[k1] : 1;
        const int32_t c = k2 >= 0 ? d2[k2] : 1;
        int32_t o;
        if (a == c) {
            o = a;
        } else if (a == 1) {
            o = c;
            b->broadcast = 1;
        } else if (c == 1) {
            o = a;
            b->broadcast = 1;
        } else {
            return -1;
        }
        b->out_dims[i] = o;
        b->stride1[i] = a == 1 ? 0 : (int32_t)s1;
        b->stride2[i] = c == 1 ? 0 : (int32_t)s2;
        s1 *= a;
        s2 *= c;
        size *= o;
        if (size > INT32_MAX || s1 > INT32_MAX || s2 > INT32_MAX) {
            return -2;
        }
    }
    b->size = (int32_t)size;
    return 0;
}

void mn_add_quant_init(mn_add_quant_t *p, float in1_scale, int32_t in1_zp,
    float in2_scale, int32_t in2_zp, float out_scale, int32_t out_zp,
    int32_t act_min, int32_t act_max) {
    p->input1_offset = -in1_zp;
    p->input2_offset = -in2_zp;
    p->output_offset = out_zp;
    p->left_shift = 20;
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

static inline int8_t add_one_s8(const mn_add_quant_t *p, int32_t a, int32_t b) {
    const int32_t x1 = mn_shl_wrap(p->input1_offset + a, p->left_shift);
    const int32_t x2 = mn_shl_wrap(p->input2_offset + b, p->left_shift);
    const int32_t s1 = mn_mul_by_qm(x1, p->input1_mult, p->input1_shift);
    const int32_t s2 = mn_mul_by_qm(x2, p->input2_mult, p->input2_shift);
    const int32_t raw = mn_add_wrap(mn_mul_by_qm(mn_add_wrap(s1, s2), p->output_mult, p->output_shift),
        p->output_offset);
    return (int8_t)mn_clamp_i32(raw, p->act_min, p->act_max);
}

/* Walks the output in row-major order, tracking both input offsets. */
#define BCAST_LOOP(b, BODY) \
    do { \
        int32_t idx[MN_ADD_MAX_DIMS] = {0}; \
        int32_t o1 = 0, o2 = 0; \
        const int nd = (b)->ndims; \
        for (int32_t k = 0; k < (b)->size; ++k) { \
            BODY; \
            for (int d = nd - 1; d >= 0; --d) { \
                o1 += (b)->stride1[d]; \
                o2 += (b)->stride2[d]; \
                if (++idx[d] < (b)->out_dims[d]) { \
                    break; \
                } \
                o1 -= (b)->stride1[d] * (b)->out_dims[d]; \
                o2 -= (b)->stride2[d] * (b)->out_dims[d]; \
                idx[d] = 0; \
            } \
        } \
    } while (0)

void mn_add_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out) {
    if (!b->broadcast) {
        for (int32_t k = 0; k < b->size; ++k) {
            out[k] = add_one_s8(p, in1[k], in2[k]);
        }
        return;
    }
    BCAST_LOOP(b, out[k] = add_one_s8(p, in1[o1], in2[o2]));
}

void mn_add_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out) {
    if (!b->broadcast) {
        for (int32_t k = 0; k < b->size; ++k) {
            out[k] = mn_clamp_f32(in1[k] + in2[k], act_min, act_max);
        }
        return;
    }
    BCAST_LOOP(b, out[k] = mn_clamp_f32(in1[o1] + in2[o2], act_min, act_max));
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    mn_add_quant_t q;
    float fmin, fmax;
    uint8_t dtype;
} add_data_t;

static mn_status_t add_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in1, ctx, node, 0, "input1");
    REF_INPUT(in2, ctx, node, 1, "input2");
    REF_OUTPUT(out, ctx, node, 0);
    const int act = mn_opt_i8(node, MN_ADD_ACTIVATION, MN_ACT_NONE);
    if (in1->dtype != in2->dtype || in1->dtype != out->dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "mixed dtypes %s + %s -> %s not supported",
            mn_dtype_name(in1->dtype), mn_dtype_name(in2->dtype), mn_dtype_name(out->dtype));
    }
    REF_ALLOC(d, add_data_t, ctx, 1);
    const int bc = mn_bcast_init(&d->b, in1->dims, in1->ndim, in2->dims, in2->ndim);
    if (bc == -2) {
        return mn_fail(ctx, MN_ERR_MODEL, "an input or the broadcast output has more than %d elements", (int)INT32_MAX);
    }
    if (bc) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input shapes (%d-D, %d-D) cannot be broadcast",
            in1->ndim, in2->ndim);
    }
    if (mn_tensor_count(out) != (size_t)d->b.size) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u elements, broadcast gives %d",
            (unsigned)mn_tensor_count(out), (int)d->b.size);
    }
    d->dtype = in1->dtype;
    if (in1->dtype == MN_FLOAT32) {
        REF_TRY(ref_act_range_f(ctx, act, &d->fmin, &d->fmax));
    } else if (in1->dtype == MN_INT8) {
        REF_TRY(ref_need_quant(ctx, "input1", in1));
        REF_TRY(ref_need_quant(ctx, "input2", in2));
        REF_TRY(ref_need_quant(ctx, "output", out));
        int32_t lo, hi;
        REF_TRY(ref_act_range_q(ctx, act, out, &lo, &hi));
        mn_add_quant_init(&d->q, in1->scale, in1->zero_point, in2->scale, in2->zero_point,
            out->scale, out->zero_point, lo, hi);
    } else {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t add_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const add_data_t *d = (const add_data_t *)node->user_data;
    mn_tensor_t *in1 = mn_input(ctx, node, 0);
    mn_tensor_t *in2 = mn_input(ctx, node, 1);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    if (d->dtype == MN_INT8) {
        mn_add_s8(&d->q, &d->b, (const int8_t *)in1->data, (const int8_t *)in2->data, (int8_t *)out->data);
    } else {
        mn_add_f32(&d->b, d->fmin, d->fmax, (const float *)in1->data, (const float *)in2->data,
            (float *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_ADD = { NULL, add_prepare, add_eval, NULL, NULL };

#endif /* MICRONN_OP_ADD */
