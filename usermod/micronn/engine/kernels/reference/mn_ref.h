/*
 * mn_ref.h — the reference kernels' pure compute functions.
 *
 * These take plain parameter structs, shapes and data pointers; they know
 * nothing about the interpreter, so they can be unit-tested directly.  The
 * per-op prepare/eval glue (in the same .c files) fills the structs from the
 * model once, in prepare.
 *
 * Layouts are TFLite's: activations NHWC; CONV_2D filter
 * [out_c, f_h, f_w, in_c / groups]; DEPTHWISE_CONV_2D filter
 * [1, f_h, f_w, in_c * depth_multiplier]; FULLY_CONNECTED weights
 * [units, depth]; SVDF weights_feature [filters, input], weights_time
 * [filters, memory], state [batch, filters * memory].
 */
#ifndef MN_REF_H
#define MN_REF_H

#include <stddef.h>
#include <stdint.h>

#include "../../micronn.h"
#include "../../mn_config.h"
#include "../../mn_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CONV_2D / DEPTHWISE_CONV_2D ---------------------------------------- */

typedef struct {
    int batches;
    int in_h, in_w, in_c;
    int f_h, f_w;
    int f_in_c;        /* conv: filter input depth (in_c / groups); dw: unused */
    int depth_mult;    /* dw only */
    int out_h, out_w, out_c;
    int stride_h, stride_w;
    int dil_h, dil_w;
    int pad_h, pad_w;
} mn_conv_geom_t;

typedef struct {
    int32_t input_offset;   /* -input zero point */
    int32_t output_offset;  /* output zero point */
    int32_t act_min, act_max;
    const int32_t *mult;    /* [out_c] */
    const int8_t *shift;    /* [out_c], > 0 = left (always in [-31, 31]) */
} mn_conv_quant_t;

/*
 * In-place convolution (mn_inplace.c): the largest byte offset of the output's start over the
 * input's start at which CONV_2D / DEPTHWISE_CONV_2D (and the pools, over the same geometry with
 * in_c = out_c) stay exact when output and input overlap,
 * for elements of in_size / out_size bytes (may be negative: the output then starts lower). Every
 * compute function (reference and variants; tests/kernels/equiv.c checks each) writes output rows
 * in order (batch, then row) and, once it has written a row, reads only input rows of the windows
 * of that row and later ones; so output row r may end where the first input row of rows >= r
 * starts.
 */
int64_t mn_conv_slide(const mn_conv_geom_t *g, size_t in_size, size_t out_size);

void mn_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output);
void mn_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output);

void mn_depthwise_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output);

/*
 * Hybrid CONV_2D / DEPTHWISE_CONV_2D (float32 activations, int8 symmetric filter, float32 bias and
 * output), as TFLite's reference hybrid kernels: each batch image is quantized to int8 on the fly
 * (mn_quantize_dynamic_s8), accumulated in int32 and scaled back to float. CONV_2D with one filter
 * scale (EvalHybrid): symmetric input, acc * (row scale * filter scale) + bias. With per-channel
 * scales (EvalHybridPerChannel, also always for DEPTHWISE_CONV_2D): asymmetric input,
 * acc * scale[c] * row scale + bias (depthwise: acc * (scale[c] * row scale) + bias).
 * qbuf: scratch of in_h * in_w * in_c bytes.
 */
typedef struct {
    float act_min, act_max;
    const float *scales;     /* [out_c] filter scales (per-tensor: scales[0] used) */
    uint8_t per_channel;     /* TFLite's per-channel path: asymmetric input, per-channel scaling */
} mn_conv_hybrid_t;

void mn_conv_hybrid(const mn_conv_geom_t *g, const mn_conv_hybrid_t *h, const float *input,
    const int8_t *filter, const float *bias, float *output, int8_t *qbuf);
void mn_depthwise_conv_hybrid(const mn_conv_geom_t *g, const mn_conv_hybrid_t *h, const float *input,
    const int8_t *filter, const float *bias, float *output, int8_t *qbuf);
void mn_depthwise_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output);

/*
 * int16x8 (int16 activations, int8 weights): TFLite accumulates in int64 with an int64 bias and
 * requantizes with the int64 MultiplyByQuantizedMultiplier; with an int32 bias (quantized_bias_type
 * INT32, also without a bias tensor) the accumulator and the requantization are int32 ones (acc32).
 * At most one pointer is set. Zero points of int16 activations are 0 (q->input_offset /
 * output_offset unused).
 */
typedef struct {
    const int64_t *b64;
    const int32_t *b32;
    int acc32;
} mn_bias16_t;

/* Requantize one int16x8 accumulator of output channel c (bias added here). */
static inline int32_t mn_requant16(int64_t acc, const mn_bias16_t *b, int c, int32_t mult, int shift) {
    if (b->acc32) {
        return mn_mul_by_qm((int32_t)(uint32_t)((uint64_t)acc + (uint64_t)(int64_t)(b->b32 ? b->b32[c] : 0)), mult,
            shift);
    }
    if (b->b64) {
        acc = (int64_t)((uint64_t)acc + (uint64_t)b->b64[c]);
    }
    return mn_mul_by_qm64(acc, mult, shift);
}

void mn_conv_s16_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int16_t *input, const int8_t *filter, const mn_bias16_t *bias, int16_t *output);
void mn_depthwise_conv_s16_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int16_t *input, const int8_t *filter, const mn_bias16_t *bias, int16_t *output);

/* TRANSPOSE_CONV: filter [out_c, f_h, f_w, in_c]; g: input, filter, output sizes, strides, padding. */
void mn_transpose_conv_s8(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output);
void mn_transpose_conv_s16(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int16_t *input,
    const int8_t *filter, const mn_bias16_t *bias, int16_t *output);
void mn_transpose_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
    const float *filter, const float *bias, float *output);

/* ---- BATCH_MATMUL -------------------------------------------------------- */

#define MN_BMM_MAX_BATCH_DIMS 3

typedef struct {
    int32_t rows, cols, depth;                 /* M, N, K of out[M, N] = lhs[M, K] rhs[K, N] */
    int32_t batches;                           /* product of batch[] */
    int32_t batch[MN_BMM_MAX_BATCH_DIMS];      /* output batch dims, right-aligned, 1 = none */
    int32_t lhs_stride[MN_BMM_MAX_BATCH_DIMS]; /* elements per batch step; 0: broadcast */
    int32_t rhs_stride[MN_BMM_MAX_BATCH_DIMS];
    int32_t lhs_offset, rhs_offset, output_offset;   /* -zero points, output zero point */
    int32_t mult, shift, act_min, act_max;
    uint8_t adj_x, adj_y, dtype;
    uint8_t hybrid, asymmetric;                /* float32 lhs, int8 rhs; asymmetric_quantize_inputs */
    float rhs_scale;                           /* hybrid */
    int32_t scratch;                           /* hybrid: mn_bmm_hybrid_scratch bytes */
} mn_bmm_params_t;

void mn_batch_matmul_f32(const mn_bmm_params_t *p, const float *lhs, const float *rhs, float *out);
void mn_batch_matmul_s8(const mn_bmm_params_t *p, const int8_t *lhs, const int8_t *rhs, int8_t *out);
void mn_batch_matmul_s16(const mn_bmm_params_t *p, const int16_t *lhs, const int16_t *rhs, int16_t *out);
/* Hybrid (TFLite's EvalHybrid): each lhs row of depth K quantized on the fly (mn_quantize_dynamic_s8),
 * int32 products with the int8 rhs scaled by row scale * rhs scale. scratch: mn_bmm_hybrid_scratch(p). */
size_t mn_bmm_hybrid_scratch(const mn_bmm_params_t *p);
void mn_batch_matmul_hybrid(const mn_bmm_params_t *p, const float *lhs, const int8_t *rhs, float *out,
    void *scratch);

/* ---- FULLY_CONNECTED ---------------------------------------------------- */

typedef struct {
    int batches, depth, units;
    int32_t input_offset, weights_offset, output_offset;
    int32_t act_min, act_max;
    int32_t mult;             /* per-tensor */
    int32_t shift;
    const int32_t *mult_pc;   /* per-channel, or NULL */
    const int8_t *shift_pc;
    float in_scale, out_scale, w_scale;   /* R of mn_fc_round_fast's slow path (mn_fc_ratio) */
    const uint8_t *w_scales;              /* per-channel: the model's little-endian float32 scales */
} mn_fc_params_t;

/* Output unit u's scale ratio R in double precision, as LiteRT computes it. */
static inline double mn_fc_ratio(const mn_fc_params_t *p, int u) {
    const float ws = p->w_scales ? mn_ld_f32(p->w_scales + 4 * (size_t)u) : p->w_scale;
    return (double)p->in_scale * (double)ws / (double)p->out_scale;
}

/* int32 accumulator acc of output unit u requantized as LiteRT's FULLY_CONNECTED (mn_fc_round_fast). */
static inline int32_t mn_fc_requant(const mn_fc_params_t *p, int32_t acc, int u, int32_t qm, int shift) {
    int32_t v;
    return mn_fc_round_fast(acc, qm, shift, &v) ? v : mn_round_away_f64(acc, mn_fc_ratio(p, u));
}

void mn_fully_connected_s8(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output);
void mn_fully_connected_s8_per_channel(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output);
void mn_fully_connected_s16(const mn_fc_params_t *p,
    const int16_t *input, const int8_t *weights, const mn_bias16_t *bias, int16_t *output);
void mn_fully_connected_f32(int batches, int depth, int units, float act_min, float act_max,
    const float *input, const float *weights, const float *bias, float *output);

/* Hybrid FULLY_CONNECTED (float32 activations, int8 symmetric weights, float32 bias and output):
 * each batch row is quantized to int8 on the fly (mn_quantize_dynamic_s8), multiplied in int32 and
 * scaled back by row scale * weights scale, as TFLite's EvalHybrid. */
typedef struct {
    int batches, depth, units;
    float act_min, act_max;
    float w_scale;              /* per-tensor weights scale */
    const float *w_scales;      /* [units] per-channel weights scales, or NULL */
    uint8_t asymmetric;         /* asymmetric_quantize_inputs */
} mn_fc_hybrid_params_t;

/* qbuf: scratch of depth bytes for one quantized input row. */
void mn_fully_connected_hybrid(const mn_fc_hybrid_params_t *p, const float *input, const int8_t *weights,
    const float *bias, float *output, int8_t *qbuf);


/* ---- AVERAGE_POOL_2D / MAX_POOL_2D -------------------------------------- */

typedef struct {
    int batches, in_h, in_w, channels;
    int out_h, out_w;
    int f_h, f_w;
    int stride_h, stride_w;
    int pad_h, pad_w;
} mn_pool_geom_t;

/* Return 0, or -1 if a window covers no input element (TFLite fails too). */
int mn_average_pool_s8(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max,
    const int8_t *input, int8_t *output);
int mn_average_pool_s16(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max,
    const int16_t *input, int16_t *output);
int mn_average_pool_f32(const mn_pool_geom_t *g, float act_min, float act_max,
    const float *input, float *output);
void mn_max_pool_s8(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max,
    const int8_t *input, int8_t *output);
void mn_max_pool_s16(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max,
    const int16_t *input, int16_t *output);
void mn_max_pool_f32(const mn_pool_geom_t *g, float act_min, float act_max,
    const float *input, float *output);

/* ---- SOFTMAX ------------------------------------------------------------ */

/* Quantized softmax (TFLite reference, gemmlowp fixed point), int8 input. */
typedef struct {
    int32_t input_mult;
    int32_t input_left_shift;
    int32_t diff_min;
} mn_softmax_q_t;

/* Returns 0, or -1 when beta * input_scale is too small to represent. */
int mn_softmax_q_init(mn_softmax_q_t *p, float input_scale, float beta);
void mn_softmax_s8_s8(const mn_softmax_q_t *p, int outer, int depth,
    const int8_t *input, int8_t *output);
void mn_softmax_s8_s16(const mn_softmax_q_t *p, int outer, int depth,
    const int8_t *input, int16_t *output);
void mn_softmax_f32(int outer, int depth, float beta, const float *input, float *output);
/* int16 -> int16 (TFLite SoftmaxInt16): two MN_LUT_S16_SIZE tables built in prepare. */
typedef struct {
    int32_t mult;
    int shift;
    const int16_t *exp_lut;     /* exp(x), x in [-10, 0] */
    const int16_t *recip_lut;   /* 1 / (1 + x), x in [0, 1] */
} mn_softmax_s16_t;
void mn_softmax_s16(const mn_softmax_s16_t *p, int outer, int depth, const int16_t *input, int16_t *output);

/* ---- ADD ---------------------------------------------------------------- */

#define MN_ADD_MAX_DIMS 6

typedef struct {
    int32_t input1_offset, input2_offset, output_offset;
    int32_t input1_mult, input2_mult, output_mult;
    int input1_shift, input2_shift, output_shift;  /* <= 0 */
    int left_shift;
    int32_t act_min, act_max;
} mn_add_quant_t;

/* Broadcast description: output dims and, per input, element strides per
 * output dim (0 where the input is broadcast).  ndims <= MN_ADD_MAX_DIMS. */
typedef struct {
    int ndims;
    int32_t out_dims[MN_ADD_MAX_DIMS];
    int32_t stride1[MN_ADD_MAX_DIMS];
    int32_t stride2[MN_ADD_MAX_DIMS];
    int32_t stride3[MN_ADD_MAX_DIMS];   /* third input (SELECT_V2), else unused */
    int broadcast;  /* 0: identical shapes, flat loop over size elements */
    int32_t size;
} mn_bcast_t;

/* Fill b from the two input shapes (right-aligned, numpy rules).  Returns 0,
 * -1 if the shapes are not broadcast-compatible or have too many dims, -2 if the output would
 * have more than INT32_MAX elements. */
int mn_bcast_init(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2);
/* The same for three inputs (d3 may be NULL for two). */
int mn_bcast_init3(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2,
    const int32_t *d3, int n3);

/*
 * Runs the statement (the macro's remaining arguments) once per output element k in row-major
 * order, with o1, o2, o3 the matching element offsets of the inputs (all equal to k when no input
 * is broadcast).
 */
#define MN_BCAST_FOR(b, ...) \
    do { \
        const mn_bcast_t *bb_ = (b); \
        if (!bb_->broadcast) { \
            for (int32_t k = 0; k < bb_->size; ++k) { \
                const int32_t o1 = k, o2 = k, o3 = k; \
                (void)o1; (void)o2; (void)o3; \
                __VA_ARGS__; \
            } \
            break; \
        } \
        int32_t idx_[MN_ADD_MAX_DIMS] = {0}; \
        int32_t o1 = 0, o2 = 0, o3 = 0; /* (two-input ops never read o3) */ \
        (void)o3; \
        for (int32_t k = 0; k < bb_->size; ++k) { \
            __VA_ARGS__; \
            for (int d_ = bb_->ndims - 1; d_ >= 0; --d_) { \
                o1 += bb_->stride1[d_]; \
                o2 += bb_->stride2[d_]; \
                o3 += bb_->stride3[d_]; \
                if (++idx_[d_] < bb_->out_dims[d_]) { \
                    break; \
                } \
                o1 -= bb_->stride1[d_] * bb_->out_dims[d_]; \
                o2 -= bb_->stride2[d_] * bb_->out_dims[d_]; \
                o3 -= bb_->stride3[d_] * bb_->out_dims[d_]; \
                idx_[d_] = 0; \
            } \
        } \
    } while (0)

void mn_add_quant_init(mn_add_quant_t *p, float in1_scale, int32_t in1_zp,
    float in2_scale, int32_t in2_zp, float out_scale, int32_t out_zp,
    int32_t act_min, int32_t act_max);
void mn_add_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out);
void mn_add_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out);

/* int16 (zero points 0), general scales: inputs shifted left by 15 instead of 20. */
void mn_add_quant_init_s16(mn_add_quant_t *p, float in1_scale, float in2_scale, float out_scale,
    int32_t act_min, int32_t act_max);
/* SUB: the ADD parameters, input1 - input2. */
void mn_sub_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out);
void mn_sub_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out);
void mn_addsub_s16(const mn_add_quant_t *p, const mn_bcast_t *b, int sub,
    const int16_t *in1, const int16_t *in2, int16_t *out);
void mn_addsub_s32(const mn_bcast_t *b, int sub, int32_t act_min, int32_t act_max,
    const int32_t *in1, const int32_t *in2, int32_t *out);

/* int16 with power-of-two scales and zero points 0, same-shape inputs of n elements: each input
 * is rounding-shifted right by its shift (one of them is 0), then added / subtracted with 16-bit
 * saturation. */
typedef struct {
    int right_shift1, right_shift2;   /* 0..31 */
    int32_t act_min, act_max;
} mn_addsub_pot_t;
void mn_addsub_s16_pot(const mn_addsub_pot_t *p, size_t n, int sub,
    const int16_t *in1, const int16_t *in2, int16_t *out);

/* ---- MUL ---------------------------------------------------------------- */

typedef struct {
    int32_t input1_offset, input2_offset, output_offset;
    int32_t mult;
    int shift;
    int32_t act_min, act_max;
} mn_mul_quant_t;

void mn_mul_quant_init(mn_mul_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp,
    float out_scale, int32_t out_zp, int32_t act_min, int32_t act_max);
void mn_mul_s8(const mn_mul_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2, int8_t *out);
void mn_mul_s16(const mn_mul_quant_t *p, const mn_bcast_t *b, const int16_t *in1, const int16_t *in2,
    int16_t *out);
void mn_mul_f32(const mn_bcast_t *b, float act_min, float act_max, const float *in1, const float *in2,
    float *out);
void mn_mul_s32(const mn_bcast_t *b, int32_t act_min, int32_t act_max, const int32_t *in1, const int32_t *in2,
    int32_t *out);

/* ---- DIV / FLOOR_DIV / FLOOR_MOD ------------------------------------------ */

enum { MN_DIV = 0, MN_FLOOR_DIV = 1, MN_FLOOR_MOD = 2 };
/* float32: DIV a / b, FLOOR_DIV floor(a / b) in double, FLOOR_MOD fmod with the divisor's sign. */
void mn_div_f32(int op, const mn_bcast_t *b, float act_min, float act_max, const float *in1, const float *in2,
    float *out);
/* Integers (raw values, no quantization), size 1, 2 or 4 bytes. DIV truncates, FLOOR_* round
 * toward -inf. Returns -1 (output incomplete) on a zero divisor. */
int mn_div_int(int op, int size, const mn_bcast_t *b, int32_t act_min, int32_t act_max, const void *in1,
    const void *in2, void *out);

/* ---- SQUARED_DIFFERENCE ---------------------------------------------------- */

typedef struct {
    int32_t input1_offset, input2_offset, output_offset;
    int32_t input1_mult, input2_mult, output_mult;
    int input1_shift, input2_shift, output_shift;
} mn_sqdiff_quant_t;
void mn_sqdiff_quant_init(mn_sqdiff_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp,
    float out_scale, int32_t out_zp);
void mn_sqdiff_s8(const mn_sqdiff_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    int8_t *out);
void mn_sqdiff_f32(const mn_bcast_t *b, const float *in1, const float *in2, float *out);
void mn_sqdiff_s32(const mn_bcast_t *b, const int32_t *in1, const int32_t *in2, int32_t *out);

/* ---- MAXIMUM / MINIMUM (raw values: both inputs share the output's quantization) ---------- */

/* dtype MN_FLOAT32 / MN_INT8 / MN_INT16 / MN_INT32; is_max selects MAXIMUM. */
void mn_maxmin(int dtype, int is_max, const mn_bcast_t *b, const void *in1, const void *in2, void *out);

/* ---- comparisons ------------------------------------------------------------ */

enum { MN_CMP_EQ = 0, MN_CMP_NE, MN_CMP_LT, MN_CMP_LE, MN_CMP_GT, MN_CMP_GE };
/* int8 / uint8 inputs of different quantization are compared on a common scale (TFLite: values
 * shifted left by 8, rescaled by scale / max(scale1, scale2) each). */
typedef struct {
    int32_t input1_offset, input2_offset;
    int32_t input1_mult, input2_mult;
    int input1_shift, input2_shift;
    int left_shift;
} mn_cmp_quant_t;
void mn_cmp_quant_init(mn_cmp_quant_t *p, float in1_scale, int32_t in1_zp, float in2_scale, int32_t in2_zp);
void mn_compare_s8(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    uint8_t *out);
void mn_compare_u8(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2,
    uint8_t *out);
void mn_compare_s16(int op, const mn_cmp_quant_t *p, const mn_bcast_t *b, const int16_t *in1, const int16_t *in2,
    uint8_t *out);
/* Raw comparison of MN_FLOAT32 / MN_INT16 / MN_INT32 / MN_BOOL values; output bool (0/1 bytes). */
void mn_compare(int op, int dtype, const mn_bcast_t *b, const void *in1, const void *in2, uint8_t *out);

/* ---- LOGICAL_AND / LOGICAL_OR / LOGICAL_NOT (bool bytes, 0 = false) -------------------- */

void mn_logical_and(const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2, uint8_t *out);
void mn_logical_or(const mn_bcast_t *b, const uint8_t *in1, const uint8_t *in2, uint8_t *out);
void mn_logical_not(size_t n, const uint8_t *in, uint8_t *out);

/* ---- SELECT / SELECT_V2 ------------------------------------------------------- */

/* out[k] = cond[o1] ? x[o2] : y[o3] for elements of `size` bytes (1, 2 or 4). */
void mn_select(int size, const mn_bcast_t *b, const uint8_t *cond, const void *x, const void *y, void *out);

/* ---- QUANTIZE / DEQUANTIZE / RESHAPE ------------------------------------ */

void mn_quantize_f32_s8(size_t n, float scale, int32_t zp, const float *in, int8_t *out);
void mn_quantize_f32_u8(size_t n, float scale, int32_t zp, const float *in, uint8_t *out);
void mn_quantize_f32_s16(size_t n, float scale, int32_t zp, const float *in, int16_t *out);

/* Requantize: out = clamp(MBQM(in - in_zp, mult, shift) + out_zp). */
typedef struct {
    int32_t in_zp, out_zp, mult;
    int shift;
} mn_requant_t;
void mn_requantize_s8_s8(size_t n, const mn_requant_t *r, const int8_t *in, int8_t *out);
void mn_requantize_s8_u8(size_t n, const mn_requant_t *r, const int8_t *in, uint8_t *out);
void mn_requantize_s8_s16(size_t n, const mn_requant_t *r, const int8_t *in, int16_t *out);
void mn_requantize_u8_s8(size_t n, const mn_requant_t *r, const uint8_t *in, int8_t *out);
void mn_requantize_s16_s8(size_t n, const mn_requant_t *r, const int16_t *in, int8_t *out);
void mn_requantize_s16_s16(size_t n, const mn_requant_t *r, const int16_t *in, int16_t *out);
void mn_requantize_s16_s32(size_t n, const mn_requant_t *r, const int16_t *in, int32_t *out);
void mn_requantize_u8_u8(size_t n, const mn_requant_t *r, const uint8_t *in, uint8_t *out);
void mn_requantize_s32_s8(size_t n, const mn_requant_t *r, const int32_t *in, int8_t *out);
void mn_requantize_s32_s16(size_t n, const mn_requant_t *r, const int32_t *in, int16_t *out);
/* Per-channel float -> int (TFLite PerChannelQuantize): element i is in channel
 * (i / inner) % channels. */
void mn_quantize_f32_s8_per_channel(size_t n, int channels, size_t inner, const float *scales,
    const int32_t *zps, const float *in, int8_t *out);
void mn_quantize_f32_u8_per_channel(size_t n, int channels, size_t inner, const float *scales,
    const int32_t *zps, const float *in, uint8_t *out);
void mn_quantize_f32_s16_per_channel(size_t n, int channels, size_t inner, const float *scales,
    const int32_t *zps, const float *in, int16_t *out);

void mn_dequantize_s8_f32(size_t n, float scale, int32_t zp, const int8_t *in, float *out);
void mn_dequantize_u8_f32(size_t n, float scale, int32_t zp, const uint8_t *in, float *out);
void mn_dequantize_s16_f32(size_t n, float scale, int32_t zp, const int16_t *in, float *out);
void mn_dequantize_f16_f32(size_t n, const uint16_t *in, float *out);
/* Per-channel: element i belongs to channel (i / inner) % channels. */
void mn_dequantize_s8_f32_per_channel(size_t n, int channels, size_t inner,
    const float *scales, const int32_t *zps, const int8_t *in, float *out);
void mn_dequantize_u8_f32_per_channel(size_t n, int channels, size_t inner,
    const float *scales, const int32_t *zps, const uint8_t *in, float *out);

void mn_reshape_copy(size_t nbytes, const void *in, void *out);

/* ---- SVDF --------------------------------------------------------------- */

typedef struct {
    int batches, input_size, filters, units, rank, memory;
    int32_t input_zp, output_zp;
    int32_t mult1, mult2;
    int shift1, shift2;
} mn_svdf_params_t;

/* scratch: batches * filters int32; scratch_out: batches * units int32. */
void mn_svdf_s8(const mn_svdf_params_t *p, const int8_t *input,
    const int8_t *w_feature, const int16_t *w_time, const int32_t *bias,
    int16_t *state, int32_t *scratch, int32_t *scratch_out, int8_t *output);
/* The same with int8 weights_time and an int8 state (TFLM; LiteRT has no such kernel). */
void mn_svdf_s8_state8(const mn_svdf_params_t *p, const int8_t *input,
    const int8_t *w_feature, const int8_t *w_time, const int32_t *bias,
    int8_t *state, int32_t *scratch, int32_t *scratch_out, int8_t *output);
/* The steps of mn_svdf_s8 an optimized variant shares: shift every filter's memory by one (the
 * whole buffer of total values left by one), and bias + rank reduction + requantization of the
 * time-weighted sums in scratch into output. */
void mn_svdf_shift_state_s16(int16_t *state, size_t total);
void mn_svdf_s8_output(const mn_svdf_params_t *p, const int32_t *bias, const int32_t *scratch,
    int32_t *scratch_out, int8_t *output);
/* For the optimized variants, which keep nothing per filter or unit: the time-weighted sums
 * t[0..n) of the next n filters of a batch row are added to their units' sums (bias first), and
 * each unit is requantized into out as soon as its rank filters are summed. Start with
 * *us = (mn_svdf_units_t){ 0 } for each batch row. */
typedef struct {
    uint32_t sum;
    int32_t filters, unit;   /* filters summed into the current unit */
} mn_svdf_units_t;
/* Filters per pass of the optimized variants: their sums live on the stack (64 bytes). */
#define MN_SVDF_BLOCK 16
void mn_svdf_s8_units(const mn_svdf_params_t *p, const int32_t *bias, const int32_t *t, int n, int8_t *out,
    mn_svdf_units_t *us);
/* scratch: batches * filters floats. */
void mn_svdf_f32(const mn_svdf_params_t *p, int act, const float *input,
    const float *w_feature, const float *w_time, const float *bias,
    float *state, float *scratch, float *output);
/* Hybrid (TFLite's EvalHybridSVDF): each input row quantized on the fly (mn_quantize_dynamic_s8),
 * the feature stage in int32 scaled by row scale * weights_feature scale, the rest as mn_svdf_f32
 * with w_time = the dequantized int8 weights_time. qbuf: input_size bytes. */
void mn_svdf_hybrid(const mn_svdf_params_t *p, int act, int asymmetric, const float *input,
    const int8_t *w_feature, float wf_scale, const float *w_time, const float *bias,
    float *state, float *scratch, int8_t *qbuf, float *output);


/* ---- data movement (copy.c): strided copies shared by TRANSPOSE, SLICE, PAD, ... ---------- */

#define MN_COPY_MAX_DIMS 8

/* out[sum_d i_d * out_stride[d]] = in[sum_d i_d * in_stride[d]] for every index i < dims
 * (strides in elements, may be negative or 0). */
typedef struct {
    int ndim;
    int32_t dims[MN_COPY_MAX_DIMS];
    int32_t in_stride[MN_COPY_MAX_DIMS];
    int32_t out_stride[MN_COPY_MAX_DIMS];
} mn_copy_plan_t;

/* Drops size-1 dims and merges dims that are contiguous in both input and output, so the
 * innermost run is as long as possible (a plain memcpy when both strides are 1). */
void mn_copy_plan_simplify(mn_copy_plan_t *p);
/* Row-major strides (elements) of dims[0..n). */
void mn_strides(const int32_t *dims, int n, int32_t *strides);
/* Element size es in bytes: 1, 2, 4 or 8 (others are copied byte-wise). */
void mn_copy_strided(const mn_copy_plan_t *p, size_t es, const void *in, void *out);
/* n elements of size es, each a copy of *value. */
void mn_fill_elems(void *out, size_t n, size_t es, const void *value);

/* CONCATENATION of uint8 inputs quantized differently from the output (TFLite
 * ConcatenationWithScaling): out = clamp(round(in * scale + bias) + out_zp, 0, 255). */
void mn_concat_requant_u8(size_t n, float scale, float bias, int32_t out_zp, const uint8_t *in, uint8_t *out);

/* ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR (NHWC) ---- */
typedef struct {
    int32_t batches, in_h, in_w, depth, out_h, out_w;
    int32_t align_corners, half_pixel;
} mn_resize_geom_t;
void mn_resize_bilinear_f32(const mn_resize_geom_t *g, const float *input, float *output);
void mn_resize_bilinear_u8(const mn_resize_geom_t *g, const uint8_t *input, uint8_t *output);
void mn_resize_bilinear_s8(const mn_resize_geom_t *g, const int8_t *input, int8_t *output);
void mn_resize_bilinear_s16(const mn_resize_geom_t *g, const int16_t *input, int16_t *output);
/* Element size es: any dtype. */
void mn_resize_nearest(const mn_resize_geom_t *g, size_t es, const void *input, void *output);

/* ---- activations, unary math, casts (ops-b) ------------------------------ */

/* An int8 -> int8 function as a 256-entry table indexed by (uint8_t)x, built like TFLite's
 * LUTPopulate<int8_t>: f evaluated in float on the dequantized input, rounded half away from
 * zero on the output scale, zero point added in float, clamped. */
typedef float (*mn_lut_fn_t)(float x, const void *arg);
void mn_lut_s8_init(int8_t *lut, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
    mn_lut_fn_t f, const void *arg);
void mn_lut_s8(size_t n, const int8_t *lut, const int8_t *in, int8_t *out);

/* int16 -> int16 function as 513 entries with linear interpolation (TFLite LUTPopulate<int16_t>
 * with double arithmetic, and LUTLookup). */
#define MN_LUT_S16_SIZE 513
void mn_lut_s16_init_f64(int16_t *lut, double in_scale, int32_t in_zp, double out_scale,
    int32_t out_zp, double (*f)(double));
static inline int16_t mn_lut_s16_lookup(int16_t x, const int16_t *lut) {
    const int index = 256 + (x >> 7);
    const int16_t offset = (int16_t)(x & 0x7f);
    const int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
    return (int16_t)(lut[index] + ((slope * offset + 64) >> 7));
}

/* TFLite CheckedLog2: *log2 = round(log2(x)); nonzero when x is a power of two within 1e-3. */
int mn_checked_log2(float x, int *log2);

/* int16 LOGISTIC / TANH (TFLite reference_integer_ops, table of sigmoid(i / 24) with linear
 * interpolation). mult == 0 means a power-of-two input scale (then 3 << shift is used). */
typedef struct {
    int32_t mult;
    int shift;
} mn_sig16_t;
extern const uint16_t mn_sigmoid_table_u16[256];
/* Returns 0, -1 if out_scale is not 2^-15, -2 if in_scale is too large (>= 5.3). A power-of-two
 * in_scale is used directly when its shift 12 + log2(in_scale) is in [0, max_pot_shift]. */
int mn_sig16_init(mn_sig16_t *p, float in_scale, float out_scale, int max_pot_shift);
void mn_logistic_q_s16(size_t n, const mn_sig16_t *p, const int16_t *in, int16_t *out);
void mn_tanh_q_s16(size_t n, const mn_sig16_t *p, const int16_t *in, int16_t *out);
void mn_logistic_f32(size_t n, const float *in, float *out);
void mn_tanh_f32(size_t n, const float *in, float *out);

/* RELU family: out = clamp(out_zp + MBQM(in - in_zp), lo, hi). */
typedef struct {
    int32_t in_zp, out_zp, mult, lo, hi;
    int shift;
} mn_relu_q_t;
void mn_relu_q_s8(size_t n, const mn_relu_q_t *p, const int8_t *in, int8_t *out);
void mn_relu_q_s16(size_t n, const mn_relu_q_t *p, const int16_t *in, int16_t *out);
void mn_relu_f32(size_t n, float lo, float hi, const float *in, float *out);

/* LEAKY_RELU: x >= 0 scaled by the identity multiplier, x < 0 by |alpha|'s, negated if
 * alpha < 0. */
typedef struct {
    int32_t in_zp, out_zp, mult_id, mult_alpha;
    int shift_id, shift_alpha, alpha_neg;
} mn_leaky_q_t;
void mn_leaky_relu_s8(size_t n, const mn_leaky_q_t *p, const int8_t *in, int8_t *out);
void mn_leaky_relu_s16(size_t n, const mn_leaky_q_t *p, const int16_t *in, int16_t *out);
void mn_leaky_relu_f32(size_t n, float alpha, const float *in, float *out);

/* HARD_SWISH int8 (TFLite reference: int16 fixed point, "reluish" multiplier). */
typedef struct {
    int32_t in_zp, out_zp;
    int16_t out_mult, relu_mult;
    int out_exp, relu_exp;
} mn_hard_swish_q_t;
void mn_hard_swish_s8(size_t n, const mn_hard_swish_q_t *p, const int8_t *in, int8_t *out);
void mn_hard_swish_f32(size_t n, const float *in, float *out);


/* Elementwise unary math (unary.c): one float function per op, applied to float32 directly and,
 * for the ops TFLite quantizes through a table, to build the int8 / int16 table in prepare. */
enum {
    MN_UNARY_ABS, MN_UNARY_CEIL, MN_UNARY_COS, MN_UNARY_ELU, MN_UNARY_EXP, MN_UNARY_FLOOR,
    MN_UNARY_GELU, MN_UNARY_GELU_TANH, MN_UNARY_LOG, MN_UNARY_NEG, MN_UNARY_ROUND, MN_UNARY_RSQRT,
    MN_UNARY_SIN, MN_UNARY_SQRT, MN_UNARY_SQUARE,
};
float mn_unary_fn(int op, float x);
void mn_unary_f32(int op, size_t n, const float *in, float *out);
/* int16 table from a float function (TFLite LUTPopulate<int16_t> in float). */
void mn_lut_s16_init(int16_t *lut, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
    mn_lut_fn_t f, const void *arg);
void mn_lut_s16(size_t n, const int16_t *lut, const int16_t *in, int16_t *out);
/* Quantized ABS: |x - in_zp| requantized (mult == 0: same scale, no rescale). */
void mn_abs_q_s8(size_t n, const mn_requant_t *r, const int8_t *in, int8_t *out);
void mn_abs_q_s16(size_t n, const mn_requant_t *r, const int16_t *in, int16_t *out);

/* L2_NORMALIZATION along the last dimension (l2norm.c). */
void mn_l2norm_s8(int outer, int depth, int32_t in_zp, const int8_t *input, int8_t *output);
void mn_l2norm_f32(int outer, int depth, const float *input, float *output);

/* LOG_SOFTMAX along the last dimension (log_softmax.c). */
typedef struct {
    int32_t mult, reverse_mult, diff_min;
    int left_shift, reverse_shift;
} mn_log_softmax_q_t;
/* Returns 0, or -1 when the input scale is too small to represent. */
int mn_log_softmax_q_init(mn_log_softmax_q_t *p, float input_scale);
/* gemmlowp log(x) for x >= 1: x raw Q12.19, result raw Q5.26. */
int32_t mn_log_q12_to_q5(int32_t x);
void mn_log_softmax_s8(const mn_log_softmax_q_t *p, int outer, int depth, const int8_t *input, int8_t *output);
void mn_log_softmax_f32(int outer, int depth, const float *input, float *output);

/* PRELU (prelu.c): alpha broadcast to the input shape (right-aligned, numpy rules). */
#define MN_PRELU_MAX_DIMS 6
typedef struct {
    int ndims;
    int32_t size;
    int32_t dims[MN_PRELU_MAX_DIMS];
    int32_t alpha_stride[MN_PRELU_MAX_DIMS];   /* 0 where alpha is broadcast */
} mn_prelu_shape_t;
typedef struct {
    int32_t in_zp, alpha_zp, out_zp, mult_pos, mult_neg;
    int shift_pos, shift_neg;
} mn_prelu_q_t;
/* Returns 0, or -1 if alpha does not broadcast to the input shape. */
int mn_prelu_shape_init(mn_prelu_shape_t *p, const int32_t *in_dims, int in_n, const int32_t *alpha_dims, int alpha_n);
void mn_prelu_s8(const mn_prelu_shape_t *s, const mn_prelu_q_t *q, const int8_t *in, const int8_t *alpha, int8_t *out);
void mn_prelu_f32(const mn_prelu_shape_t *s, const float *in, const float *alpha, float *out);

/* CAST between MN_FLOAT32, MN_INT8, MN_UINT8, MN_INT16, MN_INT32, MN_BOOL (cast.c). */
void mn_cast(size_t n, int from, int to, const void *in, void *out);

#ifdef __cplusplus
}
#endif

#endif /* MN_REF_H */
