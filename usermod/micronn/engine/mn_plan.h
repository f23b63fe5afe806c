/*
 * Layer 0: the memory planner (mn_planner.c): places buffers with known sizes and op-index
 * lifetimes. It knows nothing of tensors or interpreters: mn_memplan.c feeds it.
 */
#ifndef MN_PLAN_H
#define MN_PLAN_H

#include "mn_kernel.h"

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

#endif /* MN_PLAN_H */
