// micronn.register_op(name, fn): a Python function as the kernel of the custom op `name`.
//
// The function is called from invoke() as fn(inputs, outputs, shapes, dtypes):
//   inputs   tuple of read-only memoryviews of the op's input tensors (None for an omitted
//            optional input), typed like Tensor (typecode 'b' int8, 'h' int16, 'f' float32, ...)
//   outputs  tuple of writable memoryviews of its outputs; fn writes the results into them
//   shapes   tuple of shape tuples, inputs first, then outputs
//   dtypes   tuple of dtype names ("int8", "float32", ...), same order
// The engine itself allocates nothing in invoke; making these objects and running fn does, so a
// model with a Python op cannot be invoked under micropython.heap_lock() (RuntimeError saying so).
// An exception raised by fn propagates out of invoke() unchanged; the Interpreter stays usable.
//
// Registrations are looked up when an Interpreter is made (cfg.ops, searched before the built-in
// kernels, so a Python function can also stand in for "ethos-u" or override a C custom op).
#include <string.h>

#include "py/runtime.h"
#include "py/gc.h"
#include "py/binary.h"
#include "py/objarray.h"
#include "modmicronn.h"
#include "mn_kernel.h"

MICRONN_BUILD_FLAGS_OF(mod_pyops);

// Exception a Python op raised in the invoke that is returning (set and cleared within one call).
MP_REGISTER_ROOT_POINTER(mp_obj_t micronn_py_exc);

// The registry (dict: qstr name -> function) lives in sys.modules under this key: a root pointer
// of a user C module is not cleared by a soft reset, which frees the heap it would point into,
// while sys.modules is made anew by every mp_init().
#define REGISTRY_KEY MP_OBJ_NEW_QSTR(MP_QSTR__micronn_ops)

static mp_obj_t registry(bool create) {
    mp_map_elem_t *e = mp_map_lookup(&MP_STATE_VM(mp_loaded_modules_dict).map, REGISTRY_KEY,
        create ? MP_MAP_LOOKUP_ADD_IF_NOT_FOUND : MP_MAP_LOOKUP);
    if (e && e->value == MP_OBJ_NULL) {
        e->value = mp_obj_new_dict(0);
    }
    return e ? e->value : MP_OBJ_NULL;
}

// The registered function of custom op `name`, or MP_OBJ_NULL. Allocates nothing.
static mp_obj_t lookup(const char *name) {
    mp_obj_t d = registry(false);
    qstr q = name && d != MP_OBJ_NULL ? qstr_find_strn(name, strlen(name)) : MP_QSTRnull;
    if (q == MP_QSTRnull) {
        return MP_OBJ_NULL;
    }
    mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(d), MP_OBJ_NEW_QSTR(q), MP_MAP_LOOKUP);
    return e ? e->value : MP_OBJ_NULL;
}

static mn_status_t pyop_init(mn_ctx_t *ctx, mn_node_t *node) {
    char name[MN_OP_NAME_LEN];
    mp_obj_t fn = lookup(mn_node_name(ctx, node, name));
    if (fn == MP_OBJ_NULL) {
        return mn_fail(ctx, MN_ERR_STATE, "no Python function registered any more");
    }
    // The function is held in the arena (a heap block, so the GC sees it) for the node's life.
    mp_obj_t *slot = mn_alloc_persistent(ctx, sizeof(mp_obj_t));
    if (slot == NULL) {
        return MN_ERR_ARENA;
    }
    *slot = fn;
    node->user_data = slot;
    return MN_OK;
}

static mp_obj_t view(const mn_tensor_t *t, bool writable) {
    if (t == NULL) {
        return mp_const_none;
    }
    char tc = micronn_dtype_typecode(t->dtype);
    size_t n = mn_tensor_bytes(t) / mp_binary_get_size('@', tc, NULL);
    return mp_obj_new_memoryview(tc | (writable ? MP_OBJ_ARRAY_TYPECODE_FLAG_RW : 0), n, t->data);
}

static void call(mn_ctx_t *ctx, mn_node_t *node) {
    size_t n_in = mn_num_inputs(node), n_out = mn_num_outputs(node);
    mp_obj_t ins = mp_obj_new_tuple(n_in, NULL), outs = mp_obj_new_tuple(n_out, NULL);
    mp_obj_t shapes = mp_obj_new_tuple(n_in + n_out, NULL), dtypes = mp_obj_new_tuple(n_in + n_out, NULL);
    mp_obj_tuple_t *ti = MP_OBJ_TO_PTR(ins), *to = MP_OBJ_TO_PTR(outs);
    mp_obj_tuple_t *ts = MP_OBJ_TO_PTR(shapes), *td = MP_OBJ_TO_PTR(dtypes);
    for (size_t k = 0; k < n_in + n_out; k++) {
        const mn_tensor_t *t = k < n_in ? mn_input(ctx, node, k) : mn_output(ctx, node, k - n_in);
        if (k < n_in) {
            ti->items[k] = view(t, false);
        } else {
            to->items[k - n_in] = view(t, true);
        }
        ts->items[k] = t ? micronn_shape_tuple(t) : mp_const_none;
        td->items[k] = t ? mp_obj_new_str_from_cstr(mn_dtype_name(t->dtype)) : mp_const_none;
    }
    mp_obj_t args[4] = { ins, outs, shapes, dtypes };
    mp_call_function_n_kw(*(mp_obj_t *)node->user_data, 4, 0, args);
}

static mn_status_t pyop_eval(mn_ctx_t *ctx, mn_node_t *node) {
    if (gc_is_locked()) {
        return mn_fail(ctx, MN_ERR_STATE, "a Python custom op cannot run under micropython.heap_lock() "
            "(calling the function allocates)");
    }
    // The exception must not unwind through the engine: it is parked here and re-raised by
    // Interpreter.invoke() once the engine has returned.
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        call(ctx, node);
        nlr_pop();
        return MN_OK;
    }
    MP_STATE_VM(micronn_py_exc) = MP_OBJ_FROM_PTR(nlr.ret_val);
    return mn_fail(ctx, MN_ERR_KERNEL, "the Python function raised an exception");
}

static const mn_kernel_t micronn_py_kernel = { pyop_init, NULL, pyop_eval, NULL, NULL };

void micronn_pyops_config(mn_config_t *cfg) {
    mp_obj_t d = registry(false);
    size_t n = d == MP_OBJ_NULL ? 0 : mp_obj_dict_len(d);
    if (n == 0) {
        return;
    }
    // Kept alive by the pointer in cfg (and so in the Interpreter's copy of it).
    mn_registration_t *regs = m_new0(mn_registration_t, n);
    mp_map_t *map = mp_obj_dict_get_map(d);
    size_t k = 0;
    for (size_t i = 0; i < map->alloc && k < n; i++) {
        if (mp_map_slot_is_filled(map, i)) {
            regs[k].builtin = MN_BUILTIN_CUSTOM;
            regs[k].custom_name = qstr_str(MP_OBJ_QSTR_VALUE(map->table[i].key));
            regs[k].kernel = &micronn_py_kernel;
            k++;
        }
    }
    cfg->ops = regs;
    cfg->n_ops = k;
}

void micronn_pyops_reraise(void) {
    mp_obj_t exc = MP_STATE_VM(micronn_py_exc);
    if (exc != MP_OBJ_NULL) {
        MP_STATE_VM(micronn_py_exc) = MP_OBJ_NULL;
        nlr_raise(exc);
    }
}

// register_op(name, fn): run fn as custom op `name` in Interpreters made from now on;
// fn=None removes the registration. Returns None.
static mp_obj_t micronn_register_op(mp_obj_t name_in, mp_obj_t fn) {
    qstr q = mp_obj_str_get_qstr(name_in);
    if (qstr_len(q) == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("empty op name"));
    }
    if (fn != mp_const_none && !mp_obj_is_callable(fn)) {
        mp_raise_TypeError(MP_ERROR_TEXT("fn must be callable (or None to unregister)"));
    }
    mp_obj_t d = registry(true);
    if (fn == mp_const_none) {
        mp_map_lookup(mp_obj_dict_get_map(d), MP_OBJ_NEW_QSTR(q), MP_MAP_LOOKUP_REMOVE_IF_FOUND);
    } else {
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(q), fn);
    }
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_2(micronn_register_op_obj, micronn_register_op);

// registered_ops() -> tuple of the custom op names with a Python function.
static mp_obj_t micronn_registered_ops(void) {
    mp_obj_t d = registry(false);
    if (d == MP_OBJ_NULL) {
        return mp_const_empty_tuple;
    }
    mp_map_t *map = mp_obj_dict_get_map(d);
    mp_obj_tuple_t *t = MP_OBJ_TO_PTR(mp_obj_new_tuple(map->used, NULL));
    for (size_t i = 0, k = 0; i < map->alloc && k < map->used; i++) {
        if (mp_map_slot_is_filled(map, i)) {
            t->items[k++] = map->table[i].key;
        }
    }
    return MP_OBJ_FROM_PTR(t);
}
MP_DEFINE_CONST_FUN_OBJ_0(micronn_registered_ops_obj, micronn_registered_ops);
