/* MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ALL and REDUCE_ANY reference kernels
 * (TFLite reference_ops::Mean, QuantizedMeanOrSum, ReduceGeneric, QuantizedReduceProd; ALL / ANY:
 * logical and / or over bool). TFLite walks the input in row-major
 * order and folds each element into its output; here each output folds its reduced elements in
 * that same (row-major) order, so float sums and the rescaled int8/int16 products come out in the
 * same order, with no accumulator buffer. Quantized MEAN/SUM sum raw values in int32, remove
 * zero_point * count and rescale with one multiplier (MEAN folds 1/count into it, as TFLite). */
#include <float.h>

#include "mn_ref.h"

#if MICRONN_OP_MEAN || MICRONN_OP_SUM || MICRONN_OP_REDUCE_MAX || MICRONN_OP_REDUCE_MIN || \
    MICRONN_OP_REDUCE_PROD || MICRONN_OP_REDUCE_ALL || MICRONN_OP_REDUCE_ANY

#include "ref_glue.h"

enum { RED_MEAN, RED_SUM, RED_MAX, RED_MIN, RED_PROD, RED_ALL, RED_ANY };

/* Odometer over dims with element strides. */
typedef struct {
    int n;
    int32_t dims[MN_MAX_DIMS], stride[MN_MAX_DIMS];
} red_walk_t;

typedef struct {
    red_walk_t outer, inner;    /* kept dims (output order) / reduced dims */
    int32_t count;              /* elements per output */
    int32_t in_zp, out_zp, mult, qmin, qmax;
    int8_t shift;
    uint8_t op, dtype;
} reduce_data_t;

static inline ptrdiff_t walk_step(const red_walk_t *w, int32_t *ix, ptrdiff_t off) {
    for (int d = w->n - 1; d >= 0; --d) {
        off += w->stride[d];
        if (++ix[d] < w->dims[d]) {
            return off;
        }
        off -= (ptrdiff_t)w->stride[d] * w->dims[d];
        ix[d] = 0;
    }
    return off;
}

static size_t walk_count(const red_walk_t *w) {
    size_t n = 1;
    for (int d = 0; d < w->n; ++d) {
        n *= (size_t)w->dims[d];
    }
    return n;
}

/* For each output element o (pointer into input `base`), fold its reduced elements:
 * INIT(first element pointer) then STEP(element pointer) for the rest, then STORE. */
#define REDUCE_LOOP(d, T_IN, in_, INIT, STEP, STORE) \
    do { \
        int32_t ox_[MN_MAX_DIMS] = {0}; \
        ptrdiff_t ooff_ = 0; \
        const size_t no_ = walk_count(&(d)->outer), ni_ = walk_count(&(d)->inner); \
        for (size_t o = 0; o < no_; ++o) { \
            const T_IN *base_ = (in_) + ooff_; \
            int32_t ix_[MN_MAX_DIMS] = {0}; \
            ptrdiff_t ioff_ = 0; \
            INIT(base_[0]); \
            for (size_t k_ = 1; k_ < ni_; ++k_) { \
                ioff_ = walk_step(&(d)->inner, ix_, ioff_); \
                STEP(base_[ioff_]); \
            } \
            STORE; \
            ooff_ = walk_step(&(d)->outer, ox_, ooff_); \
        } \
    } while (0)

/* ---- integer requantized MEAN / SUM (int8, uint8, int16) ---- */
#define QS_INIT(v) acc = (uint32_t)(int32_t)(v)
#define QS_STEP(v) acc += (uint32_t)(int32_t)(v)
#define DEFINE_QSUM(NAME, T) \
    static void NAME(const reduce_data_t *d, const T *in, T *out) { \
        uint32_t acc; \
        REDUCE_LOOP(d, T, in, QS_INIT, QS_STEP, { \
            const int32_t shifted = (int32_t)((int64_t)(int32_t)acc - (int64_t)d->in_zp * d->count); \
            out[o] = (T)mn_clamp_i32(mn_mul_by_qm(shifted, d->mult, d->shift) + d->out_zp, d->qmin, d->qmax); \
        }); \
    }
DEFINE_QSUM(qsum_s8, int8_t)
DEFINE_QSUM(qsum_u8, uint8_t)
DEFINE_QSUM(qsum_s16, int16_t)

static void qprod_s8(const reduce_data_t *d, const int8_t *in, int8_t *out) {
    int32_t acc;
#define QP_INIT(v) acc = (int32_t)(v) - d->in_zp
#define QP_STEP(v) acc = mn_mul_by_qm64((int64_t)acc * ((int32_t)(v) - d->in_zp), d->mult, d->shift)
    REDUCE_LOOP(d, int8_t, in, QP_INIT, QP_STEP,
        out[o] = (int8_t)mn_clamp_i32(mn_mul_by_qm64(acc, d->mult, d->shift) + d->out_zp, d->qmin, d->qmax));
}
static void qprod_s16(const reduce_data_t *d, const int16_t *in, int16_t *out) {
    int32_t acc;
    REDUCE_LOOP(d, int16_t, in, QP_INIT, QP_STEP,
        out[o] = (int16_t)mn_clamp_i32(mn_mul_by_qm64(acc, d->mult, d->shift) + d->out_zp, d->qmin, d->qmax));
#undef QP_INIT
#undef QP_STEP
}

/* ---- plain folds: T values, accumulator A ---- */
#define SET(v) acc = (v)
#define ADD_F(v) acc += (v)
#define ADD_WRAP32(v) acc = mn_add_wrap(acc, (v))
#define ADD_WRAP64(v) acc = (int64_t)((uint64_t)acc + (uint64_t)(v))
#define MUL_F(v) acc *= (v)
#define MUL_WRAP32(v) acc = (int32_t)((uint32_t)acc * (uint32_t)(v))
#define MUL_WRAP64(v) acc = (int64_t)((uint64_t)acc * (uint64_t)(v))
#define MAX_(v) acc = (v) > acc ? (v) : acc
#define MIN_(v) acc = (v) < acc ? (v) : acc

#define DEFINE_FOLD(NAME, T, A, INIT, STEP, FINAL) \
    static void NAME(const reduce_data_t *d, const T *in, T *out) { \
        A acc; \
        REDUCE_LOOP(d, T, in, INIT, STEP, out[o] = (T)(FINAL)); \
    }

DEFINE_FOLD(mean_f32, float, float, SET, ADD_F, acc / (float)d->count)
DEFINE_FOLD(mean_i32, int32_t, int64_t, SET, ADD_WRAP64, mn_sdiv64(acc, d->count))
DEFINE_FOLD(mean_i64, int64_t, int64_t, SET, ADD_WRAP64, mn_sdiv64(acc, d->count))
DEFINE_FOLD(sum_f32, float, float, SET, ADD_F, acc)
DEFINE_FOLD(sum_i32, int32_t, int32_t, SET, ADD_WRAP32, acc)
DEFINE_FOLD(sum_i64, int64_t, int64_t, SET, ADD_WRAP64, acc)
DEFINE_FOLD(prod_f32, float, float, SET, MUL_F, acc)
DEFINE_FOLD(prod_i32, int32_t, int32_t, SET, MUL_WRAP32, acc)
DEFINE_FOLD(prod_i64, int64_t, int64_t, SET, MUL_WRAP64, acc)
#define DEFINE_MINMAX(T, SUFFIX) \
    DEFINE_FOLD(max_##SUFFIX, T, T, SET, MAX_, acc) \
    DEFINE_FOLD(min_##SUFFIX, T, T, SET, MIN_, acc)
DEFINE_MINMAX(float, f32)
DEFINE_MINMAX(int8_t, s8)
DEFINE_MINMAX(uint8_t, u8)
DEFINE_MINMAX(int16_t, s16)
DEFINE_MINMAX(int32_t, i32)
DEFINE_MINMAX(int64_t, i64)
/* bool (one byte, 0 / 1) */
#define SET_B(v) acc = (v) != 0
#define AND_B(v) acc &= (v) != 0
#define OR_B(v) acc |= (v) != 0
DEFINE_FOLD(all_b, uint8_t, uint8_t, SET_B, AND_B, acc)
DEFINE_FOLD(any_b, uint8_t, uint8_t, SET_B, OR_B, acc)

/* ---- interpreter glue ---------------------------------------------------- */

/* Appends dim (size, stride) to w, merging it into the previous dim when contiguous. */
static void walk_push(red_walk_t *w, int32_t size, int32_t stride) {
    if (size == 1) {
        return;
    }
    if (w->n > 0 && w->stride[w->n - 1] == stride * size) {
        w->dims[w->n - 1] *= size;
        w->stride[w->n - 1] = stride;
        return;
    }
    w->dims[w->n] = size;
    w->stride[w->n++] = stride;
}

/* s^(1/n) in double (TFLite: std::pow). Firmware libm has no double pow: Newton steps on
 * r^n = s from powf's estimate, which reach the double result to the last bit or so, far below
 * what the 31-bit multiplier keeps. */
static double nth_root(double s, int32_t n) {
    double r = (double)powf((float)s, 1.0f / (float)n);
    if (!(r > 0.0) || !(r < 1e300)) {
        r = 1.0;
    }
    for (int it = 0; it < 6; ++it) {
        double p = 1.0, b = r;
        for (int32_t e = n - 1; e > 0; e >>= 1, b *= b) {
            if (e & 1) {
                p *= b;
            }
        }
        r = ((double)(n - 1) * r + s / p) / (double)n;
    }
    return r;
}

static int is_quant(int32_t dtype) {
    return dtype == MN_INT8 || dtype == MN_UINT8 || dtype == MN_INT16;
}

static mn_status_t reduce_prepare(mn_ctx_t *ctx, mn_node_t *node, int op) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    if (in->dtype != out->dtype) {
        return ref_fail_combo(ctx, in, out);
    }
    const int32_t dt = in->dtype;
    const int ok_dtype = op == RED_ALL || op == RED_ANY ? dt == MN_BOOL :
        dt == MN_FLOAT32 || dt == MN_INT32 || dt == MN_INT64 ||
        (op == RED_PROD ? (dt == MN_INT8 || dt == MN_INT16) : is_quant(dt));
    if (!ok_dtype) {
        return ref_fail_dtype(ctx, "input", in);
    }
    int32_t axes[2 * MN_MAX_DIMS] = { 0 }, n_axes = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "axis", axes, 2 * MN_MAX_DIMS, &n_axes));
    unsigned reduced = 0;
    for (int i = 0; i < n_axes; ++i) {
        const int32_t a = axes[i] < 0 ? axes[i] + in->ndim : axes[i];
        if (a < 0 || a >= in->ndim) {
            return mn_fail(ctx, MN_ERR_MODEL, "axis %d out of range for a %d-D input", (int)axes[i], in->ndim);
        }
        reduced |= 1u << a;
    }
    const int keep = mn_opt_bool(node, MN_REDUCER_KEEP_DIMS, false);
    REF_ALLOC(d, reduce_data_t, ctx, 1);
    int32_t strides[MN_MAX_DIMS];
    mn_strides(in->dims, in->ndim, strides);
    int o = 0, shape_ok = 1;
    int32_t count = 1;
    for (int k = 0; k < in->ndim; ++k) {
        if (reduced & (1u << k)) {
            walk_push(&d->inner, in->dims[k], strides[k]);
            count *= in->dims[k];
            if (keep) {
                shape_ok &= o < out->ndim && out->dims[o++] == 1;
            }
        } else {
            walk_push(&d->outer, in->dims[k], strides[k]);
            shape_ok &= o < out->ndim && out->dims[o++] == in->dims[k];
        }
    }
    /* a scalar input reduces to itself */
    if (!shape_ok || o != out->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match the reduction (keep_dims %d)", keep);
    }
    if (count == 0 || mn_tensor_count(in) == 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty input not supported");
    }
    d->count = count;
    d->op = (uint8_t)op;
    d->dtype = (uint8_t)dt;
    if (is_quant(dt)) {
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "output", out));
        mn_qtype_range(ref_qtype(dt), &d->qmin, &d->qmax);
        d->in_zp = mn_tensor_zero_point(in, 0);
        d->out_zp = mn_tensor_zero_point(out, 0);
        if (dt == MN_INT16 && (mn_tensor_zero_point(in, 0) || mn_tensor_zero_point(out, 0))) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 zero points must be 0 (got %d, %d)",
                (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
        }
        int shift = 0;
        if (op == RED_MAX || op == RED_MIN) {
            if (mn_tensor_scale(in, 0) != mn_tensor_scale(out, 0) || mn_tensor_zero_point(in, 0) != mn_tensor_zero_point(out, 0)) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input and output quantization must match");
            }
        } else if (op == RED_PROD) {
            /* each product step is rescaled by input_scale / output_scale^(1/count) */
            mn_quantize_multiplier((double)mn_tensor_scale(in, 0) / nth_root((double)mn_tensor_scale(out, 0), count), &d->mult, &shift);
        } else {
            int32_t mult;
            mn_quantize_multiplier((double)mn_tensor_scale(in, 0) / (double)mn_tensor_scale(out, 0), &mult, &shift);
            if (op == RED_MEAN) {
                /* fold 1/count into the multiplier, keeping shift - s >= -31 */
                int s = 0;
                while (s < 32 && ((int64_t)1 << (s + 1)) <= count) {
                    ++s;
                }
                s = s < 31 + shift ? s : 31 + shift;
                mult = (int32_t)mn_sdiv64((int64_t)mult << s, count);
                shift -= s;
            }
            d->mult = mult;
        }
        d->shift = (int8_t)shift;
    }
    node->user_data = d;
    return MN_OK;
}

#define CALL(fn, T) fn(d, (const T *)in, (T *)out)

static mn_status_t reduce_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const reduce_data_t *d = (const reduce_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    switch (d->op * 16 + d->dtype) {
        case RED_MEAN * 16 + MN_INT8: case RED_SUM * 16 + MN_INT8: CALL(qsum_s8, int8_t); break;
        case RED_MEAN * 16 + MN_UINT8: case RED_SUM * 16 + MN_UINT8: CALL(qsum_u8, uint8_t); break;
        case RED_MEAN * 16 + MN_INT16: case RED_SUM * 16 + MN_INT16: CALL(qsum_s16, int16_t); break;
        case RED_MEAN * 16 + MN_FLOAT32: CALL(mean_f32, float); break;
        case RED_MEAN * 16 + MN_INT32: CALL(mean_i32, int32_t); break;
        case RED_MEAN * 16 + MN_INT64: CALL(mean_i64, int64_t); break;
        case RED_SUM * 16 + MN_FLOAT32: CALL(sum_f32, float); break;
        case RED_SUM * 16 + MN_INT32: CALL(sum_i32, int32_t); break;
        case RED_SUM * 16 + MN_INT64: CALL(sum_i64, int64_t); break;
        case RED_PROD * 16 + MN_FLOAT32: CALL(prod_f32, float); break;
        case RED_PROD * 16 + MN_INT32: CALL(prod_i32, int32_t); break;
        case RED_PROD * 16 + MN_INT64: CALL(prod_i64, int64_t); break;
        case RED_PROD * 16 + MN_INT8: CALL(qprod_s8, int8_t); break;
        case RED_PROD * 16 + MN_INT16: CALL(qprod_s16, int16_t); break;
        case RED_MAX * 16 + MN_FLOAT32: CALL(max_f32, float); break;
        case RED_MAX * 16 + MN_INT8: CALL(max_s8, int8_t); break;
        case RED_MAX * 16 + MN_UINT8: CALL(max_u8, uint8_t); break;
        case RED_MAX * 16 + MN_INT16: CALL(max_s16, int16_t); break;
        case RED_MAX * 16 + MN_INT32: CALL(max_i32, int32_t); break;
        case RED_MAX * 16 + MN_INT64: CALL(max_i64, int64_t); break;
        case RED_MIN * 16 + MN_FLOAT32: CALL(min_f32, float); break;
        case RED_MIN * 16 + MN_INT8: CALL(min_s8, int8_t); break;
        case RED_MIN * 16 + MN_UINT8: CALL(min_u8, uint8_t); break;
        case RED_MIN * 16 + MN_INT16: CALL(min_s16, int16_t); break;
        case RED_MIN * 16 + MN_INT32: CALL(min_i32, int32_t); break;
        case RED_MIN * 16 + MN_INT64: CALL(min_i64, int64_t); break;
        case RED_ALL * 16 + MN_BOOL: CALL(all_b, uint8_t); break;
        case RED_ANY * 16 + MN_BOOL: CALL(any_b, uint8_t); break;
        default: return mn_fail(ctx, MN_ERR_KERNEL, "no reduction for dtype %s", mn_dtype_name(d->dtype));
    }
    return MN_OK;
}

#define REDUCE_KERNEL(NAME, OP) \
    static mn_status_t NAME##_prepare(mn_ctx_t *ctx, mn_node_t *node) { \
        return reduce_prepare(ctx, node, OP); \
    } \
    const mn_kernel_t mn_kernel_##NAME = { NULL, NAME##_prepare, reduce_eval, NULL, NULL };

#if MICRONN_OP_MEAN
REDUCE_KERNEL(MEAN, RED_MEAN)
#endif
#if MICRONN_OP_SUM
REDUCE_KERNEL(SUM, RED_SUM)
#endif
#if MICRONN_OP_REDUCE_MAX
REDUCE_KERNEL(REDUCE_MAX, RED_MAX)
#endif
#if MICRONN_OP_REDUCE_MIN
REDUCE_KERNEL(REDUCE_MIN, RED_MIN)
#endif
#if MICRONN_OP_REDUCE_PROD
REDUCE_KERNEL(REDUCE_PROD, RED_PROD)
#endif
#if MICRONN_OP_REDUCE_ALL
REDUCE_KERNEL(REDUCE_ALL, RED_ALL)
#endif
#if MICRONN_OP_REDUCE_ANY
REDUCE_KERNEL(REDUCE_ANY, RED_ANY)
#endif

#endif /* reduce ops */
