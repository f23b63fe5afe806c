/*
 * Interpreter: init -> prepare (metadata, kernel init/prepare, memory plan) -> invoke.
 *
 * Everything the interpreter needs at run time lives in the persistent (tail) part of the arena;
 * invoke only walks the node list and calls eval, so it allocates nothing.
 */
#include "mn_graph.h"

/* ---- init ------------------------------------------------------------------------------------ */

mn_status_t mn_interp_init(mn_interp_t *it, const mn_model_t *m, void *arena, size_t arena_size,
    const mn_config_t *cfg) {
    if (!it) {
        return MN_ERR_ARG;
    }
    memset(it, 0, sizeof *it);
    if (!m || !m->buf || !m->n_subgraphs) {
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARG, "model is not initialised (mn_model_init failed?)");
    }
    it->model = m;
    if (cfg) {
        it->cfg = *cfg;
    }
    if (it->cfg.planner > MN_PLANNER_OFFLINE) {
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARG, "unknown planner %u", (unsigned)it->cfg.planner);
    }
    mn_arena_setup(it, arena, arena_size);
    it->stats.arena_size = arena_size;
    return MN_OK;
}

mn_status_t mn_interp_set_persistent(mn_interp_t *it, void *buf, size_t size) {
    if (!it || it->state != ST_INIT || !it->model) {
        return MN_ERR_STATE;
    }
    mn_arena_setup_persistent(it, buf, size);
    if (!it->pers) {
        return mn_err_set(&it->err, MN_ERR_ARG, "persistent arena: no buffer (or smaller than its alignment)");
    }
    return MN_OK;
}

/* ---- prepare --------------------------------------------------------------------------------- */

static void free_kernels(mn_interp_t *it);

static mn_status_t do_prepare(mn_interp_t *it) {
    const mn_model_t *m = it->model;
    int32_t *pool;
    mn_status_t s;
    if ((s = mn_setup_graph(it, 1, &pool))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        if ((s = mn_setup_node(it, i, &pool))) {
            return s;
        }
    }
    if ((s = mn_setup_const_slots(it))) {
        return s;
    }
#if MICRONN_PROFILE
    if (it->cfg.ticks && m->n_ops) {
        it->prof_ticks = mn_arena_persistent(it, mn_mul(m->n_ops, sizeof(uint64_t)));
        it->prof_calls = mn_arena_persistent(it, mn_mul(m->n_ops, sizeof(uint32_t)));
        if (!it->prof_ticks || !it->prof_calls) {
            return MN_ERR_ARENA;
        }
    }
#endif
    if ((s = mn_partition(it)) || (s = mn_patch_setup(it))) {
        return s;
    }
    it->variants = mn_node_default_variants(it);
    for (uint32_t i = 0; i < m->n_ops; i++) {
        const mn_subgraph_t *sg = mn_subgraph_at(it, i);
        if (!sg) {
            s = mn_node_prepare(it, i);
        } else if (sg->delegate->prepare) {
            s = sg->delegate->prepare(it, (mn_subgraph_t *)sg);
        } else {
            for (uint32_t k = 0; k < sg->n_nodes && s == MN_OK; k++) {
                s = mn_delegate_prepare_node(it, sg, k);
            }
        }
        if (s) {
            return s;
        }
        if (sg) {
            i += sg->n_nodes - 1;
        }
    }
    if (it->n_scratch) {
        it->scratch_ptr = mn_arena_persistent(it, mn_mul(it->n_scratch, sizeof(void *)));
        if (!it->scratch_ptr) {
            return MN_ERR_ARENA;
        }
    }
    return mn_plan_memory(it);
}

/* "[persistent ]arena too small: need [at least ]N bytes, have M" (one string for both) */
#define ARENA_TOO_SMALL "%sarena too small: need %s%zu bytes, have %zu"

mn_status_t mn_interp_prepare(mn_interp_t *it) {
    if (!it || !it->model) {
        return MN_ERR_ARG;
    }
    if (it->state != ST_INIT) {
        return mn_err_set(&it->err, MN_ERR_STATE, "prepare called twice (or after a failure)");
    }
    it->state = ST_PREPARING;
    it->err.status = MN_OK;
    it->err.msg[0] = 0;
    mn_status_t s = do_prepare(it);
    it->phase = PH_NONE;
    mn_arena_temp_reset(it);
    it->stats.persistent = it->tail + it->dry_extra;
    it->stats.n_scratch = it->n_scratch;
    if (it->shortfall > it->stats.needed) {
        it->stats.needed = it->shortfall;
    }
    /* Headroom for an arbitrarily aligned arena start. */
    it->stats.needed = MN_NEED(it->stats.needed);
    if (s == MN_ERR_ARENA && it->pers_shortfall) {
        /* Split arenas: the persistent buffer is what was short (a lower bound: the prepare
         * stopped there); mn_arena_needed_stats gives both exact figures. */
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARENA, ARENA_TOO_SMALL, "persistent ", "at least ",
            MN_NEED(it->pers_shortfall), it->pers_size);
    }
    if (s == MN_ERR_ARENA && it->shortfall && !it->dry_run && it->arena && !it->pers) {
        /* Even the persistent part did not fit, so the total is unknown. A dry run needs much
         * less memory (one op's kernel data at a time): run it in this (now unused) arena. */
        size_t exact;
        free_kernels(it);
        /* The dry run reuses the arena: forget everything that lived in it. */
        it->nodes = NULL;
        it->n_nodes = 0;
        it->tensors = NULL;
        it->rec_of = NULL;
        it->const_slots = NULL;
        it->n_tensors = 0;
        it->scratch_req = NULL;
        it->scratch_ptr = NULL;
        it->prof_ticks = NULL;
        it->prof_calls = NULL;
        it->subgraphs = NULL;
        it->n_subgraphs = 0;
        it->patch = NULL;
        mn_error_t e;
        mn_status_t ds = mn_arena_needed(it->model, &it->cfg, it->arena, it->arena_size, &exact, &e);
        if (ds == MN_OK) {
            it->stats.needed = exact;
            it->shortfall = 0;
        } else if (ds != MN_ERR_ARENA) {
            /* e.g. an unsupported op further on: more useful than a size */
            it->state = ST_FAILED;
            it->err = e;
            return ds;
        }
    }
    if (s == MN_ERR_ARENA) {
        it->state = ST_FAILED;
        int exact = it->shortfall == 0;  /* only the final plan did not fit: the figure is exact */
        return mn_err_set(&it->err, MN_ERR_ARENA, ARENA_TOO_SMALL, "", exact ? "" : "at least ",
            it->stats.needed, it->stats.arena_size);
    }
    if (s != MN_OK) {
        it->state = ST_FAILED;
        if (it->err.status == MN_OK) {
            mn_err_set(&it->err, s, "prepare failed (%s)", mn_status_str(s));
        }
        return s;
    }
    it->state = ST_READY;
    return MN_OK;
}

/* ---- dry run --------------------------------------------------------------------------------- */

size_t mn_dry_run_work_hint(const mn_model_t *m) {
    size_t per_tensor = sizeof(mn_tensor_t) + sizeof(mn_plan_buf_t) + 4 * sizeof(int32_t);
    return MN_ALIGN_UP(m->n_tensors * per_tensor + m->n_ops * (sizeof(mn_node_t) + 96)) + 16384;
}

mn_status_t mn_arena_needed(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    size_t *needed, mn_error_t *err) {
    mn_arena_stats_t st;
    mn_status_t s = mn_arena_needed_stats(m, cfg, work, work_size, &st, err);
    if (needed) {
        *needed = st.needed;
    }
    return s;
}

mn_status_t mn_arena_needed_stats(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_arena_stats_t *out, mn_error_t *err) {
    mn_interp_t it;
    mn_status_t s = mn_interp_init(&it, m, work, work_size, cfg);
    if (s == MN_OK) {
        it.dry_run = DRY_RUN_SIZING;
        s = mn_interp_prepare(&it);
    }
    size_t n = it.stats.needed;
    if (s == MN_ERR_ARENA) {
        /* What the work buffer lacked (a lower bound: later ops may need more). */
        n = MN_NEED(it.shortfall);
        mn_err_set(&it.err, MN_ERR_ARENA, MN_WORK_TOO_SMALL, "dry run", n, work_size);
    }
    if (out) {
        *out = it.stats;
        out->needed = n;
    }
    if (err) {
        *err = it.err;
    }
    mn_interp_deinit(&it);
    return s;
}

/* ---- invoke ------------------------------------------------------------------------------------ */

mn_status_t mn_interp_invoke(mn_interp_t *it) {
    if (!it || it->state != ST_READY || it->dry_run) {
        if (it) {
            mn_err_set(&it->err, MN_ERR_STATE, "invoke before a successful prepare");
        }
        return MN_ERR_STATE;
    }
    /* A stopped or failed invoke leaves its status behind; this one starts clean. */
    it->err.status = MN_OK;
    it->err.msg[0] = '\0';
    it->phase = PH_EVAL;
    uint32_t next_sg = 0;   /* subgraphs are in execution order */
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        mn_status_t s;
        if (next_sg < it->n_subgraphs && i == it->subgraphs[next_sg].first) {
            mn_subgraph_t *sg = &it->subgraphs[next_sg++];
            it->cur_op = i;
            s = sg->delegate->invoke(it, sg);
            if (s != MN_OK && it->err.status == MN_OK) {
                mn_fail(it, s, "delegate %s failed (%s)", sg->delegate->name, mn_status_str(s));
            }
            i += sg->n_nodes - 1;
        } else {
            s = mn_node_eval(it, i);
        }
        if (s != MN_OK) {
            it->phase = PH_NONE;
            return s;
        }
    }
    it->phase = PH_NONE;
    it->invokes++;
    return MN_OK;
}

/* ---- misc ------------------------------------------------------------------------------------- */

mn_status_t mn_interp_reset(mn_interp_t *it) {
    if (!it || it->state != ST_READY) {
        return MN_ERR_STATE;
    }
    for (uint32_t i = 0; i < it->n_tensors; i++) {
        mn_tensor_t *t = mn_rec(it, i);
        if (t && (t->flags & MN_TF_VARIABLE) && t->data) {
            mn_reset_variable(t);
        }
    }
#if MN_HAS_RESOURCES
    if (!it->parent) {
        mn_resources_reset(it);
    }
#endif
    it->resets++;   /* CALL_ONCE ops run again */
    return MN_OK;
}

static void free_kernels(mn_interp_t *it) {
    if (!it->nodes) {
        return;
    }
    for (uint32_t k = 0; k < it->n_subgraphs; k++) {
        mn_subgraph_t *sg = &it->subgraphs[k];
        if (sg->delegate->free) {
            sg->delegate->free(it, sg);
        }
    }
    it->n_subgraphs = 0;
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        mn_node_t *node = &it->nodes[i];
        if (node->kernel && node->kernel->free) {
            it->cur_op = i;
            node->kernel->free(it, node);
        }
        node->kernel = NULL;
    }
}

void mn_interp_deinit(mn_interp_t *it) {
    if (it && it->arena) {
        MN_UNPOISON(it->arena, it->arena_size);  /* hand the memory back clean */
    }
    if (it && it->pers) {
        MN_UNPOISON(it->pers, it->pers_size);
    }
    if (!it || !it->nodes) {
        return;
    }
    free_kernels(it);
    it->nodes = NULL;
    it->n_nodes = 0;
    it->tensors = NULL;
    it->n_tensors = 0;
    it->state = ST_FAILED;
}

size_t mn_interp_num_inputs(const mn_interp_t *it) {
    return it->model ? it->model->n_inputs : 0;
}

size_t mn_interp_num_outputs(const mn_interp_t *it) {
    return it->model ? it->model->n_outputs : 0;
}

size_t mn_interp_num_tensors(const mn_interp_t *it) {
    return it->state == ST_READY ? it->n_tensors : 0;
}

size_t mn_interp_num_ops(const mn_interp_t *it) {
    return it->state == ST_READY ? it->n_nodes : 0;
}

mn_tensor_t *mn_interp_tensor(mn_interp_t *it, size_t index) {
    if (!it || it->state != ST_READY || it->dry_run || index >= it->n_tensors
        || (mn_tflags(it, (uint32_t)index) & MN_TF_PATCH)) {
        return NULL;   /* (a patch stage's activations only exist in bands) */
    }
    mn_tensor_t *t = mn_rec(it, (uint32_t)index);
    if (!t) {
        mn_model_tensor(it->model, index, &it->const_view);
        t = &it->const_view;
    }
    return t;
}

mn_tensor_t *mn_interp_input(mn_interp_t *it, size_t i) {
    int32_t t = it && it->model ? mn_model_input_index(it->model, i) : -1;
    return t < 0 ? NULL : mn_interp_tensor(it, (size_t)t);
}

mn_tensor_t *mn_interp_output(mn_interp_t *it, size_t i) {
    int32_t t = it && it->model ? mn_model_output_index(it->model, i) : -1;
    return t < 0 ? NULL : mn_interp_tensor(it, (size_t)t);
}

mn_status_t mn_interp_stats(const mn_interp_t *it, mn_arena_stats_t *out) {
    if (!it || !out) {
        return MN_ERR_ARG;
    }
    *out = it->stats;
    return MN_OK;
}

mn_status_t mn_interp_profile(const mn_interp_t *it, size_t op, mn_op_profile_t *out) {
    if (!it || !out || it->state != ST_READY || op >= it->n_nodes) {
        return MN_ERR_ARG;
    }
    const mn_node_t *node = &it->nodes[op];
    out->name = mn_node_name(it, node, out->name_buf);
    out->builtin = node->builtin;
    out->calls = it->prof_calls ? it->prof_calls[op] : 0;
    out->ticks = it->prof_ticks ? it->prof_ticks[op] : 0;
    out->persistent = (size_t)node->persistent8 * MN_PERSIST_ALIGN;
    const char *v = node->kernel && node->kernel->variant ? node->kernel->variant(node) : NULL;
    out->variant = v ? v : "reference";
    const mn_subgraph_t *sg = mn_subgraph_at(it, (uint32_t)op);
    out->backend = sg ? sg->delegate->name : NULL;
    out->subgraph = sg ? (int32_t)(sg - it->subgraphs) : -1;
    out->model_index = mn_node_index(it, node);
    return MN_OK;
}

void mn_interp_profile_clear(mn_interp_t *it) {
    if (it && it->prof_ticks) {
        memset(it->prof_ticks, 0, it->n_nodes * sizeof(uint64_t));
        memset(it->prof_calls, 0, it->n_nodes * sizeof(uint32_t));
    }
}

