/*
 * ref_glue.h — small helpers shared by the reference kernels' prepare/eval
 * glue (the part that talks to the interpreter through mn_kernel.h).
 */
#ifndef MN_REF_GLUE_H
#define MN_REF_GLUE_H

#include <math.h>

#include "../../mn_kernel.h"
#include "mn_ref.h"
#include "../mn_variants.h"

/* Fetch a required tensor or fail with a message naming it. */
#define REF_INPUT(var, ctx, node, i, what) \
    mn_tensor_t *var = mn_input((ctx), (node), (i)); \
    if (!var) { \
        return mn_fail((ctx), MN_ERR_MODEL, "missing %s (input %d)", (what), (i)); \
    }
#define REF_OUTPUT(var, ctx, node, i) \
    mn_tensor_t *var = mn_output((ctx), (node), (i)); \
    if (!var) { \
        return mn_fail((ctx), MN_ERR_MODEL, "missing output %d", (i)); \
    }

/* Prepare-time checks, out of line (ref_glue.c): one copy in the firmware, not one per caller. */

/* Fail naming `what` and t's dtype as unsupported. */
mn_status_t ref_fail_dtype(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t);

/* Fail naming the input/output dtype combination as unsupported. */
mn_status_t ref_fail_combo(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out);

static inline int ref_qtype(int32_t dtype) {
    switch (dtype) {
        case MN_UINT8: return MN_QTYPE_UINT8;
        case MN_INT16: return MN_QTYPE_INT16;
        case MN_INT32: return MN_QTYPE_INT32;
        default: return MN_QTYPE_INT8;
    }
}

/* Quantized activation range of `out` for fused activation `act`. */
mn_status_t ref_act_range_q(mn_ctx_t *ctx, int act, const mn_tensor_t *out, int32_t *lo, int32_t *hi);

/* Float activation range for fused activation `act`. */
mn_status_t ref_act_range_f(mn_ctx_t *ctx, int act, float *lo, float *hi);

/* Checks that a quantized tensor has a usable per-tensor scale (finite, > 0) and
 * a zero point inside its type's range. */
mn_status_t ref_need_quant(mn_ctx_t *ctx, const char *what, const mn_tensor_t *t);

/* First channel of t whose zero point is not 0, or -1: one pass over the stored vector (per-channel
 * weights must be symmetric). */
int32_t ref_asymmetric_channel(const mn_tensor_t *t);

/* fn when the firmware has type family F (mn_config.h MICRONN_TYPE_<F>), else NULL: a kernel's
 * eval passes its per-family compute functions this way, so the families left out are not linked. */
#define REF_FAMILY_FN(F, fn) (MICRONN_TYPE_##F ? (fn) : NULL)

#define REF_TRY(expr) \
    do { \
        mn_status_t st_ = (expr); \
        if (st_ != MN_OK) { \
            return st_; \
        } \
    } while (0)

#define REF_ALLOC(var, type, ctx, count) \
    type *var = (type *)mn_alloc_persistent((ctx), sizeof(type) * (size_t)(count)); \
    if (!var) { \
        return MN_ERR_ARENA; \
    }

/*
 * A kernel's data struct (`head` bytes) and its per-channel tables, n int32 multipliers followed by
 * n int8 shifts (5 bytes per channel), as one table (MN_TABLE_QUANT, mn_kernel.h "tables"): one
 * persistent block, rounded to MN_ARENA_ALIGN once, unless the model stores the tables (then
 * the struct alone, and the tables are used in place from the model when they match). Fill the
 * tables when *fill, then call ref_keep_tables for where eval reads them. NULL when the arena is
 * exhausted (return MN_ERR_ARENA).
 */
static inline void *ref_alloc_with_tables(mn_ctx_t *ctx, const mn_node_t *node, size_t head, int32_t n,
    int32_t **mult, int8_t **shift, bool *fill) {
    const size_t cnt = n > 0 ? (size_t)n : 0u;
    void *table = NULL;
    void *d = mn_table_alloc(ctx, node, MN_TABLE_QUANT, head, cnt > SIZE_MAX / 16u ? SIZE_MAX / 2 : 5u * cnt,
        &table, fill);
    *mult = (int32_t *)table;
    *shift = table ? (int8_t *)table + 4u * cnt : (int8_t *)0;
    return d;
}

/* The tables' final place (the model's copy or the arena's), or NULL (arena exhausted). */
static inline const int32_t *ref_keep_tables(mn_ctx_t *ctx, const mn_node_t *node, int32_t n, int32_t *mult) {
    return (const int32_t *)mn_table_keep(ctx, node, MN_TABLE_QUANT, mult, 5u * (size_t)(n > 0 ? n : 0));
}

/* The shifts of tables made by ref_alloc_with_tables (for eval). */
static inline const int8_t *ref_shifts(const int32_t *mult, int32_t n) {
    return (const int8_t *)(mult + (n > 0 ? n : 0));
}

/*
 * Conv geometry in kernel data: 17 int16 instead of 17 int (34 bytes less per op) when every value
 * fits, which is the usual case; eval expands it into a stack mn_conv_geom_t. Otherwise the kernel
 * keeps a full copy (REF_GEOM_STORE).
 */
#define REF_GEOM_FIELDS(X) X(batches) X(in_h) X(in_w) X(in_c) X(f_h) X(f_w) X(f_in_c) X(depth_mult) \
    X(out_h) X(out_w) X(out_c) X(stride_h) X(stride_w) X(dil_h) X(dil_w) X(pad_h) X(pad_w)
#define REF_GEOM_N 17

typedef struct {
    const mn_conv_geom_t *wide;   /* full geometry when some value does not fit int16, else NULL */
    int16_t v[REF_GEOM_N];
    uint8_t dtype;                /* free for the kernel (the conv kernels keep the input dtype) */
    uint8_t mode;                 /* free for the kernel (conv: int16x8 int32 accumulation without
                                   * bias, or float32 REF_HYBRID_*) */
} ref_geom_t;

/* Store *g into *dst (allocating a full copy only when needed). */
static inline mn_status_t ref_geom_store(mn_ctx_t *ctx, const mn_conv_geom_t *g, ref_geom_t *dst) {
    int i = 0, fits = 1;
#define REF_GEOM_FIT_(f) fits &= g->f >= INT16_MIN && g->f <= INT16_MAX;
    REF_GEOM_FIELDS(REF_GEOM_FIT_)
#undef REF_GEOM_FIT_
    dst->wide = NULL;
    if (!fits) {
        mn_conv_geom_t *w = (mn_conv_geom_t *)mn_alloc_persistent(ctx, sizeof *w);
        if (!w) {
            return MN_ERR_ARENA;
        }
        *w = *g;
        dst->wide = w;
        return MN_OK;
    }
#define REF_GEOM_PACK_(f) dst->v[i++] = (int16_t)g->f;
    REF_GEOM_FIELDS(REF_GEOM_PACK_)
#undef REF_GEOM_PACK_
    return MN_OK;
}

/* Geometry for eval: the full copy, or *tmp filled from the packed form. */
static inline const mn_conv_geom_t *ref_geom_load(const ref_geom_t *src, mn_conv_geom_t *tmp) {
    int i = 0;
    if (src->wide) {
        return src->wide;
    }
#define REF_GEOM_UNPACK_(f) tmp->f = src->v[i++];
    REF_GEOM_FIELDS(REF_GEOM_UNPACK_)
#undef REF_GEOM_UNPACK_
    return tmp;
}

/*
 * CONV_2D / DEPTHWISE_CONV_2D kernel data (the int8 multiplier/shift tables follow in the same
 * block, ref_alloc_with_tables) and the prepare steps the two kernels share (ref_conv.c).
 */
typedef struct {
    ref_geom_t g;                       /* g.dtype: input dtype */
    union {
        struct {
            /* int8 ranges (zero points and activation bounds are checked in prepare) */
            int16_t input_offset, output_offset, act_min, act_max;
        } q;                            /* int8 / int16 (g.mode: int16x8 without bias, quantized_bias_type
                                         * INT32); the multiplier/shift tables: mult */
        struct {
            float min, max;             /* float32 activation range (g.mode: REF_HYBRID_*, an int8
                                         * filter whose float scales are in the mult table) */
        } f;
    } u;
    union {
        const mn_conv_s8_variant_t *s8;
        const mn_conv_f32_variant_t *f32;
    } variant;                          /* optimized compute function (mn_variants.h); NULL: reference */
    const void *vdata;                  /* the int8 variant's persistent data, or NULL */
    const int32_t *mult;                /* out_c multipliers, then out_c int8 shifts (ref_shifts);
                                         * hybrid: the float filter scales */
    int32_t scratch;                    /* the variant's scratch buffer index, or -1 */
} ref_conv_data_t;

#define REF_HYBRID_NONE 0
#define REF_HYBRID_TENSOR 1             /* one filter scale: symmetric input */
#define REF_HYBRID_CHANNEL 2            /* TFLite's per-channel hybrid path: asymmetric input */

/*
 * Dtypes and quantization of a conv-like kernel with out_c output channels (also TRANSPOSE_CONV):
 * float32; int8; int16x8 (int8 filter, int64/int32 bias, zero points 0). Per-tensor or per-channel
 * filter scales along `filter_q_dim` into the out_c multipliers/shifts mult/shift, activation range
 * and offsets into d->u, d->g.dtype = input dtype.
 */
mn_status_t ref_conv_prepare_quant(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *filter,
    const mn_tensor_t *bias, const mn_tensor_t *out, int act, int32_t out_c, int32_t filter_q_dim,
    ref_conv_data_t *d, int32_t *mult, int8_t *shift, bool fill);

/* After the tables are filled: d->mult = their final place (ref_keep_tables). */
static inline mn_status_t ref_conv_keep(mn_ctx_t *ctx, const mn_node_t *node, ref_conv_data_t *d, int32_t *mult,
    int32_t n) {
    d->mult = ref_keep_tables(ctx, node, n, mult);
    return d->mult ? MN_OK : MN_ERR_ARENA;
}


/*
 * Values of a constant int32/int64 input (axis, paddings, begin/end, perm, ...): the arena is
 * planned from the shapes stored in the model, so inputs that decide an output's shape or layout
 * must be constant, as in TFLM. Copies up to max values into out (int64 narrowed, failing when a
 * value does not fit) and sets *n to the element count; fails naming the input otherwise.
 */
static inline mn_status_t ref_const_ints(mn_ctx_t *ctx, const mn_node_t *node, int i, const char *what,
    int32_t *out, int32_t max, int32_t *n) {
    const mn_tensor_t *t = mn_input(ctx, node, i);
    *n = 0;
    if (!t) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing %s (input %d)", what, i);
    }
    if (!(t->flags & MN_TF_CONST) || !t->data) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (input %d) must be a constant tensor", what, i);
    }
    if (t->dtype != MN_INT32 && t->dtype != MN_INT64) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (input %d) dtype %s not supported", what, i,
            mn_dtype_name(t->dtype));
    }
    const size_t count = mn_tensor_count(t);
    if (count > (size_t)max) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (input %d) has %u values, at most %d supported",
            what, i, (unsigned)count, (int)max);
    }
    for (size_t k = 0; k < count; ++k) {
        if (t->dtype == MN_INT32) {
            out[k] = ((const int32_t *)t->data)[k];
        } else {
            const int64_t v = ((const int64_t *)t->data)[k];
            if (v < INT32_MIN || v > INT32_MAX) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (input %d) value out of int32 range", what, i);
            }
            out[k] = (int32_t)v;
        }
    }
    *n = (int32_t)count;
    return MN_OK;
}

/* Same element type and size for a pure data-movement op (values are copied, never read). */
static inline mn_status_t ref_same_dtype(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out) {
    if (in->dtype != out->dtype) {
        return ref_fail_combo(ctx, in, out);
    }
    if (mn_dtype_size(in->dtype) == 0) {
        return ref_fail_dtype(ctx, "input", in);
    }
    return MN_OK;
}

/* The int8 quantization parameters of conv/depthwise kernel data (tables of out_c channels). */
static inline void ref_conv_quant(const ref_conv_data_t *d, int32_t out_c, mn_conv_quant_t *q) {
    q->input_offset = d->u.q.input_offset;
    q->output_offset = d->u.q.output_offset;
    q->act_min = d->u.q.act_min;
    q->act_max = d->u.q.act_max;
    q->mult = d->mult;
    q->shift = ref_shifts(d->mult, out_c);
}

/* Optimized variants may precompute from the weights (and bias) in prepare: only when those are
 * constants of the model, whose data prepare can read. */
static inline bool ref_weights_constant(const mn_tensor_t *w, const mn_tensor_t *bias) {
    return (w->flags & MN_TF_CONST) && (!bias || (bias->flags & MN_TF_CONST));
}

/* Conv/depthwise eval: the chosen variant, or the reference compute function ref_s8 / ref_f32. */
typedef void (*ref_conv_s8_fn)(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output);
typedef void (*ref_conv_f32_fn)(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output);
typedef void (*ref_conv_s16_fn)(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int16_t *input,
    const int8_t *filter, const mn_bias16_t *bias, int16_t *output);
typedef void (*ref_conv_hybrid_fn)(const mn_conv_geom_t *g, const mn_conv_hybrid_t *h, const float *input,
    const int8_t *filter, const float *bias, float *output, int8_t *qbuf);
mn_status_t ref_conv_eval(mn_ctx_t *ctx, mn_node_t *node, ref_conv_s8_fn ref_s8, ref_conv_s16_fn ref_s16,
    ref_conv_f32_fn ref_f32, ref_conv_hybrid_fn ref_hybrid);

/* int16x8 bias pointers of an optional int32/int64 bias tensor (checked in prepare); without one,
 * acc32 says whether the options ask for an int32 bias (quantized_bias_type). */
static inline mn_bias16_t ref_bias16(const mn_tensor_t *bias, bool acc32) {
    mn_bias16_t b = { NULL, NULL, bias ? bias->dtype == MN_INT32 : acc32 };
    if (bias && bias->dtype == MN_INT64) {
        b.b64 = (const int64_t *)bias->data;
    } else if (bias) {
        b.b32 = (const int32_t *)bias->data;
    }
    return b;
}

/* Bias of an int16x8 kernel: int64, or int32 (quantized_bias_type INT32). */
static inline mn_status_t ref_check_bias16(mn_ctx_t *ctx, const mn_tensor_t *bias) {
    if (bias && bias->dtype != MN_INT64 && bias->dtype != MN_INT32) {
        return ref_fail_dtype(ctx, "bias (with int16 input)", bias);
    }
    return MN_OK;
}

/* mn_kernel_t.variant of CONV_2D and DEPTHWISE_CONV_2D. */
const char *ref_conv_variant(const mn_node_t *node);

/*
 * Prepare functions kept apart from their op's compute and eval (<op>_prepare.c): prepare-time
 * code is built with the port's optimisation setting (size), only what runs per inference with
 * the kernels' MICRONN_COPT (micropython.mk).
 */
mn_status_t ref_conv_prepare(mn_ctx_t *ctx, mn_node_t *node);    /* CONV_2D, DEPTHWISE_CONV_2D (ref_conv_prepare.c) */

/* AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D kernel data, prepare and mn_kernel_t.variant. */
typedef struct {
    mn_pool_geom_t g;
    int32_t qmin, qmax;
    float fmin, fmax;
    uint8_t dtype;
    const mn_pool_s8_variant_t *variant;   /* int8 compute variant (mn_variants.h); NULL: reference */
} ref_pool_data_t;
mn_status_t ref_pool_prepare(mn_ctx_t *ctx, mn_node_t *node);
const char *ref_pool_variant(const mn_node_t *node);

/* SOFTMAX kernel data, pointer-free (MN_TABLE_KDATA): 24 bytes, one parameter set by input type;
 * with int16 input followed by the exp and reciprocal tables (2 x MN_LUT_S16_SIZE int16). */
typedef struct {
    int32_t outer, depth;
    union {
        mn_softmax_q_t q;           /* int8 input */
        struct {
            int32_t mult, shift;
        } q16;                      /* int16 input */
        float beta;                 /* float32 */
    } u;
    uint8_t in_dtype, out_dtype;
} ref_softmax_data_t;
#define REF_SOFTMAX_HEAD ((sizeof(ref_softmax_data_t) + 7u) & ~(size_t)7u)
mn_status_t ref_softmax_prepare(mn_ctx_t *ctx, mn_node_t *node);

/* ---- elementwise kernels (ref_bcast.c) ---- */

/* The error for mn_bcast_init3's result r (MN_OK for 0); n3 < 0 for two inputs. */
mn_status_t ref_bcast_status(mn_ctx_t *ctx, int r, int n1, int n2, int n3);

/* Inputs 0 and 1 (one dtype), their broadcast into *b, and output 0 with b->size elements. */
mn_status_t ref_binary_shapes(mn_ctx_t *ctx, const mn_node_t *node, mn_bcast_t *b, mn_tensor_t **in1,
    mn_tensor_t **in2, mn_tensor_t **out);

/* Integer (non-quantized int32) range of fused activation `act`, as TFLite's
 * CalculateActivationRange<int32_t>. */
mn_status_t ref_act_range_i32(mn_ctx_t *ctx, int act, int32_t *lo, int32_t *hi);

/*
 * Elementwise unary ops: one input, one output of the same dtype and element count. *n gets the
 * count. Dtype support is the caller's to check.
 */
static inline mn_status_t ref_unary_io(mn_ctx_t *ctx, mn_node_t *node, mn_tensor_t **in,
    mn_tensor_t **out, size_t *n) {
    *n = 0;
    *in = mn_input(ctx, node, 0);
    *out = mn_output(ctx, node, 0);
    if (!*in || !*out) {
        return mn_fail(ctx, MN_ERR_MODEL, "needs 1 input and 1 output");
    }
    if ((*in)->dtype != (*out)->dtype) {
        return ref_fail_combo(ctx, *in, *out);
    }
    *n = mn_tensor_count(*in);
    if (mn_tensor_count(*out) != *n) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    return MN_OK;
}

/* Bytes of the value that pads a tensor like `out`: its zero point when quantized 8/16-bit (as
 * TFLite's PAD and SPACE_TO_BATCH_ND), else 0. */
static inline void ref_pad_value(const mn_tensor_t *out, uint8_t pad[8]) {
    memset(pad, 0, 8);
    if (out->dtype == MN_INT8 || out->dtype == MN_UINT8) {
        pad[0] = (uint8_t)mn_tensor_zero_point(out, 0);
    } else if (out->dtype == MN_INT16) {
        const int16_t zp = (int16_t)mn_tensor_zero_point(out, 0);
        memcpy(pad, &zp, 2);
    }
}

/*
 * Ops that are one strided copy planned in prepare (TRANSPOSE, SLICE, STRIDED_SLICE,
 * SPACE_TO_DEPTH, DEPTH_TO_SPACE, BROADCAST_TO; copy.c): ref_copy_plan_done simplifies *plan and
 * stores it as the node's data (in_offset: elements skipped at the start of input 0); ref_copy_eval
 * then copies input 0 into output 0.
 */
mn_status_t ref_copy_plan_done(mn_ctx_t *ctx, mn_node_t *node, const mn_copy_plan_t *plan, int32_t in_offset,
    size_t es);
mn_status_t ref_copy_eval(mn_ctx_t *ctx, mn_node_t *node);

/* Quantized unary ops: both tensors quantized per tensor (ref_need_quant), and for int16 with
 * zero points 0 (TFLite's int16 activations are symmetric). */
static inline mn_status_t ref_unary_quant(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out) {
    REF_TRY(ref_need_quant(ctx, "input", in));
    REF_TRY(ref_need_quant(ctx, "output", out));
    if (in->dtype == MN_INT16 && (mn_tensor_zero_point(in, 0) != 0 || mn_tensor_zero_point(out, 0) != 0)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 zero points must be 0 (input %d, output %d)",
            (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
    }
    return MN_OK;
}

/* int16 LOGISTIC / TANH scaling (mn_sig16_init) with the failure named. */
static inline mn_status_t ref_sig16_prepare(mn_ctx_t *ctx, const mn_tensor_t *in, const mn_tensor_t *out,
    int max_pot_shift, mn_sig16_t *p) {
    const int r = mn_sig16_init(p, mn_tensor_scale(in, 0), mn_tensor_scale(out, 0), max_pot_shift);
    if (r == -1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 output scale must be 2^-15");
    }
    if (r) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 input scale too large");
    }
    return MN_OK;
}

#endif /* MN_REF_GLUE_H */
