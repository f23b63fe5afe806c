// micronn.Arena: one arena shared by several Interpreters, as TFLM allows. Each Interpreter's
// persistent part is stacked down from the end; their non-persistent parts (activations, scratch)
// all start at the beginning and overlap, so the arena needs the sum of the persistent parts plus
// the largest non-persistent part. Only one Interpreter's activations exist at a time: the Arena
// remembers whose they are (its owner), and a Tensor of another Interpreter refuses to give out
// stale data until that Interpreter runs again.
#include <string.h>

#include "py/runtime.h"
#include "modmicronn.h"

MICRONN_BUILD_FLAGS_OF(mod_arena);

// Arena(size): allocate `size` bytes once (plus alignment slack).
static mp_obj_t arena_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    mp_int_t size = mp_obj_get_int(args[0]);
    if (size <= 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("arena size must be > 0"));
    }
    micronn_arena_obj_t *self = mp_obj_malloc(micronn_arena_obj_t, type);
    self->alloc_len = (size_t)size;
    self->alloc = m_new_maybe(uint8_t, self->alloc_len);
    if (self->alloc == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError,
            MP_ERROR_TEXT("cannot allocate an arena of %u bytes from the heap"), (unsigned)self->alloc_len);
    }
    // Aligned here once, so the regions handed to the engine start and end aligned and the
    // stacked persistent parts sit back to back with no slack between them.
    uintptr_t a = ((uintptr_t)self->alloc + (MN_ARENA_ALIGN - 1)) & ~(uintptr_t)(MN_ARENA_ALIGN - 1);
    self->buf = (uint8_t *)a;
    self->size = (self->alloc_len - (size_t)(a - (uintptr_t)self->alloc)) & ~(size_t)(MN_ARENA_ALIGN - 1);
    self->persistent = 0;
    self->nonpersistent = 0;
    self->interps = 0;
    self->owner = mp_const_none;
    return MP_OBJ_FROM_PTR(self);
}

micronn_arena_obj_t *micronn_get_arena(mp_obj_t obj) {
    return mp_obj_is_type(obj, &micronn_type_arena) ? MP_OBJ_TO_PTR(obj) : NULL;
}

void micronn_arena_region(micronn_arena_obj_t *a, uint8_t **buf, size_t *len) {
    *buf = a->buf;
    *len = a->size - a->persistent;
}

bool micronn_arena_commit(micronn_arena_obj_t *a, mp_obj_t interp, const mn_arena_stats_t *st, size_t *need) {
    size_t np = st->nonpersistent > a->nonpersistent ? st->nonpersistent : a->nonpersistent;
    // The engine placed the persistent part at the region's end, which is aligned, so it takes
    // exactly st->persistent bytes (a multiple of MN_PERSIST_ALIGN).
    *need = a->persistent + st->persistent + np + (MN_ARENA_ALIGN - 1);
    if (a->persistent + st->persistent + np > a->size) {
        return false;   // its persistent part would overlap another Interpreter's activations
    }
    a->persistent += st->persistent;
    a->nonpersistent = np;
    a->interps++;
    a->owner = interp;   // its prepare has just used the shared part
    return true;
}

void micronn_arena_claim(micronn_arena_obj_t *a, mp_obj_t interp, bool input) {
    if (a->owner == interp) {
        return;
    }
    if (!input) {
        mp_raise_msg(&mp_type_RuntimeError,
            MP_ERROR_TEXT("stale tensor: another Interpreter sharing this Arena has run since; "
                "invoke() this one again"));
    }
    // Writing (or reading) an input is the start of this Interpreter's next run: its activations
    // take over the shared part, which invalidates the previous owner's tensors.
    a->owner = interp;
}

// stats() -> dict: size, persistent (stacked), nonpersistent (largest), used, free, interpreters.
static mp_obj_t arena_stats(mp_obj_t self_in) {
    micronn_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_obj_t d = mp_obj_new_dict(6);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_size), mp_obj_new_int_from_uint(self->size));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_persistent), mp_obj_new_int_from_uint(self->persistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_nonpersistent), mp_obj_new_int_from_uint(self->nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_used), mp_obj_new_int_from_uint(self->persistent + self->nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_free),
        mp_obj_new_int_from_uint(self->size - self->persistent - self->nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_interpreters), mp_obj_new_int_from_uint(self->interps));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_1(arena_stats_obj, arena_stats);

static void arena_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    micronn_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<Arena %u bytes: %u interpreters, persistent %u + non-persistent %u>", (unsigned)self->size,
        (unsigned)self->interps, (unsigned)self->persistent, (unsigned)self->nonpersistent);
}

static void arena_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return; // read-only
    }
    micronn_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (attr == MP_QSTR_size) {
        dest[0] = mp_obj_new_int_from_uint(self->size);
    } else {
        dest[1] = MP_OBJ_SENTINEL;   // continue in locals_dict
    }
}

static const mp_rom_map_elem_t arena_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&arena_stats_obj) },
};
static MP_DEFINE_CONST_DICT(arena_locals_dict, arena_locals_dict_table);

MP_DEFINE_CONST_OBJ_TYPE(
    micronn_type_arena,
    MP_QSTR_Arena,
    MP_TYPE_FLAG_NONE,
    make_new, arena_make_new,
    print, arena_print,
    attr, arena_attr,
    locals_dict, &arena_locals_dict
    );
