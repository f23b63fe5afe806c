/*
 * mn_check_ops: every op of a model set up and prepared on its own (a dry run), so that one call
 * reports each unsupported op with its reason instead of stopping at the first. A client of the
 * interpreter: it drives mn_interp_t through the graph layer's steps.
 */
#include "mn_graph.h"

static void record_op(mn_op_check_t *r, const mn_error_t *e, mn_status_t s) {
    r->status = s;
    memcpy(r->msg, e->msg, sizeof r->msg);
    r->msg[sizeof r->msg - 1] = 0;
    if (!r->msg[0]) {
        mn_fmt(r->msg, sizeof r->msg, "%s", mn_status_str(s));
    }
}

static mn_status_t check_ops(mn_interp_t *it, mn_op_check_t *results, size_t *n_failed) {
    const mn_model_t *m = it->model;
    int32_t *pool;
    mn_status_t s;
    if ((s = mn_setup_graph(it, 0, &pool))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        it->err.status = MN_OK;
        it->err.msg[0] = 0;
        if ((s = mn_setup_node(it, i, &pool))) {
            if (s == MN_ERR_ARENA) {
                return s;
            }
            record_op(&results[i], &it->err, s);
            it->nodes[i].kernel = NULL;
            (*n_failed)++;
        }
    }
    if ((s = mn_setup_const_slots(it))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        if (!it->nodes[i].kernel) {
            continue;
        }
        size_t tail0 = it->tail;
        mn_scratch_t *list0 = it->scratch_req;
        it->err.msg[0] = 0;
        s = mn_node_prepare(it, i);
        if (s == MN_ERR_ARENA) {
            return s;
        }
        if (s != MN_OK) {
            record_op(&results[i], &it->err, s);
            (*n_failed)++;
            /* forget what the failed op allocated; it is never evaluated or freed */
            it->tail = tail0;
            it->scratch_req = list0;
            it->nodes[i].user_data = NULL;
            it->nodes[i].kernel = NULL;
            mn_arena_temp_reset(it);
        }
    }
    return MN_OK;
}

mn_status_t mn_check_ops(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_op_check_t *results, size_t n_results, size_t *n_failed, size_t *needed, mn_error_t *err) {
    mn_interp_t it;
    size_t failed = 0;
    if (!m || !results || n_results < m->n_ops) {
        if (err) {
            mn_err_set(err, MN_ERR_ARG, "mn_check_ops: results has %zu entries, the model has %zu ops",
                n_results, m ? (size_t)m->n_ops : (size_t)0);
        }
        return MN_ERR_ARG;
    }
    memset(results, 0, m->n_ops * sizeof *results);
    mn_status_t s = mn_interp_init(&it, m, work, work_size, cfg);
    if (s == MN_OK) {
        it.dry_run = DRY_RUN_CHECK;
        it.state = ST_PREPARING;
        s = check_ops(&it, results, &failed);
        it.phase = PH_NONE;
        mn_arena_temp_reset(&it);
    }
    if (s == MN_ERR_ARENA) {
        size_t n = MN_NEED(it.shortfall);
        if (n <= work_size) {
            n = 2 * work_size;
        }
        mn_err_set(&it.err, MN_ERR_ARENA, MN_WORK_TOO_SMALL, "check", n, work_size);
        if (needed) {
            *needed = n;
        }
    } else if (s != MN_OK && it.err.status == MN_OK) {
        mn_err_set(&it.err, s, "check failed (%s)", mn_status_str(s));
    }
    if (err) {
        *err = it.err;
    }
    if (n_failed) {
        *n_failed = failed;
    }
    mn_interp_deinit(&it);
    if (s == MN_OK && failed) {
        return MN_ERR_UNSUPPORTED;
    }
    return s;
}

