// micronn.Model: a verified, zero-copy view of a TFLite flatbuffer.
#include <string.h>

#include "py/runtime.h"
#include "modmicronn.h"

MICRONN_BUILD_FLAGS_OF(mod_model);

// Model(buf): the engine reads the model in place for the Model's whole life, trusting what it
// verified once, so those bytes must never change. An object that refuses writes through the
// buffer protocol (bytes, a built-in model in flash, a read-only memoryview) is referenced, never
// copied; a writable one (bytearray, array, writable memoryview) is copied once into a bytes
// object the Model owns (bytes data is a GC block of its own: aligned like the heap).
static mp_obj_t model_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    mp_obj_t buf = args[0];
    mp_buffer_info_t bufinfo;
    if (mp_get_buffer(buf, &bufinfo, MP_BUFFER_WRITE)) {
        buf = mp_obj_new_bytes(bufinfo.buf, bufinfo.len);
    }
    mp_get_buffer_raise(buf, &bufinfo, MP_BUFFER_READ);
    // Verify into a stack copy first, so that the error message lives on the stack while the
    // exception is created.
    mn_model_t model;
    mn_status_t st = mn_model_init(&model, bufinfo.buf, bufinfo.len);
    if (st != MN_OK) {
        micronn_raise(st, model.err.msg);
    }
    micronn_model_obj_t *self = mp_obj_malloc(micronn_model_obj_t, type);
    self->buf = buf;
    self->model = model;
    return MP_OBJ_FROM_PTR(self);
}

micronn_model_obj_t *micronn_get_model(mp_obj_t obj) {
    if (mp_obj_is_type(obj, &micronn_type_model)) {
        return MP_OBJ_TO_PTR(obj);
    }
    return MP_OBJ_TO_PTR(model_make_new(&micronn_type_model, 1, 0, &obj));
}

static void model_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    micronn_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<Model %u bytes, %u ops, %u inputs, %u outputs>",
        (unsigned)self->model.len, (unsigned)mn_model_num_ops(&self->model),
        (unsigned)mn_model_num_inputs(&self->model), (unsigned)mn_model_num_outputs(&self->model));
}

static const mn_model_t *get_model(mp_obj_t self_in) {
    micronn_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return &self->model;
}

static mp_obj_t tensor_info_by_index(const mn_model_t *m, int32_t index) {
    mn_tensor_t t;
    if (index < 0 || mn_model_tensor(m, (size_t)index, &t) != MN_OK) {
        mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("tensor index out of range"));
    }
    return micronn_tensor_info(&t, mn_model_tensor_name(m, (size_t)index));
}

// Info of op i, or raise the model's error.
static void op_info(const mn_model_t *m, size_t i, mn_op_info_t *info) {
    if (mn_model_op_info(m, i, info) != MN_OK) {
        micronn_raise(MN_ERR_MODEL, m->err.msg);
    }
}

// ops() -> [(name, supported), ...] in execution order.
static mp_obj_t model_ops(mp_obj_t self_in) {
    const mn_model_t *m = get_model(self_in);
    size_t n = mn_model_num_ops(m);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        mn_op_info_t info;
        op_info(m, i, &info);
        mp_obj_t item[2] = {
            mp_obj_new_str_from_cstr(info.name),
            mp_obj_new_bool(info.supported),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(2, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(model_ops_obj, model_ops);

// unsupported() -> [(op_index, name), ...] of ops this firmware has no kernel for.
static mp_obj_t model_unsupported(mp_obj_t self_in) {
    const mn_model_t *m = get_model(self_in);
    size_t n = mn_model_num_ops(m);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        mn_op_info_t info;
        op_info(m, i, &info);
        if (!info.supported) {
            mp_obj_t item[2] = { MP_OBJ_NEW_SMALL_INT(i), mp_obj_new_str_from_cstr(info.name) };
            mp_obj_list_append(list, mp_obj_new_tuple(2, item));
        }
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(model_unsupported_obj, model_unsupported);

static mp_obj_t io_list(const mn_model_t *m, bool outputs) {
    size_t n = outputs ? mn_model_num_outputs(m) : mn_model_num_inputs(m);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        int32_t index = outputs ? mn_model_output_index(m, i) : mn_model_input_index(m, i);
        mp_obj_list_append(list, tensor_info_by_index(m, index));
    }
    return list;
}

// inputs() / outputs() -> [(name, shape, dtype, scale, zero_point), ...]
static mp_obj_t model_inputs(mp_obj_t self_in) {
    return io_list(get_model(self_in), false);
}
static MP_DEFINE_CONST_FUN_OBJ_1(model_inputs_obj, model_inputs);

static mp_obj_t model_outputs(mp_obj_t self_in) {
    return io_list(get_model(self_in), true);
}
static MP_DEFINE_CONST_FUN_OBJ_1(model_outputs_obj, model_outputs);

// tensor_info(index) -> (name, shape, dtype, scale, zero_point) of any tensor of subgraph 0.
static mp_obj_t model_tensor_info(mp_obj_t self_in, mp_obj_t index_in) {
    return tensor_info_by_index(get_model(self_in), mp_obj_get_int(index_in));
}
static MP_DEFINE_CONST_FUN_OBJ_2(model_tensor_info_obj, model_tensor_info);

// arena_needed(*, profile=False, preserve_all=False, reuse_inputs=False, detail=False, patches=False) -> exact
// arena size in bytes for an Interpreter with those options (engine dry run; temporary heap use).
// detail=True: a dict of the dry run's figures: needed, persistent, nonpersistent, temp_peak
// (split arenas need persistent + 15 and max(nonpersistent, temp_peak) + 15 bytes).
static mp_obj_t model_arena_needed(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_profile, ARG_preserve_all, ARG_reuse_inputs, ARG_detail, ARG_patches };
    static const mp_arg_t allowed_args[] = {
        { MP_QSTR_profile, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_preserve_all, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_reuse_inputs, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_detail, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_patches, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all(n_args - 1, pos_args + 1, kw_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);
    const mn_model_t *m = get_model(pos_args[0]);
    mn_config_t cfg;
    micronn_config_init(&cfg, args[ARG_profile].u_bool, args[ARG_preserve_all].u_bool, args[ARG_reuse_inputs].u_bool);
    if (args[ARG_patches].u_bool) {
        micronn_patches_config(m, &cfg);
    }
    mn_arena_stats_t st;
    micronn_arena_stats(m, &cfg, &st);
    if (!args[ARG_detail].u_bool) {
        return mp_obj_new_int_from_uint(st.needed);
    }
    mp_obj_t d = mp_obj_new_dict(4);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_needed), mp_obj_new_int_from_uint(st.needed));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_persistent), mp_obj_new_int_from_uint(st.persistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_nonpersistent), mp_obj_new_int_from_uint(st.nonpersistent));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_temp_peak), mp_obj_new_int_from_uint(st.temp_peak));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(model_arena_needed_obj, 1, model_arena_needed);

static void model_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return; // read-only
    }
    micronn_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    const mn_model_t *m = &self->model;
    switch (attr) {
        case MP_QSTR_num_inputs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_model_num_inputs(m));
            break;
        case MP_QSTR_num_outputs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_model_num_outputs(m));
            break;
        case MP_QSTR_num_ops:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_model_num_ops(m));
            break;
        case MP_QSTR_num_tensors:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_model_num_tensors(m));
            break;
        case MP_QSTR_num_subgraphs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_model_num_subgraphs(m));
            break;
        case MP_QSTR_version:
            dest[0] = mp_obj_new_int_from_uint(m->version);
            break;
        case MP_QSTR_size:
            dest[0] = mp_obj_new_int_from_uint(m->len);
            break;
        case MP_QSTR_address:
            dest[0] = mp_obj_new_int_from_uint((uintptr_t)m->buf);
            break;
        case MP_QSTR_buffer:
            dest[0] = self->buf;
            break;
        default:
            dest[1] = MP_OBJ_SENTINEL; // continue lookup in locals_dict
            break;
    }
}

static const mp_rom_map_elem_t model_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_ops), MP_ROM_PTR(&model_ops_obj) },
    { MP_ROM_QSTR(MP_QSTR_unsupported), MP_ROM_PTR(&model_unsupported_obj) },
    { MP_ROM_QSTR(MP_QSTR_inputs), MP_ROM_PTR(&model_inputs_obj) },
    { MP_ROM_QSTR(MP_QSTR_outputs), MP_ROM_PTR(&model_outputs_obj) },
    { MP_ROM_QSTR(MP_QSTR_tensor_info), MP_ROM_PTR(&model_tensor_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_arena_needed), MP_ROM_PTR(&model_arena_needed_obj) },
};
static MP_DEFINE_CONST_DICT(model_locals_dict, model_locals_dict_table);

MP_DEFINE_CONST_OBJ_TYPE(
    micronn_type_model,
    MP_QSTR_Model,
    MP_TYPE_FLAG_NONE,
    make_new, model_make_new,
    print, model_print,
    attr, model_attr,
    locals_dict, &model_locals_dict
    );
