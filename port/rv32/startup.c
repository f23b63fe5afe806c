// RISC-V (QEMU virt) start-up, cycle counter, traps and reset.
#include <string.h>

#include "py/mphal.h"
#include "modboard.h"

#define REG32(a)            (*(volatile uint32_t *)(a))
#define PLIC_PRIORITY(n)    REG32(MICROPY_HW_PLIC_BASE + 4 * (n))
#define PLIC_ENABLE(n)      REG32(MICROPY_HW_PLIC_BASE + 0x2000 + 4 * ((n) / 32))
#define PLIC_THRESHOLD      REG32(MICROPY_HW_PLIC_BASE + 0x200000)
#define PLIC_CLAIM          REG32(MICROPY_HW_PLIC_BASE + 0x200004)
#define MSTATUS_MIE         (1u << 3)
#define MIE_MEIE            (1u << 11)
#define MCAUSE_IRQ          (1u << 31)

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[];
void mp_port_main(void);

uint32_t mp_port_cpu_hz = MICROPY_HW_CPU_HZ;

NORETURN void mp_rv32_start(void) {
    if (&_sidata[0] != &_sdata[0]) {
        memcpy(_sdata, _sidata, (char *)_edata - (char *)_sdata);
    }
    memset(_sbss, 0, (char *)_ebss - (char *)_sbss);
    mp_port_main();
    mp_port_system_reset();
}

uint64_t mp_hal_ticks_cpu64(void) {
    // Under QEMU -icount the cycle CSR is the instruction count.
    uint32_t hi, lo, hi2;
    do {
        __asm volatile ("csrr %0, mcycleh" : "=r" (hi));
        __asm volatile ("csrr %0, mcycle" : "=r" (lo));
        __asm volatile ("csrr %0, mcycleh" : "=r" (hi2));
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

void mp_port_cycles_sync(void) {
    // The instruction counter has no tick phase and no wrap interrupt.
}

void mp_port_arch_init(void) {
    mp_port_reset_cause_init();
    PLIC_THRESHOLD = 0;
    __asm volatile ("csrs mie, %0" :: "r" (MIE_MEIE));
    __asm volatile ("csrs mstatus, %0" :: "r" (MSTATUS_MIE));
}

void mp_rv32_irq_enable(unsigned irq) {
    PLIC_PRIORITY(irq) = 1;
    PLIC_ENABLE(irq) |= 1u << (irq % 32);
}

uint32_t mp_port_irq_disable(void) {
    uint32_t state;
    __asm volatile ("csrrci %0, mstatus, 8" : "=r" (state) :: "memory");
    return state & MSTATUS_MIE;
}

void mp_port_irq_restore(uint32_t state) {
    if (state) {
        __asm volatile ("csrs mstatus, 8" ::: "memory");
    }
}

void mp_port_wait_for_interrupt(void) {
    __asm volatile ("wfi");
}

NORETURN void mp_port_system_reset(void) {
    // sifive_test finisher: 0x7777 asks QEMU for a full system reset.
    REG32(MICROPY_HW_RESET_ADDR) = 0x7777;
    for (;;) {
    }
}

static void put_str(const char *s) {
    mp_port_uart_tx(s, strlen(s));
}

static void put_field(const char *name, uint32_t v) {
    char buf[10];
    for (int i = 7; i >= 0; --i) {
        buf[i] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    }
    put_str(name);
    put_str("=0x");
    mp_port_uart_tx(buf, 8);
}

void mp_rv32_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval, uint32_t ra) {
    if (mcause & MCAUSE_IRQ) {
        uint32_t id = PLIC_CLAIM;
        if (id == MICROPY_HW_UART_IRQ) {
            mp_port_uart_service();
        }
        if (id) {
            PLIC_CLAIM = id;
        }
        return;
    }
    static const char *const names[] = {
        "InstructionMisaligned", "InstructionAccessFault", "IllegalInstruction",
        "Breakpoint", "LoadMisaligned", "LoadAccessFault", "StoreMisaligned",
        "StoreAccessFault", "EnvCallU", "EnvCallS", "Reserved", "EnvCallM",
    };
    put_str("\r\nFATAL: ");
    put_str(mcause < 12 ? names[mcause] : "Exception");
    put_field(" pc", mepc);
    put_field(" ra", ra);
    put_field(" mcause", mcause);
    put_field(" addr", mtval);
    put_str("\r\n");
    mp_port_reset_cause_set(MP_PORT_RESET_FAULT);
    mp_port_system_reset();
}
