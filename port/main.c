// Entry point: bring up the console, then run the REPL forever.
#include <string.h>

#include "py/compile.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "py/gc.h"
#include "py/mphal.h"
#include "py/frozenmod.h"
#include "extmod/vfs.h"
#include "shared/runtime/gchelper.h"
#include "shared/runtime/pyexec.h"

// Regions placed by the board's linker script.
extern uint8_t _heap_start[], _heap_end[];
extern uint8_t _estack[], _sstack[];

void mp_port_main(void) {
    mp_port_arch_init();
    mp_port_uart_init();
    mp_port_uart_irq_enable();

soft_reset:
    mp_stack_set_top(_estack);
    // Leave headroom below the limit for ISRs and for the fault handler.
    mp_stack_set_limit(_estack - _sstack - 2048);
    gc_init(_heap_start, _heap_end);
    mp_init();

    #if MICROPY_VFS_ROM
    // /rom first, as upstream ports do: it adds /rom and /rom/lib to sys.path. An erased or
    // never-written region is not a ROMFS image and is simply not mounted.
    mp_vfs_mount_romfs_protected();
    #endif
    // _boot.py mounts the filesystem; then the usual boot.py/main.py pair,
    // main.py only for the friendly REPL so mpremote's raw REPL stays usable.
    pyexec_frozen_module("_boot.py", false);
    int ret = pyexec_file_if_exists("boot.py");
    if (ret & PYEXEC_FORCED_EXIT) {
        goto soft_reset_exit;
    }
    if (pyexec_mode_kind == PYEXEC_MODE_FRIENDLY_REPL) {
        ret = pyexec_file_if_exists("main.py");
        if (ret & PYEXEC_FORCED_EXIT) {
            goto soft_reset_exit;
        }
    }

    for (;;) {
        if (pyexec_mode_kind == PYEXEC_MODE_RAW_REPL) {
            if (pyexec_raw_repl() != 0) {
                break;
            }
        } else {
            if (pyexec_friendly_repl() != 0) {
                break;
            }
        }
    }

soft_reset_exit:
    mp_printf(&mp_plat_print, "MPY: soft reboot\n");
    gc_sweep_all();
    mp_deinit();
    goto soft_reset;
}

void gc_collect(void) {
    gc_collect_start();
    gc_helper_collect_regs_and_stack();
    gc_collect_end();
}

void nlr_jump_fail(void *val) {
    static const char msg[] = "FATAL: uncaught NLR\r\n";
    mp_port_uart_tx(msg, sizeof(msg) - 1);
    mp_port_system_reset();
}

#ifndef NDEBUG
void __assert_func(const char *file, int line, const char *func, const char *expr) {
    mp_printf(&mp_plat_print, "FATAL: assertion '%s' failed at %s:%d\n", expr, file, line);
    mp_port_system_reset();
}
#endif

// MicroPython core pulls these from libc; there is no OS underneath.
void abort(void) {
    static const char msg[] = "FATAL: abort\r\n";
    mp_port_uart_tx(msg, sizeof(msg) - 1);
    mp_port_system_reset();
}
