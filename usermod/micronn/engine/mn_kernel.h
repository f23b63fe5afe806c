/*
 * micronn kernel interface: what an op kernel sees of the engine.
 *
 * A kernel is a const mn_kernel_t named mn_kernel_<BUILTIN NAME> (e.g. mn_kernel_CONV_2D), defined
 * in its own file and guarded by its selection macro so unselected kernels compile to nothing:
 *
 *     #include "mn_kernel.h"
 *     #if MICRONN_OP_CONV_2D
 *     static mn_status_t conv_prepare(mn_ctx_t *ctx, mn_node_t *node) { ... }
 *     static mn_status_t conv_eval(mn_ctx_t *ctx, mn_node_t *node) { ... }
 *     const mn_kernel_t mn_kernel_CONV_2D = { NULL, conv_prepare, conv_eval, NULL };
 *     #endif
 *
 * mn_registry.c maps builtin codes to these symbols (custom ops by name; extra kernels can also be
 * passed at run time in mn_config_t.ops).
 *
 * Life cycle (per interpreter, per op, in execution order):
 *   init(ctx, node)    optional; may allocate persistent memory and set node->user_data.
 *   prepare(ctx, node) optional; validates dtypes/shapes/params, precomputes everything that does
 *                      not depend on input values (multipliers, shifts, ...), requests scratch.
 *                      Data of non-constant tensors (activations, variable/state tensors)
 *                      must not be used in prepare (NULL, or not yet meaningful).
 *   eval(ctx, node)    required; runs the op. Must not allocate. Tensor data is valid.
 *   free(ctx, node)    optional; called by mn_interp_deinit (nothing to free normally).
 *   variant(node)      optional; which optimized compute function prepare picked (reporting only).
 * Kernels must be re-entrant: no static mutable state (several interpreters may coexist).
 *
 * Dry runs (mn_arena_needed) call init and prepare exactly as a real prepare does, but the
 * persistent memory of an op may be released after its prepare; eval is never called then.
 */
#ifndef MN_KERNEL_H
#define MN_KERNEL_H

#include <stdarg.h>
#include <stdbool.h>

#include "micronn.h"
#include "mn_builtin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's view of the interpreter. Use the functions below, not the fields. */
typedef struct mn_interp mn_ctx_t;

typedef struct mn_node mn_node_t;

typedef struct mn_kernel {
    mn_status_t (*init)(mn_ctx_t *ctx, mn_node_t *node);
    mn_status_t (*prepare)(mn_ctx_t *ctx, mn_node_t *node);
    mn_status_t (*eval)(mn_ctx_t *ctx, mn_node_t *node);
    void (*free)(mn_ctx_t *ctx, mn_node_t *node);
    /* optional; name of the compute variant prepare chose for this node (kernels/mn_variants.h);
     * NULL or a NULL result = "reference". */
    const char *(*variant)(const mn_node_t *node);
} mn_kernel_t;

/* Registry entry: builtin code, or MN_BUILTIN_CUSTOM plus the custom code string. */
typedef struct mn_registration {
    int32_t builtin;
    const char *custom_name;
    const mn_kernel_t *kernel;
    /* Highest opcode version the kernel implements; 0 (zero-initialised entries passed in
     * mn_config_t.ops): no version or options check for this entry. */
    uint8_t max_version;
    uint8_t options_type;       /* MN_OPTIONS_* the operator's options table must have (or none) */
    const char *dtypes;         /* dtype combinations implemented (mn_ops.h), or NULL */
} mn_registration_t;

/* One operator instance (lives in the persistent arena: 24 bytes on 32-bit targets). Operand
 * lists are the model's (copied only for an unaligned model) and, as in the model, preceded by
 * their length: mn_num_inputs() / mn_num_outputs(). Intermediate tensors, custom options, the
 * opcode version and the options table's type stay in the model: mn_intermediate(),
 * mn_custom_options() (prepare checks the version and options type against the registration). */
struct mn_node {
    const mn_kernel_t *kernel;
    void *user_data;                /* kernel's persistent data (set in init or prepare) */
    const int32_t *inputs;          /* tensor indices; -1 = omitted optional input; inputs[-1] = count */
    const int32_t *outputs;         /* outputs[-1] = count */
    const uint8_t *options;         /* builtin options table in the model; NULL if absent */
    uint16_t persistent8;           /* persistent arena bytes this op's init + prepare took, in
                                     * MN_PERSIST_ALIGN units (saturates at 65535) */
    uint8_t builtin;                /* MN_BUILTIN_* (a node only exists for a known kernel; a code
                                     * above 254, which only a kernel passed in mn_config_t.ops can
                                     * have, reads 255) */
    uint8_t variant;                /* compute variant prepare chose, for kernels whose data is
                                     * pointer-free (kernels/mn_variants.h, mn_variant_*); 0: none */
};

/* The node's operator index in the model: its execution position, unless a delegate reordered
 * the ops (prepare refuses more than 65535 ops). */
static inline uint32_t mn_node_index(const mn_ctx_t *ctx, const mn_node_t *node) {
    const uint32_t pos = (uint32_t)(node - ctx->nodes);
    return ctx->node_index ? ctx->node_index[pos] : pos;
}

/* Raw custom options bytes of a custom op in the model (NULL and *len = 0 if none). */
const uint8_t *mn_custom_options(const mn_ctx_t *ctx, const mn_node_t *node, size_t *len);

/* Name of a node's op: the builtin name ("CONV_2D", decoded into buf of MN_OP_NAME_LEN bytes) or
 * a custom op's custom code ("Atan2"). */
const char *mn_node_name(const mn_ctx_t *ctx, const mn_node_t *node, char *buf);

/* ---- delegates (backends that run subgraphs) ------------------------------------------------ */

/*
 * A delegate runs groups of ops instead of their kernels (an accelerator, another kernel set, a
 * second interpreter...). Set mn_config_t.delegate; at prepare, after every op's kernel lookup:
 *   1. supports(ctx, node) is asked for every op (op: node->builtin / mn_node_name(), dtypes and
 *      shapes: mn_input()/mn_output(), parameters: the mn_opt_*() accessors);
 *   2. the op list is partitioned into maximal connected subgraphs of supported ops: ops are
 *      rescheduled in a topological order that groups supported ops (a group never contains two
 *      ops with an unsupported op on a path between them, so there are no cycles), each group is
 *      split into its connected components, and those smaller than mn_config_t.min_subgraph stay
 *      with the kernels. Each subgraph's ops are consecutive in execution order;
 *   3. prepare(ctx, sg) runs where the ops' kernel prepares would; invoke(ctx, sg) at invoke.
 * With converts_boundaries set, the delegate also takes the dtype conversions at its boundaries
 * (as TI's TIDL subgraphs do): a QUANTIZE from float32 whose consumers are all supported, and a
 * DEQUANTIZE to float32 of a supported op's output, join that subgraph, so the tensors crossing
 * the boundary keep the CPU side's dtype. They do not count towards min_subgraph.
 * All tensors, including the subgraph's boundary tensors, get memory from the normal plan.
 * A delegate may prepare/run its ops with their kernels (mn_delegate_prepare_node /
 * mn_delegate_eval_node), and must allocate nothing in invoke.
 */
typedef struct mn_subgraph {
    const struct mn_delegate *delegate;
    uint32_t first;             /* execution position of its first op (see mn_subgraph_node) */
    uint32_t n_nodes;
    void *user_data;            /* the delegate's (set in prepare) */
} mn_subgraph_t;

typedef struct mn_delegate {
    const char *name;
    bool (*supports)(mn_ctx_t *ctx, const mn_node_t *node);
    mn_status_t (*prepare)(mn_ctx_t *ctx, mn_subgraph_t *sg);
    mn_status_t (*invoke)(mn_ctx_t *ctx, mn_subgraph_t *sg);
    void (*free)(mn_ctx_t *ctx, mn_subgraph_t *sg);   /* optional */
    /* optional: the kernel backends the op kernels may use inside its subgraphs
     * (NULL-terminated, kernels/mn_variants.h); NULL = as outside */
    const struct mn_backend *const *variants;
    bool converts_boundaries;   /* runs the float<->integer conversions at its boundaries (above) */
} mn_delegate_t;

/* k-th op of a subgraph (k < sg->n_nodes). */
mn_node_t *mn_subgraph_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k);
/* Run the op's own kernel init+prepare (in the delegate's prepare) with the delegate's variants /
 * its eval (in the delegate's invoke; profiled per op like any other). */
mn_status_t mn_delegate_prepare_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k);
mn_status_t mn_delegate_eval_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k);

/* ---- tensors of a node --------------------------------------------------------------------- */

/* i-th input/output tensor, or NULL if i is out of range or the optional input is omitted. */
static inline int mn_num_inputs(const mn_node_t *node) {
    return node->inputs[-1];
}
static inline int mn_num_outputs(const mn_node_t *node) {
    return node->outputs[-1];
}
#define MN_NO_REC 0xff   /* ctx->rec_of: a constant without a record */
/* Descriptor of tensor t, an operand of node: its record, or for a constant that has none (the
 * usual case for weights: 16 bytes of arena saved per constant) a copy decoded from the model
 * into the op's slot, valid until the next op runs. Kernels never keep such pointers. */
mn_tensor_t *mn_const_tensor(mn_ctx_t *ctx, const mn_node_t *node, int32_t t);
static inline mn_tensor_t *mn_tensor_of(mn_ctx_t *ctx, const mn_node_t *node, int32_t t) {
    if (!ctx->rec_of) {
        return &ctx->tensors[t];
    }
    const uint8_t r = ctx->rec_of[t];
    return r != MN_NO_REC ? &ctx->tensors[r] : mn_const_tensor(ctx, node, t);
}
/* (functions, mn_const.c: inlined at the kernels' several hundred call sites they took 13 KB) */
mn_tensor_t *mn_input(mn_ctx_t *ctx, const mn_node_t *node, int i);
mn_tensor_t *mn_output(mn_ctx_t *ctx, const mn_node_t *node, int i);
/* Data of input i (NULL if omitted): all an eval usually needs of its weights, without decoding a
 * constant's whole descriptor (a few loads instead of a hundred instructions per operand). */
const void *mn_const_data(const mn_ctx_t *ctx, int32_t t);
static inline const void *mn_input_data(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    int32_t t = (i >= 0 && i < mn_num_inputs(node)) ? node->inputs[i] : -1;
    if (t < 0) {
        return (const void *)0;
    }
    if (!ctx->rec_of) {
        return ctx->tensors[t].data;
    }
    const uint8_t r = ctx->rec_of[t];
    return r != MN_NO_REC ? ctx->tensors[r].data : mn_const_data(ctx, t);
}
/* i-th intermediate tensor (read from the model's operator), or NULL; how many there are. */
mn_tensor_t *mn_intermediate(mn_ctx_t *ctx, const mn_node_t *node, int i);
int mn_num_intermediates(const mn_ctx_t *ctx, const mn_node_t *node);
/* Dimension i, counted from the front; negative i counts from the back (-1 = last). */
static inline int32_t mn_dim(const mn_tensor_t *t, int i) {
    if (i < 0) {
        i += t->ndim;
    }
    return (i >= 0 && i < t->ndim) ? t->dims[i] : 1;
}

/* ---- memory (init/prepare only) ------------------------------------------------------------ */

/* Persistent memory for the interpreter's lifetime, MN_PERSIST_ALIGN-aligned, zero-filled.
 * Returns NULL when the arena is exhausted: return MN_ERR_ARENA then (the engine has already
 * recorded the shortfall and will report the total bytes needed). */
void *mn_alloc_persistent(mn_ctx_t *ctx, size_t bytes);

/* Temporary memory during prepare; released automatically when this op's prepare returns. */
void *mn_alloc_temp(mn_ctx_t *ctx, size_t bytes);

/* Ask for a scratch buffer live only while this op runs; planned with the tensors, so scratch
 * of different ops share memory. *index identifies it in mn_get_scratch (store it in user_data). */
mn_status_t mn_request_scratch(mn_ctx_t *ctx, size_t bytes, int32_t *index);

/* Scratch buffer pointer (eval only; MN_ARENA_ALIGN-aligned). NULL for a bad index. */
void *mn_get_scratch(mn_ctx_t *ctx, int32_t index);

/*
 * True during the dry run that only sizes the arena (mn_arena_needed, e.g. Interpreter(m) without
 * an arena size): prepare must request exactly the memory a real prepare requests, but may skip
 * filling persistent data, and checks whose failures the real prepare that follows reports anyway
 * (per-channel multiplier tables, precomputed weight sums). Not in mn_check_ops, which must find
 * every error.
 */
bool mn_sizing_only(const mn_ctx_t *ctx);

/*
 * Per-op tables (input-independent data computed in prepare: per-channel multipliers and shifts,
 * biases with the input offset folded in, ...). The model may carry copies of them (metadata
 * "micronn_quant_v1", written by `micronn tables`); the engine uses a stored copy in place, with
 * no arena bytes, when it is byte for byte what prepare computed, and keeps its own otherwise:
 *
 *     void *table; bool fill;
 *     my_data_t *d = mn_table_alloc(ctx, node, tag, sizeof *d, bytes, &table, &fill);
 *     if (!d) return MN_ERR_ARENA;
 *     if (fill) compute(table);                       // fill = false only in a sizing dry run
 *     d->table = mn_table_keep(ctx, node, tag, table, bytes);
 *     if (!d->table) return MN_ERR_ARENA;
 *
 * mn_table_alloc returns persistent kernel data of `head` bytes (zeroed; head 0: returns the
 * table) and *table, 4-byte aligned (MN_ARENA_ALIGN with head 0), where to compute the table:
 * the same persistent block, or prepare-time temporary memory when the model stores candidates.
 * mn_table_keep returns where eval reads the table. `tag` tells an op's tables apart
 * (MN_TABLE_*). NULL from either: the arena is exhausted.
 */
#define MN_TABLE_QUANT 0     /* multipliers and shifts (reference glue) */
#define MN_TABLE_VARIANT 1   /* an optimized variant's data (data_bytes / precompute) */
#define MN_TABLE_QUANT2 2    /* a second quantization table of the same op */
#define MN_TABLE_KDATA 3     /* the kernel data itself (mn_kernel_data) */
void *mn_table_alloc(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, size_t head, size_t bytes,
    void **table, bool *fill);
const void *mn_table_keep(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, void *table, size_t bytes);

/*
 * Kernel data that holds no pointer (fixed-width fields only: the same bytes on every target for
 * the same model, whatever the backend; the chosen variant goes in node->variant) is a table too,
 * MN_TABLE_KDATA, so a model made by `micronn plan --tables` carries it and the op then needs no
 * arena bytes at all. Compute it on the stack and keep it:
 *
 *     node->user_data = (void *)mn_kernel_data(ctx, node, &d, sizeof d);
 *
 * (NULL: arena exhausted.) Data with arrays after the struct (per-channel scales, LUTs, a
 * variant's data) is one MN_TABLE_KDATA table of mn_table_alloc / mn_table_keep instead. Eval
 * must not write to it: it may be in flash.
 */
const void *mn_kernel_data(mn_ctx_t *ctx, const mn_node_t *node, const void *data, size_t bytes);

/* ---- errors ------------------------------------------------------------------------------- */

/*
 * Record an error for the current op and return `code`. The engine prefixes "op <index> <NAME>: ",
 * so write only the rest, naming the parameter/dtype, e.g.
 *     return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input dtype %s not supported", mn_dtype_name(t->dtype));
 * Formats: %s %d %i %u %x %c %% with optional l / z length (no floats, no widths).
 */
mn_status_t mn_fail(mn_ctx_t *ctx, mn_status_t code, const char *fmt, ...);

/*
 * Type families (mn_config.h, MICRONN_TYPE_*): a kernel whose dtype paths are compiled per family
 * calls this in prepare, before its dtype dispatch, with its input activation's dtype and its
 * weights' dtype (-1: none; float32 activations with int8 weights are the hybrid family). MN_OK
 * when the firmware has that family (always, in a build with every family), else it fails with
 * "<family> kernels not linked in this firmware (built for <families>)". Dtypes of no family pass:
 * the kernel's own checks refuse them.
 */
#if MICRONN_TYPES_EVERY
static inline mn_status_t mn_check_family(mn_ctx_t *ctx, int32_t act_dtype, int32_t w_dtype) {
    (void)ctx;
    (void)act_dtype;
    (void)w_dtype;
    return MN_OK;
}
#else
mn_status_t mn_check_family(mn_ctx_t *ctx, int32_t act_dtype, int32_t w_dtype);
#endif

/* ---- builtin options (decoded from the flatbuffer on demand; use in init/prepare) ----------- */

/* Field ids are the schema's field order (0-based). Absent fields / absent table -> default. */
int32_t mn_opt_i32(const mn_node_t *node, int field, int32_t def);
int32_t mn_opt_i8(const mn_node_t *node, int field, int32_t def);   /* byte-sized enums */
bool mn_opt_bool(const mn_node_t *node, int field, bool def);
float mn_opt_f32(const mn_node_t *node, int field, float def);
/* Vector of int32 (e.g. ReshapeOptions.new_shape): copies up to max entries into out, returns the
 * vector length, or -1 if absent. */
int32_t mn_opt_vec_i32(const mn_ctx_t *ctx, const mn_node_t *node, int field, int32_t *out, int32_t max);

/* Padding / activation enums (schema values). */
enum { MN_PADDING_SAME = 0, MN_PADDING_VALID = 1 };
enum {
    MN_ACT_NONE = 0,
    MN_ACT_RELU = 1,
    MN_ACT_RELU_N1_TO_1 = 2,
    MN_ACT_RELU6 = 3,
    MN_ACT_TANH = 4,
    MN_ACT_SIGN_BIT = 5,
};

/* Field ids of the options tables the reference kernels use. */
/* Conv2DOptions */
#define MN_CONV2D_PADDING 0         /* byte enum */
#define MN_CONV2D_STRIDE_W 1        /* int */
#define MN_CONV2D_STRIDE_H 2
#define MN_CONV2D_ACTIVATION 3      /* byte enum */
#define MN_CONV2D_DILATION_W 4      /* int, default 1 */
#define MN_CONV2D_DILATION_H 5      /* int, default 1 */
#define MN_CONV2D_QUANTIZED_BIAS_TYPE 6
/* DepthwiseConv2DOptions */
#define MN_DWCONV_PADDING 0
#define MN_DWCONV_STRIDE_W 1
#define MN_DWCONV_STRIDE_H 2
#define MN_DWCONV_DEPTH_MULTIPLIER 3
#define MN_DWCONV_ACTIVATION 4
#define MN_DWCONV_DILATION_W 5      /* default 1 */
#define MN_DWCONV_DILATION_H 6      /* default 1 */
/* Pool2DOptions */
#define MN_POOL_PADDING 0
#define MN_POOL_STRIDE_W 1
#define MN_POOL_STRIDE_H 2
#define MN_POOL_FILTER_W 3
#define MN_POOL_FILTER_H 4
#define MN_POOL_ACTIVATION 5
/* FullyConnectedOptions */
#define MN_FC_ACTIVATION 0
#define MN_FC_WEIGHTS_FORMAT 1      /* byte enum, 0 = DEFAULT */
#define MN_FC_KEEP_NUM_DIMS 2       /* bool */
#define MN_FC_ASYMMETRIC_QUANTIZE_INPUTS 3
#define MN_FC_QUANTIZED_BIAS_TYPE 4
/* SoftmaxOptions */
#define MN_SOFTMAX_BETA 0           /* float */
/* ReshapeOptions */
#define MN_RESHAPE_NEW_SHAPE 0      /* [int] */
/* SVDFOptions */
#define MN_SVDF_RANK 0
#define MN_SVDF_ACTIVATION 1
#define MN_SVDF_ASYMMETRIC_QUANTIZE_INPUTS 2
/* AddOptions (SubOptions has the same fields) */
#define MN_ADD_ACTIVATION 0
#define MN_ADD_POT_SCALE_INT16 1    /* bool, default true */
/* MulOptions / DivOptions */
#define MN_MUL_ACTIVATION 0
#define MN_DIV_ACTIVATION 0
/* UnidirectionalSequenceLSTMOptions */
#define MN_LSTM_ACTIVATION 0
#define MN_LSTM_CELL_CLIP 1         /* float */
#define MN_LSTM_PROJ_CLIP 2         /* float */
#define MN_LSTM_TIME_MAJOR 3        /* bool */
#define MN_LSTM_ASYMMETRIC_QUANTIZE_INPUTS 4
#define MN_LSTM_DIAGONAL_RECURRENT_TENSORS 5
/* Activations, casts, normalisation (ops-b) */
#define MN_LEAKY_RELU_ALPHA 0       /* LeakyReluOptions.alpha, float */
#define MN_GELU_APPROXIMATE 0       /* GeluOptions.approximate, bool */
#define MN_CAST_IN_TYPE 0           /* CastOptions.in_data_type, byte enum */
#define MN_CAST_OUT_TYPE 1          /* CastOptions.out_data_type */
#define MN_L2NORM_ACTIVATION 0      /* L2NormOptions.fused_activation_function */

/* ---- data movement, shape and reduction ops (ops-c) ---- */
/* ConcatenationOptions */
#define MN_CONCAT_AXIS 0
#define MN_CONCAT_ACTIVATION 1
/* PackOptions / UnpackOptions */
#define MN_PACK_VALUES_COUNT 0      /* UnpackOptions: num */
#define MN_PACK_AXIS 1
/* SplitOptions / SplitVOptions */
#define MN_SPLIT_NUM_SPLITS 0
/* StridedSliceOptions */
#define MN_SSLICE_BEGIN_MASK 0
#define MN_SSLICE_END_MASK 1
#define MN_SSLICE_ELLIPSIS_MASK 2
#define MN_SSLICE_NEW_AXIS_MASK 3
#define MN_SSLICE_SHRINK_AXIS_MASK 4
#define MN_SSLICE_OFFSET 5          /* bool: end is relative to begin */
/* GatherOptions */
#define MN_GATHER_AXIS 0
#define MN_GATHER_BATCH_DIMS 1
/* ReducerOptions */
#define MN_REDUCER_KEEP_DIMS 0
/* ResizeBilinearOptions (fields 0, 1 are deprecated sizes) */
#define MN_RESIZE_BILINEAR_ALIGN_CORNERS 2
#define MN_RESIZE_BILINEAR_HALF_PIXEL 3
/* ResizeNearestNeighborOptions */
#define MN_RESIZE_NN_ALIGN_CORNERS 0
#define MN_RESIZE_NN_HALF_PIXEL 1
/* MirrorPadOptions */
#define MN_MIRROR_PAD_MODE 0        /* byte enum: 0 REFLECT, 1 SYMMETRIC */
/* SqueezeOptions */
#define MN_SQUEEZE_DIMS 0           /* [int] */
/* SpaceToDepthOptions / DepthToSpaceOptions */
#define MN_BLOCK_SIZE 0
/* ShapeOptions / ArgMaxOptions / ArgMinOptions */
#define MN_OUT_TYPE 0               /* byte enum: TensorType */
/* CumsumOptions */
#define MN_CUMSUM_EXCLUSIVE 0
#define MN_CUMSUM_REVERSE 1

/* ---- TRANSPOSE_CONV, BATCH_MATMUL (ops-d) ---- */
/* TransposeConvOptions */
#define MN_TCONV_PADDING 0
#define MN_TCONV_STRIDE_W 1
#define MN_TCONV_STRIDE_H 2
#define MN_TCONV_ACTIVATION 3
#define MN_TCONV_QUANTIZED_BIAS_TYPE 4  /* byte enum: TensorType */
/* BatchMatMulOptions */
#define MN_BMM_ADJ_X 0              /* bool */
#define MN_BMM_ADJ_Y 1              /* bool */
#define MN_BMM_ASYMMETRIC_QUANTIZE_INPUTS 2   /* bool (hybrid) */

/* ---- several subgraphs: IF, WHILE, CALL_ONCE, resource variables ---- */
#define MN_IF_THEN_SUBGRAPH 0       /* IfOptions.then_subgraph_index, int */
#define MN_IF_ELSE_SUBGRAPH 1       /* IfOptions.else_subgraph_index */
#define MN_WHILE_COND_SUBGRAPH 0    /* WhileOptions.cond_subgraph_index */
#define MN_WHILE_BODY_SUBGRAPH 1    /* WhileOptions.body_subgraph_index */
#define MN_CALL_ONCE_INIT_SUBGRAPH 0 /* CallOnceOptions.init_subgraph_index */
#define MN_VAR_HANDLE_CONTAINER 0   /* VarHandleOptions.container, string */
#define MN_VAR_HANDLE_SHARED_NAME 1 /* VarHandleOptions.shared_name, string */

/* String field of the options table: *out = the NUL-terminated string in the model, or NULL when
 * absent. Returns false when the field is present but not a string inside the model. */
bool mn_opt_str(const mn_ctx_t *ctx, const mn_node_t *node, int field, const char **out);

/*
 * Nested interpreters (mn_nested.c): an op that runs another subgraph of its model (IF, WHILE,
 * CALL_ONCE, the custom op micronn_subgraph) prepares one per subgraph in its prepare. Its arena
 * is one block of the op's persistent memory, sized by a dry run; the nested interpreter shares
 * the caller's resource variables, polls its should_stop, and plans its own tensors. A subgraph
 * index out of range, one already running in an enclosing interpreter (recursion: subgraph 0 is
 * the caller's), or nesting deeper than MN_MAX_NESTING is refused with a message.
 */
#ifndef MN_MAX_NESTING
#define MN_MAX_NESTING 8
#endif
typedef struct mn_nested {
    mn_model_t model;           /* view of the subgraph (mn_model_subgraph) */
    mn_config_t cfg;
    mn_interp_t it;
    uint32_t index;
    const char *what;           /* role in messages ("then", "body", ...) */
    uint32_t resets;            /* the top interpreter's reset count its state last saw */
    bool ready;                 /* prepared (not in a sizing dry run) */
} mn_nested_t;

/* Check subgraph `subgraph` (it exists, no recursion, not too deep) and set n up for it (prepare
 * only). Then check its operands (mn_nested_check_io) and prepare it. */
mn_status_t mn_nested_open(mn_ctx_t *ctx, mn_nested_t *n, int32_t subgraph, const char *what);
/* Prepare n's interpreter (prepare only). cfg: its configuration, or NULL for the caller's (no
 * profiler; an offline plan only describes subgraph 0, so greedy; inputs never reused). In a
 * sizing dry run (mn_sizing_only) n->ready stays false: the memory is counted, the interpreter
 * is not kept. */
mn_status_t mn_nested_prepare(mn_ctx_t *ctx, mn_nested_t *n, const mn_config_t *cfg);
/* The same for several subgraphs that never run at the same time and get their inputs copied in
 * at every run (IF's branches; WHILE's cond and body): one block where their activations overlap
 * (each next interpreter lives in what the previous ones' persistent data leaves, as several
 * interpreters share one arena), sized exactly by their dry runs. */
mn_status_t mn_nested_prepare_shared(mn_ctx_t *ctx, mn_nested_t *const *ns, int count, const mn_config_t *cfg);
/* The subgraph's inputs (or outputs) must match count tensors of the node's inputs (outputs)
 * starting at `first` in dtype and size (checked from the model: also in sizing dry runs). */
mn_status_t mn_nested_check_io(mn_ctx_t *ctx, const mn_node_t *node, const mn_nested_t *n, bool outputs, int first,
    int count);
/* Element count / dtype / size of the subgraph's i-th input or output, from the model. */
mn_status_t mn_nested_io(const mn_nested_t *n, bool output, size_t i, mn_tensor_t *out);
/* The prepared interpreter's i-th input or output tensor (its data may be pointed elsewhere
 * before mn_nested_invoke), or NULL. */
mn_tensor_t *mn_nested_tensor(mn_nested_t *n, bool output, size_t i);
/* Copy the node's inputs (or, from_outputs, its outputs) first, first + 1, ... into all the
 * subgraph's inputs / the subgraph's outputs into the node's outputs 0, 1, ... (eval only). */
void mn_nested_copy_in(mn_nested_t *n, mn_ctx_t *ctx, const mn_node_t *node, bool from_outputs, int first);
void mn_nested_copy_out(mn_nested_t *n, mn_ctx_t *ctx, const mn_node_t *node);
/* Run it (eval only); a failure is reported for the current op with the subgraph's message.
 * After mn_interp_reset of the top interpreter its variable tensors are reset first (as TFLM
 * resets the variables of every subgraph). */
mn_status_t mn_nested_invoke(mn_ctx_t *ctx, mn_nested_t *n);
void mn_nested_free(mn_nested_t *n);
/* The caller's interpreter (the outermost one). */
mn_ctx_t *mn_nested_root(mn_ctx_t *ctx);

/*
 * Resource variables (mn_resource.c), one table for the top interpreter and all nested ones.
 * At prepare the top interpreter finds every VAR_HANDLE of every subgraph (one variable per
 * container + shared_name) and every ASSIGN_VARIABLE whose handle comes from a VAR_HANDLE of
 * its subgraph: the first (by subgraph, then op) fixes the variable's dtype and size, the others
 * must agree; the variable's memory is then allocated in the persistent arena. Invoke allocates
 * nothing.
 */
typedef struct mn_resource {
    const char *container;      /* NUL-terminated, in the model */
    const char *shared_name;
    void *data;                 /* NULL until sized (and in dry runs) */
    size_t bytes;
    uint32_t fixed_by;          /* subgraph << 16 | op of the assignment that fixed it (messages) */
    uint8_t dtype;
    bool sized;                 /* some ASSIGN_VARIABLE fixes dtype and size */
    bool assigned;              /* holds a value (invoke) */
} mn_resource_t;

/* Resource id (index into the table) of input `input` of node: the tensor must be the output of a
 * VAR_HANDLE op of the same subgraph; otherwise -1 after mn_fail. */
int32_t mn_resource_of(mn_ctx_t *ctx, const mn_node_t *node, int input);
/* The VAR_HANDLE node's variable id, or -1 after mn_fail. */
int32_t mn_resource_handle(mn_ctx_t *ctx, const mn_node_t *var_handle);
mn_resource_t *mn_resource_get(mn_ctx_t *ctx, int32_t id);

#ifdef __cplusplus
}
#endif

#endif /* MN_KERNEL_H */
