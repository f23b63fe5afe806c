/*
 * The memory plan of an interpreter: every planned tensor and scratch buffer with its size and
 * lifetime, handed to the planner (mn_planner.c) with or without working memory, or placed by the
 * model's offline plan (checked); then offsets become pointers. mn_interp_plan_buffer reads the
 * decision back through the same code.
 */
#include "mn_graph.h"

/* Planning context: buffers 0..n_tensors-1 are tensors, the rest scratch buffers by index. */
typedef struct {
    mn_interp_t *it;
    const uint8_t *offline;
    int no_slides;      /* only counting buffers: leave over/shift out (mn_inplace_slide) */
} plan_ctx_t;

static int src_get(void *c, int32_t k, mn_plan_buf_t *out) {
    plan_ctx_t *pc = c;
    mn_interp_t *it = pc->it;
    memset(out, 0, sizeof *out);
    if ((uint32_t)k < it->n_tensors) {
        if (!mn_tensor_lifetime(it, (uint32_t)k, &out->first, &out->last)) {
            return 0;
        }
        out->size = MN_BLOCK(mn_tensor_bytes(mn_rec(it, (uint32_t)k)));
        out->id = k;
        if (it->cfg.planner != MN_PLANNER_NO_REUSE && !pc->no_slides
            && mn_inplace_slide(it, k, out->first, &out->over, &out->shift)) {
            out->over++;
        }
        if (pc->offline && mn_ld_i32(pc->offline + 4 * (uint32_t)k) >= 0) {
            out->offset = (size_t)mn_ld_i32(pc->offline + 4 * (uint32_t)k);
            out->fixed = 1;
        }
        return 1;
    }
    const mn_scratch_t *rec = it->scratch_ptr[(uint32_t)k - it->n_tensors];
    out->size = MN_BLOCK(rec->bytes);
    out->first = out->last = (int32_t)rec->op;
    out->id = -1 - (int32_t)((uint32_t)k - it->n_tensors);
    return 1;
}

/* Zero-element tensors are never planned; a valid pointer (zero bytes of the arena) keeps kernels'
 * memcpy(dst, src, 0) and the binding's buffers well defined instead of passing NULL. */
static void point_empty_tensors(mn_interp_t *it) {
    for (uint32_t k = 0; k < it->n_tensors; k++) {
        mn_tensor_t *t = mn_rec(it, k);
        if (t && mn_tensor_bytes(t) == 0 && t->data == NULL) {
            t->data = it->arena;
        }
    }
}

/* While planning without memory, offsets are parked in the tensor's data field / scratch record
 * (as offset + 1, 0 = not placed); plan_assign turns them into pointers afterwards. */
static void src_set_offset(void *c, int32_t k, size_t offset) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    if ((uint32_t)k < it->n_tensors) {
        mn_rec(it, (uint32_t)k)->data = (void *)(uintptr_t)(offset + 1);
    } else {
        ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset = offset + 1;
    }
}

static void src_clear_offset(void *c, int32_t k) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    if ((uint32_t)k < it->n_tensors) {
        mn_rec(it, (uint32_t)k)->data = NULL;
    } else {
        ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset = 0;
    }
}

static int src_get_offset(void *c, int32_t k, size_t *offset) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    size_t v;
    if ((uint32_t)k < it->n_tensors) {
        const mn_tensor_t *t = mn_rec(it, (uint32_t)k);
        if (!t || (t->flags & (MN_TF_CONST | MN_TF_VARIABLE | MN_TF_INPLACE | MN_TF_PATCH))) {
            return 0;
        }
        v = (size_t)(uintptr_t)t->data;
    } else {
        v = ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset;
    }
    *offset = v ? v - 1 : 0;
    return v != 0;
}

/* Offline plan ("OfflineMemoryAllocation" metadata): [version, subgraph, n_tensors, offsets...];
 * -1 means "plan online". *plan = the offsets vector (raw, little-endian), NULL without metadata. */
/* Error "offline memory plan: <message>". */
static mn_status_t plan_fail(mn_interp_t *it, mn_status_t code, const char *fmt, ...) {
    va_list ap;
    size_t n = mn_fmt(it->err.msg, MN_ERR_MSG_LEN, "offline memory plan: ");
    if (n >= MN_ERR_MSG_LEN) {
        n = MN_ERR_MSG_LEN - 1;
    }
    va_start(ap, fmt);
    mn_vfmt(it->err.msg + n, MN_ERR_MSG_LEN - n, fmt, ap);
    va_end(ap);
    it->err.status = code;
    return code;
}

static mn_status_t offline_plan(mn_interp_t *it, const uint8_t **plan) {
    const mn_model_t *m = it->model;
    size_t n;
    const uint8_t *p = mn_model_metadata(m, "OfflineMemoryAllocation", &n);
    *plan = NULL;
    if (!p) {
        return MN_OK;
    }
    if (n < 12 || mn_ld_i32(p) != 0 || mn_ld_i32(p + 4) != 0) {
        return plan_fail(it, MN_ERR_UNSUPPORTED, "only version 0 for subgraph 0 is supported (%zu bytes)", n);
    }
    uint32_t nt = mn_ld_u32(p + 8);
    if (nt != m->n_tensors || (uint64_t)12 + 4ull * nt > n) {
        return plan_fail(it, MN_ERR_MODEL, "%u offsets in %zu bytes for %u tensors",
            (unsigned)nt, n, (unsigned)m->n_tensors);
    }
    *plan = p + 12;
    return MN_OK;
}

/* A preset offset must suit the tensor's element type, and tensors alive at the same time must
 * not share bytes: a bad plan would otherwise give misaligned loads or silently wrong results. */
static mn_status_t check_offline_plan(mn_interp_t *it, plan_ctx_t *pc) {
    mn_plan_buf_t a, b;
    for (uint32_t k = 0; k < it->n_tensors; k++) {
        const int32_t off = mn_ld_i32(pc->offline + 4 * k);
        if (off < -1) {
            return plan_fail(it, MN_ERR_MODEL, "tensor %u '%s' has offset %d",
                (unsigned)k, mn_model_tensor_name(it->model, k), (int)off);
        }
        if (!src_get(pc, (int32_t)k, &a) || !a.fixed) {
            continue;
        }
        const mn_tensor_t *t = mn_rec(it, k);   /* (src_get only gives planned tensors) */
        const size_t align = mn_dtype_size(t->dtype);
        if (align > 1 && a.offset % align != 0) {
            return plan_fail(it, MN_ERR_MODEL, "tensor %u '%s' (%s) at offset %zu is not %zu-byte aligned",
                (unsigned)k, mn_model_tensor_name(it->model, k), mn_dtype_name(t->dtype), a.offset, align);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (!src_get(pc, (int32_t)j, &b) || !b.fixed) {
                continue;
            }
            const size_t ea = a.offset + mn_tensor_bytes(t), eb = b.offset + mn_tensor_bytes(mn_rec(it, j));
            /* (an output may start at most `shift` above the dying input it overlaps) */
            const int slides = (a.over == (int32_t)j + 1 && (int64_t)a.offset - (int64_t)b.offset <= a.shift)
                || (b.over == (int32_t)k + 1 && (int64_t)b.offset - (int64_t)a.offset <= b.shift);
            if (a.first <= b.last && b.first <= a.last && a.offset < eb && b.offset < ea && !slides) {
                return plan_fail(it, MN_ERR_MODEL,
                    "tensors %u [%zu,%zu) and %u [%zu,%zu) overlap, both alive at op %d ('%s', '%s')",
                    (unsigned)j, b.offset, eb, (unsigned)k, a.offset, ea, (int)(a.first > b.first ? a.first : b.first),
                    mn_model_tensor_name(it->model, j), mn_model_tensor_name(it->model, k));
            }
        }
    }
    return MN_OK;
}

mn_status_t mn_plan_memory(mn_interp_t *it) {
    plan_ctx_t pc = { it, NULL, 0 };
    mn_status_t s;
    /* The planner's temporaries are optional, so they do not count towards the arena needed. */
    size_t np, saved_needed = it->stats.needed, saved_peak = it->stats.temp_peak;
    it->plan_life = mn_tensor_uses(it);   /* a temporary: mn_arena_temp_reset forgets it */
    if (it->cfg.planner == MN_PLANNER_OFFLINE && (s = offline_plan(it, &pc.offline))) {
        it->plan_life = NULL;
        return s;
    }
    if (it->cfg.planner != MN_PLANNER_NO_REUSE) {   /* no-reuse keeps every tensor readable */
        mn_inplace_mark(it, pc.offline);
    }
    if (pc.offline && check_offline_plan(it, &pc)) {
        /* A stored plan made without in-place ops may hold only with each tensor's own lifetime. */
        mn_inplace_clear(it);
        it->err.status = MN_OK;
        if ((s = check_offline_plan(it, &pc))) {
            it->plan_life = NULL;
            return s;
        }
    }
    mn_plan_src_t src = { src_get, src_set_offset, src_get_offset, src_clear_offset, &pc,
        (int32_t)(it->n_tensors + it->n_scratch) };
    mn_plan_buf_t tmp;
    uint32_t idx = it->n_scratch;
    for (mn_scratch_t *r = it->scratch_req; r && idx > 0; r = r->next) {
        it->scratch_ptr[--idx] = r;       /* index -> record while planning (newest first) */
    }
    int32_t n = 0;
    size_t sum = 0;
    pc.no_slides = 1;
    for (int32_t k = 0; k < src.n; k++) {
        if (src_get(&pc, k, &tmp)) {
            n++;
            size_t end = tmp.fixed ? tmp.offset : 0;
            /* Keep every offset + size far from overflow (a 32-bit target with absurd models). */
            if (tmp.size > SIZE_MAX / 4 || end > SIZE_MAX / 4 || (sum += tmp.size + end) > SIZE_MAX / 4) {
                it->shortfall = SIZE_MAX / 4;
                it->plan_life = NULL;
                return MN_ERR_ARENA;
            }
        }
    }
    pc.no_slides = 0;
    /* Fast path with temporaries if they fit; otherwise the memory-less planner (same result).
     * plan_temp: the arena they take, which the greedy planner's moves must fit in. */
    const size_t plan_temp = it->head + it->temp + MN_BLOCK(mn_mul((size_t)n, sizeof(mn_plan_buf_t)))
        + MN_BLOCK(mn_mul((size_t)n, 2 * sizeof(int32_t)));
    mn_plan_buf_t *bufs = n ? mn_arena_temp(it, mn_mul((size_t)n, sizeof *bufs)) : NULL;
    int32_t *work = bufs ? mn_arena_temp(it, mn_mul((size_t)n, 2 * sizeof(int32_t))) : NULL;
    if (n && work) {
        int32_t j = 0;
        for (int32_t k = 0; k < src.n && j < n; k++) {
            if (src_get(&pc, k, &tmp)) {
                bufs[j++] = tmp;
            }
        }
        np = mn_plan(bufs, n, it->cfg.planner, work, plan_temp);
        for (int32_t j2 = 0; j2 < n; j2++) {
            int32_t k = bufs[j2].id >= 0 ? bufs[j2].id : (int32_t)it->n_tensors + (-1 - bufs[j2].id);
            src_set_offset(&pc, k, bufs[j2].offset);
        }
    } else {
        it->shortfall = 0;  /* the failed temporaries were optional */
        np = mn_plan_nomem(&src, it->cfg.planner, plan_temp);
    }
    it->stats.needed = saved_needed;
    it->stats.temp_peak = saved_peak;
    mn_arena_temp_reset(it);
    it->stats.nonpersistent = np;
    it->stats.persistent = it->tail + it->dry_extra;
    size_t arena_np = np + (it->pers ? 0 : it->stats.persistent);   /* split: persistent is elsewhere */
    if (arena_np > it->stats.needed) {
        it->stats.needed = arena_np;
    }
    int fits = mn_arena_fits_plan(it, np);
    /* Offsets -> pointers (NULL in a dry run or when the plan does not fit). */
    for (int32_t k = 0; k < src.n; k++) {
        size_t off;
        int placed = src_get_offset(&pc, k, &off);
        void *p = (placed && fits && !it->dry_run) ? it->arena + off : NULL;
        if ((uint32_t)k < it->n_tensors) {
            if (placed) {
                mn_rec(it, (uint32_t)k)->data = p;
                MN_UNPOISON(p, p ? mn_tensor_bytes(mn_rec(it, (uint32_t)k)) : 0);
            }
        } else {
            MN_UNPOISON(p, p ? ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->bytes : 0);
            it->scratch_ptr[(uint32_t)k - it->n_tensors] = p;
        }
    }
    mn_inplace_resolve(it);
    if (fits && !it->dry_run) {
        point_empty_tensors(it);
    }
    if (!fits && !it->dry_run) {
        return MN_ERR_ARENA;
    }
    if (!it->dry_run) {
        it->head = np;
    }
    return MN_OK;
}


/* Reads back what plan_memory decided, through the same lifetime code, so host tools (offline
 * planners) see exactly the buffers the device plans. */
mn_status_t mn_interp_plan_buffer(const mn_interp_t *it, size_t k, mn_plan_info_t *out) {
    if (!it || !out || it->state != ST_READY || k >= (size_t)it->n_tensors + it->n_scratch) {
        return MN_ERR_ARG;
    }
    memset(out, 0, sizeof *out);
    out->over = -1;
    if (k < it->n_tensors) {
        plan_ctx_t pc = { (mn_interp_t *)it, NULL, 0 };
        mn_plan_buf_t b;
        out->index = (int32_t)k;
        if (src_get(&pc, (int32_t)k, &b)) {
            out->planned = 1;
            out->size = b.size;
            out->first = b.first;
            out->last = b.last;
            const void *data = mn_rec(it, (uint32_t)k)->data;
            out->offset = data ? (size_t)((const uint8_t *)data - it->arena) : 0;
            out->over = b.over - 1;
            out->shift = b.shift;
        }
        return MN_OK;
    }
    /* Scratch records are listed newest first: index n_scratch - 1 is the head. */
    uint32_t idx = (uint32_t)(k - it->n_tensors), j = it->n_scratch - 1;
    const mn_scratch_t *r = it->scratch_req;
    while (r && j > idx) {
        r = r->next;
        j--;
    }
    if (!r) {
        return MN_ERR_ARG;
    }
    out->index = -1 - (int32_t)idx;
    out->planned = 1;
    out->size = MN_BLOCK(r->bytes);
    out->first = out->last = (int32_t)r->op;
    out->offset = it->scratch_ptr && it->scratch_ptr[idx] ? (size_t)((uint8_t *)it->scratch_ptr[idx] - it->arena) : 0;
    return MN_OK;
}

