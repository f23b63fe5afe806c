// The _micronn module: TFLite-Micro-class inference for MicroPython.
// Python API: Model(buf), Interpreter(model, ...), Tensor, ops(), models, version.
// The frozen package `micronn` (py_lib/micronn) wraps it with helpers.
#include "py/runtime.h"
#include "py/mphal.h"
#include "py/objstr.h"
#include "py/stream.h"
#include "modmicronn.h"
#include "mn_builtin.h"

// A port with a 64-bit CPU cycle counter, mp_hal_ticks_cpu64(), says so in its mpconfigport.h
// (micronn's own bare-metal port does); others get a host clock, or mp_hal_ticks_us when the port
// has the time module (which needs it), or no clock at all (upstream's qemu port has none): then
// the profiler still counts calls and every tick count is 0.
#if !defined(MICRONN_HAVE_TICKS_CPU64)
#define MICRONN_HAVE_TICKS_CPU64 (0)
#endif

#if !MICRONN_HAVE_TICKS_CPU64 && (defined(__unix__) || defined(__APPLE__))
#include <time.h>
#endif

// ---- profiler clock ---------------------------------------------------------------------------

#if MICRONN_HAVE_TICKS_CPU64
#define MICRONN_PROFILE_CLOCK "cpu"
static uint64_t micronn_ticks(void *user) {
    (void)user;
    return mp_hal_ticks_cpu64();
}
const uint64_t micronn_ticks_mask = 0;
#elif defined(__unix__) || defined(__APPLE__)
#define MICRONN_PROFILE_CLOCK "ns"
static uint64_t micronn_ticks(void *user) {
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
const uint64_t micronn_ticks_mask = 0;
#elif MICROPY_PY_TIME
#define MICRONN_PROFILE_CLOCK "us"
static uint64_t micronn_ticks(void *user) {
    (void)user;
    return mp_hal_ticks_us();
}
const uint64_t micronn_ticks_mask = (mp_uint_t)-1;
#else
#define MICRONN_PROFILE_CLOCK "none"
static uint64_t micronn_ticks(void *user) {
    (void)user;
    return 0;
}
const uint64_t micronn_ticks_mask = 0;
#endif
const mn_ticks_fn micronn_ticks_fn = micronn_ticks;

// ---- helpers shared by the other files --------------------------------------------------------

mp_obj_t micronn_exception(mn_status_t status, const char *msg) {
    const mp_obj_type_t *type;
    switch (status) {
        case MN_ERR_UNSUPPORTED:
            type = &mp_type_NotImplementedError;
            break;
        case MN_ERR_ARENA:
            type = &mp_type_MemoryError;
            break;
        case MN_ERR_STATE:
        case MN_ERR_KERNEL:
            type = &mp_type_RuntimeError;
            break;
        default:
            type = &mp_type_ValueError;
            break;
    }
    if (msg == NULL || msg[0] == '\0') {
        msg = mn_status_str(status);
    }
    return mp_obj_new_exception_msg_varg(type, MP_ERROR_TEXT("%s"), msg);
}

NORETURN void micronn_raise(mn_status_t status, const char *msg) {
    nlr_raise(micronn_exception(status, msg));
}

char micronn_dtype_typecode(int32_t dtype) {
    switch (dtype) {
        case MN_FLOAT32:
            return 'f';
        case MN_FLOAT64:
            return 'd';
        case MN_INT8:
            return 'b';
        case MN_INT16:
            return 'h';
        case MN_UINT16:
        case MN_FLOAT16:
            return 'H';
        case MN_INT32:
            return 'i';
        case MN_UINT32:
            return 'I';
        case MN_INT64:
            return 'q';
        case MN_UINT64:
            return 'Q';
        default:
            // uint8, bool, int4 (packed) and anything else: raw bytes.
            return 'B';
    }
}

// ---- module functions -------------------------------------------------------------------------

// ops() -> tuple of the names of the builtin operators this firmware has kernels for.
static mp_obj_t micronn_ops(void) {
    size_t n = 0;
    for (int32_t code = 0; code <= MN_BUILTIN_MAX; code++) {
        if (code != MN_BUILTIN_CUSTOM && mn_op_supported(NULL, code, NULL)) {
            n++;
        }
    }
    mp_obj_tuple_t *tuple = MP_OBJ_TO_PTR(mp_obj_new_tuple(n, NULL));
    n = 0;
    for (int32_t code = 0; code <= MN_BUILTIN_MAX; code++) {
        if (code != MN_BUILTIN_CUSTOM && mn_op_supported(NULL, code, NULL)) {
            char buf[MN_OP_NAME_LEN];
            const char *name = mn_op_name(code, buf);
            if (name[0] == '?') {
                tuple->items[n++] = MP_OBJ_NEW_SMALL_INT(code);
            } else {
                tuple->items[n++] = mp_obj_new_str_from_cstr(name);
            }
        }
    }
    return MP_OBJ_FROM_PTR(tuple);
}
static MP_DEFINE_CONST_FUN_OBJ_0(micronn_ops_obj, micronn_ops);

// kernels() -> names of the optimized kernel backends in this firmware, in order of preference
// (empty: reference kernels only). Interpreter.variants() tells which one each op runs.
static mp_obj_t micronn_kernels(void) {
    size_t n = 0;
    while (mn_kernel_backend(n)) {
        n++;
    }
    mp_obj_tuple_t *tuple = MP_OBJ_TO_PTR(mp_obj_new_tuple(n, NULL));
    for (size_t i = 0; i < n; i++) {
        tuple->items[i] = mp_obj_new_str_from_cstr(mn_kernel_backend(i));
    }
    return MP_OBJ_FROM_PTR(tuple);
}
static MP_DEFINE_CONST_FUN_OBJ_0(micronn_kernels_obj, micronn_kernels);

MICRONN_BUILD_FLAGS_OF(modmicronn);

// build_config() -> dict of the settings this firmware was built with, as the engine was compiled:
// 'ops_all' (every kernel linked, else the MICRONN_OPS selection: ops() names them), 'types' (the
// type families of the kernels with several dtype paths), 'variants_all', 'patches', 'delegate',
// 'kernels' (= kernels()), and 'mismatch': the binding files compiled under other settings than
// the engine (empty unless the build reused a stale object). Test harnesses check their firmware
// with it before running anything.
static mp_obj_t micronn_build_config(void) {
    static const char *const type_names[] = { "int8", "int16", "float32", "hybrid" };
    static const uint32_t type_bits[] = { MN_BUILD_TYPE_INT8, MN_BUILD_TYPE_INT16, MN_BUILD_TYPE_FLOAT32, MN_BUILD_TYPE_HYBRID };
    uint32_t flags = mn_build_flags();
    mp_obj_t dict = mp_obj_new_dict(7);
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_ops_all), mp_obj_new_bool(flags & MN_BUILD_OPS_ALL));
    mp_obj_t types = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < MP_ARRAY_SIZE(type_bits); i++) {
        if (flags & type_bits[i]) {
            mp_obj_list_append(types, mp_obj_new_str_from_cstr(type_names[i]));
        }
    }
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_types), types);
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_variants_all), mp_obj_new_bool(flags & MN_BUILD_VARIANTS_ALL));
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_patches), mp_obj_new_bool(flags & MN_BUILD_PATCHES));
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_delegate), mp_obj_new_bool(flags & MN_BUILD_DELEGATE));
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_kernels), micronn_kernels());
    mp_obj_t mismatch = mp_obj_new_list(0, NULL);
    #define MICRONN_CHECK_FILE(f) \
    if (micronn_build_flags_##f != flags) { \
        mp_obj_list_append(mismatch, MP_ROM_QSTR(MP_QSTR_##f)); \
    }
    MICRONN_BINDING_FILES(MICRONN_CHECK_FILE)
    #undef MICRONN_CHECK_FILE
    mp_obj_dict_store(dict, MP_ROM_QSTR(MP_QSTR_mismatch), mismatch);
    return dict;
}
static MP_DEFINE_CONST_FUN_OBJ_0(micronn_build_config_obj, micronn_build_config);

// op_name(code) -> name of a builtin operator code ("CONV_2D").
static mp_obj_t micronn_op_name(mp_obj_t code_in) {
    char buf[MN_OP_NAME_LEN];
    return mp_obj_new_str_from_cstr(mn_op_name(mp_obj_get_int(code_in), buf));
}
static MP_DEFINE_CONST_FUN_OBJ_1(micronn_op_name_obj, micronn_op_name);

// ticks() -> current value of the profiler clock (unit: PROFILE_CLOCK).
static mp_obj_t micronn_ticks_now(void) {
    return mp_obj_new_int_from_ull(micronn_ticks(NULL));
}
static MP_DEFINE_CONST_FUN_OBJ_0(micronn_ticks_now_obj, micronn_ticks_now);

// read_bytes(file, n) -> bytes of exactly n bytes read from a binary file, in one heap block of
// n + 1 bytes (file.read(n) sizes its buffer n and may then need a second block for the NUL that
// bytes objects carry, doubling the peak for a large model). micronn.load_file uses it.
static mp_obj_t micronn_read_bytes(mp_obj_t stream, mp_obj_t n_in) {
    mp_int_t n = mp_obj_get_int(n_in);
    if (n < 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("size must be >= 0"));
    }
    mp_get_stream_raise(stream, MP_STREAM_OP_READ);
    vstr_t vstr;
    vstr_init(&vstr, (size_t)n + 1);
    int err;
    mp_uint_t got = mp_stream_rw(stream, vstr.buf, (mp_uint_t)n, &err, MP_STREAM_RW_READ);
    if (err != 0) {
        vstr_clear(&vstr);
        mp_raise_OSError(err);
    }
    if (got != (mp_uint_t)n) {
        vstr_clear(&vstr);
        mp_raise_msg_varg(&mp_type_OSError, MP_ERROR_TEXT("short read: %u of %u bytes"), (unsigned)got, (unsigned)n);
    }
    vstr.len = (size_t)n;
    return mp_obj_new_bytes_from_vstr(&vstr);
}
static MP_DEFINE_CONST_FUN_OBJ_2(micronn_read_bytes_obj, micronn_read_bytes);

static const MP_DEFINE_STR_OBJ(micronn_version_obj, MN_VERSION);
static const MP_DEFINE_STR_OBJ(micronn_profile_clock_obj, MICRONN_PROFILE_CLOCK);

static const mp_rom_map_elem_t micronn_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__micronn) },
    { MP_ROM_QSTR(MP_QSTR_Model), MP_ROM_PTR(&micronn_type_model) },
    { MP_ROM_QSTR(MP_QSTR_Interpreter), MP_ROM_PTR(&micronn_type_interpreter) },
    { MP_ROM_QSTR(MP_QSTR_Tensor), MP_ROM_PTR(&micronn_type_tensor) },
    { MP_ROM_QSTR(MP_QSTR_Arena), MP_ROM_PTR(&micronn_type_arena) },
    { MP_ROM_QSTR(MP_QSTR_ops), MP_ROM_PTR(&micronn_ops_obj) },
    { MP_ROM_QSTR(MP_QSTR_op_name), MP_ROM_PTR(&micronn_op_name_obj) },
    { MP_ROM_QSTR(MP_QSTR_kernels), MP_ROM_PTR(&micronn_kernels_obj) },
    { MP_ROM_QSTR(MP_QSTR_build_config), MP_ROM_PTR(&micronn_build_config_obj) },
    { MP_ROM_QSTR(MP_QSTR_ticks), MP_ROM_PTR(&micronn_ticks_now_obj) },
    { MP_ROM_QSTR(MP_QSTR_read_bytes), MP_ROM_PTR(&micronn_read_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_register_op), MP_ROM_PTR(&micronn_register_op_obj) },
    { MP_ROM_QSTR(MP_QSTR_registered_ops), MP_ROM_PTR(&micronn_registered_ops_obj) },
    { MP_ROM_QSTR(MP_QSTR_models), MP_ROM_PTR(&micronn_models_dict) },
    { MP_ROM_QSTR(MP_QSTR_version), MP_ROM_PTR(&micronn_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_PROFILE_CLOCK), MP_ROM_PTR(&micronn_profile_clock_obj) },
    { MP_ROM_QSTR(MP_QSTR_ARENA_ALIGN), MP_ROM_INT(MN_ARENA_ALIGN) },
};
static MP_DEFINE_CONST_DICT(micronn_module_globals, micronn_module_globals_table);

const mp_obj_module_t micronn_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&micronn_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__micronn, micronn_user_cmodule);
