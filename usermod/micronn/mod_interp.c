// micronn.Interpreter: runs a Model with an arena that is allocated once (or given by the user).
#include <string.h>

#include "py/runtime.h"
#include "py/gc.h"
#include "modmicronn.h"
#include "mn_builtin.h"

MICRONN_BUILD_FLAGS_OF(mod_interp);

// Raise from an error record that may live in an object about to become garbage: the message is
// copied to the stack first, so a garbage collection while the exception is built cannot clobber it.
static NORETURN void raise_copy(mn_status_t st, const mn_error_t *err) {
    char msg[MN_ERR_MSG_LEN];
    memcpy(msg, err->msg, sizeof(msg));
    msg[sizeof(msg) - 1] = '\0';
    micronn_raise(st, msg);
}

// After the engine refused a model as unsupported (a kernel exists but rejects a dtype or a
// parameter): run the engine's per-op check and raise NotImplementedError naming EVERY op it
// refuses, with the engine's reason. Returns when that diagnosis is not possible (the caller then
// raises the original error).
static void raise_unsupported_ops(const mn_model_t *m, const mn_config_t *cfg) {
    size_t n = mn_model_num_ops(m);
    if (n == 0) {
        return;
    }
    mn_op_check_t *results = m_new_maybe(mn_op_check_t, n);
    if (results == NULL) {
        return;
    }
    size_t work_size = mn_dry_run_work_hint(m);
    size_t failed = 0;
    mn_status_t st = MN_ERR_ARENA;
    for (int attempt = 0; attempt < 8 && st == MN_ERR_ARENA; attempt++) {
        uint8_t *work = m_new_maybe(uint8_t, work_size);
        if (work == NULL) {
            break;
        }
        size_t needed = 0;
        st = mn_check_ops(m, cfg, work, work_size, results, n, &failed, &needed, NULL);
        m_del(uint8_t, work, work_size);
        size_t grown = work_size + work_size / 2;
        work_size = needed > grown ? needed : grown;
    }
    if (st == MN_ERR_UNSUPPORTED && failed > 0) {
        vstr_t msg;
        vstr_init(&msg, 64);
        vstr_add_str(&msg, "unsupported ops: ");
        bool first = true;
        for (size_t i = 0; i < n; i++) {
            if (results[i].status == MN_OK) {
                continue;
            }
            mn_op_info_t info;
            const char *name = "?";
            if (mn_model_op_info(m, i, &info) == MN_OK) {
                name = info.name;
            }
            const char *reason = results[i].msg;
            if (strncmp(reason, "op ", 3) == 0 && strstr(reason, ": ") != NULL) {
                reason = strstr(reason, ": ") + 2; // drop the engine's own "op N NAME: " prefix
            }
            vstr_printf(&msg, "%s%s (op %u): %s", first ? "" : "; ", name, (unsigned)i, reason);
            first = false;
        }
        m_del(mn_op_check_t, results, n);
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(&msg));
    }
    m_del(mn_op_check_t, results, n);
}

// Polled by the engine before each op: a pending exception (Ctrl-C sets KeyboardInterrupt from
// the UART interrupt or the SIGINT handler) stops a long invoke between ops.
static int stop_on_pending_exception(void *user) {
    (void)user;
    return MP_STATE_THREAD(mp_pending_exception) != MP_OBJ_NULL;
}

void micronn_config_init(mn_config_t *cfg, bool profile, bool preserve_all, bool reuse_inputs) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->should_stop = stop_on_pending_exception;
    // OFFLINE is the greedy planner unless the model carries a plan (`micronn plan --write`),
    // which the engine checks before using it, as TFLM does.
    cfg->planner = preserve_all ? MN_PLANNER_NO_REUSE : MN_PLANNER_OFFLINE;
    if (reuse_inputs) {
        cfg->flags |= MN_CFG_REUSE_INPUTS;
    }
    if (profile) {
        cfg->ticks = micronn_ticks_fn;
        cfg->ticks_mask = micronn_ticks_mask;
    }
    micronn_pyops_config(cfg);
}

void micronn_arena_stats(const mn_model_t *model, const mn_config_t *cfg, mn_arena_stats_t *out) {
    size_t work_size = mn_dry_run_work_hint(model);
    mn_error_t err;
    mn_status_t st = MN_ERR_ARENA;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint8_t *work = m_new(uint8_t, work_size);
        memset(&err, 0, sizeof(err));
        st = mn_arena_needed_stats(model, cfg, work, work_size, out, &err);
        m_del(uint8_t, work, work_size);
        size_t needed = out->needed;
        if (st == MN_OK) {
            return;
        }
        if (st != MN_ERR_ARENA) {
            break;
        }
        // The work buffer was too small; `needed` may be only a lower bound: grow by at least half.
        size_t grown = work_size + work_size / 2;
        work_size = needed > grown ? needed : grown;
    }
    if (st == MN_ERR_UNSUPPORTED) {
        raise_unsupported_ops(model, cfg);
    }
    raise_copy(st, &err);
}

void micronn_patches_config(const mn_model_t *model, mn_config_t *cfg) {
    size_t work_size = mn_dry_run_work_hint(model);
    mn_error_t err;
    mn_patch_choice_t c;
    mn_status_t st = MN_ERR_ARENA;
    for (int attempt = 0; attempt < 8 && st == MN_ERR_ARENA; attempt++) {
        uint8_t *work = m_new(uint8_t, work_size);
        memset(&err, 0, sizeof(err));
        st = mn_patch_choose(model, cfg, work, work_size, &c, &err);
        m_del(uint8_t, work, work_size);
        size_t grown = work_size + work_size / 2;
        work_size = c.arena > grown ? c.arena : grown;
    }
    if (st == MN_ERR_UNSUPPORTED) {
        raise_unsupported_ops(model, cfg);
    }
    if (st != MN_OK) {
        raise_copy(st, &err);
    }
    cfg->patch_first = c.first;
    cfg->patch_last = c.last;
    cfg->patch_rows = c.rows;
}

size_t micronn_arena_needed(const mn_model_t *model, const mn_config_t *cfg) {
    mn_arena_stats_t st;
    micronn_arena_stats(model, cfg, &st);
    return st.needed;
}

// Buffer for the engine: a user object used in place (recorded in *obj / *buf_rec so later uses
// can check it did not move) or a heap block of the given size (*alloc). `what` names it in errors.
static uint8_t *get_arena_buffer(mp_obj_t user, size_t size, mp_obj_t *obj, void **buf_rec, uint8_t **alloc,
    size_t *len) {
    if (mp_obj_is_int(user)) {
        mp_int_t n = mp_obj_get_int(user);
        if (n <= 0) {
            mp_raise_ValueError(MP_ERROR_TEXT("arena size must be > 0"));
        }
        size = (size_t)n;
    } else if (user != mp_const_none) {
        mp_buffer_info_t bufinfo;
        mp_get_buffer_raise(user, &bufinfo, MP_BUFFER_RW);
        *obj = user;
        *buf_rec = bufinfo.buf;
        *len = bufinfo.len;
        return bufinfo.buf;
    }
    uint8_t *p = m_new_maybe(uint8_t, size);
    if (p == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError,
            MP_ERROR_TEXT("cannot allocate an arena of %u bytes from the heap"), (unsigned)size);
    }
    *alloc = p;
    *len = size;
    return p;
}

// Append the ops of kernel state `state` (MN_KERNEL_*) to msg as "NAME (op i), ...";
// returns how many there were.
static size_t add_ops_in_state(vstr_t *msg, const mn_model_t *m, const mn_config_t *cfg, int state) {
    size_t n = mn_model_num_ops(m), count = 0;
    for (size_t i = 0; i < n; i++) {
        // the op's code first: its name is decoded (mn_model_op_info) only for an op listed here
        int32_t builtin;
        const char *custom;
        if (mn_model_op_code(m, i, &builtin, &custom) != MN_OK) {
            raise_copy(MN_ERR_MODEL, &m->err);
        }
        // state -1: ops without a kernel whose name the engine knows (ethos-u), with its reason
        const char *hint = builtin == MN_BUILTIN_CUSTOM ? mn_custom_op_hint(custom) : NULL;
        int st = mn_op_kernel_state(cfg, builtin, custom);
        if (state < 0 ? (st != MN_KERNEL_NONE || !hint) : (st != state || (state == MN_KERNEL_NONE && hint))) {
            continue;
        }
        mn_op_info_t info;
        if (mn_model_op_info(m, i, &info) != MN_OK) {
            raise_copy(MN_ERR_MODEL, &m->err);
        }
        vstr_add_str(msg, count++ ? ", " : "");
        if (info.name[0] == '?' || info.name[0] == '\0') {
            vstr_printf(msg, "builtin %d (op %u)", (int)info.builtin, (unsigned)i);
        } else {
            vstr_printf(msg, "%s (op %u)", info.name, (unsigned)i);
        }
        if (state < 0) {
            vstr_printf(msg, ": %s", hint);
        }
    }
    return count;
}

// NotImplementedError naming every op the firmware has no kernel for, if there is any, telling
// ops micronn has no kernel for apart from kernels this firmware was built without.
static void check_ops(const mn_model_t *m, const mn_config_t *cfg) {
    vstr_t msg;
    vstr_init(&msg, 64);
    vstr_add_str(&msg, "unsupported ops: ");
    size_t len0 = msg.len;
    static const struct { int state; const char *why; } groups[] = {
        { -1, "" },
        { MN_KERNEL_NONE, ": micronn has no kernel for these yet" },
        { MN_KERNEL_NOT_BUILT, ": this firmware was built without these kernels (rebuild it with OPS=... "
          "or MODELS=<this model>)" },
    };
    for (size_t g = 0; g < MP_ARRAY_SIZE(groups); g++) {
        size_t before = msg.len;
        if (before > len0) {
            vstr_add_str(&msg, "; ");
        }
        if (add_ops_in_state(&msg, m, cfg, groups[g].state)) {
            vstr_add_str(&msg, groups[g].why);
        } else {
            msg.len = before;
        }
    }
    if (msg.len > len0) {
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(&msg));
    }
    vstr_clear(&msg);
}

// Interpreter(model, arena_size=None, arena=None, *, profile=False, preserve_all=False,
//             reuse_inputs=False, persistent_arena=None)
//   model: a Model, or any buffer holding a .tflite flatbuffer (a Model is made of it).
//   arena: a writable buffer used in place as the arena (e.g. a bytearray made once at boot),
//     or a micronn.Arena shared with other Interpreters (see mod_arena.c).
//   persistent_arena: split arenas: a buffer (or a size to allocate) for the persistent part;
//     `arena` then holds only activations, scratch and prepare temporaries.
//   arena_size: allocate an arena of this many bytes once.
//   neither: the engine's dry run computes the exact size, then it is allocated once.
//   profile: record per-op ticks (see profile()).
//   preserve_all: give every tensor its own memory so intermediates stay readable via tensor(i).
//   delegate: name of a kernel backend (micronn.kernels()) that runs the maximal connected
//     subgraphs of ops it covers (min_subgraph: smallest one delegated); backends() tells which.
//   reference: every op outside the delegate's subgraphs runs its reference compute function.
//   reuse_inputs: let the planner reuse input memory once the inputs are consumed (as TFLM does;
//     smaller arena, but the inputs no longer hold their values after invoke()).
//   patches: run the early conv / pool chain that needs the least arena in bands of rows (or
//     streamed through line buffers), bit-exact; nothing changes when no such stage helps.
//   tables: a list; prepare appends every per-op table it keeps (subgraph, op, tag, bytes):
//     what this firmware's kernels compute, which `micronn plan --board B --write --tables`
//     stores in the model (mn_kernel.h "tables").
static void tables_hook(void *user, uint32_t subgraph, uint32_t op, uint32_t tag, const void *data, size_t bytes) {
    mp_obj_t t[4] = { mp_obj_new_int_from_uint(subgraph), mp_obj_new_int_from_uint(op),
                      mp_obj_new_int_from_uint(tag), mp_obj_new_bytes(data, bytes) };
    mp_obj_list_append(MP_OBJ_FROM_PTR(user), mp_obj_new_tuple(4, t));
}

static mp_obj_t interp_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    enum { ARG_model, ARG_arena_size, ARG_arena, ARG_profile, ARG_preserve_all, ARG_reuse_inputs,
           ARG_persistent_arena, ARG_delegate, ARG_min_subgraph, ARG_reference, ARG_patches, ARG_tables };
    static const mp_arg_t allowed_args[] = {
        { MP_QSTR_model, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_arena_size, MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_arena, MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_profile, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_preserve_all, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_reuse_inputs, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_persistent_arena, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_delegate, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_min_subgraph, MP_ARG_KW_ONLY | MP_ARG_INT, {.u_int = 1} },
        { MP_QSTR_reference, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_patches, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_tables, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);

    micronn_model_obj_t *model = micronn_get_model(args[ARG_model].u_obj);
    mn_config_t cfg;
    micronn_config_init(&cfg, args[ARG_profile].u_bool, args[ARG_preserve_all].u_bool, args[ARG_reuse_inputs].u_bool);
    if (args[ARG_delegate].u_obj != mp_const_none) {
        const char *name = mp_obj_str_get_str(args[ARG_delegate].u_obj);
        #if !MICRONN_DELEGATE
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("delegate %s: " MN_DELEGATE_NOT_BUILT), name);
        #endif
        cfg.delegate = mn_delegate_find(name);
        if (cfg.delegate == NULL) {
            vstr_t names;   /* (the delegates of this build, from the engine: one list) */
            vstr_init(&names, 32);
            for (size_t i = 0; mn_delegate_name(i); ++i) {
                vstr_add_str(&names, i ? ", " : "");
                vstr_add_str(&names, mn_delegate_name(i));
            }
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("no delegate '%s' (delegates: %s)"), name,
                vstr_null_terminated_str(&names));
        }
        if (args[ARG_min_subgraph].u_int < 1) {
            mp_raise_ValueError(MP_ERROR_TEXT("min_subgraph must be >= 1"));
        }
        cfg.min_subgraph = (uint32_t)args[ARG_min_subgraph].u_int;
    }
    if (args[ARG_reference].u_bool) {
        cfg.flags |= MN_CFG_REFERENCE_KERNELS;
    }
    if (args[ARG_tables].u_obj != mp_const_none) {
        if (!mp_obj_is_type(args[ARG_tables].u_obj, &mp_type_list)) {
            mp_raise_TypeError(MP_ERROR_TEXT("tables must be a list"));
        }
        cfg.table_hook = tables_hook;
        cfg.table_user = MP_OBJ_TO_PTR(args[ARG_tables].u_obj);
    }

    check_ops(&model->model, &cfg);
    if (args[ARG_patches].u_bool) {
        micronn_patches_config(&model->model, &cfg);
    }

    mp_obj_t arena_obj = args[ARG_arena].u_obj;
    mp_obj_t size_obj = args[ARG_arena_size].u_obj;
    if (arena_obj != mp_const_none && size_obj != mp_const_none) {
        mp_raise_ValueError(MP_ERROR_TEXT("give arena or arena_size, not both"));
    }

    micronn_interp_obj_t *self = mp_obj_malloc(micronn_interp_obj_t, type);
    self->model = MP_OBJ_FROM_PTR(model);
    self->arena_obj = mp_const_none;
    self->arena_alloc = NULL;
    self->arena_buf = NULL;
    self->arena_len = 0;
    self->inputs = mp_const_empty_tuple;
    self->outputs = mp_const_empty_tuple;
    self->profile = args[ARG_profile].u_bool;
    self->shared = mp_const_none;
    self->pers_obj = mp_const_none;
    self->pers_buf = NULL;
    self->pers_alloc = NULL;
    self->pers_len = 0;
    memset(&self->interp, 0, sizeof(self->interp));

    micronn_arena_obj_t *shared = micronn_get_arena(arena_obj);
    mp_obj_t pers_arg = args[ARG_persistent_arena].u_obj;
    if (shared != NULL && pers_arg != mp_const_none) {
        mp_raise_ValueError(MP_ERROR_TEXT("a shared Arena holds the persistent parts itself: no persistent_arena"));
    }
    mn_arena_stats_t dry;
    uint8_t *pers = NULL;
    if (pers_arg != mp_const_none) {
        // Split arenas: sizes not given come from the dry run (+ slack for an unaligned start).
        micronn_arena_stats(&model->model, &cfg, &dry);
        pers = get_arena_buffer(pers_arg, dry.persistent + MN_ARENA_ALIGN - 1, &self->pers_obj, &self->pers_buf,
            &self->pers_alloc, &self->pers_len);
        if (arena_obj == mp_const_none && size_obj == mp_const_none) {
            size_obj = mp_obj_new_int_from_uint(
                (dry.nonpersistent > dry.temp_peak ? dry.nonpersistent : dry.temp_peak) + MN_ARENA_ALIGN - 1);
        }
    }

    uint8_t *arena;
    size_t arena_len;
    if (shared != NULL) {
        self->shared = arena_obj;
        micronn_arena_region(shared, &arena, &arena_len);
    } else if (arena_obj != mp_const_none) {
        mp_buffer_info_t bufinfo;
        mp_get_buffer_raise(arena_obj, &bufinfo, MP_BUFFER_RW);
        self->arena_obj = arena_obj;
        self->arena_buf = bufinfo.buf;
        arena = bufinfo.buf;
        arena_len = bufinfo.len;
    } else {
        if (size_obj != mp_const_none) {
            mp_int_t size = mp_obj_get_int(size_obj);
            if (size <= 0) {
                mp_raise_ValueError(MP_ERROR_TEXT("arena_size must be > 0"));
            }
            arena_len = (size_t)size;
        } else {
            arena_len = micronn_arena_needed(&model->model, &cfg);
        }
        arena = m_new_maybe(uint8_t, arena_len);
        if (arena == NULL) {
            mp_raise_msg_varg(&mp_type_MemoryError,
                MP_ERROR_TEXT("cannot allocate an arena of %u bytes from the heap"), (unsigned)arena_len);
        }
        self->arena_alloc = arena;
    }
    self->arena_len = arena_len;

    mn_interp_t *it = &self->interp;
    mn_status_t st = mn_interp_init(it, &model->model, arena, arena_len, &cfg);
    if (st == MN_OK && pers != NULL) {
        st = mn_interp_set_persistent(it, pers, self->pers_len);
    }
    if (st == MN_OK) {
        st = mn_interp_prepare(it);
    }
    size_t shared_need = 0;
    if (shared != NULL && (st != MN_OK || !micronn_arena_commit(shared, MP_OBJ_FROM_PTR(self), &it->stats, &shared_need))) {
        shared->owner = mp_const_none;   // this prepare used the shared part: nobody's data is there
    }
    if (st == MN_OK && shared != NULL && shared->owner == mp_const_none) {
        mn_interp_deinit(it);
        mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("shared arena too small: need %u bytes, have %u"),
            (unsigned)shared_need, (unsigned)shared->alloc_len);
    }
    if (st != MN_OK) {
        mn_error_t err = it->err;
        if (self->arena_alloc != NULL) {
            m_del(uint8_t, self->arena_alloc, arena_len);
            self->arena_alloc = NULL;
        }
        if (self->pers_alloc != NULL) {
            m_del(uint8_t, self->pers_alloc, self->pers_len);
            self->pers_alloc = NULL;
        }
        if (st == MN_ERR_UNSUPPORTED) {
            raise_unsupported_ops(&model->model, &cfg);
        }
        if (st == MN_ERR_ARENA && shared != NULL) {
            // Its prepare needs the dry run's figure above the parts already stacked, and its
            // persistent part must then clear the largest activations.
            micronn_arena_stats(&model->model, &cfg, &dry);
            size_t np = dry.nonpersistent > shared->nonpersistent ? dry.nonpersistent : shared->nonpersistent;
            size_t need = shared->persistent + dry.persistent + np + MN_ARENA_ALIGN - 1;
            if (shared->persistent + dry.needed > need) {
                need = shared->persistent + dry.needed;
            }
            mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("shared arena too small: need %u bytes, have %u"),
                (unsigned)need, (unsigned)shared->alloc_len);
        }
        if (st == MN_ERR_ARENA && pers != NULL) {
            raise_copy(st, &err);   // the engine names which of the two buffers is short
        }
        if (st == MN_ERR_ARENA) {
            // The engine may only know a lower bound after a failed prepare: state the exact need.
            size_t need = micronn_arena_needed(&model->model, &cfg);
            mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("arena too small: need %u bytes, have %u"),
                (unsigned)need, (unsigned)arena_len);
        }
        raise_copy(st, &err);
    }

    mp_obj_t self_obj = MP_OBJ_FROM_PTR(self);
    size_t n_in = mn_interp_num_inputs(it);
    size_t n_out = mn_interp_num_outputs(it);
    mp_obj_tuple_t *ins = MP_OBJ_TO_PTR(mp_obj_new_tuple(n_in, NULL));
    self->inputs = MP_OBJ_FROM_PTR(ins);
    for (size_t i = 0; i < n_in; i++) {
        ins->items[i] = micronn_tensor_new(self_obj, mn_model_input_index(&model->model, i), mn_interp_input(it, i));
    }
    mp_obj_tuple_t *outs = MP_OBJ_TO_PTR(mp_obj_new_tuple(n_out, NULL));
    self->outputs = MP_OBJ_FROM_PTR(outs);
    for (size_t i = 0; i < n_out; i++) {
        outs->items[i] = micronn_tensor_new(self_obj, mn_model_output_index(&model->model, i), mn_interp_output(it, i));
    }
    return self_obj;
}

// MicroPython cannot pin a bytearray: resizing it (b[:] = b'', b.extend(...)) reallocates and
// frees the memory the engine's tensors, node list and activations live in. So every use of an
// Interpreter with a user arena first checks that the buffer is still the same block; a moved
// arena is an error for the rest of the Interpreter's life (the old memory may be reused).
static bool buffer_moved(mp_obj_t obj, void **rec, size_t len) {
    mp_buffer_info_t b;
    if (obj == mp_const_none) {
        return false;
    }
    if (*rec == NULL || !mp_get_buffer(obj, &b, MP_BUFFER_RW) || b.buf != *rec || b.len != len) {
        *rec = NULL;
        return true;
    }
    return false;
}

void micronn_interp_check(mp_obj_t interp) {
    micronn_interp_obj_t *self = MP_OBJ_TO_PTR(interp);
    if (self->shared != mp_const_none) {
        return;   // the Arena owns its memory
    }
    if (buffer_moved(self->arena_obj, &self->arena_buf, self->arena_len)
        | buffer_moved(self->pers_obj, &self->pers_buf, self->pers_len)) {
        mp_raise_msg(&mp_type_RuntimeError,
            MP_ERROR_TEXT("the arena buffer was resized or moved while the Interpreter used it; "
                "make a new Interpreter"));
    }
}

// Interpreters sharing an Arena: only the one that used the shared part last has valid
// activations. Touching an input claims the shared part; anything else must be current.
void micronn_interp_claim(mp_obj_t interp, const mn_tensor_t *t) {
    micronn_interp_obj_t *self = MP_OBJ_TO_PTR(interp);
    if (self->shared != mp_const_none && !(t->flags & (MN_TF_CONST | MN_TF_VARIABLE))) {
        micronn_arena_claim(MP_OBJ_TO_PTR(self->shared), interp, (t->flags & MN_TF_INPUT) != 0);
    }
}

static micronn_interp_obj_t *get_self(mp_obj_t self_in) {
    micronn_interp_check(self_in);
    return MP_OBJ_TO_PTR(self_in);
}

static mp_obj_t tuple_item(mp_obj_t tuple, mp_obj_t index_in) {
    size_t len;
    mp_obj_t *items;
    mp_obj_tuple_get(tuple, &len, &items);
    mp_int_t i = mp_obj_get_int(index_in);
    if (i < 0 || (size_t)i >= len) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("index %d out of range (model has %u)"),
            (int)i, (unsigned)len);
    }
    return items[i];
}

// input(i=0) / output(i=0) -> Tensor (the same object every time; no allocation).
static mp_obj_t interp_input(size_t n_args, const mp_obj_t *args) {
    return tuple_item(get_self(args[0])->inputs, n_args > 1 ? args[1] : MP_OBJ_NEW_SMALL_INT(0));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_input_obj, 1, 2, interp_input);

static mp_obj_t interp_output(size_t n_args, const mp_obj_t *args) {
    return tuple_item(get_self(args[0])->outputs, n_args > 1 ? args[1] : MP_OBJ_NEW_SMALL_INT(0));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_output_obj, 1, 2, interp_output);

static mp_obj_t interp_inputs(mp_obj_t self_in) {
    return get_self(self_in)->inputs;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_inputs_obj, interp_inputs);

static mp_obj_t interp_outputs(mp_obj_t self_in) {
    return get_self(self_in)->outputs;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_outputs_obj, interp_outputs);

// tensor(index) -> Tensor for any tensor of the model. Intermediate tensors share memory unless
// the interpreter was made with preserve_all=True.
static mp_obj_t interp_tensor(mp_obj_t self_in, mp_obj_t index_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    mp_int_t index = mp_obj_get_int(index_in);
    mn_tensor_t *t = NULL;
    if (index >= 0) {
        t = mn_interp_tensor(&self->interp, (size_t)index);
    }
    if (t == NULL) {
        mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("tensor index out of range"));
    }
    return micronn_tensor_new(self_in, (int32_t)index, t);
}
static MP_DEFINE_CONST_FUN_OBJ_2(interp_tensor_obj, interp_tensor);

// invoke(): run the model once. Allocates nothing (works under micropython.heap_lock()).
static mp_obj_t interp_invoke(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    if (self->shared != mp_const_none) {
        micronn_arena_obj_t *a = MP_OBJ_TO_PTR(self->shared);
        if (a->owner != self_in && mn_interp_num_inputs(&self->interp) > 0) {
            mp_raise_msg(&mp_type_RuntimeError,
                MP_ERROR_TEXT("another Interpreter sharing this Arena ran after the inputs were written: "
                    "write them again before invoke()"));
        }
        a->owner = self_in;
    }
    mn_status_t st = mn_interp_invoke(&self->interp);
    if (st == MN_ERR_ABORTED) {
        mp_handle_pending(true); // raises the pending exception (KeyboardInterrupt)
    }
    if (st == MN_ERR_KERNEL) {
        micronn_pyops_reraise();
    }
    if (st != MN_OK && gc_is_locked()) {
        // Under micropython.heap_lock() the error would surface as "MemoryError: heap is locked"
        // (e.g. a Python custom op refusing to run): the invoke is over, so lift the lock just
        // long enough to make the engine's own exception.
        uint16_t depth = MP_STATE_THREAD(gc_lock_depth);
        MP_STATE_THREAD(gc_lock_depth) = 0;
        mp_obj_t exc = micronn_exception(st, mn_interp_error(&self->interp));
        MP_STATE_THREAD(gc_lock_depth) = depth;
        nlr_raise(exc);
    }
    if (st != MN_OK) {
        micronn_raise(st, mn_interp_error(&self->interp));
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_invoke_obj, interp_invoke);

// reset(): zero the variable (state) tensors.
static mp_obj_t interp_reset(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    mn_status_t st = mn_interp_reset(&self->interp);
    if (st != MN_OK) {
        micronn_raise(st, mn_interp_error(&self->interp));
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_reset_obj, interp_reset);

static void get_stats(micronn_interp_obj_t *self, mn_arena_stats_t *s) {
    mn_status_t st = mn_interp_stats(&self->interp, s);
    if (st != MN_OK) {
        micronn_raise(st, mn_interp_error(&self->interp));
    }
}

// arena_used() -> persistent + non-persistent bytes.
static mp_obj_t interp_arena_used(mp_obj_t self_in) {
    mn_arena_stats_t s;
    get_stats(get_self(self_in), &s);
    return mp_obj_new_int_from_uint(s.persistent + s.nonpersistent);
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_arena_used_obj, interp_arena_used);

// stats() -> dict of arena accounting in bytes.
static mp_obj_t interp_stats(mp_obj_t self_in) {
    mn_arena_stats_t s;
    get_stats(get_self(self_in), &s);
    mp_obj_t d = mp_obj_new_dict(10);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_arena_size), mp_obj_new_int_from_uint(s.arena_size));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_persistent), mp_obj_new_int_from_uint(s.persistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_nonpersistent), mp_obj_new_int_from_uint(s.nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_total), mp_obj_new_int_from_uint(s.persistent + s.nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_needed), mp_obj_new_int_from_uint(s.needed));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_temp_peak), mp_obj_new_int_from_uint(s.temp_peak));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_copied), mp_obj_new_int_from_uint(s.copied_bytes));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_scratch_buffers), mp_obj_new_int_from_uint(s.n_scratch));
    // persistent bytes per op (kernel data, scratch records); the rest of persistent is the
    // engine's tensor/op records, variable tensors and aligned copies
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_kernel_persistent), mp_obj_new_int_from_uint(s.kernel_persistent));
    micronn_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    size_t n = mn_interp_num_ops(&self->interp);
    mp_obj_tuple_t *ops = MP_OBJ_TO_PTR(mp_obj_new_tuple(n, NULL));
    for (size_t i = 0; i < n; i++) {
        mn_op_profile_t p;
        ops->items[i] = MP_OBJ_NEW_SMALL_INT(mn_interp_profile(&self->interp, i, &p) == MN_OK ? p.persistent : 0);
    }
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_op_persistent), MP_OBJ_FROM_PTR(ops));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_stats_obj, interp_stats);

// profile() -> [(op_index, op_name, calls, ticks), ...]; ticks in units of _micronn.PROFILE_CLOCK.
static mp_obj_t interp_profile(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    if (!self->profile) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("profiling is off: use Interpreter(..., profile=True)"));
    }
    size_t n = mn_interp_num_ops(&self->interp);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        mn_op_profile_t p;
        mn_status_t st = mn_interp_profile(&self->interp, i, &p);
        if (st != MN_OK) {
            micronn_raise(st, mn_interp_error(&self->interp));
        }
        mp_obj_t item[4] = {
            MP_OBJ_NEW_SMALL_INT(i),
            mp_obj_new_str_from_cstr(p.name ? p.name : "?"),
            mp_obj_new_int_from_uint(p.calls),
            mp_obj_new_int_from_ull(p.ticks),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(4, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_profile_obj, interp_profile);

// variants() -> ('reference' or '<backend>.<function>', ...): the compute function each op runs.
static mp_obj_t interp_variants(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    size_t n = mn_interp_num_ops(&self->interp);
    mp_obj_t tuple = mp_obj_new_tuple(n, NULL);
    for (size_t i = 0; i < n; i++) {
        mn_op_profile_t p;
        mn_status_t st = mn_interp_profile(&self->interp, i, &p);
        if (st != MN_OK) {
            micronn_raise(st, mn_interp_error(&self->interp));
        }
        ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(tuple))->items[i] = mp_obj_new_str_from_cstr(p.variant);
    }
    return tuple;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_variants_obj, interp_variants);

// backends() -> (delegate name or None, ...) per op in execution order (aligned with profile()
// and variants()): which delegate runs it; None: the interpreter's kernels.
static mp_obj_t interp_backends(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    size_t n = mn_interp_num_ops(&self->interp);
    mp_obj_t tuple = mp_obj_new_tuple(n, NULL);
    for (size_t i = 0; i < n; i++) {
        mn_op_profile_t p;
        mn_status_t st = mn_interp_profile(&self->interp, i, &p);
        if (st != MN_OK) {
            micronn_raise(st, mn_interp_error(&self->interp));
        }
        ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(tuple))->items[i] = p.backend ? mp_obj_new_str_from_cstr(p.backend)
            : mp_const_none;
    }
    return tuple;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_backends_obj, interp_backends);
// plan() -> [(buffer, size, first_op, last_op, offset, over, shift), ...]: the non-persistent
// plan, one entry per planned buffer (buffer = tensor index, or -1 - scratch index for kernel
// scratch; over = the tensor whose buffer it may overlap, a convolution's dying input, starting at
// most shift bytes above it, or -1), as mn_interp_plan_buffer reports it. `micronn plan --board`
// plans offline with these.
static mp_obj_t interp_plan(mp_obj_t self_in) {
    micronn_interp_obj_t *self = get_self(self_in);
    mn_arena_stats_t s;
    get_stats(self, &s);
    size_t n = mn_interp_num_tensors(&self->interp) + s.n_scratch;
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t k = 0; k < n; k++) {
        mn_plan_info_t b;
        mn_status_t st = mn_interp_plan_buffer(&self->interp, k, &b);
        if (st != MN_OK) {
            micronn_raise(st, "plan not available");
        }
        if (b.planned) {
            mp_obj_t item[7] = {
                mp_obj_new_int(b.index), mp_obj_new_int_from_uint(b.size), mp_obj_new_int(b.first),
                mp_obj_new_int(b.last), mp_obj_new_int_from_uint(b.offset), mp_obj_new_int(b.over),
                mp_obj_new_int(b.shift),
            };
            mp_obj_list_append(list, mp_obj_new_tuple(7, item));
        }
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_plan_obj, interp_plan);

static mp_obj_t interp_profile_clear(mp_obj_t self_in) {
    mn_interp_profile_clear(&get_self(self_in)->interp);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_profile_clear_obj, interp_profile_clear);

static void interp_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return; // read-only
    }
    micronn_interp_obj_t *self = MP_OBJ_TO_PTR(self_in); // none of these touch the arena
    switch (attr) {
        case MP_QSTR_model:
            dest[0] = self->model;
            break;
        case MP_QSTR_num_inputs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_interp_num_inputs(&self->interp));
            break;
        case MP_QSTR_num_outputs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_interp_num_outputs(&self->interp));
            break;
        case MP_QSTR_num_ops:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_interp_num_ops(&self->interp));
            break;
        case MP_QSTR_arena_size:
            dest[0] = mp_obj_new_int_from_uint(self->arena_len);
            break;
        case MP_QSTR_invokes:
            dest[0] = mp_obj_new_int_from_uint(self->interp.invokes);
            break;
        default:
            dest[1] = MP_OBJ_SENTINEL;
            break;
    }
}

static void interp_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    micronn_interp_obj_t *self = MP_OBJ_TO_PTR(self_in); // the arena is not touched
    mp_printf(print, "<Interpreter %u ops, arena %u bytes>",
        (unsigned)mn_interp_num_ops(&self->interp), (unsigned)self->arena_len);
}

static const mp_rom_map_elem_t interp_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_input), MP_ROM_PTR(&interp_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_output), MP_ROM_PTR(&interp_output_obj) },
    { MP_ROM_QSTR(MP_QSTR_inputs), MP_ROM_PTR(&interp_inputs_obj) },
    { MP_ROM_QSTR(MP_QSTR_outputs), MP_ROM_PTR(&interp_outputs_obj) },
    { MP_ROM_QSTR(MP_QSTR_tensor), MP_ROM_PTR(&interp_tensor_obj) },
    { MP_ROM_QSTR(MP_QSTR_invoke), MP_ROM_PTR(&interp_invoke_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&interp_reset_obj) },
    { MP_ROM_QSTR(MP_QSTR_arena_used), MP_ROM_PTR(&interp_arena_used_obj) },
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&interp_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_profile), MP_ROM_PTR(&interp_profile_obj) },
    { MP_ROM_QSTR(MP_QSTR_profile_clear), MP_ROM_PTR(&interp_profile_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_variants), MP_ROM_PTR(&interp_variants_obj) },
    { MP_ROM_QSTR(MP_QSTR_backends), MP_ROM_PTR(&interp_backends_obj) },
    { MP_ROM_QSTR(MP_QSTR_plan), MP_ROM_PTR(&interp_plan_obj) },
};
static MP_DEFINE_CONST_DICT(interp_locals_dict, interp_locals_dict_table);

MP_DEFINE_CONST_OBJ_TYPE(
    micronn_type_interpreter,
    MP_QSTR_Interpreter,
    MP_TYPE_FLAG_NONE,
    make_new, interp_make_new,
    print, interp_print,
    attr, interp_attr,
    locals_dict, &interp_locals_dict
    );
