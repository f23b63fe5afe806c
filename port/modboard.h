#ifndef MICROPY_INCLUDED_PORT_MODBOARD_H
#define MICROPY_INCLUDED_PORT_MODBOARD_H

#include "py/obj.h"

// Reset causes reported by machine.reset_cause().
enum {
    MP_PORT_RESET_POWER_ON = 0,
    MP_PORT_RESET_SOFTWARE = 1,
    MP_PORT_RESET_FAULT = 2,
};

extern int mp_port_reset_cause;
void mp_port_reset_cause_init(void);
void mp_port_reset_cause_set(int cause);

MP_DECLARE_CONST_FUN_OBJ_0(mp_board_info_obj);

// Filesystem region; boards may override (NETDUINOPLUS2 probes for CCM).
void mp_board_fs_region(uint8_t **start, size_t *len);
size_t mp_port_unique_id(uint8_t *buf, size_t len);

#endif
