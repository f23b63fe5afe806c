/*
 * Choosing a patch stage (mn_patch_choose): sizing dry runs of the model with candidate stages,
 * the stored stage first. A client of the interpreter, above it: it runs whole interpreters.
 */
#include "mn_graph.h"

#if MICRONN_PATCHES && MN_PATCH_OPS

/* Sizing dry run with cfg (as mn_arena_needed_stats), and the stage it made. */
static mn_status_t sized(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_patch_choice_t *out, mn_error_t *err) {
    mn_interp_t it;
    mn_status_t s = mn_interp_init(&it, m, work, work_size, cfg);
    if (s == MN_OK) {
        it.dry_run = DRY_RUN_SIZING;
        s = mn_interp_prepare(&it);
    }
    mn_interp_patch(&it, out);
    if (s == MN_ERR_ARENA) {
        out->arena = MN_NEED(it.shortfall);
        mn_err_set(&it.err, MN_ERR_ARENA, MN_WORK_TOO_SMALL, "patches: dry run", out->arena, work_size);
    }
    if (err) {
        *err = it.err;
    }
    mn_interp_deinit(&it);
    return s;
}

/* Largest rows (from 1, which fits) whose arena is at most `best`. */
static mn_status_t most_rows(const mn_model_t *m, mn_config_t *c, void *work, size_t work_size, size_t best,
    mn_patch_choice_t *out, mn_error_t *err) {
    uint32_t lo = 1, hi = out->height;
    mn_patch_choice_t t;
    mn_status_t s;
    while (lo < hi) {
        c->patch_rows = (uint16_t)((lo + hi + 1u) / 2u);
        if ((s = sized(m, c, work, work_size, &t, err)) == MN_ERR_ARENA) {
            *out = t;
            return s;
        }
        if (s == MN_OK && t.arena <= best) {
            lo = c->patch_rows;
        } else {
            hi = c->patch_rows - 1u;
        }
    }
    c->patch_rows = (uint16_t)lo;
    return sized(m, c, work, work_size, out, err);
}

static int reads_model_input(const mn_model_t *m, uint32_t op) {
    int32_t t;
    if (mn_model_op_tensor(m, op, MN_OP_INPUTS, 0, &t) != MN_OK || t < 0) {
        return 0;
    }
    for (size_t i = 0; i < m->n_inputs; i++) {
        if (mn_model_input_index(m, i) == t) {
            return 1;
        }
    }
    return 0;
}

/* The stage the model stores (metadata MN_PATCH_METADATA: u16 first, last, rows, as `micronn plan
 * --write --patches` writes it with its plan), sized: MN_ERR_ARG when there is none. */
static mn_status_t stored_stage(const mn_model_t *m, mn_config_t *c, void *work, size_t work_size,
    mn_patch_choice_t *out, mn_error_t *err) {
    size_t n;
    const uint8_t *md = mn_model_metadata(m, MN_PATCH_METADATA, &n);
    if (!md || n < 6) {
        return MN_ERR_ARG;
    }
    c->patch_first = mn_ld_u16(md);
    c->patch_last = mn_ld_u16(md + 2);
    c->patch_rows = mn_ld_u16(md + 4);
    return sized(m, c, work, work_size, out, err);
}

mn_status_t mn_patch_choose(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_patch_choice_t *out, mn_error_t *err) {
    mn_config_t c;
    mn_patch_choice_t t, best;
    size_t arena1[MN_PATCH_MAX_OPS], stream[MN_PATCH_MAX_OPS];
    mn_status_t s;
    if (!m || !out) {
        return MN_ERR_ARG;
    }
    memset(&c, 0, sizeof c);
    if (cfg) {
        c = *cfg;
    }
    c.patch_rows = 0;
    if ((s = sized(m, &c, work, work_size, out, err)) != MN_OK) {
        return s;
    }
    const size_t without = out->arena;
    size_t least = without;
    out->arena_without = without;
    best = *out;
    if ((s = stored_stage(m, &c, work, work_size, out, err)) != MN_ERR_ARG) {
        out->arena_without = without;
        return s;
    }
    for (uint32_t first = 0; first < m->n_ops; first++) {
        if (!reads_model_input(m, first)) {
            continue;
        }
        /* band height 1 (usually the least memory) for every stage length */
        uint32_t n = 1;
        for (; n < MN_PATCH_MAX_OPS && first + n < m->n_ops; n++) {
            c.patch_first = (uint16_t)first;
            c.patch_last = (uint16_t)(first + n);
            c.patch_rows = 1;
            if ((s = sized(m, &c, work, work_size, &t, err)) == MN_ERR_ARENA) {
                *out = t;
                return s;
            }
            if (s != MN_OK) {
                break;   /* the chain ends here */
            }
            arena1[n] = t.arena;
            c.patch_rows = MN_PATCH_STREAM;
            if ((s = sized(m, &c, work, work_size, &t, err)) == MN_ERR_ARENA) {
                *out = t;
                return s;
            }
            stream[n] = s == MN_OK ? t.arena : SIZE_MAX;
            least = t.arena < least ? t.arena : least;
            least = stream[n] < least ? stream[n] : least;
        }
        /* the stages that reach the least: the most rows that keep it, then the least recompute */
        for (uint32_t k = 1; k < n && least < without; k++) {
            c.patch_first = (uint16_t)first;
            c.patch_last = (uint16_t)(first + k);
            if (stream[k] == least) {   /* nothing computed twice: the least recompute there is */
                c.patch_rows = MN_PATCH_STREAM;
                if ((s = sized(m, &c, work, work_size, &t, err)) == MN_OK
                    && (!best.rows || best.arena > least || best.macs_patched > best.macs)) {
                    best = t;
                }
                continue;
            }
            if (arena1[k] != least) {
                continue;
            }
            c.patch_rows = 1;
            if ((s = sized(m, &c, work, work_size, &t, err)) != MN_OK
                || (s = most_rows(m, &c, work, work_size, least, &t, err)) != MN_OK) {
                if (s == MN_ERR_ARENA) {
                    *out = t;
                    return s;
                }
                continue;
            }
            if (t.arena == least && (!best.rows || best.arena > least
                || t.macs_patched - t.macs < best.macs_patched - best.macs)) {
                best = t;
            }
        }
    }
    if (err) {
        err->status = MN_OK;
        err->msg[0] = 0;
    }
    *out = best.rows && best.arena < without ? best : *out;
    if (!out->rows) {
        memset(out, 0, sizeof *out);
        out->arena = without;
    }
    out->arena_without = without;
    return MN_OK;
}

#else

mn_status_t mn_patch_choose(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_patch_choice_t *out, mn_error_t *err) {
    mn_config_t c;
    if (!m || !out) {
        return MN_ERR_ARG;
    }
    memset(&c, 0, sizeof c);
    if (cfg) {
        c = *cfg;
    }
    c.patch_rows = 0;
    memset(out, 0, sizeof *out);
#if !MICRONN_PATCHES
    (void)work;
    (void)work_size;
    return err ? mn_err_set(err, MN_ERR_UNSUPPORTED, MN_PATCH_NOT_BUILT) : MN_ERR_UNSUPPORTED;
#endif
    mn_status_t s = mn_arena_needed(m, &c, work, work_size, &out->arena, err);
    out->arena_without = out->arena;
    return s;
}

#endif
