/*
 * Kernel variants: optimized compute functions that replace a reference compute function for the
 * shapes they handle, chosen per node at prepare time.
 *
 * The reference kernels (kernels/reference/) own each op's prepare and eval glue: validation,
 * quantization, persistent tables. An optimized backend (kernels/<backend>/, e.g. dsp for
 * Armv7E-M, mve for Armv8.1-M Helium, generic for fast portable C) only supplies compute functions
 * with the reference function's parameters, grouped in one mn_backend_t. At prepare the glue asks
 * mn_select_*() for the first variant, over the backends compiled in (in order of preference),
 * whose fits() accepts the node's parameters; none means the reference function. A variant must
 * produce exactly the reference function's output bits for every input it accepts.
 *
 * Which backends are compiled in is a build setting (MICRONN_KERNELS="mve dsp generic"; the board
 * picks a default, KERNELS=reference builds none): each sets MICRONN_KERNELS_<NAME>=1 and compiles
 * the .c files of kernels/<name>/, which define mn_backend_<name>.
 *
 * Optional per-variant memory, requested by the glue in prepare:
 *   scratch_bytes()  scratch live only while the op runs (im2col columns, padded rows, ...);
 *   data_bytes()     persistent data filled once by precompute() from the constant weights (e.g.
 *                    per-channel sums folded into the bias); both reach run() in mn_vbuf_t.
 */
#ifndef MN_VARIANTS_H
#define MN_VARIANTS_H

#include <stdbool.h>

#include "reference/mn_ref.h"
#include "../mn_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory a variant asked for, as run() receives it (NULL where it asked for none). */
typedef struct mn_vbuf {
    void *scratch;
    const void *data;
} mn_vbuf_t;

/* CONV_2D and DEPTHWISE_CONV_2D, int8 (mn_conv_s8_per_channel / mn_depthwise_conv_s8_per_channel). */
typedef struct mn_conv_s8_variant {
    const char *name;   /* "<backend>.<function>", e.g. "dsp.conv_s8_1x1" */
    bool (*fits)(const mn_conv_geom_t *g, const mn_conv_quant_t *q);
    size_t (*scratch_bytes)(const mn_conv_geom_t *g);   /* NULL: none */
    size_t (*data_bytes)(const mn_conv_geom_t *g);      /* NULL: none */
    void (*precompute)(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
        const int32_t *bias, void *data);
    void (*run)(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
        const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf);
} mn_conv_s8_variant_t;

/* CONV_2D and DEPTHWISE_CONV_2D, float32 (mn_conv_f32 / mn_depthwise_conv_f32). */
typedef struct mn_conv_f32_variant {
    const char *name;
    bool (*fits)(const mn_conv_geom_t *g);
    size_t (*scratch_bytes)(const mn_conv_geom_t *g);   /* NULL: none */
    void (*run)(const mn_conv_geom_t *g, float act_min, float act_max, const float *input,
        const float *filter, const float *bias, float *output, const mn_vbuf_t *buf);
} mn_conv_f32_variant_t;

/* FULLY_CONNECTED int8: per-tensor (p->mult_pc == NULL, weights offset allowed) and per-channel. */
typedef struct mn_fc_s8_variant {
    const char *name;
    bool (*fits)(const mn_fc_params_t *p);
    size_t (*scratch_bytes)(const mn_fc_params_t *p);   /* NULL: none */
    size_t (*data_bytes)(const mn_fc_params_t *p);      /* NULL: none */
    void (*precompute)(const mn_fc_params_t *p, const int8_t *weights, const int32_t *bias, void *data);
    void (*run)(const mn_fc_params_t *p, const int8_t *input, const int8_t *weights,
        const int32_t *bias, int8_t *output, const mn_vbuf_t *buf);
} mn_fc_s8_variant_t;

/* FULLY_CONNECTED float32 (p: batches, depth, units). */
typedef struct mn_fc_f32_variant {
    const char *name;
    bool (*fits)(const mn_fc_params_t *p);
    void (*run)(const mn_fc_params_t *p, float act_min, float act_max, const float *input,
        const float *weights, const float *bias, float *output);
} mn_fc_f32_variant_t;

/* ADD and SUB int8 (mn_add_s8, mn_sub_s8: sub = 0 / 1; one variant does both). */
typedef struct mn_add_s8_variant {
    const char *name;
    bool (*fits)(const mn_add_quant_t *p, const mn_bcast_t *b);
    void (*run)(const mn_add_quant_t *p, const mn_bcast_t *b, int sub, const int8_t *in1, const int8_t *in2,
        int8_t *out);
} mn_add_s8_variant_t;

/* MUL int8 (mn_mul_s8). */
typedef struct mn_mul_s8_variant {
    const char *name;
    bool (*fits)(const mn_mul_quant_t *p, const mn_bcast_t *b);
    void (*run)(const mn_mul_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
        int8_t *out);
} mn_mul_s8_variant_t;

/*
 * The broadcast shapes the elementwise variants handle (mn_ew_shape): both inputs of the output's
 * shape (MN_EW_SAME, also when one has fewer leading 1 dims), input 2 / input 1 a single element
 * (MN_EW_SCALAR2 / MN_EW_SCALAR1), input 2 / input 1 a vector along the innermost dimension,
 * repeated over the others (MN_EW_CHAN2 / MN_EW_CHAN1: a per-channel operand, *inner = its
 * length). Any other broadcast is MN_EW_OTHER (the reference function runs it).
 */
enum { MN_EW_OTHER = -1, MN_EW_SAME, MN_EW_SCALAR2, MN_EW_SCALAR1, MN_EW_CHAN2, MN_EW_CHAN1 };

static inline int mn_ew_shape(const mn_bcast_t *b, int32_t *inner) {
    *inner = b->size;
    if (!b->broadcast) {
        return MN_EW_SAME;
    }
    bool full1 = true, full2 = true, zero1 = true, zero2 = true, chan1 = true, chan2 = true;
    int64_t s = 1;
    const int last = b->ndims - 1;
    for (int d = last; d >= 0; --d) {
        if (b->out_dims[d] == 1) {
            continue;
        }
        const int32_t want_chan = d == last ? 1 : 0;
        full1 = full1 && b->stride1[d] == s;
        full2 = full2 && b->stride2[d] == s;
        zero1 = zero1 && b->stride1[d] == 0;
        zero2 = zero2 && b->stride2[d] == 0;
        chan1 = chan1 && b->stride1[d] == want_chan;
        chan2 = chan2 && b->stride2[d] == want_chan;
        s *= b->out_dims[d];
    }
    if (full1 && full2) {
        return MN_EW_SAME;
    }
    if (full1 && zero2) {
        return MN_EW_SCALAR2;
    }
    if (zero1 && full2) {
        return MN_EW_SCALAR1;
    }
    if (last < 0 || b->out_dims[last] <= 1) {
        return MN_EW_OTHER;
    }
    *inner = b->out_dims[last];
    if (full1 && chan2) {
        return MN_EW_CHAN2;
    }
    if (chan1 && full2) {
        return MN_EW_CHAN1;
    }
    return MN_EW_OTHER;
}

/* The parameters every optimized int8 ADD / SUB / MUL assumes, on top of a handled shape: input
 * offsets in [-128, 128] (so |input + offset| <= 256), multipliers other than INT32_MIN, ADD's
 * left shift 20 with right shifts only (multipliers below one, as mn_add_quant_init makes them),
 * MUL's shift at most 13 (|product << shift| < 2^30). Then no intermediate overflows: a rescaled
 * ADD input stays below 2^28 in magnitude, their sum below 2^29. */
static inline bool mn_ew_offsets_ok(int32_t off1, int32_t off2, int32_t off_out) {
    return off1 >= -128 && off1 <= 128 && off2 >= -128 && off2 <= 128 && off_out >= -255 && off_out <= 255;
}

static inline bool mn_ew_add_s8_ok(const mn_add_quant_t *p, const mn_bcast_t *b) {
    int32_t inner;
    return mn_ew_shape(b, &inner) != MN_EW_OTHER && p->left_shift == 20
        && mn_ew_offsets_ok(p->input1_offset, p->input2_offset, p->output_offset)
        && p->input1_shift <= 0 && p->input2_shift <= 0 && p->output_shift <= 0 && p->input1_shift >= -31
        && p->input2_shift >= -31 && p->output_shift >= -31 && p->input1_mult != INT32_MIN
        && p->input2_mult != INT32_MIN && p->output_mult != INT32_MIN;
}

static inline bool mn_ew_mul_s8_ok(const mn_mul_quant_t *p, const mn_bcast_t *b) {
    int32_t inner;
    return mn_ew_shape(b, &inner) != MN_EW_OTHER && mn_ew_offsets_ok(p->input1_offset, p->input2_offset,
        p->output_offset) && p->shift <= 13 && p->shift >= -31 && p->mult != INT32_MIN;
}

/* AVERAGE_POOL_2D / MAX_POOL_2D int8 (mn_average_pool_s8 / mn_max_pool_s8); run returns what the
 * reference returns (average pool: -1 when a window covers no input element; max pool: 0). */
typedef struct mn_pool_s8_variant {
    const char *name;
    bool (*fits)(const mn_pool_geom_t *g);
    int (*run)(const mn_pool_geom_t *g, int32_t act_min, int32_t act_max, const int8_t *input,
        int8_t *output);
} mn_pool_s8_variant_t;

/* SOFTMAX int8 -> int8 (mn_softmax_s8_s8). */
typedef struct mn_softmax_s8_variant {
    const char *name;
    bool (*fits)(const mn_softmax_q_t *p, int outer, int depth);
    void (*run)(const mn_softmax_q_t *p, int outer, int depth, const int8_t *input, int8_t *output);
} mn_softmax_s8_variant_t;

/* SVDF int8 (mn_svdf_s8; the state as the reference uses it; no scratch). */
typedef struct mn_svdf_s8_variant {
    const char *name;
    bool (*fits)(const mn_svdf_params_t *p);
    size_t (*data_bytes)(const mn_svdf_params_t *p);   /* NULL: none */
    void (*precompute)(const mn_svdf_params_t *p, const int8_t *w_feature, void *data);
    void (*run)(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature,
        const int16_t *w_time, const int32_t *bias, int16_t *state, int8_t *output, const mn_vbuf_t *buf);
} mn_svdf_s8_variant_t;

/* QUANTIZE int -> int requantization (mn_requantize_<in>_<out>, e.g. mn_requantize_s16_s8): in_dtype
 * and out_dtype are mn_dtype_t values; in and out point to elements of those types. */
typedef struct mn_requant_variant {
    const char *name;
    bool (*fits)(int in_dtype, int out_dtype, const mn_requant_t *r);
    void (*run)(size_t n, const mn_requant_t *r, const void *in, void *out);
} mn_requant_variant_t;

/*
 * One backend: for each compute function, its variants in order of preference (most specialised
 * first), each a NULL-terminated list of pointers; NULL for a function it does not cover.
 * New members are added at the end, so backends that do not know them leave them NULL.
 */
typedef struct mn_backend {
    const char *name;
    const mn_conv_s8_variant_t *const *conv_s8;
    const mn_conv_s8_variant_t *const *depthwise_s8;
    const mn_conv_f32_variant_t *const *conv_f32;
    const mn_conv_f32_variant_t *const *depthwise_f32;
    const mn_fc_s8_variant_t *const *fc_s8;
    const mn_fc_f32_variant_t *const *fc_f32;
    const mn_add_s8_variant_t *const *add_s8;
    const mn_pool_s8_variant_t *const *avgpool_s8;
    const mn_pool_s8_variant_t *const *maxpool_s8;
    const mn_softmax_s8_variant_t *const *softmax_s8;
    const mn_svdf_s8_variant_t *const *svdf_s8;
    const mn_requant_variant_t *const *requant;
    const mn_mul_s8_variant_t *const *mul_s8;
} mn_backend_t;

/*
 * Which variants are linked (MICRONN_VARIANTS): all of them (MICRONN_VARIANTS_ALL=1, the default),
 * or only those whose MICRONN_VARIANT_<backend>_<variant> is defined to 1 (the variant's name with
 * '.' as '_', e.g. MICRONN_VARIANT_dsp_conv_s8). `make firmware MODELS=...` links the variants the
 * models' nodes select on the board's backends (micronn_tools.opset --variants, which asks the
 * host build: mn_variants_query); a node whose variant is left out runs the next one that fits,
 * or the reference function: same bits, only slower.
 *
 * Each backend lists its variants per compute function, in order of preference, as X-macros of
 * X(backend, variant) in a portable header (<backend>/<backend>_fits.h, with the fits() of each):
 * the firmware's lists (MN_VARIANT_ENTRY) and the host's query are built from the same lists.
 */
#ifndef MICRONN_VARIANTS_ALL
#define MICRONN_VARIANTS_ALL 1
#endif

/* MN_VARIANT_ON(MICRONN_VARIANT_x): 1 when that macro is defined to 1, else 0 (also when it is not
 * defined: the token pastes onto MN_VARIANT_PLACEHOLDER_1 only when it expanded to 1). */
#define MN_VARIANT_PLACEHOLDER_1 0,
#define MN_VARIANT_SECOND_(a, b, ...) b
#define MN_VARIANT_ON__(arg) MN_VARIANT_SECOND_(arg 1, 0, ~)
#define MN_VARIANT_ON_(x) MN_VARIANT_ON__(MN_VARIANT_PLACEHOLDER_##x)
#define MN_VARIANT_ON(x) MN_VARIANT_ON_(x)
#define MN_VARIANT_IF_0(...)
#define MN_VARIANT_IF_1(...) __VA_ARGS__
#define MN_VARIANT_IF_(c, ...) MN_VARIANT_IF_##c(__VA_ARGS__)
#define MN_VARIANT_IF(c, ...) MN_VARIANT_IF_(c, __VA_ARGS__)

/* 1 when variant <b>.<v> is linked (also usable in #if). */
#define MN_VARIANT_LINKED(b, v) (MICRONN_VARIANTS_ALL || MN_VARIANT_ON(MICRONN_VARIANT_##b##_##v))

/* An entry of a variant list: &mn_<backend>_<variant>, when that variant is linked. */
#if MICRONN_VARIANTS_ALL
#define MN_VARIANT_ENTRY(b, v) &mn_##b##_##v,
#else
#define MN_VARIANT_ENTRY(b, v) MN_VARIANT_IF(MN_VARIANT_ON(MICRONN_VARIANT_##b##_##v), &mn_##b##_##v,)
#endif

/*
 * The reference int8 compute functions of CONV_2D and DEPTHWISE_CONV_2D are selectable too, by the
 * names "ref.conv_s8" (mn_conv_s8_per_channel) and "ref.depthwise_s8"
 * (mn_depthwise_conv_s8_per_channel): an optimized backend's variants usually fit every such node
 * (dsp.conv_s8 every ungrouped convolution), so a firmware for given models links the reference
 * one only when a node of those models runs it (no variant fits, or weights that are not
 * constants; micronn_tools.opset --variants lists it then). A node of another model that would run
 * a reference function the firmware left out is refused at prepare, naming what to rebuild with.
 * A firmware with delegation keeps both: Interpreter(reference=True) runs them, and the variant
 * query does not follow the nodes of delegated subgraphs. MN_REF_CONV_S8 / MN_REF_DEPTHWISE_S8: 1
 * when linked.
 */
#define MN_REF_CONV_S8 (MN_VARIANT_LINKED(ref, conv_s8) || MICRONN_DELEGATE)
#define MN_REF_DEPTHWISE_S8 (MN_VARIANT_LINKED(ref, depthwise_s8) || MICRONN_DELEGATE)

/* True when no multiplier is INT32_MIN: the one case the optimized requantizations (one rounding
 * doubling high multiply without the saturation test) do not handle; most fits() check it. */
bool mn_variant_mults_ok(const int32_t *mult, int n);

/* Which backends are compiled in (MICRONN_KERNELS_<NAME>=1 from the build), and their tables. */
#ifndef MICRONN_KERNELS_MVE
#define MICRONN_KERNELS_MVE 0
#endif
#ifndef MICRONN_KERNELS_DSP
#define MICRONN_KERNELS_DSP 0
#endif
#ifndef MICRONN_KERNELS_GENERIC
#define MICRONN_KERNELS_GENERIC 0
#endif

extern const mn_backend_t mn_backend_mve;
extern const mn_backend_t mn_backend_dsp;
extern const mn_backend_t mn_backend_generic;

/* The backends compiled in, in order of preference; *n = their number. */
const mn_backend_t *const *mn_backends(int *n);

/* The chosen variant for these parameters, over the backends this node may use (all compiled in,
 * unless the interpreter restricts them: reference kernels only, or a delegate's backend), or
 * NULL for the reference function. */
const mn_conv_s8_variant_t *mn_select_conv_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q);
const mn_conv_s8_variant_t *mn_select_depthwise_s8(const mn_ctx_t *ctx, const mn_conv_geom_t *g, const mn_conv_quant_t *q);
const mn_conv_f32_variant_t *mn_select_conv_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g);
const mn_conv_f32_variant_t *mn_select_depthwise_f32(const mn_ctx_t *ctx, const mn_conv_geom_t *g);
const mn_fc_s8_variant_t *mn_select_fc_s8(const mn_ctx_t *ctx, const mn_fc_params_t *p);
const mn_fc_f32_variant_t *mn_select_fc_f32(const mn_ctx_t *ctx, const mn_fc_params_t *p);
const mn_add_s8_variant_t *mn_select_add_s8(const mn_ctx_t *ctx, const mn_add_quant_t *p, const mn_bcast_t *b);
const mn_mul_s8_variant_t *mn_select_mul_s8(const mn_ctx_t *ctx, const mn_mul_quant_t *p, const mn_bcast_t *b);
const mn_pool_s8_variant_t *mn_select_avgpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g);
const mn_pool_s8_variant_t *mn_select_maxpool_s8(const mn_ctx_t *ctx, const mn_pool_geom_t *g);
const mn_softmax_s8_variant_t *mn_select_softmax_s8(const mn_ctx_t *ctx, const mn_softmax_q_t *p, int outer, int depth);
const mn_svdf_s8_variant_t *mn_select_svdf_s8(const mn_ctx_t *ctx, const mn_svdf_params_t *p);
const mn_requant_variant_t *mn_select_requant(const mn_ctx_t *ctx, int in_dtype, int out_dtype, const mn_requant_t *r);

/*
 * A chosen variant as one byte (mn_node_t.variant), for kernels whose data holds no pointer (so
 * that the model can store it, mn_kernel.h "tables"): 0 for none (the reference function), else
 * 1 + 32 * its backend's position among the backends compiled in + its position in that
 * backend's list. mn_variant_<list>() turns the byte back into the variant (NULL for 0).
 */
uint8_t mn_variant_id_fc_s8(const mn_fc_s8_variant_t *v);
uint8_t mn_variant_id_fc_f32(const mn_fc_f32_variant_t *v);
uint8_t mn_variant_id_svdf_s8(const mn_svdf_s8_variant_t *v);
uint8_t mn_variant_id_requant(const mn_requant_variant_t *v);
uint8_t mn_variant_id_add_s8(const mn_add_s8_variant_t *v);
uint8_t mn_variant_id_mul_s8(const mn_mul_s8_variant_t *v);
const mn_fc_s8_variant_t *mn_variant_fc_s8(uint8_t id);
const mn_fc_f32_variant_t *mn_variant_fc_f32(uint8_t id);
const mn_svdf_s8_variant_t *mn_variant_svdf_s8(uint8_t id);
const mn_requant_variant_t *mn_variant_requant(uint8_t id);
const mn_add_s8_variant_t *mn_variant_add_s8(uint8_t id);
const mn_mul_s8_variant_t *mn_variant_mul_s8(uint8_t id);

/*
 * A node runs the reference compute function `name` ("ref.conv_s8") without having asked
 * mn_select_*() (e.g. its weights are not constants): recorded by a variant query; returns
 * `linked` (whether this firmware has it: MN_REF_*).
 */
bool mn_variant_ref(const mn_ctx_t *ctx, const char *name, bool linked);

/*
 * Host tool (built with MICRONN_VARIANT_QUERY=1): which variants a firmware with the optimized
 * backends `kernels` (e.g. "dsp generic", in order of preference) would select. Between begin and
 * end, every selection of a prepare that is not a sizing run and uses the default backends is
 * evaluated over those backends' fits() (portable: <backend>/<backend>_fits.h; generic: as
 * compiled in, so the host build needs it) and recorded (when none fits, the selectable reference
 * function: "ref.conv_s8" / "ref.depthwise_s8"), and returns NULL (the reference), so prepare
 * runs on. mn_variants_query_name(i): the i-th variant recorded ("dsp.conv_s8"), or NULL
 * past the last. begin returns 0, or -1 for a backend it does not know. Not reentrant (one global
 * state: a host tool's).
 */
int mn_variants_query_begin(const char *kernels);
const char *mn_variants_query_name(size_t i);
void mn_variants_query_end(void);

/* Name i (0, 1, ...) of the optimized variants that builtin op `builtin`'s kernel selects from, over
 * the backends compiled in (a host query build: every backend it knows); NULL past the last. */
const char *mn_variant_of_op(int32_t builtin, size_t i);

/* Name to report for a selected variant (NULL = "reference"). */
static inline const char *mn_variant_name(const char *name) {
    return name ? name : "reference";
}

#ifdef __cplusplus
}
#endif

#endif /* MN_VARIANTS_H */
