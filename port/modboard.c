// The "board" module: what this firmware claims about its board, and the
// block device over the board's filesystem region.
#include <string.h>

#include "py/runtime.h"
#include "py/mphal.h"
#include "extmod/vfs.h"
#include "modboard.h"

extern uint8_t _fs_start[], _fs_end[];
extern uint8_t _heap_start[], _heap_end[];
#if MICROPY_VFS_ROM
extern uint8_t _romfs_start[], _romfs_end[];
#endif

// Survives a reset because .noinit is neither loaded nor zeroed.
#define RESET_MAGIC (0x6d6e5253)
static uint32_t reset_record[2] __attribute__((section(".noinit")));
int mp_port_reset_cause;

void mp_port_reset_cause_init(void) {
    mp_port_reset_cause = MP_PORT_RESET_POWER_ON;
    if (reset_record[0] == RESET_MAGIC) {
        mp_port_reset_cause = reset_record[1];
    }
    reset_record[0] = 0;
}

void mp_port_reset_cause_set(int cause) {
    reset_record[0] = RESET_MAGIC;
    reset_record[1] = cause;
}

__attribute__((weak)) void mp_board_fs_region(uint8_t **start, size_t *len) {
    *start = _fs_start;
    *len = _fs_end - _fs_start;
}

__attribute__((weak)) size_t mp_port_unique_id(uint8_t *buf, size_t len) {
    // Emulated boards have no factory ID; derive a stable one from the name.
    uint32_t h = 2166136261u;
    for (const char *s = MICROPY_HW_BOARD_NAME; *s; ++s) {
        h = (h ^ (uint8_t)*s) * 16777619u;
    }
    for (size_t i = 0; i < len; ++i) {
        h = (h ^ i) * 16777619u;
        buf[i] = h >> 24;
    }
    return len < 8 ? len : 8;
}

static mp_obj_t board_info(void) {
    uint8_t *fs;
    size_t fs_len;
    mp_board_fs_region(&fs, &fs_len);
    mp_obj_t d = mp_obj_new_dict(12);
    #define ADD(k, v) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_##k), (v))
    ADD(name, mp_obj_new_str_from_cstr(MICROPY_HW_BOARD_NAME));
    ADD(mcu, mp_obj_new_str_from_cstr(MICROPY_HW_MCU_NAME));
    ADD(cpu_hz, mp_obj_new_int_from_uint(mp_port_cpu_hz));
    ADD(ram_bytes, mp_obj_new_int_from_uint(MICROPY_HW_RAM_BYTES));
    ADD(flash_bytes, mp_obj_new_int_from_uint(MICROPY_HW_FLASH_BYTES));
    ADD(heap_bytes, mp_obj_new_int_from_uint(_heap_end - _heap_start));
    ADD(fs_bytes, mp_obj_new_int_from_uint(fs_len));
    ADD(fs_addr, mp_obj_new_int_from_uint((uintptr_t)fs));
    #if MICROPY_VFS_ROM
    ADD(romfs_bytes, mp_obj_new_int_from_uint(_romfs_end - _romfs_start));
    ADD(romfs_addr, mp_obj_new_int_from_uint((uintptr_t)_romfs_start));
    #else
    ADD(romfs_bytes, MP_OBJ_NEW_SMALL_INT(0));
    ADD(romfs_addr, mp_const_none);
    #endif
    ADD(fault_address, mp_obj_new_int_from_uint(MICROPY_HW_FAULT_ADDRESS));
    ADD(reset_cause, MP_OBJ_NEW_SMALL_INT(mp_port_reset_cause));
    #undef ADD
    return d;
}
MP_DEFINE_CONST_FUN_OBJ_0(mp_board_info_obj, board_info);

// The full 64-bit cycle count: time.ticks_cpu() keeps only 30 bits, which
// on VIRT_RV32 (1 GHz) wraps every 1.07 s.
static mp_obj_t board_cycles(void) {
    return mp_obj_new_int_from_ull(mp_hal_ticks_cpu64());
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_cycles_obj, board_cycles);

static mp_obj_t board_sync_cycles(void) {
    mp_port_cycles_sync();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(board_sync_cycles_obj, board_sync_cycles);

// Storage: a block device over a plain memory region. Extended block
// protocol (offset argument) so littlefs can program partial blocks.
typedef struct _board_storage_obj_t {
    mp_obj_base_t base;
} board_storage_obj_t;

static const mp_obj_type_t board_storage_type;
static const board_storage_obj_t board_storage_obj = {{&board_storage_type}};

static mp_obj_t board_storage_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 0, 0, false);
    return MP_OBJ_FROM_PTR(&board_storage_obj);
}

static uint8_t *storage_span(mp_obj_t block_in, mp_obj_t off_in, size_t len) {
    uint8_t *fs;
    size_t fs_len;
    mp_board_fs_region(&fs, &fs_len);
    mp_int_t block = mp_obj_get_int(block_in);
    mp_int_t off = off_in == MP_OBJ_NULL ? 0 : mp_obj_get_int(off_in);
    size_t start = (size_t)block * MICROPY_HW_FS_BLOCK_SIZE + (size_t)off;
    if (block < 0 || off < 0 || start > fs_len || len > fs_len - start) {
        mp_raise_ValueError(MP_ERROR_TEXT("out of range"));
    }
    return fs + start;
}

static mp_obj_t board_storage_readblocks(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t buf;
    mp_get_buffer_raise(args[2], &buf, MP_BUFFER_WRITE);
    memcpy(buf.buf, storage_span(args[1], n_args > 3 ? args[3] : MP_OBJ_NULL, buf.len), buf.len);
    return MP_OBJ_NEW_SMALL_INT(0);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(board_storage_readblocks_obj, 3, 4, board_storage_readblocks);

static mp_obj_t board_storage_writeblocks(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t buf;
    mp_get_buffer_raise(args[2], &buf, MP_BUFFER_READ);
    memcpy(storage_span(args[1], n_args > 3 ? args[3] : MP_OBJ_NULL, buf.len), buf.buf, buf.len);
    return MP_OBJ_NEW_SMALL_INT(0);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(board_storage_writeblocks_obj, 3, 4, board_storage_writeblocks);

static mp_obj_t board_storage_ioctl(mp_obj_t self_in, mp_obj_t op_in, mp_obj_t arg_in) {
    uint8_t *fs;
    size_t fs_len;
    switch (mp_obj_get_int(op_in)) {
        case MP_BLOCKDEV_IOCTL_BLOCK_COUNT:
            mp_board_fs_region(&fs, &fs_len);
            return MP_OBJ_NEW_SMALL_INT(fs_len / MICROPY_HW_FS_BLOCK_SIZE);
        case MP_BLOCKDEV_IOCTL_BLOCK_SIZE:
            return MP_OBJ_NEW_SMALL_INT(MICROPY_HW_FS_BLOCK_SIZE);
        case MP_BLOCKDEV_IOCTL_INIT:
        case MP_BLOCKDEV_IOCTL_DEINIT:
        case MP_BLOCKDEV_IOCTL_SYNC:
        case MP_BLOCKDEV_IOCTL_BLOCK_ERASE:
            // RAM needs no erase; littlefs only requires erase to succeed.
            return MP_OBJ_NEW_SMALL_INT(0);
        default:
            return mp_const_none;
    }
}
static MP_DEFINE_CONST_FUN_OBJ_3(board_storage_ioctl_obj, board_storage_ioctl);

static const mp_rom_map_elem_t board_storage_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_readblocks), MP_ROM_PTR(&board_storage_readblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_writeblocks), MP_ROM_PTR(&board_storage_writeblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_ioctl), MP_ROM_PTR(&board_storage_ioctl_obj) },
};
static MP_DEFINE_CONST_DICT(board_storage_locals_dict, board_storage_locals_dict_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    board_storage_type,
    MP_QSTR_Storage,
    MP_TYPE_FLAG_NONE,
    make_new, board_storage_make_new,
    locals_dict, &board_storage_locals_dict
    );

static const mp_rom_map_elem_t board_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_board) },
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&mp_board_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_cycles), MP_ROM_PTR(&board_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_sync_cycles), MP_ROM_PTR(&board_sync_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_Storage), MP_ROM_PTR(&board_storage_type) },
    { MP_ROM_QSTR(MP_QSTR_RESET_POWER_ON), MP_ROM_INT(MP_PORT_RESET_POWER_ON) },
    { MP_ROM_QSTR(MP_QSTR_RESET_SOFTWARE), MP_ROM_INT(MP_PORT_RESET_SOFTWARE) },
    { MP_ROM_QSTR(MP_QSTR_RESET_FAULT), MP_ROM_INT(MP_PORT_RESET_FAULT) },
};
static MP_DEFINE_CONST_DICT(board_module_globals, board_module_globals_table);

const mp_obj_module_t mp_module_board = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&board_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_board, mp_module_board);
