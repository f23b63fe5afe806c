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

void mn_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output);
void mn_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output);

void mn_depthwise_conv_s8_per_channel(const mn_conv_geom_t *g, const mn_conv_quant_t *q,
    const int8_t *input, const int8_t *filter, const int32_t *bias, int8_t *output);
void mn_depthwise_conv_f32(const mn_conv_geom_t *g, float act_min, float act_max,
    const float *input, const float *filter, const float *bias, float *output);

/* ---- FULLY_CONNECTED ---------------------------------------------------- */

typedef struct {
    int batches, depth, units;
    int32_t input_offset, weights_offset, output_offset;
    int32_t act_min, act_max;
    int32_t mult;             /* per-tensor */
    int32_t shift;
    const int32_t *mult_pc;   /* per-channel, or NULL */
    const int8_t *shift_pc;
} mn_fc_params_t;

void mn_fully_connected_s8(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output);
void mn_fully_connected_s8_per_channel(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output);
void mn_fully_connected_f32(int batches, int depth, int units, float act_min, float act_max,
    const float *input, const float *weights, const float *bias, float *output);

/* FC per-tensor multiplier, TFLite GetQuantizedConvolutionMultipler: the
 * input*filter scale product is formed in float, then divided in double. */
double mn_fc_real_multiplier(float input_scale, float filter_scale, float output_scale);

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
    int broadcast;  /* 0: identical shapes, flat loop over size elements */
    int32_t size;
} mn_bcast_t;

/* Fill b from the two input shapes (right-aligned, numpy rules).  Returns 0,
 * or -1 if the shapes are not broadcast-compatible or have too many dims. */
int mn_bcast_init(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2);

void mn_add_quant_init(mn_add_quant_t *p, float in1_scale, int32_t in1_zp,
    float in2_scale, int32_t in2_zp, float out_scale, int32_t out_zp,
    int32_t act_min, int32_t act_max);
void mn_add_s8(const mn_add_quant_t *p, const mn_bcast_t *b,
    const int8_t *in1, const int8_t *in2, int8_t *out);
void mn_add_f32(const mn_bcast_t *b, float act_min, float act_max,
    const float *in1, const float *in2, float *out);

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
void mn_requantize_u8_s8(size_t n, const mn_requant_t *r, const uint8_t *in, int8_t *out);
void mn_requantize_s16_s8(size_t n, const mn_requant_t *r, const int16_t *in, int8_t *out);
void mn_requantize_s16_s16(size_t n, const mn_requant_t *r, const int16_t *in, int16_t *out);
void mn_requantize_s16_s32(size_t n, const mn_requant_t *r, const int16_t *in, int32_t *out);

void mn_dequantize_s8_f32(size_t n, float scale, int32_t zp, const int8_t *in, float *out);
void mn_dequantize_u8_f32(size_t n, float scale, int32_t zp, const uint8_t *in, float *out);
void mn_dequantize_s16_f32(size_t n, float scale, int32_t zp, const int16_t *in, float *out);
void mn_dequantize_f16_f32(size_t n, const uint16_t *in, float *out);
/* Per-channel: element i belongs to channel (i / inner) % channels. */
void mn_dequantize_s8_f32_per_channel(size_t n, int channels, size_t inner,
    const float *scales, const int32_t *zps, const int8_t *in, float *out);

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
/* scratch: batches * filters floats. */
void mn_svdf_f32(const mn_svdf_params_t *p, int act, const float *input,
    const float *w_feature, const float *w_time, const float *bias,
    float *state, float *scratch, float *output);


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

#ifdef __cplusplus
}
#endif

#endif /* MN_REF_H */
