// Configuration shared by every micronn bare-metal board; the board's
// mpconfigboard.h supplies the SoC facts (UART, clock, memory sizes).
#include <stdint.h>
#include "mpconfigboard.h"

#define MICROPY_CONFIG_ROM_LEVEL            (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

#if defined(__ARM_ARCH_ISA_THUMB)
#define MICROPY_EMIT_THUMB                  (1)
#define MICROPY_EMIT_INLINE_THUMB           (1)
#define MICROPY_MAKE_POINTER_CALLABLE(p)    ((void *)((mp_uint_t)(p) | 1))
#elif defined(__riscv)
#define MICROPY_EMIT_RV32                   (1)
#define MICROPY_EMIT_INLINE_RV32            (1)
#endif

#define MICROPY_ENABLE_GC                   (1)
// The map lookup cache makes the cost of a lookup depend on which lookups ran before (a hit or
// a miss in a small shared table), so the same code would count different instructions
// depending on its history; without it counts are a function of the code alone.
#define MICROPY_OPT_MAP_LOOKUP_CACHE        (0)
#define MICROPY_HELPER_REPL                 (1)
#define MICROPY_KBD_EXCEPTION               (1)
#define MICROPY_ENABLE_SCHEDULER            (1)
#define MICROPY_ENABLE_EMERGENCY_EXCEPTION_BUF (1)
#define MICROPY_LONGINT_IMPL                (MICROPY_LONGINT_IMPL_MPZ)
#define MICROPY_FLOAT_IMPL                  (MICROPY_FLOAT_IMPL_FLOAT)
#define MICROPY_PERSISTENT_CODE_LOAD        (1)
#define MICROPY_MEM_STATS                   (1)
#define MICROPY_MALLOC_USES_ALLOCATED_SIZE  (1)
#define MICROPY_READER_VFS                  (1)
#define MICROPY_WARNINGS                    (1)
#define MICROPY_USE_INTERNAL_PRINTF         (1)
#define MICROPY_USE_INTERNAL_ERRNO          (1)
#define MICROPY_STACK_CHECK                 (1)
#define MICROPY_ALLOC_PATH_MAX              (256)

#define MICROPY_PY_SYS_PLATFORM             "micronn"
#define MICROPY_PY_SYS_STDIO_BUFFER         (1)
// select.poll on sys.stdin: mpremote mount's protocol needs it.
#define MICROPY_PY_SELECT                   (1)
#define MICROPY_PY_ASYNCIO                  (0)
#define MICROPY_PY_OS_UNAME                 (1)
#define MICROPY_PY_OS_SYNC                  (0)
#define MICROPY_PY_TIME                     (1)
#define MICROPY_PY_TIME_GMTIME_LOCALTIME_MKTIME (1)
#define MICROPY_PY_TIME_TIME_TIME_NS        (1)
#define MICROPY_PY_TIME_INCLUDEFILE         "time_port.c"
#define MICROPY_PY_MACHINE                  (1)
#define MICROPY_PY_MACHINE_INCLUDEFILE      "machine_port.c"
#define MICROPY_PY_MACHINE_RESET            (1)
#define MICROPY_PY_MACHINE_MEMX             (1)
#define MICROPY_PY_MACHINE_PIN_BASE         (0)
#define MICROPY_PY_MACHINE_BARE_METAL_FUNCS (1)
#define MICROPY_PY_MACHINE_IDLE             (1)
#define MICROPY_PY_HASHLIB                  (1)
#define MICROPY_PY_HASHLIB_SHA256           (1)
#define MICROPY_PY_CRYPTOLIB                (0)
#define MICROPY_PY_BINASCII                 (1)
#define MICROPY_PY_RANDOM_SEED_INIT_FUNC    ((uint32_t)mp_hal_ticks_cpu64())
#define MICROPY_VFS                         (1)
// Boards with a ROMFS region (MICROPY_HW_ROMFS in mpconfigboard.h, _romfs_start/_romfs_end in
// the linker script) get vfs.rom_ioctl and VfsRom, mounted at /rom at boot (port/romfs.c).
#ifndef MICROPY_HW_ROMFS
#define MICROPY_HW_ROMFS                    (0)
#endif
#define MICROPY_VFS_ROM                     (MICROPY_HW_ROMFS)

// mphalport.h provides uint64_t mp_hal_ticks_cpu64(): the _micronn profiler uses it.
#define MICRONN_HAVE_TICKS_CPU64            (1)

// Raw-paste flow control lets the host send half of this before it waits for
// the board: a larger window means fewer round trips on long transfers (model
// files, inputs). Boards short of RAM lower it in mpconfigboard.h.
#ifndef MICROPY_REPL_STDIN_BUFFER_MAX
#define MICROPY_REPL_STDIN_BUFFER_MAX       (2048)
#endif

// The UART ISR queues input here. It must hold a whole raw-paste window
// with room to spare or mpremote's flow control overruns it.
#ifndef MICROPY_HW_STDIN_BUFFER_LEN
#define MICROPY_HW_STDIN_BUFFER_LEN         (2 * MICROPY_REPL_STDIN_BUFFER_MAX)
#endif

#define MP_SSIZE_MAX (0x7fffffff)
#define UINT_FMT "%lu"
#define INT_FMT "%ld"
typedef int32_t mp_int_t;
typedef uint32_t mp_uint_t;
typedef long mp_off_t;

#include <alloca.h>

#define MP_NEED_LOG2 (1)
#define MP_STATE_PORT MP_STATE_VM

// Atomic sections mask interrupts so the ISR-fed stdin ring stays coherent.
#define MICROPY_BEGIN_ATOMIC_SECTION()      mp_port_irq_disable()
#define MICROPY_END_ATOMIC_SECTION(state)   mp_port_irq_restore(state)

// Long-running waits keep servicing scheduled callbacks and Ctrl-C.
#define MICROPY_INTERNAL_EVENT_HOOK         do { mp_handle_pending(true); } while (0)

uint64_t mp_hal_ticks_cpu64(void);
uint32_t mp_port_irq_disable(void);
void mp_port_irq_restore(uint32_t state);
