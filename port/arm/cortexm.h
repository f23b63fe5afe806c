// The few Cortex-M system registers the port touches (ARMv7-M/ARMv8-M).
#ifndef MICROPY_INCLUDED_PORT_ARM_CORTEXM_H
#define MICROPY_INCLUDED_PORT_ARM_CORTEXM_H

#include <stdint.h>

#define MP_REG32(addr)      (*(volatile uint32_t *)(addr))

#define SYST_CSR            MP_REG32(0xe000e010)
#define SYST_RVR            MP_REG32(0xe000e014)
#define SYST_CVR            MP_REG32(0xe000e018)
#define SYST_CSR_ENABLE     (1u << 0)
#define SYST_CSR_TICKINT    (1u << 1)
#define SYST_CSR_CLKSOURCE  (1u << 2)

#define NVIC_ISER(n)        MP_REG32(0xe000e100 + 4 * (n))
#define NVIC_ICER(n)        MP_REG32(0xe000e180 + 4 * (n))
#define NVIC_ICPR(n)        MP_REG32(0xe000e280 + 4 * (n))
#define NVIC_ISPR(n)        MP_REG32(0xe000e200 + 4 * (n))

#define SCB_ICSR            MP_REG32(0xe000ed04)
#define SCB_VTOR            MP_REG32(0xe000ed08)
#define SCB_AIRCR           MP_REG32(0xe000ed0c)
#define SCB_CCR             MP_REG32(0xe000ed14)
#define SCB_SHCSR           MP_REG32(0xe000ed24)
#define SCB_CFSR            MP_REG32(0xe000ed28)
#define SCB_HFSR            MP_REG32(0xe000ed2c)
#define SCB_MMFAR           MP_REG32(0xe000ed34)
#define SCB_BFAR            MP_REG32(0xe000ed38)
#define SCB_CPACR           MP_REG32(0xe000ed88)

#define SCB_ICSR_PENDSTSET  (1u << 26)
#define SCB_AIRCR_RESET     ((0x05fau << 16) | (1u << 2))
#define SCB_SHCSR_FAULTS    ((1u << 16) | (1u << 17) | (1u << 18))

static inline void mp_nvic_enable(unsigned irq) {
    NVIC_ICPR(irq / 32) = 1u << (irq % 32);
    NVIC_ISER(irq / 32) = 1u << (irq % 32);
}

static inline void mp_dsb(void) {
    __asm volatile ("dsb 0xf" ::: "memory");
}

static inline void mp_isb(void) {
    __asm volatile ("isb 0xf" ::: "memory");
}

// Reads a word, returning false instead of faulting if nothing answers
// at addr (used to tell real silicon from QEMU's partial models).
int mp_port_probe_read32(uintptr_t addr, uint32_t *val);

#endif
