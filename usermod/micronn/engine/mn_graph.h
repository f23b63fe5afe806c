/*
 * Layer 4: what the interpreter does to the graph before it runs: setup (mn_setup.c), resource
 * variables (mn_resource.c), delegate partitions (mn_delegate.c), tensor lifetimes (mn_lifetime.c),
 * patch stages (mn_patch.c), in-place outputs (mn_inplace.c) and the memory plan (mn_memplan.c).
 * Each file calls only down: into layer 3 and below, and lifetimes <- in-place <- memory plan.
 */
#ifndef MN_GRAPH_H
#define MN_GRAPH_H

#include "mn_context.h"
#include "mn_plan.h"

/* ---- graph setup (mn_setup.c) ------------------------------------------------------------------ */

/* First steps of prepare and of mn_check_ops: tensor records, the node array and one block (*pool)
 * for the operand lists that cannot be used in place (copies_only; mn_check_ops: every list). */
mn_status_t mn_setup_graph(mn_interp_t *it, int copies_only, int32_t **pool);
/* Node i from the model: kernel, operands, options (errors name the op). */
mn_status_t mn_setup_node(mn_interp_t *it, uint32_t i, int32_t **pool_next);
/* After the nodes: the slots kernels see record-less constants through. */
mn_status_t mn_setup_const_slots(mn_interp_t *it);
/* A variable tensor back to its starting value (TFLM: the zero point for int8, zero otherwise). */
void mn_reset_variable(mn_tensor_t *t);

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

/* ---- tensor lifetimes (mn_lifetime.c) ----------------------------------------------------------- */

/* Op-index lifetime of tensor t ([first, last], a group's union for the source of in-place
 * outputs); 0 if it gets no planned memory of its own (constant, variable, empty, unused, or
 * an in-place output). */
int mn_tensor_lifetime(const mn_interp_t *it, uint32_t t, int32_t *first, int32_t *last);

/* Every tensor's first and last using op (a temporary of 4 bytes per tensor), or NULL when it
 * does not fit beside the planner's own temporaries: it->plan_life. */
const uint16_t *mn_tensor_uses(mn_interp_t *it);
/* Input 0 of the op that first writes tensor t, if that op has it as its only output; else -1
 * (derived from the graph, so it holds before, during and after planning). */
int32_t mn_inplace_source(const mn_interp_t *it, int32_t t);
/* The tensor whose planned memory t uses (t itself unless it is an in-place output). */
int32_t mn_inplace_root(const mn_interp_t *it, int32_t t);

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
/* Builds with a stage op at all. */
#define MN_PATCH_OPS (MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D || MICRONN_OP_MAX_POOL_2D \
    || MICRONN_OP_AVERAGE_POOL_2D)
#define MN_PATCH_NOT_BUILT "patch stage: this firmware was built without patch-based execution " \
    "(make firmware ... PATCHES=1, or freeze a model written by `micronn plan --patches --write`)"

/* ---- in-place ops (mn_inplace.c) ------------------------------------------------------------ */

#define MN_TF_ALIASED 0x80   /* (planning) a tensor some in-place output shares memory with */
/* Before planning (not with the no-reuse planner; with a stored plan only for the tensors it
 * leaves to the engine): mark in-place outputs (MN_TF_INPLACE: not planned; after
 * planning mn_inplace_resolve gives them their group's pointer). */
void mn_inplace_mark(mn_interp_t *it, const uint8_t *offline);   /* offline: stored plan's offsets or NULL */
void mn_inplace_clear(mn_interp_t *it);
void mn_inplace_resolve(mn_interp_t *it);
/* Convolutions and pools write their output over their input where they can (mn_conv_slide): if
 * tensor t, first used at op `first`, is the output of such a node, *x = the buffer (group root) of its
 * input and *shift = the most t's offset may exceed x's when the two share bytes (a multiple of
 * MN_ARENA_ALIGN); else 0. */
int mn_inplace_slide(const mn_interp_t *it, int32_t t, int32_t first, int32_t *x, int32_t *shift);


/* ---- memory plan (mn_memplan.c) ------------------------------------------------------------------ */

/* Plan every tensor and scratch buffer (online planners or the model's offline plan) and point
 * them into the arena (not in a dry run); stats.needed/nonpersistent/persistent updated. */
mn_status_t mn_plan_memory(mn_interp_t *it);

#endif /* MN_GRAPH_H */
