/*
 * Layer 3: the kernel context as the engine implements it (mn_context.c: the API of mn_kernel.h;
 * mn_node.c: running one node's kernel; mn_const.c: operands). Above the arena and the model view,
 * below everything that walks the graph.
 */
#ifndef MN_CONTEXT_H
#define MN_CONTEXT_H

#include "mn_arena.h"
#include "mn_modelview.h"

/* mn_interp_t.dry_run: 0 = a real prepare; a check of every op (mn_check_ops), which must find
 * every error a real prepare finds; or arena sizing (mn_arena_needed, see mn_sizing_only). */
enum { DRY_RUN_CHECK = 1, DRY_RUN_SIZING = 2 };


/* mn_interp_t.state and .phase (what the kernel API allows: mn_alloc_persistent in init and
 * prepare, mn_alloc_temp and mn_request_scratch in prepare). */
enum { ST_INIT = 0, ST_PREPARING = 1, ST_READY = 2, ST_FAILED = 3 };
enum { PH_NONE = 0, PH_INIT = 1, PH_PREPARE = 2, PH_EVAL = 3 };

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

/* ---- one node's kernel (mn_node.c) ------------------------------------------------------------ */

/* Init and prepare node i (it->cur_op = i); in a dry run its persistent data is counted and
 * released right away (mn_node.c). */
mn_status_t mn_node_prepare(mn_interp_t *it, uint32_t i);
/* Evaluate the node at execution position i (profiled); it->phase is PH_EVAL. */
mn_status_t mn_node_eval(mn_interp_t *it, uint32_t i);
/* Kernel backends of nodes outside delegated subgraphs (it->variants): NULL = the built ones. */
const struct mn_backend *const *mn_node_default_variants(const mn_interp_t *it);

#endif /* MN_CONTEXT_H */
