/*
 * Memory planners: give every buffer (intermediate tensor or kernel scratch) an offset in the
 * non-persistent region so that buffers alive at the same time never overlap.
 *
 * Greedy (default): TFLM's GreedyMemoryPlanner idea. Buffers are taken largest first; each goes to
 * the lowest offset where it does not collide with an already placed buffer whose lifetime
 * intersects its own (first fit in offset order). Buffers with a preset offset (offline plan) are
 * placed first, as fixed obstacles. Then, up to MN_PLAN_MOVES times: each buffer alive at the same
 * time as the one that reaches the peak (at most MN_PLAN_TRIES of them, in greedy order) is tried
 * at the front of the order, everything placed again, and the move that lowers the peak most is
 * kept. A convolution's output that may start below its dying input (mn_inplace_slide) only gets
 * there when it is placed before that input (person_detect: 55,680 -> 46,848 bytes with the
 * generic kernels, 58,032 -> 48,816 with the dsp ones: the lower bound). The moves are kept only
 * when mn_plan's temporaries (temp_bytes) fit in the plan they give: an arena of the size a
 * sizing run found then always has room for them, and the memory-less variant (the same steps,
 * O(n^3) each) only runs in an arena too small for the model, to say what it needs.
 * No-reuse (debug): buffers are laid out one after another, so everything stays readable.
 */
#include "mn_plan.h"

static int overlap_in_time(const mn_plan_buf_t *a, const mn_plan_buf_t *b) {
    return a->first <= b->last && b->first <= a->last;
}

/* Insert buffer index x into placed[0..*np) keeping it sorted by offset. */
static void insert_placed(const mn_plan_buf_t *bufs, int32_t *placed, int32_t *np, int32_t x) {
    int32_t i = *np;
    while (i > 0 && bufs[placed[i - 1]].offset > bufs[x].offset) {
        placed[i] = placed[i - 1];
        i--;
    }
    placed[i] = x;
    (*np)++;
}

/* A convolution's output may share bytes with its dying input (mn_inplace_slide), as long as it
 * starts at most `shift` above it: x's lowest clear offset past p, where p would otherwise push
 * x to p's end. */
static size_t clear_of(const mn_plan_buf_t *p, const mn_plan_buf_t *x) {
    const size_t end = p->offset + p->size;
    if (p->over && p->over == x->id + 1 && (int64_t)end > (int64_t)p->offset - p->shift) {
        /* p is the output of x's op: x may start where p starts `shift` above it */
        return (int64_t)p->offset - p->shift > 0 ? (size_t)((int64_t)p->offset - p->shift) : 0;
    }
    return end;
}

/* Whether offset cand is allowed for x next to p as x's input (x = an output sliding over p). */
static int slides_over(const mn_plan_buf_t *p, const mn_plan_buf_t *x, size_t cand) {
    return x->over && x->over == p->id + 1 && (int64_t)cand - (int64_t)p->offset <= x->shift;
}

static size_t first_fit(const mn_plan_buf_t *bufs, const int32_t *placed, int32_t np, const mn_plan_buf_t *x) {
    size_t cand = 0;
    const mn_plan_buf_t *under = NULL;   /* x's input, placed, which x may overlap at cand */
    for (int32_t i = 0; i < np; i++) {
        const mn_plan_buf_t *p = &bufs[placed[i]];
        if (!overlap_in_time(p, x)) {
            continue;
        }
        if (p->offset >= cand && p->offset - cand >= x->size) {
            break;  /* the gap before p is large enough */
        }
        size_t end = p->offset + p->size;
        if (x->over | p->over) {   /* (rare: maybe a convolution's output and its input) */
            if (slides_over(p, x, cand)) {
                under = p;
                continue;
            }
            end = clear_of(p, x);
        }
        if (end > cand) {
            cand = end;
        }
        if (under && !slides_over(under, x, cand) && cand < under->offset + under->size) {
            cand = under->offset + under->size;   /* pushed out of the range it may overlap */
        }
    }
    return cand;
}

static int is_moved(const int32_t *moved, int32_t nm, int32_t k) {
    for (int32_t i = 0; i < nm; i++) {
        if (moved[i] == k) {
            return 1;
        }
    }
    return 0;
}

/* Place every buffer: the fixed ones where they are, then moved[nm - 1] .. moved[0] (the last
 * moved first), then order[0..no) without those. Returns the peak; *top: the buffer that reaches
 * the highest end, the last placed of those that do (-1: none but fixed ones). */
static size_t place_all(mn_plan_buf_t *bufs, int32_t n, const int32_t *order, int32_t no, const int32_t *moved,
    int32_t nm, int32_t *placed, int32_t *top) {
    int32_t np = 0;
    size_t peak = 0, top_end = 0;
    *top = -1;
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].fixed) {
            insert_placed(bufs, placed, &np, i);
            peak = bufs[i].offset + bufs[i].size > peak ? bufs[i].offset + bufs[i].size : peak;
        }
    }
    for (int32_t k = -nm; k < no; k++) {
        const int32_t j = k < 0 ? moved[-1 - k] : order[k];
        if (k >= 0 && is_moved(moved, nm, j)) {
            continue;
        }
        mn_plan_buf_t *x = &bufs[j];
        x->offset = first_fit(bufs, placed, np, x);
        insert_placed(bufs, placed, &np, j);
        const size_t end = x->offset + x->size;
        if (end >= top_end) {
            top_end = end;
            *top = j;
        }
        peak = end > peak ? end : peak;
    }
    return peak;
}

size_t mn_plan(mn_plan_buf_t *bufs, int32_t n, int kind, int32_t *work, size_t temp_bytes) {
    size_t total = 0;
    if (kind == MN_PLANNER_NO_REUSE) {
        for (int32_t i = 0; i < n; i++) {
            bufs[i].offset = total;
            total += bufs[i].size;
        }
        return total;
    }
    int32_t *order = work, *placed = work + n;
    int32_t no = 0;
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].fixed) {
            continue;
        }
        /* Insertion sort: size descending, then earlier first use (stable for equal sizes). */
        int32_t j = no++;
        while (j > 0 && (bufs[order[j - 1]].size < bufs[i].size
                         || (bufs[order[j - 1]].size == bufs[i].size && bufs[order[j - 1]].first > bufs[i].first))) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    int32_t moved[MN_PLAN_MOVES] = { 0 }, nm = 0, top, next;
    total = place_all(bufs, n, order, no, moved, 0, placed, &top);
    /* (moves are kept only when the temporaries fit in the plan: none can be above `total`) */
    while (nm < MN_PLAN_MOVES && top >= 0 && n <= MN_PLAN_MOVE_BUFS && temp_bytes <= total) {
        /* try each buffer alive with the one reaching the peak at the front; keep the best */
        int32_t pick = -1, tries = 0;
        size_t best = total;
        for (int32_t k = 0; k < no && tries < MN_PLAN_TRIES; k++) {
            if (is_moved(moved, nm, order[k]) || !overlap_in_time(&bufs[order[k]], &bufs[top])) {
                continue;
            }
            tries++;
            moved[nm] = order[k];
            const size_t peak = place_all(bufs, n, order, no, moved, nm + 1, placed, &next);
            if (peak < best) {
                best = peak;
                pick = order[k];
            }
        }
        if (pick < 0) {
            place_all(bufs, n, order, no, moved, nm, placed, &next);   /* back to the best */
            break;
        }
        moved[nm++] = pick;
        total = place_all(bufs, n, order, no, moved, nm, placed, &top);
    }
    if (nm && temp_bytes > total) {
        /* its temporaries would not fit in an arena of `total` bytes: the plan without moves */
        total = place_all(bufs, n, order, no, moved, 0, placed, &top);
    }
    return total;
}

/* ---- memory-less variant ------------------------------------------------------------------- */

/* Order of the greedy pass: size descending, then first use, then index. 1 if a precedes b. */
static int before(const mn_plan_buf_t *a, int32_t ka, const mn_plan_buf_t *b, int32_t kb) {
    if (a->size != b->size) {
        return a->size > b->size;
    }
    if (a->first != b->first) {
        return a->first < b->first;
    }
    return ka < kb;
}

/* The buffer after (prev, kprev) in greedy order among those not fixed and not moved (the first
 * with have_prev 0), into *x; -1 when none is left. */
static int32_t next_in_order(const mn_plan_src_t *src, const int32_t *moved, int32_t nm, int have_prev,
    const mn_plan_buf_t *prev, int32_t kprev, mn_plan_buf_t *x) {
    mn_plan_buf_t y;
    int32_t kx = -1;
    for (int32_t k = 0; k < src->n; k++) {
        if (!src->get(src->ctx, k, &y) || y.fixed || is_moved(moved, nm, k)) {
            continue;
        }
        if (have_prev && !before(prev, kprev, &y, k)) {
            continue;
        }
        if (kx < 0 || before(&y, k, x, kx)) {
            *x = y;
            kx = k;
        }
    }
    return kx;
}

/* Lowest offset for buffer kx (*x) clear of every placed buffer alive at the same time (same
 * result as first_fit: jumping past a colliding buffer never skips a feasible offset). */
static size_t lowest_clear(const mn_plan_src_t *src, int32_t kx, const mn_plan_buf_t *x) {
    mn_plan_buf_t p;
    size_t cand = 0, off;
    int again = 1;
    while (again) {
        again = 0;
        for (int32_t k = 0; k < src->n; k++) {
            if (k == kx || !src->get_offset(src->ctx, k, &off) || !src->get(src->ctx, k, &p)) {
                continue;
            }
            p.offset = off;
            if (overlap_in_time(&p, x) && p.offset < cand + x->size && cand < p.offset + p.size
                && !slides_over(&p, x, cand) && clear_of(&p, x) > cand) {
                cand = clear_of(&p, x);
                again = 1;
            }
        }
    }
    return cand;
}

/* place_all without working memory: the same order, offsets, peak and *top. */
static size_t place_all_nomem(const mn_plan_src_t *src, const int32_t *moved, int32_t nm, int32_t *top) {
    mn_plan_buf_t x, prev = { 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t peak = 0, top_end = 0, off;
    int32_t kprev = -1;
    int have_prev = 0;
    *top = -1;
    for (int32_t k = 0; k < src->n; k++) {
        if (src->get(src->ctx, k, &x)) {
            if (x.fixed) {
                src->set_offset(src->ctx, k, x.offset);
                peak = x.offset + x.size > peak ? x.offset + x.size : peak;
            } else {
                src->clear_offset(src->ctx, k);
            }
        }
    }
    for (int32_t i = nm - 1;; i--) {
        /* the moved ones (last moved first), then the others in greedy order */
        int32_t kx;
        if (i >= 0) {
            kx = moved[i];
            src->get(src->ctx, kx, &x);
        } else if ((kx = next_in_order(src, moved, nm, have_prev, &prev, kprev, &x)) < 0) {
            break;
        } else {
            prev = x;
            kprev = kx;
            have_prev = 1;
        }
        off = lowest_clear(src, kx, &x);
        src->set_offset(src->ctx, kx, off);
        if (off + x.size >= top_end) {
            top_end = off + x.size;
            *top = kx;
        }
        peak = off + x.size > peak ? off + x.size : peak;
    }
    return peak;
}

size_t mn_plan_nomem(const mn_plan_src_t *src, int kind, size_t temp_bytes) {
    mn_plan_buf_t x, t, prev = { 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t total = 0;
    int32_t n = 0;
    for (int32_t k = 0; k < src->n; k++) {
        if (src->get(src->ctx, k, &x)) {
            if (kind == MN_PLANNER_NO_REUSE) {
                src->set_offset(src->ctx, k, total);
                total += x.size;
            }
            n++;
        }
    }
    if (kind == MN_PLANNER_NO_REUSE) {
        return total;
    }
    /* mn_plan's steps, each placement computed again from the descriptions */
    int32_t moved[MN_PLAN_MOVES] = { 0 }, nm = 0, top, next;
    total = place_all_nomem(src, moved, 0, &top);
    while (nm < MN_PLAN_MOVES && top >= 0 && n <= MN_PLAN_MOVE_BUFS && temp_bytes <= total) {
        int32_t pick = -1, tries = 0, k = -1;
        size_t best = total;
        src->get(src->ctx, top, &t);
        while (tries < MN_PLAN_TRIES && (k = next_in_order(src, moved, nm, k >= 0, &prev, k, &x)) >= 0) {
            prev = x;
            if (!overlap_in_time(&x, &t)) {
                continue;
            }
            tries++;
            moved[nm] = k;
            const size_t peak = place_all_nomem(src, moved, nm + 1, &next);
            if (peak < best) {
                best = peak;
                pick = k;
            }
        }
        if (pick < 0) {
            place_all_nomem(src, moved, nm, &next);   /* back to the best */
            break;
        }
        moved[nm++] = pick;
        total = place_all_nomem(src, moved, nm, &top);
    }
    if (nm && temp_bytes > total) {
        total = place_all_nomem(src, moved, 0, &top);
    }
    return total;
}
