// vfs.rom_ioctl over the board's ROMFS region (MicroPython 1.25 ROMFS).
//
// The region is plain memory that the CPU reads in place, as it reads
// memory-mapped flash on a real board: VfsRom hands out memoryviews into it,
// so a model opened from /rom is used without a heap copy. Under QEMU the
// region lies in the file-backed RAM of the board's storage image, so what is
// written here survives a power cycle of the emulator like flash does.
// Writing follows the flash protocol mpremote speaks (prepare = erase to
// 0xff, write, complete), so the same host tools work on real boards.
#include <string.h>

#include "py/runtime.h"
#include "py/mperrno.h"
#include "py/objarray.h"
#include "extmod/vfs.h"

#if MICROPY_VFS_ROM_IOCTL

extern uint8_t _romfs_start[], _romfs_end[];

// Filled in on use: the region's bounds are link-time symbols.
static MP_DEFINE_MEMORYVIEW_OBJ(romfs_obj, 'B', 0, 0, NULL);

// Smallest write the region accepts (mpremote pads its chunks to it).
#define ROMFS_MIN_WRITE (4)

static mp_obj_t einval(void) {
    return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
}

mp_obj_t mp_vfs_rom_ioctl(size_t n_args, const mp_obj_t *args) {
    mp_int_t cmd = mp_obj_get_int(args[0]);
    if (cmd == MP_VFS_ROM_IOCTL_GET_NUMBER_OF_SEGMENTS) {
        return MP_OBJ_NEW_SMALL_INT(1);
    }
    if (n_args < 2 || mp_obj_get_int(args[1]) != 0) {
        return einval();
    }
    size_t size = _romfs_end - _romfs_start;
    switch (cmd) {
        case MP_VFS_ROM_IOCTL_GET_SEGMENT:
            romfs_obj.items = _romfs_start;
            romfs_obj.len = size;
            return MP_OBJ_FROM_PTR(&romfs_obj);
        case MP_VFS_ROM_IOCTL_WRITE_PREPARE: {
            // (3, id, len) erases from the start; (3, id, offset, len) a range.
            if (n_args < 3) {
                return einval();
            }
            mp_int_t off = n_args > 3 ? mp_obj_get_int(args[2]) : 0;
            mp_int_t len = mp_obj_get_int(args[n_args > 3 ? 3 : 2]);
            if (off < 0 || len < 0 || (size_t)off > size || (size_t)len > size - off) {
                return einval();
            }
            memset(_romfs_start + off, 0xff, len);
            return MP_OBJ_NEW_SMALL_INT(ROMFS_MIN_WRITE);
        }
        case MP_VFS_ROM_IOCTL_WRITE: {
            if (n_args < 4) {
                return einval();
            }
            mp_int_t off = mp_obj_get_int(args[2]);
            mp_buffer_info_t buf;
            mp_get_buffer_raise(args[3], &buf, MP_BUFFER_READ);
            if (off < 0 || (size_t)off > size || buf.len > size - off) {
                return einval();
            }
            memcpy(_romfs_start + off, buf.buf, buf.len);
            return MP_OBJ_NEW_SMALL_INT(0);
        }
        case MP_VFS_ROM_IOCTL_WRITE_COMPLETE:
            return MP_OBJ_NEW_SMALL_INT(0);
        default:
            return einval();
    }
}

#endif // MICROPY_VFS_ROM_IOCTL
