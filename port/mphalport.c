// Console and time services common to all boards.
#include "py/runtime.h"
#include "py/mphal.h"
#include "py/stream.h"
#include "shared/runtime/interrupt_char.h"

// Input is queued by the UART ISR so Ctrl-C is seen while Python runs and
// the peripheral's one-byte holding register never overruns.
static uint8_t stdin_buf[MICROPY_HW_STDIN_BUFFER_LEN];
static volatile uint16_t stdin_head, stdin_tail;

// The drivers stop taking bytes from the UART while this is false and leave
// the next one in its data register. An emulated UART then stops reading the
// host's pty, so a host that sends faster than Python reads waits instead of
// losing bytes (QEMU's serial back-pressure: bulk transfers need no acks).
bool mp_port_stdin_room(void) {
    return (stdin_head + 1) % MICROPY_HW_STDIN_BUFFER_LEN != stdin_tail;
}

void mp_port_stdin_push(int c) {
    if (c == mp_interrupt_char) {
        mp_sched_keyboard_interrupt();
        return;
    }
    uint16_t next = (stdin_head + 1) % MICROPY_HW_STDIN_BUFFER_LEN;
    if (next != stdin_tail) {
        stdin_buf[stdin_head] = c;
        stdin_head = next;
    }
}

// Polling as well as the ISR keeps the console alive even if a board's
// interrupt wiring is wrong; masked so it cannot race the ISR on the ring.
static void service_polled(void) {
    uint32_t state = mp_port_irq_disable();
    mp_port_uart_service();
    mp_port_irq_restore(state);
}

static int stdin_pop(void) {
    if (stdin_tail == stdin_head) {
        return -1;
    }
    bool was_full = !mp_port_stdin_room();
    int c = stdin_buf[stdin_tail];
    stdin_tail = (stdin_tail + 1) % MICROPY_HW_STDIN_BUFFER_LEN;
    if (was_full) {
        service_polled();  // take the byte the UART held back while the ring was full
    }
    return c;
}

uintptr_t mp_hal_stdio_poll(uintptr_t poll_flags) {
    uintptr_t ret = 0;
    if (stdin_tail == stdin_head) {
        service_polled();
    }
    if ((poll_flags & MP_STREAM_POLL_RD) && stdin_tail != stdin_head) {
        ret |= MP_STREAM_POLL_RD;
    }
    if (poll_flags & MP_STREAM_POLL_WR) {
        ret |= MP_STREAM_POLL_WR;
    }
    return ret;
}

int mp_hal_stdin_rx_chr(void) {
    for (uint32_t n = 0;; ++n) {
        int c = stdin_pop();
        if (c >= 0) {
            return c;
        }
        // The ISR fills the ring. Polling the UART as well costs MMIO, which under QEMU
        // serialises with the emulator's I/O thread (the one feeding the UART): done on every
        // spin it cut host->board throughput to a few KB/s. So only now and then, in case an
        // interrupt went missing.
        if ((n & 1023) == 1023) {
            service_polled();
        }
        // Deliberately no WFI here: the REPL polls so that QEMU's -icount
        // clock keeps moving and the host sees prompt echo.
        mp_handle_pending(true);
    }
}

mp_uint_t mp_hal_stdout_tx_strn(const char *str, size_t len) {
    mp_port_uart_tx(str, len);
    return len;
}

mp_uint_t mp_hal_ticks_ms(void) {
    return (mp_uint_t)(mp_hal_ticks_cpu64() / (mp_port_cpu_hz / 1000));
}

mp_uint_t mp_hal_ticks_us(void) {
    uint64_t t = mp_hal_ticks_cpu64();
    if (mp_port_cpu_hz % 1000000 == 0) {
        return (mp_uint_t)(t / (mp_port_cpu_hz / 1000000));
    }
    return (mp_uint_t)(t * 1000000 / mp_port_cpu_hz);
}

uint64_t mp_hal_time_ns(void) {
    // No RTC: time starts at the epoch on every boot.
    uint64_t t = mp_hal_ticks_cpu64();
    return t / mp_port_cpu_hz * 1000000000ULL + (t % mp_port_cpu_hz) * 1000000000ULL / mp_port_cpu_hz;
}

// Spin on registers between clock reads: under QEMU -icount every MMIO read
// is costly, so this keeps sleeps quick on the host while staying exact.
static inline void spin(uint32_t n) {
    #if defined(__arm__)
    __asm volatile ("1: subs %0, %0, #1\n bne 1b" : "+r" (n));
    #else
    __asm volatile ("1: addi %0, %0, -1\n bnez %0, 1b" : "+r" (n));
    #endif
}

static void delay_cycles(uint64_t cycles, bool service) {
    uint64_t start = mp_hal_ticks_cpu64();
    uint64_t elapsed;
    while ((elapsed = mp_hal_ticks_cpu64() - start) < cycles) {
        if (service) {
            mp_handle_pending(true);
        }
        // At most ~1k cycles per spin on hardware; never overshoots by more.
        if (cycles - elapsed > 4096) {
            spin(256);
        }
    }
}

void mp_hal_delay_us(mp_uint_t us) {
    delay_cycles((uint64_t)us * mp_port_cpu_hz / 1000000, false);
}

void mp_hal_delay_ms(mp_uint_t ms) {
    // Busy-wait rather than WFI so ticks stay a pure instruction count.
    delay_cycles((uint64_t)ms * mp_port_cpu_hz / 1000, true);
}
