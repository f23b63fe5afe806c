/*
 * Layer 2: the arena (mn_arena.c): planned head, temporaries, persistent tail, and the block
 * sizes every layer above counts with.
 */
#ifndef MN_ARENA_H
#define MN_ARENA_H

#include "mn_util.h"

#define MN_ALIGN_UP(x) (((x) + (MN_ARENA_ALIGN - 1)) & ~(size_t)(MN_ARENA_ALIGN - 1))
/* The caller buffer that holds n bytes of arena (a whole number of MN_PERSIST_ALIGN units, as
 * align_buf uses it) whatever the alignment of its start. */
#define MN_NEED(n) ((((n) + (MN_PERSIST_ALIGN - 1)) & ~(size_t)(MN_PERSIST_ALIGN - 1)) + (MN_ARENA_ALIGN - 1))

/*
 * Host testing aid: with -DMICRONN_ASAN_REDZONE=16 (and -fsanitize=address) every arena block
 * gets a poisoned red zone after it and everything not handed out is poisoned, so a kernel that
 * reads or writes past a tensor, scratch or persistent block is caught by ASan even though the
 * arena is one big buffer. Zero (the default) compiles all of this away.
 */
#ifndef MICRONN_ASAN_REDZONE
#define MICRONN_ASAN_REDZONE 0
#endif
#if MICRONN_ASAN_REDZONE
#include <sanitizer/asan_interface.h>
#define MN_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MN_POISON(p, n) ((void)0)
#define MN_UNPOISON(p, n) ((void)0)
#endif

/* Size of an arena block for a request of n bytes (alignment + red zone): planned and temporary
 * blocks (MN_BLOCK), persistent ones (MN_PBLOCK). */
#define MN_BLOCK(n) MN_ALIGN_UP((n) + MICRONN_ASAN_REDZONE)
#define MN_PBLOCK(n) (((n) + MICRONN_ASAN_REDZONE + (MN_PERSIST_ALIGN - 1)) & ~(size_t)(MN_PERSIST_ALIGN - 1))

void mn_arena_setup(mn_interp_t *it, void *arena, size_t size);
void mn_arena_setup_persistent(mn_interp_t *it, void *buf, size_t size);
/* One past the persistent stack's bottom (it grows down from there). */
uint8_t *mn_arena_tail_end(const mn_interp_t *it);
/* Does a plan of np bytes fit beside the persistent data? */
int mn_arena_fits_plan(const mn_interp_t *it, size_t np);
void *mn_arena_persistent(mn_interp_t *it, size_t bytes);
/* A persistent block starting MN_ARENA_ALIGN-aligned (e.g. a nested interpreter's arena). */
void *mn_arena_persistent_aligned(mn_interp_t *it, size_t bytes);
void *mn_arena_temp(mn_interp_t *it, size_t bytes);
void mn_arena_temp_reset(mn_interp_t *it);
void mn_arena_note_peak(mn_interp_t *it);

/* Scratch request record (persistent, linked, newest first; 16 bytes on 32-bit targets). The
 * list holds requests n_scratch-1 ... 0 in that order, so a record's index is its position. */
struct mn_scratch {
    size_t bytes;
    size_t offset;     /* planning: 0 = not placed, else offset + 1 */
    uint32_t op;
    struct mn_scratch *next;
};

#endif /* MN_ARENA_H */
