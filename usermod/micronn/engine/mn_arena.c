/*
 * Arena: one caller buffer used as two stacks.
 *
 *   [ head: planned non-persistent tensors + scratch | temporaries -> ... <- persistent: tail ]
 *
 * During prepare the head is empty (planning happens last), temporaries of the op being prepared
 * grow up from the head and are dropped after its prepare, persistent data grows down from the
 * end (or, with split arenas, down from the end of the separate persistent buffer). Planned and
 * temporary blocks are MN_ARENA_ALIGN-aligned, persistent ones MN_PERSIST_ALIGN-aligned. When a request does not fit, the bytes that would
 * have been needed are recorded so the caller can be told the real size.
 */
#include "mn_arena.h"

static uint8_t *align_buf(void *buf, size_t size, size_t *out_size) {
    uintptr_t p = (uintptr_t)buf;
    uintptr_t a = (p + (MN_ARENA_ALIGN - 1)) & ~(uintptr_t)(MN_ARENA_ALIGN - 1);
    if (!buf || size < (size_t)(a - p)) {
        *out_size = 0;
        return NULL;
    }
    /* the start MN_ARENA_ALIGN-aligned (planned buffers), the end MN_PERSIST_ALIGN-aligned
     * (persistent blocks, from the end down) */
    *out_size = (size - (size_t)(a - p)) & ~(size_t)(MN_PERSIST_ALIGN - 1);
    MN_POISON((uint8_t *)a, *out_size);
    return (uint8_t *)a;
}

void mn_arena_setup(mn_interp_t *it, void *arena, size_t size) {
    it->arena = align_buf(arena, size, &it->arena_size);
}

void mn_arena_setup_persistent(mn_interp_t *it, void *buf, size_t size) {
    it->pers = align_buf(buf, size, &it->pers_size);
}

uint8_t *mn_arena_tail_end(const mn_interp_t *it) {
    return it->pers ? it->pers + it->pers_size : it->arena + it->arena_size;
}

void mn_arena_note_peak(mn_interp_t *it) {
    size_t used = it->head + it->temp + (it->pers ? 0 : it->tail + it->dry_extra);
    if (used > it->stats.needed) {
        it->stats.needed = used;
    }
    if (it->temp > it->stats.temp_peak) {
        it->stats.temp_peak = it->temp;
    }
}

/* Round up with an overflow guard: absurd requests become SIZE_MAX/2 and simply never fit. */
static size_t round_req(size_t bytes) {
    return bytes > SIZE_MAX / 4 ? SIZE_MAX / 4 : MN_BLOCK(bytes);
}
static size_t round_persistent(size_t bytes) {
    return bytes > SIZE_MAX / 4 ? SIZE_MAX / 4 : MN_PBLOCK(bytes);
}

/* Bytes of the arena in use: with split arenas the persistent part lives elsewhere. */
static size_t head_used(const mn_interp_t *it) {
    return it->head + it->temp + (it->pers ? 0 : it->tail);
}

static int fits(const mn_interp_t *it, size_t n) {
    size_t used = head_used(it);
    return n <= it->arena_size && used <= it->arena_size - n;
}

static void *miss(mn_interp_t *it, size_t n) {
    size_t want = head_used(it) + n;
    if (want > it->shortfall) {
        it->shortfall = want;
    }
    return NULL;
}

int mn_arena_fits_plan(const mn_interp_t *it, size_t np) {
    return np <= it->arena_size && (it->pers || it->tail <= it->arena_size - np);
}

void *mn_arena_persistent(mn_interp_t *it, size_t bytes) {
    size_t n = round_persistent(bytes ? bytes : 1);
    if (it->pers) {
        if (n > it->pers_size || it->tail > it->pers_size - n) {
            if (it->tail + n > it->pers_shortfall) {
                it->pers_shortfall = it->tail + n;
            }
            return NULL;
        }
    } else if (!fits(it, n)) {
        return miss(it, n);
    }
    it->tail += n;
    mn_arena_note_peak(it);
    uint8_t *p = mn_arena_tail_end(it) - it->tail;
    MN_UNPOISON(p, bytes);
    memset(p, 0, bytes);
    return p;
}

void *mn_arena_persistent_aligned(mn_interp_t *it, size_t bytes) {
    /* a fixed surplus, not the padding the current tail needs: a dry run, whose tail differs,
     * must count the same bytes */
    const size_t extra = MN_ARENA_ALIGN - MN_PERSIST_ALIGN;
    uint8_t *p = (uint8_t *)mn_arena_persistent(it, bytes > SIZE_MAX / 4 ? bytes : bytes + extra);
    if (!p) {
        return NULL;
    }
    uint8_t *a = (uint8_t *)(((uintptr_t)p + (MN_ARENA_ALIGN - 1)) & ~(uintptr_t)(MN_ARENA_ALIGN - 1));
    MN_POISON(p, (size_t)(a - p));
    return a;
}

void *mn_arena_temp(mn_interp_t *it, size_t bytes) {
    size_t n = round_req(bytes ? bytes : 1);
    if (!fits(it, n)) {
        return miss(it, n);
    }
    uint8_t *p = it->arena + it->head + it->temp;
    it->temp += n;
    mn_arena_note_peak(it);
    MN_UNPOISON(p, bytes);
    return p;
}

void mn_arena_temp_reset(mn_interp_t *it) {
    if (it->temp) {
        MN_POISON(it->arena + it->head, it->temp);
    }
    it->temp = 0;
    it->plan_life = NULL;   /* the planner's lifetime table was a temporary */
}
