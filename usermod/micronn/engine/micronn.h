/*
 * micronn engine: public C API (portable C99, no MicroPython dependency, no malloc).
 *
 * Typical use:
 *
 *     mn_model_t model;
 *     if (mn_model_init(&model, buf, len) != MN_OK) puts(model.err.msg);
 *     mn_interp_t it;
 *     mn_interp_init(&it, &model, arena, sizeof(arena), NULL);   // NULL config = defaults
 *     if (mn_interp_prepare(&it) != MN_OK) puts(it.err.msg);     // "arena too small: need N bytes, have M"
 *     mn_tensor_t *in = mn_interp_input(&it, 0);
 *     memcpy(in->data, frame, in->bytes);
 *     mn_interp_invoke(&it);
 *     const int8_t *out = mn_interp_output(&it, 0)->data;
 *
 * Memory: every object lives in caller memory (mn_model_t, mn_interp_t) or in the caller's arena.
 * The model buffer is used in place (zero copy) and must outlive the model and interpreter.
 *
 * Alignment of the model buffer: nothing is assumed. Flatbuffer fields are read with byte loads.
 * Constant tensor data that kernels read in place (weights, biases, float data) is used in place
 * when its address is aligned for its element type; otherwise prepare copies it into the
 * persistent part of the arena (counted in mn_arena_stats_t.copied_bytes). Keeping the model
 * 16-byte aligned (`micronn convert` does) therefore saves arena memory but is never required.
 *
 * Threading: none. Objects are independent; the engine has no global mutable state.
 */
#ifndef MICRONN_H
#define MICRONN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mn_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ---------------------------------------------------------------------------------- */

typedef enum mn_status {
    MN_OK = 0,
    MN_ERR_ARG = 1,          /* bad argument from the caller (NULL, index out of range, ...) */
    MN_ERR_MODEL = 2,        /* malformed / truncated / hostile model buffer */
    MN_ERR_UNSUPPORTED = 3,  /* valid model, but an op, dtype or parameter the engine cannot run */
    MN_ERR_ARENA = 4,        /* arena too small (message states the bytes needed) */
    MN_ERR_STATE = 5,        /* call out of order (e.g. invoke before prepare) */
    MN_ERR_KERNEL = 6,       /* a kernel failed in init/prepare/eval */
    MN_ERR_ABORTED = 7,      /* invoke stopped between ops: mn_config_t.should_stop said so */
} mn_status_t;

#ifndef MN_ERR_MSG_LEN
#define MN_ERR_MSG_LEN 160
#endif

/* Error record kept inside mn_model_t / mn_interp_t: status + NUL-terminated message. */
typedef struct mn_error {
    mn_status_t status;
    char msg[MN_ERR_MSG_LEN];
} mn_error_t;

/* Name of a status code ("ok", "model error", ...). */
const char *mn_status_str(mn_status_t s);

/* ---- data types (values are TFLite's TensorType) --------------------------------------------- */

typedef enum mn_dtype {
    MN_FLOAT32 = 0,
    MN_FLOAT16 = 1,
    MN_INT32 = 2,
    MN_UINT8 = 3,
    MN_INT64 = 4,
    MN_STRING = 5,
    MN_BOOL = 6,
    MN_INT16 = 7,
    MN_COMPLEX64 = 8,
    MN_INT8 = 9,
    MN_FLOAT64 = 10,
    MN_COMPLEX128 = 11,
    MN_UINT64 = 12,
    MN_RESOURCE = 13,
    MN_VARIANT = 14,
    MN_UINT32 = 15,
    MN_UINT16 = 16,
    MN_INT4 = 17,
} mn_dtype_t;

/* Element size in bytes (0 for types without a fixed size, e.g. string; INT4 reports 1). */
size_t mn_dtype_size(int32_t dtype);
/* Lower-case name ("int8", "float32", ...), "?" if unknown. */
const char *mn_dtype_name(int32_t dtype);
/* Size of the buffer mn_op_name decodes a name into (longest builtin name + NUL; the generator
 * tools/gen_builtins.py checks it). */
#define MN_OP_NAME_LEN 33
/* Name of a builtin operator code ("CONV_2D"), "?" if unknown or names compiled out. The names are
 * stored compressed: the result is buf (MN_OP_NAME_LEN bytes), where it was decoded, or a constant. */
const char *mn_op_name(int32_t builtin, char *buf);

/* ---- byte-safe little-endian loads (model data may be unaligned) ----------------------------- */

/* On a little-endian target a memcpy load is the same value, and compilers make it one load
 * instruction where the core allows unaligned access (Cortex-M3 and up). */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint16_t mn_ld_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint32_t mn_ld_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#else
static inline uint16_t mn_ld_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t mn_ld_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
#endif
static inline int32_t mn_ld_i32(const uint8_t *p) {
    return (int32_t)mn_ld_u32(p);
}
static inline uint64_t mn_ld_u64(const uint8_t *p) {
    return (uint64_t)mn_ld_u32(p) | ((uint64_t)mn_ld_u32(p + 4) << 32);
}
static inline float mn_ld_f32(const uint8_t *p) {
    uint32_t u = mn_ld_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- tensors ----------------------------------------------------------------------------------- */

#ifndef MN_MAX_DIMS
#define MN_MAX_DIMS 6
#endif

/* mn_tensor_t.flags */
#define MN_TF_CONST 0x01     /* data comes from a model buffer (read-only for kernels) */
#define MN_TF_VARIABLE 0x02  /* variable (state) tensor: persistent, zeroed at prepare/reset */
#define MN_TF_INPUT 0x04     /* model (subgraph 0) input */
#define MN_TF_OUTPUT 0x08    /* model (subgraph 0) output */
#define MN_TF_COPIED 0x10    /* constant data was copied to the arena for alignment */
#define MN_TF_PATCH 0x20     /* (internal) activation inside a patch stage: band buffers, not planned */
#define MN_TF_INPLACE 0x40   /* output of an in-place op: shares its input's memory (mn_inplace.c) */

/*
 * Runtime tensor descriptor, used by callers and kernels alike.
 * dims: ndim sizes (read-only). They point into the model's shape vector when that is 4-byte
 * aligned (any 4-byte aligned model), otherwise to a copy in the interpreter's arena (or, for
 * mn_model_tensor() on such a model, to a buffer in mn_model_t that the next call reuses).
 * Quantization stays in the model: `quant` points to the tensor's QuantizationParameters table
 * (a flatbuffer table in the model buffer; NULL when the tensor is not quantized, i.e. has no
 * scales). Read it with mn_tensor_scale() / mn_tensor_zero_point() / mn_tensor_q_count(): q_count
 * is 0 when the tensor is not quantized, 1 for per-tensor, and the number of channels along
 * dimension q_dim for per-channel quantization. The size in bytes is mn_tensor_bytes(). With
 * the parameters in the model and the size computed, the record is 16 bytes on a 32-bit target
 * (every tensor of a model has one in the arena); kernels read them at prepare, not per invoke.
 */
typedef struct mn_tensor {
    void *data;                 /* NULL until prepared (never after, even with zero elements) */
    const int32_t *dims;        /* [ndim], see above; ndim <= MN_MAX_DIMS */
    const uint8_t *quant;       /* QuantizationParameters table in the model, or NULL */
    uint8_t ndim;
    uint8_t dtype;              /* mn_dtype_t */
    uint8_t flags;              /* MN_TF_* */
    int8_t q_dim;               /* quantized_dimension as stored (may exceed ndim for a per-tensor 1-D
                                 * bias; values outside int8 saturate: per-channel ones are < ndim) */
} mn_tensor_t;

/* Quantization of channel ch (0 <= ch < q_count; any other ch: channel 0): the scale (0.0f when
 * not quantized) and zero point (0 when the model stores none). */
float mn_tensor_scale(const mn_tensor_t *t, int32_t ch);
int32_t mn_tensor_zero_point(const mn_tensor_t *t, int32_t ch);
/* Number of scales: 0 when not quantized, 1 per-tensor, else per-channel. */
int32_t mn_tensor_q_count(const mn_tensor_t *t);
/* The scales as stored (q_count little-endian float32, possibly unaligned), or NULL; the zero
 * points (q_count little-endian int64), or NULL when the model stores none (all zero). */
const uint8_t *mn_tensor_scales(const mn_tensor_t *t);
const uint8_t *mn_tensor_zero_points(const mn_tensor_t *t);
/* Number of elements (product of dims; 1 for a scalar). */
size_t mn_tensor_count(const mn_tensor_t *t);
/* Bytes of its data: element size * element count (int4: two elements per byte, rounded up). */
size_t mn_tensor_bytes(const mn_tensor_t *t);

/* ---- model ------------------------------------------------------------------------------------- */

/*
 * Zero-copy view of a TFLite flatbuffer (schema v3, identifier "TFL3"). mn_model_init verifies the
 * whole buffer first (every offset, vtable, vector, string, index, shape against buffer size);
 * afterwards accessors need no further checks. Several subgraphs load; subgraph 0 runs (the
 * others inside IF / WHILE / CALL_ONCE ops, mn_nested.c).
 * All fields are private; use the functions below.
 */
typedef struct mn_model {
    const uint8_t *buf;
    size_t len;
    uint32_t version;
    uint32_t n_subgraphs;
    uint32_t opcodes, n_opcodes;    /* offset of first vector element, element count */
    uint32_t buffers, n_buffers;
    uint32_t metadata, n_metadata;
    uint32_t subgraph;              /* offset of subgraph 0 table */
    uint32_t tensors, n_tensors;
    uint32_t ops, n_ops;
    uint32_t inputs, n_inputs;
    uint32_t outputs, n_outputs;
    uint32_t description;           /* offset of description string (0 = none) */
    mn_error_t err;
    int32_t dims_tmp[MN_MAX_DIMS]; /* mn_model_tensor() dims of a model that is not 4-byte aligned */
} mn_model_t;

/* Verify buf[0:len) and set up the view. On failure m->err describes the problem. */
mn_status_t mn_model_init(mn_model_t *m, const void *buf, size_t len);

/* A view of the same model whose "subgraph 0" is subgraph k (all subgraphs were verified by
 * mn_model_init), e.g. to run it with a second interpreter. */
mn_status_t mn_model_subgraph(const mn_model_t *m, size_t k, mn_model_t *out);

size_t mn_model_num_inputs(const mn_model_t *m);
size_t mn_model_num_outputs(const mn_model_t *m);
size_t mn_model_num_ops(const mn_model_t *m);
size_t mn_model_num_tensors(const mn_model_t *m);
size_t mn_model_num_subgraphs(const mn_model_t *m);

/* Static description of one operator of subgraph 0 (for inspection tools). */
typedef struct mn_op_info {
    int32_t builtin;            /* builtin code (MN_BUILTIN_CUSTOM = 32 for custom ops) */
    int32_t version;            /* opcode version */
    const char *name;           /* builtin name (in name_buf), or the custom code string */
    int32_t n_inputs, n_outputs;
    int supported;              /* 1 if this firmware has a kernel for it */
    char name_buf[MN_OP_NAME_LEN];
} mn_op_info_t;
mn_status_t mn_model_op_info(const mn_model_t *m, size_t op, mn_op_info_t *out);
/* Just the builtin code and the custom code string (NULL for a builtin) of operator `op`: what
 * kernel lookups need, without decoding the op's name (mn_model_op_info does that). */
mn_status_t mn_model_op_code(const mn_model_t *m, size_t op, int32_t *builtin, const char **custom);

/* Name of tensor `index` (NUL-terminated, in the model; "" if unnamed, NULL if out of range). The
 * descriptors do not carry it (4 bytes less per tensor in the arena). */
const char *mn_model_tensor_name(const mn_model_t *m, size_t index);

/* Fill a descriptor of tensor `index` from the model alone (data is NULL unless constant). */
mn_status_t mn_model_tensor(const mn_model_t *m, size_t index, mn_tensor_t *out);
/* Tensor index of the model's i-th input / output, or -1. */
int32_t mn_model_input_index(const mn_model_t *m, size_t i);
int32_t mn_model_output_index(const mn_model_t *m, size_t i);

/* ---- interpreter ------------------------------------------------------------------------------- */

/* Memory planners. */
typedef enum mn_planner {
    MN_PLANNER_GREEDY = 0,    /* first-fit-decreasing by size (TFLM GreedyMemoryPlanner) */
    MN_PLANNER_NO_REUSE = 1,  /* debug: every tensor gets its own memory, all stay readable */
    MN_PLANNER_OFFLINE = 2,   /* use "OfflineMemoryAllocation" metadata; greedy for the rest. The plan
                               * is checked: an offset misaligned for its tensor's type, or two
                               * tensors alive at the same time sharing bytes, is MN_ERR_MODEL */
} mn_planner_t;

/* Tick source for the profiler: returns a free-running counter. Differences are taken modulo
 * (ticks_mask + 1), so a 32-bit counter works with ticks_mask = 0xffffffff; 0 means 64-bit. */
typedef uint64_t (*mn_ticks_fn)(void *user);

struct mn_registration;       /* mn_kernel.h */
struct mn_node;               /* mn_kernel.h */

/* mn_config_t.flags */
#define MN_CFG_REUSE_INPUTS 0x01 /* let the planner reuse input memory after its last use (as TFLM
                                  * does); inputs then do not keep their values after invoke */
#define MN_CFG_REFERENCE_KERNELS 0x02 /* ops outside a delegate's subgraphs run their reference
                                       * compute functions (no optimized backend) */

typedef struct mn_config {
    uint8_t planner;                      /* mn_planner_t */
    uint8_t flags;                        /* MN_CFG_* */
    mn_ticks_fn ticks;                    /* optional profiler clock; NULL = no profiling */
    void *ticks_user;
    uint64_t ticks_mask;
    const struct mn_registration *ops;    /* optional extra kernels, searched before built-ins */
    size_t n_ops;
    /* Optional: polled by invoke before each op; nonzero stops the invoke there with
     * MN_ERR_ABORTED (outputs are then undefined; the interpreter stays usable). Lets a host
     * break a long inference (Ctrl-C) without the engine knowing about signals. */
    int (*should_stop)(void *user);
    void *stop_user;
    /* Optional backend (mn_kernel.h, "delegates"): at prepare the op list is partitioned into
     * maximal connected subgraphs of ops it supports, each run by it; the rest by the kernels. */
    const struct mn_delegate *delegate;
    uint32_t min_subgraph;                /* smaller subgraphs stay with the kernels (0 = 1) */
    /* Optional (host tools): called at prepare with every per-op table a kernel keeps (per-channel
     * multipliers, folded biases, ...: mn_kernel.h "tables"), what `micronn tables` stores in the
     * model so that the engine can use it in place instead of an arena copy. */
    void (*table_hook)(void *user, uint32_t subgraph, uint32_t op, uint32_t tag, const void *data, size_t bytes);
    void *table_user;
    /* Optional patch-based execution (mn_patch.c): ops patch_first .. patch_last, a chain of
     * CONV_2D / DEPTHWISE_CONV_2D / MAX_POOL_2D / AVERAGE_POOL_2D, run in bands of patch_rows
     * output rows of the last one, so the activations between them never exist in full.
     * patch_rows 0: off; MN_PATCH_STREAM: streaming, each op keeps only the input rows its
     * filter covers and every row is computed once. mn_patch_choose() finds the stage and rows
     * that need the least arena. */
    uint16_t patch_first, patch_last, patch_rows;
} mn_config_t;
#define MN_PATCH_STREAM 0xffff   /* mn_config_t.patch_rows: line buffers instead of bands */

/* Arena accounting (bytes). `needed` is the smallest arena that would work for this model,
 * valid after a successful prepare and after a prepare that failed with MN_ERR_ARENA. */
typedef struct mn_arena_stats {
    size_t arena_size;      /* what the caller gave */
    size_t persistent;      /* tail: tensor/op metadata, kernel data, variable tensors, copies */
    size_t nonpersistent;   /* head: planned activations and scratch buffers */
    size_t temp_peak;       /* peak prepare-time temporaries (between head and tail) */
    size_t needed;          /* max(persistent + nonpersistent, peak during prepare) + alignment */
    size_t copied_bytes;    /* constant data copied for alignment (part of persistent) */
    size_t n_scratch;       /* scratch buffers requested by kernels */
    size_t kernel_persistent; /* part of persistent the ops' kernels took (per op: mn_interp_profile);
                             * the rest is the engine's tensor/op records, variables and copies */
} mn_arena_stats_t;

typedef struct mn_scratch mn_scratch_t;   /* internal */

/*
 * Interpreter state: lives in caller memory; its big arrays live in the arena. Fields are
 * private (kernels use the mn_kernel.h accessors).
 */
typedef struct mn_interp {
    const mn_model_t *model;
    mn_config_t cfg;
    uint8_t *arena;               /* aligned start */
    size_t arena_size;            /* usable bytes from `arena` */
    size_t head;                  /* bytes used at the head (non-persistent + prepare-time lists) */
    size_t tail;                  /* bytes used at the tail (persistent) */
    size_t temp;                  /* current temporaries above head */
    size_t shortfall;             /* bytes missing when allocations failed (for "need N") */
    size_t dry_extra;             /* dry run: kernel persistent bytes counted but already released */
    uint8_t *pers;                /* split arenas: aligned persistent buffer, NULL = the arena's tail */
    size_t pers_size;
    size_t pers_shortfall;        /* split arenas: persistent bytes missing */
    /* Tensor records. Constants read in place from the model have none (they are decoded into
     * const_slots when a kernel asks, mn_input): rec_of maps a model tensor index to its record
     * (MN_NO_REC: none). rec_of NULL: every tensor has one, at its own index. */
    mn_tensor_t *tensors;
    const uint8_t *rec_of;
    uint32_t n_tensors;           /* the model's (subgraph's) tensor count */
    mn_tensor_t *const_slots;     /* the current op's record-less constant inputs (one per position) */
    mn_tensor_t const_view;       /* mn_interp_tensor's record of such a constant */
    struct mn_node *nodes;
    const uint16_t *node_index;   /* model operator index of each node when a delegate reordered them */
    uint32_t n_nodes;
    void **scratch_ptr;           /* per scratch index, valid after prepare */
    mn_scratch_t *scratch_req;    /* prepare-time list */
    uint32_t n_scratch;
    const uint16_t *plan_life;    /* while planning: each tensor's first and last op (0xffff: none), or NULL */
    uint32_t cur_op;              /* op being prepared/evaluated (for messages) */
    uint64_t *prof_ticks;         /* per-op tick totals (persistent), NULL without profiler */
    uint32_t *prof_calls;
    uint32_t invokes;
    uint8_t state;                /* 0 init, 1 preparing, 2 ready, 3 failed */
    uint8_t phase;                /* internal: which kernel callback runs */
    uint8_t dry_run;
    mn_arena_stats_t stats;
    mn_error_t err;
    const struct mn_backend *const *variants; /* kernel backends prepare may pick from (NULL: all) */
    struct mn_subgraph *subgraphs;  /* delegated subgraphs, in execution order */
    uint32_t n_subgraphs;
    /* Several subgraphs (mn_nested.c): the interpreter whose op runs this one (NULL for the
     * caller's), the resource variables every interpreter of the model shares (mn_resource.c),
     * and how often the top interpreter was reset (re-arms CALL_ONCE). */
    struct mn_interp *parent;
    struct mn_resources *resources;
    uint32_t resets;
    struct mn_patch *patch;         /* patch stage (mn_patch.c), or NULL */
} mn_interp_t;

/* Alignment of the arena, of planned buffers (activations, scratch) and prepare temporaries. */
#define MN_ARENA_ALIGN 16
/* Alignment of persistent blocks (kernel data, records, variable tensors): any scalar type's. The
 * many small per-op blocks would waste 8 bytes each on average at MN_ARENA_ALIGN. */
#define MN_PERSIST_ALIGN 8

/*
 * Bind an interpreter to a verified model and a caller arena (any alignment; the engine aligns
 * the start itself). To find the size first, use mn_arena_needed() (dry run).
 * cfg may be NULL (greedy planner, no profiler). Nothing is allocated yet.
 */
mn_status_t mn_interp_init(mn_interp_t *it, const mn_model_t *m, void *arena, size_t arena_size,
    const mn_config_t *cfg);

/*
 * Split arenas (optional, after mn_interp_init, before prepare): persistent data (tensor and op
 * records, kernel data, variable tensors, aligned copies) goes to `buf` (any alignment), e.g. slow
 * or less precious RAM, while the arena keeps activations, scratch and prepare temporaries, e.g.
 * fast SRAM. stats.persistent is then what `buf` needs and stats.needed what the arena needs (each
 * with MN_ARENA_ALIGN-1 bytes of slack for an unaligned start: see mn_arena_needed_stats).
 */
mn_status_t mn_interp_set_persistent(mn_interp_t *it, void *buf, size_t size);

/*
 * Allocate and plan everything: tensor metadata, kernel init+prepare, memory plan, variable
 * tensors. After success the interpreter can be invoked any number of times with no further
 * allocation. On MN_ERR_ARENA the message reads "arena too small: need N bytes, have M" and
 * it->stats.needed holds N.
 */
mn_status_t mn_interp_prepare(mn_interp_t *it);

/*
 * Dry run: find the arena size this model needs with this config, without a real arena.
 * `work` is temporary memory for the engine's metadata (tensor descriptors, op nodes) plus one
 * op's kernel data at a time (released after each op's prepare; variable tensors and planned
 * activations are counted, not allocated), so it is much smaller than the arena;
 * mn_dry_run_work_hint() gives a good first size. On success *needed is the exact arena size
 * (including MN_ARENA_ALIGN-1 bytes of slack for an unaligned arena start). If work is too small:
 * MN_ERR_ARENA and *needed = a lower bound of the work size required (retry with it). Uses the
 * same kernels and planner as a real prepare. err may be NULL.
 * A real prepare on a too-small arena reports the need too ("need N bytes"): exactly when the
 * persistent part fitted, else by running this dry run inside the arena it was given; only if
 * even that does not fit, as "need at least N".
 */
mn_status_t mn_arena_needed(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    size_t *needed, mn_error_t *err);
size_t mn_dry_run_work_hint(const mn_model_t *m);
/* The same dry run, giving all its figures: out->needed as mn_arena_needed, out->persistent and
 * out->nonpersistent; with split arenas (mn_interp_set_persistent) the persistent buffer needs
 * out->persistent + MN_ARENA_ALIGN - 1 bytes and the arena max(out->nonpersistent, out->temp_peak)
 * + MN_ARENA_ALIGN - 1. */
mn_status_t mn_arena_needed_stats(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_arena_stats_t *out, mn_error_t *err);

/* Run subgraph 0 once (other subgraphs run inside IF / WHILE / CALL_ONCE ops). Performs no
 * allocation. */
mn_status_t mn_interp_invoke(mn_interp_t *it);

/* Zero all variable (state) tensors, e.g. between unrelated audio streams; resource variables
 * (VAR_HANDLE) become unassigned again and CALL_ONCE ops run their init subgraph again. */
mn_status_t mn_interp_reset(mn_interp_t *it);

/* Call kernels' free hooks. The arena may be reused afterwards. */
void mn_interp_deinit(mn_interp_t *it);

size_t mn_interp_num_inputs(const mn_interp_t *it);
size_t mn_interp_num_outputs(const mn_interp_t *it);
/* Descriptors are owned by the interpreter (in the arena); NULL if i is out of range or not prepared. */
mn_tensor_t *mn_interp_input(mn_interp_t *it, size_t i);
mn_tensor_t *mn_interp_output(mn_interp_t *it, size_t i);
/* Any tensor by model index. With MN_PLANNER_NO_REUSE every tensor's data stays valid after
 * invoke; with the greedy planner intermediates are overwritten. NULL for the activations inside
 * a patch stage (they only exist in bands). A constant read in place from the model has no record
 * in the arena: its descriptor is decoded into the interpreter (it->const_view), valid until the
 * next call for such a constant. */
mn_tensor_t *mn_interp_tensor(mn_interp_t *it, size_t index);
size_t mn_interp_num_tensors(const mn_interp_t *it);

mn_status_t mn_interp_stats(const mn_interp_t *it, mn_arena_stats_t *out);

/* One buffer of the non-persistent plan, for host tools (offline planners, plan pictures).
 * Buffers 0 .. n_tensors-1 are the tensors (planned = 0 for constants, variables, empty or unused
 * ones), then one per kernel scratch buffer. size is rounded up to MN_ARENA_ALIGN; the buffer is
 * alive from op `first` to op `last` inclusive and sits at `offset` in the arena. */
typedef struct mn_plan_info {
    int32_t index;      /* tensor index, or -1 - scratch index */
    int32_t planned;
    int32_t first, last;
    size_t size;
    size_t offset;
    int32_t over;       /* tensor whose buffer this one may share bytes with (a convolution's dying
                         * input; the output then starts at most `shift` bytes above it), or -1 */
    int32_t shift;
} mn_plan_info_t;
/* Buffer k (0 <= k < n_tensors + stats.n_scratch) after a successful prepare. */
mn_status_t mn_interp_plan_buffer(const mn_interp_t *it, size_t k, mn_plan_info_t *out);

/* Patch-based execution (mn_config_t.patch_*; see mn_patch.c). */
typedef struct mn_patch_choice {
    uint16_t first, last;       /* the stage's first and last op */
    uint16_t rows;              /* output rows of the last op per band; 0 = no stage;
                                 * MN_PATCH_STREAM: line buffers (one band, nothing recomputed) */
    uint16_t bands;             /* bands per invoke */
    uint16_t height;            /* output rows of the last op */
    size_t arena;               /* arena needed (mn_arena_needed) with the stage */
    size_t arena_without;       /* ... and without patches */
    uint64_t macs;              /* multiply-accumulates (pool: taps) of the stage's ops, unbanded */
    uint64_t macs_patched;      /* ... banded: the excess is the recomputed halo rows */
} mn_patch_choice_t;
/*
 * Which stage (a chain of ops starting at one that reads a model input) and band height give
 * the smallest arena with this config, by sizing dry runs (as mn_arena_needed, one at a time in
 * `work`): out->rows = 0 when no stage needs less than no patches. Among equal arenas, the
 * fewest recomputed multiply-accumulates. A model that stores a stage (metadata
 * "micronn_patch_v1": u16 first op, last op, rows; `micronn plan --write --patches` stores the one
 * its memory plan was made for) gets that one. Set cfg->patch_first / patch_last / patch_rows
 * from out. MN_ERR_ARENA: work is too small, out->arena = a work size to retry with.
 */
mn_status_t mn_patch_choose(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_patch_choice_t *out, mn_error_t *err);
/* The stage a prepared interpreter runs (rows 0 without one); arena_without is 0 (unknown). */
mn_status_t mn_interp_patch(const mn_interp_t *it, mn_patch_choice_t *out);

/* Per-op profile: accumulated ticks since prepare (or the last mn_interp_profile_clear), and the
 * kernel variant each op runs (also without a profiler clock). */
typedef struct mn_op_profile {
    const char *name;     /* op name (in name_buf for builtin ops) */
    int32_t builtin;
    uint32_t calls;
    uint64_t ticks;
    const char *variant;  /* compute variant prepare chose ("reference" or "<backend>.<function>") */
    size_t persistent;    /* persistent arena bytes of this op (kernel data + scratch records) */
    const char *backend;  /* the delegate that runs it, or NULL (the interpreter's kernels) */
    int32_t subgraph;     /* which delegated subgraph (0, 1, ... in execution order), or -1 */
    uint32_t model_index; /* its operator index in the model (ops run in partition order) */
    char name_buf[MN_OP_NAME_LEN];   /* where name is decoded (builtin ops) */
} mn_op_profile_t;
size_t mn_interp_num_ops(const mn_interp_t *it);
mn_status_t mn_interp_profile(const mn_interp_t *it, size_t op, mn_op_profile_t *out);
void mn_interp_profile_clear(mn_interp_t *it);

/* Last error message of the interpreter ("" if none). */
static inline const char *mn_interp_error(const mn_interp_t *it) {
    return it->err.msg;
}
static inline const char *mn_model_error(const mn_model_t *m) {
    return m->err.msg;
}

/* For foreign-function bindings (ctypes, ...): struct sizes and error messages as functions. */
size_t mn_model_struct_size(void);
size_t mn_interp_struct_size(void);
const char *mn_model_errmsg(const mn_model_t *m);
const char *mn_interp_errmsg(const mn_interp_t *it);

/* The delegate that runs subgraphs with optimized kernel backend `name` ("mve", "dsp", "generic";
 * kernels/mn_variants.c) while the rest of the model runs as configured; NULL for another name.
 * Every build partitions for every backend; one without the backend compiled in (see
 * mn_kernel_backend) runs the subgraphs with its own kernels. A build without delegation
 * (MICRONN_DELEGATE=0, mn_config.h) has none (NULL) and refuses any delegate at prepare with: */
#define MN_DELEGATE_NOT_BUILT "this firmware was built without delegation " \
    "(make firmware ... DELEGATE=1, or OPS=all)"
const struct mn_delegate *mn_delegate_find(const char *name);
/* The names mn_delegate_find takes, i = 0, 1, ...; NULL past the last (none without delegation). */
const char *mn_delegate_name(size_t i);
/* 1 if the coverage each delegate declares matches its backend's sources (where compiled in). */
int mn_delegate_coverage_ok(void);

/* Optimized kernel backends compiled in (MICRONN_KERNELS), in order of preference: name of the
 * i-th, or NULL past the last. With none, every op runs its reference compute function. */
const char *mn_kernel_backend(size_t i);

/* Is there a kernel in this build (or in cfg->ops) for builtin code / custom name? */
int mn_op_supported(const mn_config_t *cfg, int32_t builtin, const char *custom_name);

/* The settings this engine was compiled with: MN_BUILD_* bits (mn_config.h). */
uint32_t mn_build_flags(void);

/* Whether the engine has a kernel for an op, and whether this build links it. */
#define MN_KERNEL_NONE 0        /* the engine has no kernel for it (yet) */
#define MN_KERNEL_NOT_BUILT 1   /* the engine has one, this build was made without it */
#define MN_KERNEL_LINKED 2      /* in this build (or in cfg->ops) */
int mn_op_kernel_state(const mn_config_t *cfg, int32_t builtin, const char *custom_name);

/* Every builtin kernel of the engine source (mn_ops.h), linked or not. */
typedef struct mn_op_kernel_info {
    int32_t builtin;
    int32_t max_version;        /* highest opcode version implemented */
    int32_t options_type;       /* builtin options table of the op (MN_OPTIONS_*; 0 = none) */
    const char *dtypes;         /* dtype combinations, e.g. "int8 int16 float32" (NULL if
                                 * compiled out: MICRONN_OP_INFO=0) */
    int linked;                 /* 1 if this build has the kernel */
} mn_op_kernel_info_t;
/* Fill *out for the i-th kernel (i = 0, 1, ...); returns 0 past the last one. */
int mn_op_kernel_info(size_t i, mn_op_kernel_info_t *out);
/* Why a known custom op cannot run without a registered kernel (e.g. "ethos-u"), or NULL. */
const char *mn_custom_op_hint(const char *custom_name);
/* The same for the i-th custom-op kernel built in (mn_custom_ops.h); *name = its custom code. */
int mn_custom_op_info(size_t i, const char **name, mn_op_kernel_info_t *out);
/* Name of a builtin options table type ("AddOptions"), "NONE" for 0, "?" if unknown. */
const char *mn_options_name(int32_t options_type);

/* ---- inspection helpers (for host tools such as `micronn inspect`) ---------------------------- */

/* Which operand list of an operator mn_model_op_tensor() reads. */
#define MN_OP_INPUTS 0
#define MN_OP_OUTPUTS 1
#define MN_OP_INTERMEDIATES 2

/*
 * Tensor index of operand k of list `which` (MN_OP_*) of operator `op` of subgraph 0, in *tensor
 * (-1 = omitted optional operand). MN_ERR_ARG when op, which or k is out of range.
 */
mn_status_t mn_model_op_tensor(const mn_model_t *m, size_t op, int which, size_t k, int32_t *tensor);

/* Inline custom options bytes of operator `op` of subgraph 0 (NULL, *len = 0 if none). */
const uint8_t *mn_model_op_custom_options(const mn_model_t *m, size_t op, size_t *len);

/* Outcome of one operator in mn_check_ops(). */
typedef struct mn_op_check {
    int32_t status;              /* mn_status_t: MN_OK, MN_ERR_UNSUPPORTED (no kernel, or a dtype /
                                  * parameter the kernel refuses), MN_ERR_KERNEL, ... */
    char msg[MN_ERR_MSG_LEN];    /* the engine's message ("" when status is MN_OK) */
} mn_op_check_t;

/*
 * Support diagnostics: a dry run (as mn_arena_needed) that looks up and prepares EVERY operator
 * and records each failure in results[op] instead of stopping at the first one. results must
 * have room for mn_model_num_ops() entries (n_results). *n_failed (may be NULL) = ops that
 * failed. Returns MN_OK when every op prepared, MN_ERR_UNSUPPORTED when some op failed (see
 * results), MN_ERR_ARENA when `work` is too small (*needed = a work size to retry with; needed
 * may be NULL), or another status (with err, which may be NULL) for a model-level problem such
 * as a sparse tensor. Uses the same registry and kernels as mn_interp_prepare.
 */
mn_status_t mn_check_ops(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_op_check_t *results, size_t n_results, size_t *n_failed, size_t *needed, mn_error_t *err);

/* sizeof(mn_tensor_t), so a foreign-function binding can check that its copy of the layout matches. */
size_t mn_tensor_struct_size(void);

/* Engine version string. */
#define MN_VERSION "0.1.0"

#ifdef __cplusplus
}
#endif

#endif /* MICRONN_H */
