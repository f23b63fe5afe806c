// Hardware abstraction shared by the micronn boards.
#ifndef MICROPY_INCLUDED_PORT_MPHALPORT_H
#define MICROPY_INCLUDED_PORT_MPHALPORT_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "py/mpconfig.h"
#include "shared/runtime/interrupt_char.h"

// CPU clock as modelled; SysTick (ARM) and mcycle (RISC-V) count it.
extern uint32_t mp_port_cpu_hz;

// Monotonic count of CPU clock cycles since boot. Under QEMU with
// -icount shift=0 every cycle corresponds to a fixed number of guest
// instructions (see board.json "instructions_per_tick").
uint64_t mp_hal_ticks_cpu64(void);

// Waits until the cycle counter is at a fixed phase of its tick (Cortex-M:
// the next SysTick wrap, up to 2^24 cycles; instant under QEMU -icount), so
// a span that starts after it counts the same on every run, not only to
// within one tick.
void mp_port_cycles_sync(void);

static inline mp_uint_t mp_hal_ticks_cpu(void) {
    return (mp_uint_t)mp_hal_ticks_cpu64();
}

mp_uint_t mp_hal_ticks_ms(void);
mp_uint_t mp_hal_ticks_us(void);
void mp_hal_delay_ms(mp_uint_t ms);
void mp_hal_delay_us(mp_uint_t us);
uint64_t mp_hal_time_ns(void);

// Called by the UART driver (usually from its ISR) for each received byte,
// only while mp_port_stdin_room() (else the byte stays in the UART).
void mp_port_stdin_push(int c);
bool mp_port_stdin_room(void);

// Low-level console output that bypasses everything, for fault reports.
void mp_port_uart_init(void);
void mp_port_uart_tx(const char *buf, size_t len);
int mp_port_uart_rx(void);
void mp_port_uart_irq_enable(void);
void mp_port_uart_service(void);

// Architecture/SoC services (arm/ or rv32/).
void mp_port_arch_init(void);
NORETURN void mp_port_system_reset(void);
void mp_port_wait_for_interrupt(void);

#endif // MICROPY_INCLUDED_PORT_MPHALPORT_H
