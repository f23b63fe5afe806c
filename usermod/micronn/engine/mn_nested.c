/*
 * Nested interpreters: ops that run another subgraph of their model (IF, WHILE, CALL_ONCE and the
 * custom op micronn_subgraph) each keep one interpreter per subgraph in their persistent memory.
 * See mn_kernel.h ("Nested interpreters").
 *
 * The nested interpreter's arena is one persistent block of the op, sized by a dry run of the
 * subgraph (in the op's prepare temporaries) with the same parent links as the real one, so
 * resource variables and recursion are seen alike in both. Its own tensors are planned in that
 * block: each subgraph gets its own plan.
 */
#include "mn_graph.h"

/* Always built: the stateful kernels (CIRCULAR_BUFFER, the signal library's SignalDelay, ...)
 * read the outermost interpreter's reset count through it, also in a firmware without any op
 * that nests interpreters. */
mn_ctx_t *mn_nested_root(mn_ctx_t *ctx) {
    while (ctx->parent) {
        ctx = ctx->parent;
    }
    return ctx;
}

#if MICRONN_OP_IF || MICRONN_OP_WHILE || MICRONN_OP_CALL_ONCE || MICRONN_OP_micronn_subgraph

/* Subgraph number of an interpreter's model view (its table's position in the subgraph list). */
static uint32_t subgraph_number(const mn_model_t *m) {
    uint32_t n, first = fb_vec(m->buf, mn_ld_u32(m->buf), F_MODEL_SUBGRAPHS, &n);
    for (uint32_t k = 0; k < n; k++) {
        if (fb_vec_table(m->buf, first, k) == m->subgraph) {
            return k;
        }
    }
    return 0;
}

mn_status_t mn_nested_io(const mn_nested_t *n, bool output, size_t i, mn_tensor_t *out) {
    int32_t t = output ? mn_model_output_index(&n->model, i) : mn_model_input_index(&n->model, i);
    if (t < 0) {
        return MN_ERR_ARG;
    }
    return mn_model_tensor(&n->model, (size_t)t, out);
}

mn_tensor_t *mn_nested_tensor(mn_nested_t *n, bool output, size_t i) {
    return output ? mn_interp_output(&n->it, i) : mn_interp_input(&n->it, i);
}

/* Size the nested interpreter's arena: a sizing dry run in `work` with the real one's links. */
static mn_status_t size_arena(mn_ctx_t *ctx, mn_nested_t *n, void *work, size_t work_size, size_t *need,
    size_t *persistent) {
    mn_interp_t *it = &n->it;
    mn_status_t s = mn_interp_init(it, &n->model, work, work_size, &n->cfg);
    if (s == MN_OK) {
        it->parent = ctx;
        it->resources = ctx->resources;
        it->dry_run = DRY_RUN_SIZING;
        s = mn_interp_prepare(it);
    }
    *need = s == MN_ERR_ARENA ? MN_NEED(it->shortfall) : it->stats.needed;
    *persistent = it->stats.persistent;
    if (s != MN_OK && s != MN_ERR_ARENA) {
        mn_fail(ctx, s, "%s subgraph %u: %s", n->what, (unsigned)n->index, it->err.msg);
    }
    mn_interp_deinit(it);
    return s;
}

mn_status_t mn_nested_open(mn_ctx_t *ctx, mn_nested_t *n, int32_t subgraph, const char *what) {
    const mn_model_t *m = ctx->model;
    n->what = what;
    n->ready = false;
    if (subgraph < 0 || (size_t)subgraph >= mn_model_num_subgraphs(m)) {
        return mn_fail(ctx, MN_ERR_MODEL, "%s subgraph %d does not exist (the model has %u)", what, (int)subgraph,
            (unsigned)mn_model_num_subgraphs(m));
    }
    const uint32_t index = (uint32_t)subgraph;
    n->index = index;
    int depth = 0;
    for (const mn_interp_t *a = ctx; a; a = a->parent, depth++) {
        uint32_t k = subgraph_number(a->model);
        if (k == index) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s subgraph %u calls itself (recursion: subgraph %u "
                "is already running%s)", what, (unsigned)index, (unsigned)index, k == 0 ? ": the main one" : "");
        }
    }
    if (depth > MN_MAX_NESTING) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s subgraph %u: subgraphs nested more than %d deep", what,
            (unsigned)index, MN_MAX_NESTING);
    }
    mn_model_subgraph(m, index, &n->model);
    return MN_OK;
}

static void nested_config(mn_ctx_t *ctx, mn_nested_t *n, const mn_config_t *cfg) {
    if (cfg) {
        n->cfg = *cfg;
        return;
    }
    memset(&n->cfg, 0, sizeof n->cfg);
    n->cfg.planner = ctx->cfg.planner == MN_PLANNER_NO_REUSE ? MN_PLANNER_NO_REUSE : MN_PLANNER_GREEDY;
    n->cfg.flags = ctx->cfg.flags & (uint8_t)~MN_CFG_REUSE_INPUTS;
    n->cfg.ops = ctx->cfg.ops;
    n->cfg.n_ops = ctx->cfg.n_ops;
    n->cfg.should_stop = ctx->cfg.should_stop;
    n->cfg.stop_user = ctx->cfg.stop_user;
    n->cfg.delegate = ctx->cfg.delegate;
    n->cfg.min_subgraph = ctx->cfg.min_subgraph;
    n->cfg.table_hook = ctx->cfg.table_hook;   /* host tools collect every subgraph's tables */
    n->cfg.table_user = ctx->cfg.table_user;
}

/* Dry run of n (in temporary memory, given back after each attempt, so an op running several
 * subgraphs needs the largest work buffer, not their sum): arena bytes and persistent bytes. */
static mn_status_t size_nested(mn_ctx_t *ctx, mn_nested_t *n, size_t *need, size_t *persistent) {
    size_t work = mn_dry_run_work_hint(&n->model), temp0 = ctx->temp;
    mn_status_t s = MN_ERR_ARENA;
    for (int attempt = 0; attempt < 12 && s == MN_ERR_ARENA; attempt++) {
        void *w = mn_alloc_temp(ctx, work);
        if (!w) {
            return MN_ERR_ARENA;
        }
        s = size_arena(ctx, n, w, work, need, persistent);
        MN_POISON(ctx->arena + ctx->head + temp0, ctx->temp - temp0);
        ctx->temp = temp0;
        work = *need > work ? *need : 2 * work;
    }
    if (s == MN_ERR_ARENA) {
        return mn_fail(ctx, MN_ERR_ARENA, "%s subgraph %u: dry run did not fit", n->what, (unsigned)n->index);
    }
    return s;
}

mn_status_t mn_nested_prepare_shared(mn_ctx_t *ctx, mn_nested_t *const *ns, int count, const mn_config_t *cfg) {
    /* One block: the first interpreter in all of it; each next one in what the persistent data
     * of the previous ones (at the block's top) leaves, so their activations overlap. */
    size_t total = 0, below = 0, need, persistent;
    mn_status_t s;
    for (int k = 0; k < count; k++) {
        nested_config(ctx, ns[k], cfg);
        if ((s = size_nested(ctx, ns[k], &need, &persistent)) != MN_OK) {
            return s;
        }
        total = below + need > total ? below + need : total;
        below += MN_ALIGN_UP(persistent);
    }
    uint8_t *block = mn_arena_persistent_aligned(ctx, total);   /* (the nested arenas start aligned) */
    if (!block) {
        return MN_ERR_ARENA;
    }
    if (mn_sizing_only(ctx)) {
        return MN_OK;   /* sized; nothing of it is kept */
    }
    uint8_t *top = block + total;
    for (int k = 0; k < count; k++) {
        mn_nested_t *n = ns[k];
        if ((s = mn_interp_init(&n->it, &n->model, block, (size_t)(top - block), &n->cfg)) == MN_OK) {
            n->it.parent = ctx;
            n->it.resources = ctx->resources;
            s = mn_interp_prepare(&n->it);
        }
        if (s != MN_OK) {
            mn_fail(ctx, s, "%s subgraph %u: %s", n->what, (unsigned)n->index, mn_interp_error(&n->it));
            mn_interp_deinit(&n->it);
            return s;
        }
        n->resets = mn_nested_root(ctx)->resets;
        n->ready = true;
        top = mn_arena_tail_end(&n->it) - n->it.tail;   /* below its persistent data */
    }
    if (count > 1) {
        /* (ASan red-zone builds) each init poisoned its whole arena, the earlier ones' tensors
         * included: overlapping by design, they stay addressable */
        MN_UNPOISON(block, total);
    }
    return MN_OK;
}

mn_status_t mn_nested_prepare(mn_ctx_t *ctx, mn_nested_t *n, const mn_config_t *cfg) {
    return mn_nested_prepare_shared(ctx, &n, 1, cfg);
}

mn_status_t mn_nested_check_io(mn_ctx_t *ctx, const mn_node_t *node, const mn_nested_t *n, bool outputs, int first,
    int count) {
    const char *kind = outputs ? "output" : "input";
    size_t have = outputs ? mn_model_num_outputs(&n->model) : mn_model_num_inputs(&n->model);
    if (have != (size_t)count) {
        return mn_fail(ctx, MN_ERR_MODEL, "%s subgraph %u has %u %ss, the op passes %d", n->what, (unsigned)n->index,
            (unsigned)have, kind, count);
    }
    for (int i = 0; i < count; i++) {
        const mn_tensor_t *outer = outputs ? mn_output(ctx, node, first + i) : mn_input(ctx, node, first + i);
        mn_tensor_t inner;
        if (!outer || mn_nested_io(n, outputs, (size_t)i, &inner) != MN_OK) {
            return mn_fail(ctx, MN_ERR_MODEL, "%s %d missing", kind, first + i);
        }
        if (outer->dtype != inner.dtype || mn_tensor_bytes(outer) != mn_tensor_bytes(&inner)) {
            return mn_fail(ctx, MN_ERR_MODEL, "%s %d is %s (%zu bytes), %s subgraph %u's %s %d is %s (%zu bytes)", kind,
                first + i, mn_dtype_name(outer->dtype), mn_tensor_bytes(outer), n->what, (unsigned)n->index, kind, i,
                mn_dtype_name(inner.dtype), mn_tensor_bytes(&inner));
        }
    }
    return MN_OK;
}

void mn_nested_copy_in(mn_nested_t *n, mn_ctx_t *ctx, const mn_node_t *node, bool from_outputs, int first) {
    size_t count = mn_interp_num_inputs(&n->it);
    for (size_t i = 0; i < count; i++) {
        const mn_tensor_t *src = from_outputs ? mn_output(ctx, node, first + (int)i) : mn_input(ctx, node, first + (int)i);
        mn_tensor_t *dst = mn_interp_input(&n->it, i);
        memcpy(dst->data, src->data, mn_tensor_bytes(dst));
    }
}

void mn_nested_copy_out(mn_nested_t *n, mn_ctx_t *ctx, const mn_node_t *node) {
    size_t count = mn_interp_num_outputs(&n->it);
    for (size_t i = 0; i < count; i++) {
        mn_tensor_t *dst = mn_output(ctx, node, (int)i);
        memcpy(dst->data, mn_interp_output(&n->it, i)->data, mn_tensor_bytes(dst));
    }
}

mn_status_t mn_nested_invoke(mn_ctx_t *ctx, mn_nested_t *n) {
    const uint32_t resets = mn_nested_root(ctx)->resets;
    if (n->resets != resets) {
        mn_interp_reset(&n->it);
        n->resets = resets;
    }
    mn_status_t s = mn_interp_invoke(&n->it);
    if (s != MN_OK) {
        return mn_fail(ctx, s, "%s subgraph %u: %s", n->what, (unsigned)n->index, mn_interp_error(&n->it));
    }
    return MN_OK;
}

void mn_nested_free(mn_nested_t *n) {
    if (n && n->ready) {
        mn_interp_deinit(&n->it);
        n->ready = false;
    }
}

#endif
