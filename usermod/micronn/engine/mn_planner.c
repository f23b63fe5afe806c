/*
 * Memory planners: give every buffer (intermediate tensor or kernel scratch) an offset in the
 * non-persistent region so that buffers alive at the same time never overlap.
 *
 * Greedy (default): TFLM's GreedyMemoryPlanner idea. Buffers are taken largest first; each goes to
 * the lowest offset where it does not collide with an already placed buffer whose lifetime
 * intersects its own (first fit in offset order). Buffers with a preset offset (offline plan) are
 * placed first, as fixed obstacles.
 * No-reuse (debug): buffers are laid out one after another, so everything stays readable.
 */
#include "mn_internal.h"

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

size_t mn_plan(mn_plan_buf_t *bufs, int32_t n, int kind, int32_t *work) {
    size_t total = 0;
    if (kind == MN_PLANNER_NO_REUSE) {
        for (int32_t i = 0; i < n; i++) {
            bufs[i].offset = total;
            total += bufs[i].size;
        }
        return total;
    }
    int32_t *order = work, *placed = work + n;
    int32_t no = 0, np = 0;
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].fixed) {
            insert_placed(bufs, placed, &np, i);
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
    for (int32_t k = 0; k < no; k++) {
        mn_plan_buf_t *x = &bufs[order[k]];
        x->offset = first_fit(bufs, placed, np, x);
        insert_placed(bufs, placed, &np, order[k]);
    }
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].offset + bufs[i].size > total) {
            total = bufs[i].offset + bufs[i].size;
        }
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

size_t mn_plan_nomem(const mn_plan_src_t *src, int kind) {
    mn_plan_buf_t x, p;
    size_t total = 0, off;
    if (kind == MN_PLANNER_NO_REUSE) {
        for (int32_t k = 0; k < src->n; k++) {
            if (src->get(src->ctx, k, &x)) {
                src->set_offset(src->ctx, k, total);
                total += x.size;
            }
        }
        return total;
    }
    for (int32_t k = 0; k < src->n; k++) {
        if (src->get(src->ctx, k, &x) && x.fixed) {
            src->set_offset(src->ctx, k, x.offset);
        }
    }
    int have_prev = 0;
    mn_plan_buf_t prev = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int32_t kprev = -1;
    for (;;) {
        /* Next buffer in greedy order: the first one after `prev`. */
        int32_t kx = -1;
        mn_plan_buf_t best = { 0, 0, 0, 0, 0, 0, 0, 0 };
        for (int32_t k = 0; k < src->n; k++) {
            if (!src->get(src->ctx, k, &x) || x.fixed) {
                continue;
            }
            if (have_prev && !before(&prev, kprev, &x, k)) {
                continue;
            }
            if (kx < 0 || before(&x, k, &best, kx)) {
                best = x;
                kx = k;
            }
        }
        if (kx < 0) {
            break;
        }
        /* Lowest offset clear of every placed buffer alive at the same time (same result as
         * first_fit: jumping past a colliding buffer never skips a feasible offset). */
        size_t cand = 0;
        int moved = 1;
        while (moved) {
            moved = 0;
            for (int32_t k = 0; k < src->n; k++) {
                if (k == kx || !src->get_offset(src->ctx, k, &off) || !src->get(src->ctx, k, &p)) {
                    continue;
                }
                p.offset = off;
                if (overlap_in_time(&p, &best) && p.offset < cand + best.size && cand < p.offset + p.size
                    && !slides_over(&p, &best, cand) && clear_of(&p, &best) > cand) {
                    cand = clear_of(&p, &best);
                    moved = 1;
                }
            }
        }
        src->set_offset(src->ctx, kx, cand);
        prev = best;
        kprev = kx;
        have_prev = 1;
    }
    for (int32_t k = 0; k < src->n; k++) {
        if (src->get_offset(src->ctx, k, &off) && src->get(src->ctx, k, &p) && off + p.size > total) {
            total = off + p.size;
        }
    }
    return total;
}
