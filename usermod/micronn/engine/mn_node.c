/*
 * One node's kernel: init + prepare (with the dry runs' bookkeeping) and eval (profiled), for the
 * interpreter and for delegates that run nodes themselves (mn_delegate_prepare_node/eval_node).
 */
#include "mn_context.h"

/*
 * Dry run: an op's persistent kernel data is only needed by its own eval, which a dry run never
 * calls, so it is counted (dry_extra) and released right after its prepare. The work buffer of a
 * dry run therefore holds the engine's metadata plus one op's data at a time, and a too-small
 * arena can still be sized exactly. Scratch records (needed for planning) are moved down.
 */
typedef struct {
    size_t bytes;
    uint32_t op;
} scratch_copy_t;

static mn_status_t dry_release(mn_interp_t *it, size_t tail0, mn_scratch_t *list0) {
    uint32_t k = 0, j = 0;
    for (mn_scratch_t *r = it->scratch_req; r != list0; r = r->next) {
        k++;
    }
    scratch_copy_t *tmp = k ? mn_arena_temp(it, mn_mul(k, sizeof *tmp)) : NULL;
    if (k && !tmp) {
        return MN_ERR_ARENA;
    }
    for (mn_scratch_t *r = it->scratch_req; r != list0; r = r->next, j++) {
        tmp[j].bytes = r->bytes;
        tmp[j].op = r->op;
    }
    size_t used = it->tail - tail0;
    MN_POISON(mn_arena_tail_end(it) - it->tail, used);
    it->tail = tail0;
    it->dry_extra += used;
    it->scratch_req = list0;
    it->nodes[it->cur_op].user_data = NULL;
    while (j-- > 0) {   /* oldest first, so the list keeps its order */
        mn_scratch_t *r = mn_arena_persistent(it, sizeof *r);
        if (!r) {
            return MN_ERR_ARENA;
        }
        it->dry_extra -= MN_PBLOCK(sizeof *r);  /* counted once, in `used` */
        r->bytes = tmp[j].bytes;
        r->op = tmp[j].op;
        r->next = it->scratch_req;
        it->scratch_req = r;
    }
    mn_arena_temp_reset(it);
    return MN_OK;
}

mn_status_t mn_node_prepare(mn_interp_t *it, uint32_t i) {
    mn_node_t *node = &it->nodes[i];
    mn_status_t s = MN_OK;
    size_t tail0 = it->tail, extra0 = it->dry_extra;
    mn_scratch_t *list0 = it->scratch_req;
    it->cur_op = i;
    it->err.status = MN_OK;
    it->phase = PH_INIT;
    if (node->kernel->init) {
        s = node->kernel->init(it, node);
    }
    it->phase = PH_PREPARE;
    if (s == MN_OK && node->kernel->prepare) {
        s = node->kernel->prepare(it, node);
    }
    it->phase = PH_NONE;
    mn_arena_temp_reset(it);
    if (s != MN_OK && s != MN_ERR_ARENA && it->err.status == MN_OK) {
        mn_fail(it, s, "prepare failed (%s)", mn_status_str(s));
    }
    if (s == MN_OK && it->dry_run) {
        s = dry_release(it, tail0, list0);
    }
    /* (a dry run moved this op's blocks to dry_extra: the sum is the same) */
    const size_t bytes = it->tail + it->dry_extra - tail0 - extra0;
    node->persistent8 = (uint16_t)(bytes / MN_PERSIST_ALIGN < 0xffff ? bytes / MN_PERSIST_ALIGN : 0xffff);
    it->stats.kernel_persistent += bytes;
    return s;
}

/* Kernel backends of ops outside delegated subgraphs. */
static const struct mn_backend *const no_variants[] = { NULL };
const struct mn_backend *const *mn_node_default_variants(const mn_interp_t *it) {
    return (it->cfg.flags & MN_CFG_REFERENCE_KERNELS) ? no_variants : NULL;
}

mn_status_t mn_delegate_prepare_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k) {
    if (ctx->phase != PH_NONE || k >= sg->n_nodes) {
        return mn_fail(ctx, MN_ERR_STATE, "mn_delegate_prepare_node outside a delegate's prepare");
    }
    ctx->variants = sg->delegate->variants ? sg->delegate->variants : mn_node_default_variants(ctx);
    mn_status_t s = mn_node_prepare(ctx, sg->first + k);
    ctx->variants = mn_node_default_variants(ctx);
    return s;
}


mn_status_t mn_node_eval(mn_interp_t *it, uint32_t i) {
    mn_node_t *node = &it->nodes[i];
    mn_status_t s;
    it->cur_op = i;
    if (it->cfg.should_stop && it->cfg.should_stop(it->cfg.stop_user)) {
        return mn_fail(it, MN_ERR_ABORTED, "invoke stopped before this op (should_stop)");
    }
#if MICRONN_PROFILE
    if (it->prof_ticks) {
        uint64_t t0 = it->cfg.ticks(it->cfg.ticks_user);
        s = node->kernel->eval(it, node);
        uint64_t dt = it->cfg.ticks(it->cfg.ticks_user) - t0;
        it->prof_ticks[i] += it->cfg.ticks_mask ? (dt & it->cfg.ticks_mask) : dt;
        it->prof_calls[i]++;
    } else
#endif
    s = node->kernel->eval(it, node);
    if (s != MN_OK && it->err.status == MN_OK) {
        mn_fail(it, s, "eval failed (%s)", mn_status_str(s));
    }
    return s;
}

mn_status_t mn_delegate_eval_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k) {
    if (ctx->phase != PH_EVAL || k >= sg->n_nodes) {
        return mn_fail(ctx, MN_ERR_STATE, "mn_delegate_eval_node outside a delegate's invoke");
    }
    return mn_node_eval(ctx, sg->first + k);
}

