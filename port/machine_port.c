// Port half of the machine module; included by extmod/modmachine.c.
#include "py/mphal.h"
#include "modboard.h"

#define MICROPY_PY_MACHINE_EXTRA_GLOBALS \
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&mp_board_info_obj) }, \

static void mp_machine_idle(void) {
    mp_port_wait_for_interrupt();
}

NORETURN static void mp_machine_reset(void) {
    mp_port_reset_cause_set(MP_PORT_RESET_SOFTWARE);
    mp_port_system_reset();
}

static mp_int_t mp_machine_reset_cause(void) {
    return mp_port_reset_cause;
}

static mp_obj_t mp_machine_unique_id(void) {
    uint8_t id[12];
    size_t n = mp_port_unique_id(id, sizeof(id));
    return mp_obj_new_bytes(id, n);
}

static mp_obj_t mp_machine_get_freq(void) {
    return mp_obj_new_int_from_uint(mp_port_cpu_hz);
}

static void mp_machine_set_freq(size_t n_args, const mp_obj_t *args) {
    // The emulated clock tree is fixed; changing it would break the
    // instruction-per-tick contract the profiler relies on.
    mp_raise_NotImplementedError(MP_ERROR_TEXT("fixed CPU clock"));
}

static void mp_machine_lightsleep(size_t n_args, const mp_obj_t *args) {
    if (n_args > 0) {
        mp_hal_delay_ms(mp_obj_get_int(args[0]));
    } else {
        mp_port_wait_for_interrupt();
    }
}

NORETURN static void mp_machine_deepsleep(size_t n_args, const mp_obj_t *args) {
    mp_machine_lightsleep(n_args, args);
    mp_port_system_reset();
}
