/*
 * Engine-internal helpers shared by the engine's .c files (not for kernels or callers).
 */
#ifndef MN_INTERNAL_H
#define MN_INTERNAL_H

#include <stdarg.h>

#include "mn_kernel.h"

/* ---- flatbuffer access (only after mn_verify has accepted the buffer) --------------------- */
/* fb_field, fb_u32, fb_ref and fb_vec are functions (mn_model.c), not inlined at each of the
 * engine's many reads: smaller code (the reads are outside kernels' inner loops). */

/* Absolute position of field `field` of the table at `t`, or 0 if absent. */
uint32_t fb_field(const uint8_t *b, uint32_t t, int field);
/* 32-bit scalar field, def if absent. */
uint32_t fb_u32(const uint8_t *b, uint32_t t, int field, uint32_t def);
static inline int32_t fb_i32(const uint8_t *b, uint32_t t, int field, int32_t def) {
    return (int32_t)fb_u32(b, t, field, (uint32_t)def);
}
static inline int32_t fb_i8(const uint8_t *b, uint32_t t, int field, int32_t def) {
    uint32_t p = fb_field(b, t, field);
    return p ? (int32_t)(int8_t)b[p] : def;
}
static inline uint32_t fb_u8(const uint8_t *b, uint32_t t, int field, uint32_t def) {
    uint32_t p = fb_field(b, t, field);
    return p ? b[p] : def;
}
/* Follow the uoffset stored in field `field`: absolute position of the target, or 0. */
uint32_t fb_ref(const uint8_t *b, uint32_t t, int field);
/* Vector field: returns position of the first element (0 if absent), *n = length. */
uint32_t fb_vec(const uint8_t *b, uint32_t t, int field, uint32_t *n);
/* i-th table of a vector of tables starting at element position v. */
static inline uint32_t fb_vec_table(const uint8_t *b, uint32_t v, uint32_t i) {
    uint32_t p = v + 4u * i;
    return p + mn_ld_u32(b + p);
}
/* String field as a C string in the buffer (verified NUL-terminated), or NULL. */
static inline const char *fb_str(const uint8_t *b, uint32_t t, int field) {
    uint32_t s = fb_ref(b, t, field);
    return s ? (const char *)(b + s + 4) : (const char *)0;
}

/* Schema field ids. */
enum { F_MODEL_VERSION = 0, F_MODEL_OPCODES = 1, F_MODEL_SUBGRAPHS = 2, F_MODEL_DESCRIPTION = 3,
       F_MODEL_BUFFERS = 4, F_MODEL_METADATA_BUFFER = 5, F_MODEL_METADATA = 6 };
enum { F_SG_TENSORS = 0, F_SG_INPUTS = 1, F_SG_OUTPUTS = 2, F_SG_OPERATORS = 3, F_SG_NAME = 4 };
enum { F_T_SHAPE = 0, F_T_TYPE = 1, F_T_BUFFER = 2, F_T_NAME = 3, F_T_QUANT = 4, F_T_IS_VARIABLE = 5,
       F_T_SPARSITY = 6, F_T_SHAPE_SIGNATURE = 7 };
enum { F_Q_MIN = 0, F_Q_MAX = 1, F_Q_SCALE = 2, F_Q_ZERO_POINT = 3, F_Q_DETAILS_TYPE = 4, F_Q_DETAILS = 5,
       F_Q_QDIM = 6 };
enum { F_OP_OPCODE_INDEX = 0, F_OP_INPUTS = 1, F_OP_OUTPUTS = 2, F_OP_OPTIONS_TYPE = 3, F_OP_OPTIONS = 4,
       F_OP_CUSTOM_OPTIONS = 5, F_OP_CUSTOM_FORMAT = 6, F_OP_MUTATING = 7, F_OP_INTERMEDIATES = 8,
       F_OP_LARGE_CUSTOM_OFFSET = 9, F_OP_LARGE_CUSTOM_SIZE = 10 };
enum { F_OC_DEPRECATED_CODE = 0, F_OC_CUSTOM_CODE = 1, F_OC_VERSION = 2, F_OC_BUILTIN_CODE = 3 };
enum { F_BUF_DATA = 0, F_BUF_OFFSET = 1, F_BUF_SIZE = 2 };
enum { F_MD_NAME = 0, F_MD_BUFFER = 1 };

/* Can the int32 vector element at p be read in place as an int32_t (aligned, little-endian
 * target)? Otherwise it is read with mn_ld_i32 / copied. */
static inline int mn_i32_in_place(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return ((uintptr_t)p & 3u) == 0;
#else
    (void)p;
    return 0;
#endif
}

/* Metadata name of the per-op tables a host tool stores in the model (mn_tables.c). */
#define MN_TABLES_METADATA "micronn_quant_v1"

/* ---- model helpers (mn_model.c) ----------------------------------------------------------- */

mn_status_t mn_verify(mn_model_t *m);
uint32_t mn_model_op_table(const mn_model_t *m, uint32_t op);
uint32_t mn_model_tensor_table(const mn_model_t *m, uint32_t t);
/* Builtin code and custom name of an opcode table. */
int32_t mn_opcode_builtin(const uint8_t *b, uint32_t oc);
/* Data of buffer `index`: pointer and size (NULL/0 when empty). */
const uint8_t *mn_model_buffer(const mn_model_t *m, uint32_t index, size_t *size);
/* Metadata entry by name: buffer data, or NULL. */
const uint8_t *mn_model_metadata(const mn_model_t *m, const char *name, size_t *size);

/* ---- errors / formatting (mn_util.c) ------------------------------------------------------ */

size_t mn_vfmt(char *out, size_t cap, const char *fmt, va_list ap);
size_t mn_fmt(char *out, size_t cap, const char *fmt, ...);
mn_status_t mn_err_set(mn_error_t *e, mn_status_t code, const char *fmt, ...);
/* The one format of the dry runs' error (args: who, bytes needed, bytes given; one string). */
#define MN_WORK_TOO_SMALL "%s: work buffer too small: need at least %zu bytes, have %zu"

/* mn_interp_t.dry_run: 0 = a real prepare; a check of every op (mn_check_ops), which must find
 * every error a real prepare finds; or arena sizing (mn_arena_needed, see mn_sizing_only). */
enum { DRY_RUN_CHECK = 1, DRY_RUN_SIZING = 2 };

/* ---- registry (mn_registry.c) ------------------------------------------------------------- */

const mn_kernel_t *mn_registry_find(const mn_config_t *cfg, int32_t builtin, const char *custom_name);
/* The registry entry (user's cfg->ops first), usable or not; NULL if the engine has no kernel.
 * A builtin kernel's entry is built in *buf. */
const mn_registration_t *mn_registry_lookup(const mn_config_t *cfg, int32_t builtin, const char *custom_name,
    mn_registration_t *buf);

/* ---- arena (mn_arena.c) --------------------------------------------------------------------- */

#define MN_ALIGN_UP(x) (((x) + (MN_ARENA_ALIGN - 1)) & ~(size_t)(MN_ARENA_ALIGN - 1))
/* The caller buffer that holds n bytes of arena (a whole number of MN_PERSIST_ALIGN units, as
 * align_buf uses it) whatever the alignment of its start. */
#define MN_NEED(n) ((((n) + (MN_PERSIST_ALIGN - 1)) & ~(size_t)(MN_PERSIST_ALIGN - 1)) + (MN_ARENA_ALIGN - 1))

/*
 * Host testing aid: with -DMICRONN_ASAN_REDZONE=16 (and -fsanitize=address) every arena block
 * gets a poisoned red zone after it and everything not handed out is poisoned, so a kernel that
 * reads or writes past a tensor, scratch or persistent block is caught by ASan even though the
 * arena is one big buffer. Zero (the default) compiles all of this away.
 */
#ifndef MICRONN_ASAN_REDZONE
#define MICRONN_ASAN_REDZONE 0
#endif
#if MICRONN_ASAN_REDZONE
#include <sanitizer/asan_interface.h>
#define MN_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MN_POISON(p, n) ((void)0)
#define MN_UNPOISON(p, n) ((void)0)
#endif
/* a * b, or SIZE_MAX on overflow (such a request then simply never fits the arena). */
static inline size_t mn_mul(size_t a, size_t b) {
    return (b && a > SIZE_MAX / b) ? SIZE_MAX : a * b;
}

/* Size of an arena block for a request of n bytes (alignment + red zone): planned and temporary
 * blocks (MN_BLOCK), persistent ones (MN_PBLOCK). */
#define MN_BLOCK(n) MN_ALIGN_UP((n) + MICRONN_ASAN_REDZONE)
#define MN_PBLOCK(n) (((n) + MICRONN_ASAN_REDZONE + (MN_PERSIST_ALIGN - 1)) & ~(size_t)(MN_PERSIST_ALIGN - 1))

void mn_arena_setup(mn_interp_t *it, void *arena, size_t size);
void mn_arena_setup_persistent(mn_interp_t *it, void *buf, size_t size);
/* One past the persistent stack's bottom (it grows down from there). */
uint8_t *mn_arena_tail_end(const mn_interp_t *it);
/* Does a plan of np bytes fit beside the persistent data? */
int mn_arena_fits_plan(const mn_interp_t *it, size_t np);
void *mn_arena_persistent(mn_interp_t *it, size_t bytes);
/* A persistent block starting MN_ARENA_ALIGN-aligned (e.g. a nested interpreter's arena). */
void *mn_arena_persistent_aligned(mn_interp_t *it, size_t bytes);
void *mn_arena_temp(mn_interp_t *it, size_t bytes);
void mn_arena_temp_reset(mn_interp_t *it);
void mn_arena_note_peak(mn_interp_t *it);

/* ---- resource variables (mn_resource.c) ----------------------------------------------------- */

#define MN_HAS_RESOURCES (MICRONN_OP_VAR_HANDLE || MICRONN_OP_READ_VARIABLE || MICRONN_OP_ASSIGN_VARIABLE)
/* The top interpreter's table (it->resources; none without VAR_HANDLE ops), with each variable's
 * memory; nested interpreters share it. */
mn_status_t mn_resources_setup(mn_interp_t *it);
/* Every variable unassigned and zeroed (mn_interp_reset). */
void mn_resources_reset(mn_interp_t *it);

/* ---- delegation (mn_delegate.c) -------------------------------------------------------------- */

/* Partition the nodes between it->cfg.delegate and the kernels (reorders it->nodes, sets
 * it->subgraphs); nothing without a delegate. */
mn_status_t mn_partition(mn_interp_t *it);
/* The subgraph holding execution position i, or NULL. */
const mn_subgraph_t *mn_subgraph_at(const mn_interp_t *it, uint32_t i);

/* ---- planner (mn_planner.c) ----------------------------------------------------------------- */

#define MN_PLAN_MOVES 4    /* greedy planner: buffers moved to the front of the order (mn_planner.c) */
#define MN_PLAN_TRIES 16   /* greedy planner: moves tried for each */
#define MN_PLAN_MOVE_BUFS 96   /* greedy planner: no moves with more buffers (prepare time) */

typedef struct mn_plan_buf {
    size_t size;       /* bytes (already rounded up to MN_ARENA_ALIGN) */
    size_t offset;     /* result; SIZE_MAX = not placed yet; preset for offline plans */
    int32_t first;     /* first op index using it */
    int32_t last;      /* last op index using it (inclusive) */
    int32_t id;        /* tensor index, or -1 - scratch index */
    int32_t fixed;     /* offset preset (offline plan) */
    int32_t over;      /* 1 + id of the buffer this one may overlap (mn_inplace_slide); 0 = none */
    int32_t shift;     /* with over: the most this offset may exceed that buffer's when they share bytes */
} mn_plan_buf_t;

/* Place buffers; returns the total bytes needed (high-water mark). `work` is temp space of 2n ints;
 * temp_bytes: the arena temporaries in use while planning (bufs and work included), which the
 * greedy planner's moves must fit in (mn_planner.c; 0 when they are not arena memory). */
size_t mn_plan(mn_plan_buf_t *bufs, int32_t n, int kind, int32_t *work, size_t temp_bytes);

/* Same placement as mn_plan, computed without working memory (O(n^3)); used when the arena has no
 * room for the planner's temporaries, so that they never raise the arena size a model needs. */
typedef struct mn_plan_src {
    /* Describe buffer k (0 <= k < n): returns 0 if k is not a buffer to plan. */
    int (*get)(void *ctx, int32_t k, mn_plan_buf_t *out);
    /* Store / read back the offset of buffer k (placed = 0 means not placed yet). */
    void (*set_offset)(void *ctx, int32_t k, size_t offset);
    int (*get_offset)(void *ctx, int32_t k, size_t *offset);
    void (*clear_offset)(void *ctx, int32_t k);   /* not placed (placed again by a later pass) */
    void *ctx;
    int32_t n;
} mn_plan_src_t;
size_t mn_plan_nomem(const mn_plan_src_t *src, int kind, size_t temp_bytes);

/* Op-index lifetime of tensor t ([first, last], a group's union for the source of in-place
 * outputs); 0 if it gets no planned memory of its own (constant, variable, empty, unused, or
 * an in-place output). */
int mn_tensor_lifetime(const mn_interp_t *it, uint32_t t, int32_t *first, int32_t *last);

/* ---- patch-based execution (mn_patch.c) ---------------------------------------------------- */

#define MN_PATCH_METADATA "micronn_patch_v1"   /* a stage stored in the model (mn_patch_choose) */
#ifndef MN_PATCH_MAX_OPS
#define MN_PATCH_MAX_OPS 16     /* ops in a patch stage */
#endif
/* After the nodes are set up (do_prepare): with cfg.patch_rows, check the stage, give its ops
 * their band geometry and let its last op run them all (it->patch). */
mn_status_t mn_patch_setup(mn_interp_t *it);
/* The stage's input lives until the stage runs (its last op). */
void mn_patch_lifetime(const mn_interp_t *it, uint32_t t, int32_t *last);
/* Whether op i runs inside the patch stage (no stage: 0). */
int mn_patch_runs(const mn_interp_t *it, uint32_t i);

/* mn_opt_str of an options table of model view m (nodes built outside an interpreter). */
bool mn_opt_str_in(const mn_model_t *m, const mn_node_t *node, int field, const char **out);

/* ---- in-place ops (mn_inplace.c) ------------------------------------------------------------ */

/* Record of tensor t (model index), or NULL for a constant that has none (mn_const_tensor). */
static inline mn_tensor_t *mn_rec(const mn_interp_t *it, uint32_t t) {
    if (!it->rec_of) {
        return &it->tensors[t];
    }
    return it->rec_of[t] != MN_NO_REC ? &it->tensors[it->rec_of[t]] : (mn_tensor_t *)0;
}
/* Its flags (a record-less constant: MN_TF_CONST). */
static inline uint8_t mn_tflags(const mn_interp_t *it, uint32_t t) {
    const mn_tensor_t *r = mn_rec(it, t);
    return r ? r->flags : MN_TF_CONST;
}

#define MN_TF_ALIASED 0x80   /* (planning) a tensor some in-place output shares memory with */
/* Before planning (not with the no-reuse planner; with a stored plan only for the tensors it
 * leaves to the engine): mark in-place outputs (MN_TF_INPLACE: not planned; after
 * planning mn_inplace_resolve gives them their group's pointer). */
void mn_inplace_mark(mn_interp_t *it, const uint8_t *offline);   /* offline: stored plan's offsets or NULL */
void mn_inplace_clear(mn_interp_t *it);
void mn_inplace_resolve(mn_interp_t *it);
/* The tensor whose planned memory t uses (t itself unless it is an in-place output). */
int32_t mn_inplace_root(const mn_interp_t *it, int32_t t);
/* Convolutions and pools write their output over their input where they can (mn_conv_slide): if
 * tensor t, first used at op `first`, is the output of such a node, *x = the buffer (group root) of its
 * input and *shift = the most t's offset may exceed x's when the two share bytes (a multiple of
 * MN_ARENA_ALIGN); else 0. */
int mn_inplace_slide(const mn_interp_t *it, int32_t t, int32_t first, int32_t *x, int32_t *shift);

/* Scratch request record (persistent, linked, newest first; 16 bytes on 32-bit targets). The
 * list holds requests n_scratch-1 ... 0 in that order, so a record's index is its position. */
struct mn_scratch {
    size_t bytes;
    size_t offset;     /* planning: 0 = not placed, else offset + 1 */
    uint32_t op;
    struct mn_scratch *next;
};

#endif /* MN_INTERNAL_H */
