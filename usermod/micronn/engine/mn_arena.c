/*
 * Arena: one caller buffer used as two stacks.
 *
 *   [ head: planned non-persistent tensors + scratch | temporaries -> ... <- persistent: tail ]
 *
 * During prepare the head is empty (planning happens last), temporaries of the op being prepared
 * grow up from the head and are dropped after its prepare, persistent data grows down from the
 * end. All blocks are MN_ARENA_ALIGN-aligned. When a request does not fit, the bytes that would
 * have been needed are recorded so the caller can be told the real size.
 */
#include "mn_internal.h"

void mn_arena_setup(mn_interp_t *it, void *arena, size_t size) {
    uintptr_t p = (uintptr_t)arena;
    uintptr_t a = (p + (MN_ARENA_ALIGN - 1)) & ~(uintptr_t)(MN_ARENA_ALIGN - 1);
    if (!arena || size < (size_t)(a - p)) {
        it->arena = NULL;
        it->arena_size = 0;
        return;
    }
    it->arena = (uint8_t *)a;
    it->arena_size = (size - (size_t)(a - p)) & ~(size_t)(MN_ARENA_ALIGN - 1);
    MN_POISON(it->arena, it->arena_size);
}

void mn_arena_note_peak(mn_interp_t *it) {
    size_t used = it->head + it->temp + it->tail + it->dry_extra;
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

static int fits(const mn_interp_t *it, size_t n) {
    size_t used = it->head + it->temp + it->tail;
    return n <= it->arena_size && used <= it->arena_size - n;
}

static void *miss(mn_interp_t *it, size_t n) {
    size_t want = it->head + it->temp + it->tail + n;
    if (want > it->shortfall) {
        it->shortfall = want;
    }
    return NULL;
}

void *mn_arena_persistent(mn_interp_t *it, size_t bytes) {
    size_t n = round_req(bytes ? bytes : 1);
    if (!fits(it, n)) {
        return miss(it, n);
    }
    it->tail += n;
    mn_arena_note_peak(it);
    uint8_t *p = it->arena + it->arena_size - it->tail;
    MN_UNPOISON(p, bytes);
    memset(p, 0, bytes);
    return p;
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
}
