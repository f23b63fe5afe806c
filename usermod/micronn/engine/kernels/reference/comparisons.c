/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL reference kernels (TFLite's): bool
 * output. int8 / uint8 (and quantized int16 for EQUAL / NOT_EQUAL, as LiteRT does) are compared
 * after rescaling both inputs (value - zero point, shifted left by 8, times its own scale as a
 * fixed-point multiplier), so inputs of different quantization compare by real value; other
 * types compare raw values. */
#include "mn_ref.h"

#if MICRONN_OP_EQUAL || MICRONN_OP_NOT_EQUAL || MICRONN_OP_LESS || MICRONN_OP_LESS_EQUAL \
    || MICRONN_OP_GREATER || MICRONN_OP_GREATER_EQUAL

#define CMP_LEFT_SHIFT 8

void mn_cmp_quant_init(mn_cmp_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp) {
    p->input1_offset = -in1_zp;
    p->input2_offset = -in2_zp;
    p->left_shift = CMP_LEFT_SHIFT;
    mn_quantize_multiplier((double)in1_scale, &p->input1_mult, &p->input1_shift);
    mn_quantize_multiplier((double)in2_scale, &p->input2_mult, &p->input2_shift);
}

static inline int cmp(int op, int32_t a, int32_t b) {
    switch (op) {
        case MN_CMP_EQ: return a == b;
        case MN_CMP_NE: return a != b;
        case MN_CMP_LT: return a < b;
        case MN_CMP_LE: return a <= b;
        case MN_CMP_GT: return a > b;
        default: return a >= b;
    }
}

static inline int cmp_f(int op, float a, float b) {
    switch (op) {
        case MN_CMP_EQ: return a == b;
        case MN_CMP_NE: return a != b;
        case MN_CMP_LT: return a < b;
        case MN_CMP_LE: return a <= b;
        case MN_CMP_GT: return a > b;
        default: return a >= b;
    }
}

static inline int32_t cmp_scaled(int32_t offset, int32_t v, int32_t mult, int shift) {
    return mn_mul_by_qm(mn_shl_wrap(offset + v, CMP_LEFT_SHIFT), mult, shift);
}

#define CMP_Q_LOOP(T) \
    MN_BCAST_FOR(b, out[k] = (uint8_t)cmp(op, \
        cmp_scaled(p->input1_offset, ((const T *)in1)[o1], p->input1_mult, p->input1_shift), \
        cmp_scaled(p->input2_offset, ((const T *)in2)[o2], p->input2_mult, p->input2_shift)))

void mn_compare_s8(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    uint8_t *out) {
    CMP_Q_LOOP(int8_t);
}

void mn_compare_u8(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2,
    uint8_t *out) {
    CMP_Q_LOOP(uint8_t);
}

void mn_compare_s16(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const int16_t *in1, const int16_t *in2,
    uint8_t *out) {
    CMP_Q_LOOP(int16_t);
}

void mn_compare(int op, int dtype, const mn_bcast_t *b, const void *in1, const void *in2, uint8_t *out) {
    switch (dtype) {
        case MN_FLOAT32:
            MN_BCAST_FOR(b, out[k] = (uint8_t)cmp_f(op, ((const float *)in1)[o1], ((const float *)in2)[o2]));
            break;
        case MN_INT16:
            MN_BCAST_FOR(b, out[k] = (uint8_t)cmp(op, ((const int16_t *)in1)[o1], ((const int16_t *)in2)[o2]));
            break;
        case MN_INT32:
            MN_BCAST_FOR(b, out[k] = (uint8_t)cmp(op, ((const int32_t *)in1)[o1], ((const int32_t *)in2)[o2]));
            break;
        default:    /* bool: any non-zero byte is true */
            MN_BCAST_FOR(b, out[k] = (uint8_t)cmp(op, ((const uint8_t *)in1)[o1] != 0,
                ((const uint8_t *)in2)[o2] != 0));
            break;
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_bcast_t b;
    mn_cmp_quant_t q;
    uint8_t dtype, op, quantized;
} cmp_data_t;

static mn_status_t cmp_prepare(mn_ctx_t *ctx, mn_node_t *node, int op) {
    mn_tensor_t *in1, *in2, *out;
    REF_ALLOC(d, cmp_data_t, ctx, 1);
    REF_TRY(ref_binary_shapes(ctx, node, &d->b, &in1, &in2, &out));
    if (out->dtype != MN_BOOL) {
        return ref_fail_dtype(ctx, "output", out);
    }
    const int t = in1->dtype;
    d->dtype = (uint8_t)t;
    d->op = (uint8_t)op;
    d->quantized = t == MN_INT8 || t == MN_UINT8
        || (t == MN_INT16 && (op == MN_CMP_EQ || op == MN_CMP_NE) && mn_tensor_q_count(in1) > 0 && mn_tensor_q_count(in2) > 0);
    if (d->quantized) {
        REF_TRY(ref_need_quant(ctx, "input1", in1));
        REF_TRY(ref_need_quant(ctx, "input2", in2));
        mn_cmp_quant_init(&d->q, mn_tensor_scale(in1, 0), mn_tensor_zero_point(in1, 0), mn_tensor_scale(in2, 0), mn_tensor_zero_point(in2, 0));
    } else if (t != MN_FLOAT32 && t != MN_INT16 && t != MN_INT32
               && !(t == MN_BOOL && (op == MN_CMP_EQ || op == MN_CMP_NE))) {
        return ref_fail_dtype(ctx, "input", in1);
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t cmp_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const cmp_data_t *d = (const cmp_data_t *)node->user_data;
    const void *a = mn_input(ctx, node, 0)->data;
    const void *c = mn_input(ctx, node, 1)->data;
    uint8_t *o = (uint8_t *)mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_compare_s8(d->op, &d->q, &d->b, (const int8_t *)a, (const int8_t *)c, o);
    } else if (d->dtype == MN_UINT8) {
        mn_compare_u8(d->op, &d->q, &d->b, (const uint8_t *)a, (const uint8_t *)c, o);
    } else if (d->quantized) {
        mn_compare_s16(d->op, &d->q, &d->b, (const int16_t *)a, (const int16_t *)c, o);
    } else {
        mn_compare(d->op, d->dtype, &d->b, a, c, o);
    }
    return MN_OK;
}

#endif

/* One prepare per op, named after it. */
#define CMP_KERNEL(NAME, OP) \
    static mn_status_t cmp_prepare_##NAME(mn_ctx_t *ctx, mn_node_t *node) { \
        return cmp_prepare(ctx, node, OP); \
    } \
    const mn_kernel_t mn_kernel_##NAME = { NULL, cmp_prepare_##NAME, cmp_eval, NULL, NULL };

#if MICRONN_OP_EQUAL
CMP_KERNEL(EQUAL, MN_CMP_EQ)
#endif
#if MICRONN_OP_NOT_EQUAL
CMP_KERNEL(NOT_EQUAL, MN_CMP_NE)
#endif
#if MICRONN_OP_LESS
CMP_KERNEL(LESS, MN_CMP_LT)
#endif
#if MICRONN_OP_LESS_EQUAL
CMP_KERNEL(LESS_EQUAL, MN_CMP_LE)
#endif
#if MICRONN_OP_GREATER
CMP_KERNEL(GREATER, MN_CMP_GT)
#endif
#if MICRONN_OP_GREATER_EQUAL
CMP_KERNEL(GREATER_EQUAL, MN_CMP_GE)
#endif
