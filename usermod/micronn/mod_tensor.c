// micronn.Tensor: zero-copy view of one tensor of an Interpreter (buffer protocol, items, slices).
#include <string.h>

#include "py/runtime.h"
#include "py/binary.h"
#include "py/objarray.h"
#include "modmicronn.h"

MICRONN_BUILD_FLAGS_OF(mod_tensor);

mp_obj_t micronn_tensor_new(mp_obj_t interp, int32_t index, mn_tensor_t *t) {
    if (t == NULL) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tensor not available"));
    }
    micronn_tensor_obj_t *self = mp_obj_malloc(micronn_tensor_obj_t, &micronn_type_tensor);
    self->interp = interp;
    self->index = index;
    return MP_OBJ_FROM_PTR(self);
}

mp_obj_t micronn_shape_tuple(const mn_tensor_t *t) {
    mp_obj_tuple_t *shape = MP_OBJ_TO_PTR(mp_obj_new_tuple(t->ndim, NULL));
    for (size_t i = 0; i < t->ndim; i++) {
        shape->items[i] = MP_OBJ_NEW_SMALL_INT(t->dims[i]);
    }
    return MP_OBJ_FROM_PTR(shape);
}

mp_obj_t micronn_tensor_info(const mn_tensor_t *t, const char *name) {
    mp_obj_t item[5] = {
        mp_obj_new_str_from_cstr(name ? name : ""),
        micronn_shape_tuple(t),
        mp_obj_new_str_from_cstr(mn_dtype_name(t->dtype)),
        mp_obj_new_float_from_f(mn_tensor_scale(t, 0)),
        MP_OBJ_NEW_SMALL_INT(mn_tensor_zero_point(t, 0)),
    };
    return mp_obj_new_tuple(5, item);
}

static size_t tensor_itemsize(const mn_tensor_t *t) {
    return mp_binary_get_size('@', micronn_dtype_typecode(t->dtype), NULL);
}

// Number of elements as seen through the buffer protocol.
static size_t tensor_len(const mn_tensor_t *t) {
    return mn_tensor_bytes(t) / tensor_itemsize(t);
}

static void *tensor_data(const mn_tensor_t *t) {
    if (t->data == NULL) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tensor has no data"));
    }
    return t->data;
}

// The tensor's name, from the model (tensor records do not keep it).
static const char *tensor_name(mp_obj_t self_in) {
    micronn_tensor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    micronn_interp_obj_t *ip = MP_OBJ_TO_PTR(self->interp);
    const char *name = mn_model_tensor_name(ip->interp.model, (size_t)self->index);
    return name ? name : "";
}

// The tensor record lives in the interpreter's arena: check the arena is still there first. It is
// looked up on every use, as constants read in place have no record of their own (the engine
// decodes one from the model, valid until the next lookup).
static mn_tensor_t *get_tensor(mp_obj_t self_in) {
    micronn_tensor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    micronn_interp_check(self->interp);
    micronn_interp_obj_t *ip = MP_OBJ_TO_PTR(self->interp);
    mn_tensor_t *t = mn_interp_tensor(&ip->interp, (size_t)self->index);
    if (t == NULL) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("tensor not available"));
    }
    return t;
}

// The same, for a use of the tensor's data: with an Arena shared by several Interpreters the
// data must be this Interpreter's (a stale tensor raises rather than show another's activations).
static mn_tensor_t *get_live_tensor(mp_obj_t self_in) {
    micronn_tensor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mn_tensor_t *t = get_tensor(self_in);
    micronn_interp_claim(self->interp, t);
    return t;
}

// Constant tensors hold the model's weights (flash, or an immutable bytes object that the Model
// verified once): never writable from Python.
static bool tensor_is_const(const mn_tensor_t *t) {
    return (t->flags & MN_TF_CONST) != 0;
}

static void *tensor_writable_data(const mn_tensor_t *t) {
    if (tensor_is_const(t)) {
        mp_raise_TypeError(MP_ERROR_TEXT("constant tensor (model weights) is read-only"));
    }
    return tensor_data(t);
}

// Refuse integers the tensor's dtype cannot hold instead of wrapping them (as NumPy 2 does for
// Python ints). Non-int values are left to mp_binary_set_val_array (TypeError for bad types).
static void check_int_range(const mn_tensor_t *t, mp_obj_t value) {
    mp_int_t lo, hi;
    switch (t->dtype) {
        case MN_INT8:
            lo = -128, hi = 127;
            break;
        case MN_UINT8:
            lo = 0, hi = 255;
            break;
        case MN_INT16:
            lo = -32768, hi = 32767;
            break;
        case MN_UINT16:
            lo = 0, hi = 65535;
            break;
        case MN_INT32:
            lo = -0x7fffffff - 1, hi = 0x7fffffff;
            break;
        case MN_UINT32:
            if (mp_obj_is_int(value)) {
                // raises OverflowError for negatives and values beyond a machine word
                uint64_t v = mp_obj_int_get_uint_checked(value);
                if (v > 0xffffffffu) {
                    goto overflow;
                }
            }
            return;
        default:
            return;
    }
    if (mp_obj_is_int(value)) {
        mp_int_t v = mp_obj_int_get_checked(value); // OverflowError beyond a machine word
        if (v < lo || v > hi) {
            goto overflow;
        }
    }
    return;
overflow:
    mp_raise_msg_varg(&mp_type_OverflowError, MP_ERROR_TEXT("value out of range for dtype %s"),
        mn_dtype_name(t->dtype));
}

// Store one element, range-checked.
static void tensor_set(const mn_tensor_t *t, char tc, void *data, size_t i, mp_obj_t value) {
    check_int_range(t, value);
    mp_binary_set_val_array(tc, data, i, value);
}

static void tensor_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    micronn_tensor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    const mn_tensor_t *t = get_tensor(self_in);
    mp_printf(print, "<Tensor %d '%s' %s (", (int)self->index, tensor_name(self_in), mn_dtype_name(t->dtype));
    for (size_t i = 0; i < t->ndim; i++) {
        mp_printf(print, i ? ", %d" : "%d", (int)t->dims[i]);
    }
    mp_printf(print, t->ndim == 1 ? ",)" : ")");
    if (t->quant) {
        mp_printf(print, " scale=%f zero_point=%d", (double)mn_tensor_scale(t, 0), (int)mn_tensor_zero_point(t, 0));
    }
    mp_printf(print, ">");
}

static mp_int_t tensor_get_buffer(mp_obj_t self_in, mp_buffer_info_t *bufinfo, mp_uint_t flags) {
    mn_tensor_t *t = get_live_tensor(self_in);
    if (t->data == NULL || ((flags & MP_BUFFER_WRITE) && tensor_is_const(t))) {
        return 1;
    }
    bufinfo->buf = t->data;
    bufinfo->len = mn_tensor_bytes(t);
    bufinfo->typecode = micronn_dtype_typecode(t->dtype);
    return 0;
}

// Kind of a buffer typecode: 'f' float, 'i' signed integer, 'u' unsigned integer, 0 other.
static char typecode_kind(char tc) {
    switch (tc) {
        case 'f':
        case 'd':
            return 'f';
        case 'b':
        case 'h':
        case 'i':
        case 'l':
        case 'q':
            return 'i';
        case 'B':
        case 'H':
        case 'I':
        case 'L':
        case 'Q':
        case BYTEARRAY_TYPECODE:
            return 'u';
        default:
            return 0;
    }
}

// Copy `value` into elements [start, start + n) of the tensor.
// Accepted: raw bytes (bytes/bytearray/1-byte arrays) of exactly n * itemsize bytes; arrays or
// memoryviews of the same element type and count; lists/tuples of n numbers.
static void tensor_assign(mn_tensor_t *t, size_t start, size_t n, mp_obj_t value) {
    char tc = micronn_dtype_typecode(t->dtype);
    size_t isz = tensor_itemsize(t);
    uint8_t *dst = (uint8_t *)tensor_writable_data(t) + start * isz;
    mp_buffer_info_t src;
    if (!mp_obj_is_str(value) && mp_get_buffer(value, &src, MP_BUFFER_READ)) {
        char stc = src.typecode & 0x7f; // memoryview marks writable buffers with the high bit
        size_t ssz = mp_binary_get_size('@', stc, NULL);
        if (ssz == 0) {
            ssz = 1;
        }
        // 1-byte sources (bytes, bytearray, array('b'/'B')) are raw bytes, accepted for any
        // dtype; wider sources must have the tensor's element size and kind.
        if (ssz != 1 && (ssz != isz || typecode_kind(stc) != typecode_kind(tc))) {
            mp_raise_msg_varg(&mp_type_TypeError,
                MP_ERROR_TEXT("cannot copy a buffer of typecode '%c' into a tensor of dtype %s"),
                stc, mn_dtype_name(t->dtype));
        }
        if (src.len != n * isz) {
            mp_raise_msg_varg(&mp_type_ValueError,
                MP_ERROR_TEXT("size mismatch: %s tensor needs %u bytes (%u elements), got %u bytes"),
                mn_dtype_name(t->dtype), (unsigned)(n * isz), (unsigned)n, (unsigned)src.len);
        }
        memmove(dst, src.buf, src.len);
        return;
    }
    if (mp_obj_is_type(value, &mp_type_list) || mp_obj_is_type(value, &mp_type_tuple)) {
        size_t len;
        mp_obj_t *items;
        mp_obj_get_array(value, &len, &items);
        if (len != n) {
            mp_raise_msg_varg(&mp_type_ValueError,
                MP_ERROR_TEXT("size mismatch: tensor needs %u elements, got %u"), (unsigned)n, (unsigned)len);
        }
        for (size_t i = 0; i < n; i++) {
            check_int_range(t, items[i]); // before any store: a failed assignment changes nothing
        }
        for (size_t i = 0; i < n; i++) {
            mp_binary_set_val_array(tc, dst, i, items[i]);
        }
        return;
    }
    mp_raise_msg_varg(&mp_type_TypeError,
        MP_ERROR_TEXT("can't assign '%s' to a tensor: need a buffer, list or tuple"),
        mp_obj_get_type_str(value));
}

static mp_obj_t tensor_subscr(mp_obj_t self_in, mp_obj_t index, mp_obj_t value) {
    if (value == MP_OBJ_NULL) {
        return MP_OBJ_NULL; // delete: not supported
    }
    mn_tensor_t *t = get_live_tensor(self_in);
    size_t len = tensor_len(t);
    char tc = micronn_dtype_typecode(t->dtype);
    if (mp_obj_is_type(index, &mp_type_slice)) {
        mp_bound_slice_t slice;
        if (!mp_seq_get_fast_slice_indexes(len, index, &slice)) {
            mp_raise_NotImplementedError(MP_ERROR_TEXT("only slices with step 1"));
        }
        size_t n = slice.stop > slice.start ? (size_t)(slice.stop - slice.start) : 0;
        if (value == MP_OBJ_SENTINEL) {
            // Load: a memoryview of the elements (zero copy), writable unless the tensor is constant.
            uint8_t *data = (uint8_t *)tensor_data(t) + (size_t)slice.start * tensor_itemsize(t);
            return mp_obj_new_memoryview(tensor_is_const(t) ? tc : (tc | MP_OBJ_ARRAY_TYPECODE_FLAG_RW), n, data);
        }
        tensor_assign(t, (size_t)slice.start, n, value);
        return mp_const_none;
    }
    size_t i = mp_get_index(&micronn_type_tensor, len, index, false);
    if (value == MP_OBJ_SENTINEL) {
        return mp_binary_get_val_array(tc, tensor_data(t), i);
    }
    tensor_set(t, tc, tensor_writable_data(t), i, value);
    return mp_const_none;
}

static mp_obj_t tensor_unary_op(mp_unary_op_t op, mp_obj_t self_in) {
    mn_tensor_t *t = get_tensor(self_in);
    switch (op) {
        case MP_UNARY_OP_LEN:
            return MP_OBJ_NEW_SMALL_INT(tensor_len(t));
        case MP_UNARY_OP_BOOL:
            return mp_obj_new_bool(tensor_len(t) != 0);
        default:
            return MP_OBJ_NULL;
    }
}

// Iteration goes through a memoryview of the data (one small allocation per loop).
static mp_obj_t tensor_getiter(mp_obj_t self_in, mp_obj_iter_buf_t *iter_buf) {
    mn_tensor_t *t = get_live_tensor(self_in);
    mp_obj_t mv = mp_obj_new_memoryview(micronn_dtype_typecode(t->dtype), tensor_len(t), tensor_data(t));
    return mp_getiter(mv, iter_buf);
}

// tolist() -> list of the elements (a copy).
static mp_obj_t tensor_tolist(mp_obj_t self_in) {
    mn_tensor_t *t = get_live_tensor(self_in);
    size_t len = tensor_len(t);
    char tc = micronn_dtype_typecode(t->dtype);
    void *data = tensor_data(t);
    mp_obj_list_t *list = MP_OBJ_TO_PTR(mp_obj_new_list(len, NULL));
    for (size_t i = 0; i < len; i++) {
        list->items[i] = mp_binary_get_val_array(tc, data, i);
    }
    return MP_OBJ_FROM_PTR(list);
}
static MP_DEFINE_CONST_FUN_OBJ_1(tensor_tolist_obj, tensor_tolist);

// fill(value): set every element.
static mp_obj_t tensor_fill(mp_obj_t self_in, mp_obj_t value) {
    mn_tensor_t *t = get_live_tensor(self_in);
    size_t len = tensor_len(t);
    char tc = micronn_dtype_typecode(t->dtype);
    void *data = tensor_writable_data(t);
    if (len > 0) {
        tensor_set(t, tc, data, 0, value);
        size_t isz = tensor_itemsize(t);
        for (size_t i = 1; i < len; i++) {
            memcpy((uint8_t *)data + i * isz, data, isz);
        }
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(tensor_fill_obj, tensor_fill);

static const mp_obj_dict_t tensor_locals_dict;

static void tensor_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return; // read-only
    }
    micronn_tensor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (attr == MP_QSTR_index || attr == MP_QSTR_interpreter) {
        dest[0] = attr == MP_QSTR_index ? MP_OBJ_NEW_SMALL_INT(self->index) : self->interp;
        return;
    }
    if (mp_map_lookup((mp_map_t *)&tensor_locals_dict.map, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP)) {
        dest[1] = MP_OBJ_SENTINEL; // a method: looked up in locals_dict (it checks the arena when called)
        return;
    }
    const mn_tensor_t *t = get_tensor(self_in); // the record lives in the arena
    switch (attr) {
        case MP_QSTR_shape:
            dest[0] = micronn_shape_tuple(t);
            break;
        case MP_QSTR_dtype:
            dest[0] = mp_obj_new_str_from_cstr(mn_dtype_name(t->dtype));
            break;
        case MP_QSTR_scale:
            dest[0] = mp_obj_new_float_from_f(mn_tensor_scale(t, 0));
            break;
        case MP_QSTR_zero_point:
            dest[0] = MP_OBJ_NEW_SMALL_INT(mn_tensor_zero_point(t, 0));
            break;
        case MP_QSTR_constant:
            dest[0] = mp_obj_new_bool(tensor_is_const(t));
            break;
        case MP_QSTR_quantized:
            dest[0] = mp_obj_new_bool(t->quant != NULL);
            break;
        case MP_QSTR_name:
            dest[0] = mp_obj_new_str_from_cstr(tensor_name(self_in));
            break;
        case MP_QSTR_nbytes:
            dest[0] = mp_obj_new_int_from_uint(mn_tensor_bytes(t));
            break;
        case MP_QSTR_itemsize:
            dest[0] = MP_OBJ_NEW_SMALL_INT(tensor_itemsize(t));
            break;
        case MP_QSTR_typecode: {
            char tc = micronn_dtype_typecode(t->dtype);
            dest[0] = mp_obj_new_str(&tc, 1);
            break;
        }
        case MP_QSTR_address:
            dest[0] = mp_obj_new_int_from_uint((uintptr_t)t->data);
            break;
        default:
            dest[1] = MP_OBJ_SENTINEL;
            break;
    }
}

// write(src): t[:] = src without the slice object, so it works under micropython.heap_lock()
// (e.g. refilling the inputs of Interpreters that share an Arena).
static mp_obj_t tensor_write(mp_obj_t self_in, mp_obj_t src) {
    mn_tensor_t *t = get_live_tensor(self_in);
    tensor_assign(t, 0, tensor_len(t), src);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(tensor_write_obj, tensor_write);

// readinto(buf): copy the tensor's bytes into a writable buffer of the same size (no allocation).
static mp_obj_t tensor_readinto(mp_obj_t self_in, mp_obj_t dst) {
    mn_tensor_t *t = get_live_tensor(self_in);
    mp_buffer_info_t b;
    mp_get_buffer_raise(dst, &b, MP_BUFFER_WRITE);
    if (b.len != mn_tensor_bytes(t)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("size mismatch: tensor has %u bytes, buffer %u"),
            (unsigned)mn_tensor_bytes(t), (unsigned)b.len);
    }
    memcpy(b.buf, tensor_data(t), b.len);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(tensor_readinto_obj, tensor_readinto);

static const mp_rom_map_elem_t tensor_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_tolist), MP_ROM_PTR(&tensor_tolist_obj) },
    { MP_ROM_QSTR(MP_QSTR_fill), MP_ROM_PTR(&tensor_fill_obj) },
    { MP_ROM_QSTR(MP_QSTR_write), MP_ROM_PTR(&tensor_write_obj) },
    { MP_ROM_QSTR(MP_QSTR_readinto), MP_ROM_PTR(&tensor_readinto_obj) },
};
static MP_DEFINE_CONST_DICT(tensor_locals_dict, tensor_locals_dict_table);

MP_DEFINE_CONST_OBJ_TYPE(
    micronn_type_tensor,
    MP_QSTR_Tensor,
    MP_TYPE_FLAG_ITER_IS_GETITER,
    print, tensor_print,
    attr, tensor_attr,
    subscr, tensor_subscr,
    unary_op, tensor_unary_op,
    buffer, tensor_get_buffer,
    iter, tensor_getiter,
    locals_dict, &tensor_locals_dict
    );
