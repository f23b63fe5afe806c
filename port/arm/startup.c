// Cortex-M start-up, SysTick cycle counter, fault reporting and reset.
#include <string.h>

#include "py/mphal.h"
#include "arm/cortexm.h"
#include "modboard.h"

extern uint32_t _estack[], _sidata[], _sdata[], _edata[], _sbss[], _ebss[];
extern const uint32_t mp_port_vector_table[];
void mp_port_main(void);
void mp_board_early_init(void);

uint32_t mp_port_cpu_hz = MICROPY_HW_CPU_HZ;

NORETURN void Reset_Handler(void) {
    #if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    // CP10/CP11 full access before any compiler-generated FP/MVE code.
    SCB_CPACR |= 0xfu << 20;
    mp_dsb();
    mp_isb();
    #endif
    if (&_sidata[0] != &_sdata[0]) {
        memcpy(_sdata, _sidata, (char *)_edata - (char *)_sdata);
    }
    memset(_sbss, 0, (char *)_ebss - (char *)_sbss);
    SCB_VTOR = (uint32_t)mp_port_vector_table;
    mp_board_early_init();
    mp_port_main();
    mp_port_system_reset();
}

__attribute__((weak)) void mp_board_early_init(void) {
}

// SysTick counts CPU clocks down from 2^24-1; its wraps extend it to 64 bits.
// The wrap handler is the only periodic interrupt, so it is the one thing
// that could land inside some measured spans and not others. It therefore
// runs exactly SYSTICK_HANDLER_INSNS instructions, which under -icount
// (1 instruction = 1 ns) is a whole number of ticks at any clock that is a
// multiple of 1 MHz, and mp_hal_ticks_cpu64 subtracts those ticks for every
// completed run: a span with wraps inside it counts what it would without.
#define SYSTICK_HANDLER_INSNS 1000
#define STR_(x) #x
#define STR(x) STR_(x)
volatile uint32_t mp_port_systick_wraps;
static uint32_t systick_handler_ticks;

__attribute__((naked)) static void SysTick_Handler(void) {
    // 7 instructions + 2 per loop pass + bx lr; no data-dependent branch.
    __asm volatile (
        "movw r0, #:lower16:mp_port_systick_wraps\n"
        "movt r0, #:upper16:mp_port_systick_wraps\n"
        "ldr r1, [r0]\n"
        "adds r1, r1, #1\n"
        "str r1, [r0]\n"
        "nop\n"
        "movw r0, #" STR((SYSTICK_HANDLER_INSNS - 8) / 2) "\n"
        "1: subs r0, r0, #1\n"
        "bne 1b\n"
        "bx lr\n"
        );
}

uint64_t mp_hal_ticks_cpu64(void) {
    static uint64_t last;
    uint32_t state = mp_port_irq_disable();
    uint32_t handled = mp_port_systick_wraps;
    uint32_t wraps = handled;
    uint32_t val = SYST_CVR;
    if (SCB_ICSR & SCB_ICSR_PENDSTSET) {
        // The wrap is pending but its ISR has not run: count it here.
        val = SYST_CVR;
        wraps++;
    }
    uint64_t t;
    if (val == 0) {
        // The exception pends when VAL reaches 0, which is the last tick of
        // the period; the reload to 2^24-1 comes one tick later. So while
        // VAL reads 0 the wrap just counted must not be added yet.
        t = wraps ? ((uint64_t)wraps << 24) - 1 : 0;
    } else {
        t = ((uint64_t)wraps << 24) | (0xffffffu - val);
    }
    // Only handler runs that have happened cost time, not a pending one.
    t -= (uint64_t)handled * systick_handler_ticks;
    if (t < last) {
        // Never step backwards, whatever the timer model does.
        t = last;
    }
    last = t;
    mp_port_irq_restore(state);
    return t;
}

void mp_port_cycles_sync(void) {
    // Sleep until the next wrap: its interrupt arrives at an exact point of
    // the tick grid (under -icount, sleep=off, the guest clock jumps there
    // at no host cost), so what follows starts at the same phase every time.
    uint32_t w = mp_port_systick_wraps;
    while (mp_port_systick_wraps == w) {
        mp_port_wait_for_interrupt();
    }
}

void mp_port_arch_init(void) {
    mp_port_reset_cause_init();
    SCB_SHCSR |= SCB_SHCSR_FAULTS;
    systick_handler_ticks = mp_port_cpu_hz / (1000000000 / SYSTICK_HANDLER_INSNS);
    SYST_RVR = 0xffffff;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

uint32_t mp_port_irq_disable(void) {
    uint32_t primask;
    __asm volatile ("mrs %0, primask\n cpsid i" : "=r" (primask) :: "memory");
    return primask;
}

void mp_port_irq_restore(uint32_t state) {
    __asm volatile ("msr primask, %0" :: "r" (state) : "memory");
}

void mp_port_wait_for_interrupt(void) {
    __asm volatile ("wfi");
}

NORETURN void mp_port_system_reset(void) {
    // Give a real UART time to shift out the last byte; may run from a
    // fault handler, so no timer is involved.
    for (volatile int i = 0; i < 20000; ++i) {
    }
    mp_dsb();
    SCB_AIRCR = SCB_AIRCR_RESET;
    mp_dsb();
    for (;;) {
    }
}

// Fault handling ------------------------------------------------------------

static volatile int probe_state;

int mp_port_probe_read32(uintptr_t addr, uint32_t *val) {
    uint32_t v = 0;
    probe_state = 1;
    // A fixed 32-bit encoding lets the fault handler skip exactly 4 bytes.
    __asm volatile ("ldr.w %0, [%1]" : "+r" (v) : "r" (addr) : "memory");
    int ok = probe_state == 1;
    probe_state = 0;
    *val = v;
    return ok;
}

static void put_hex(char *p, uint32_t v) {
    for (int i = 7; i >= 0; --i) {
        p[i] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    }
}

static void put_str(const char *s) {
    mp_port_uart_tx(s, strlen(s));
}

static void put_field(const char *name, uint32_t v) {
    char buf[10];
    put_str(name);
    put_str("=0x");
    put_hex(buf, v);
    mp_port_uart_tx(buf, 8);
}

void mp_port_fault(uint32_t *frame, uint32_t exc_return, uint32_t ipsr) {
    (void)exc_return;
    if (probe_state == 1) {
        probe_state = 2;
        frame[6] += 4;
        SCB_CFSR = SCB_CFSR;
        SCB_HFSR = SCB_HFSR;
        return;
    }
    static const char *const names[] = {"HardFault", "MemManage", "BusFault", "UsageFault", "SecureFault"};
    uint32_t n = ipsr & 0x1ff;
    const char *name = (n >= 3 && n <= 7) ? names[n - 3] : "Exception";
    uint32_t cfsr = SCB_CFSR;
    put_str("\r\nFATAL: ");
    put_str(name);
    put_field(" pc", frame[6]);
    put_field(" lr", frame[5]);
    put_field(" cfsr", cfsr);
    put_field(" addr", (cfsr & (1u << 15)) ? SCB_BFAR : (cfsr & (1u << 7)) ? SCB_MMFAR : 0);
    put_str("\r\n");
    mp_port_reset_cause_set(MP_PORT_RESET_FAULT);
    mp_port_system_reset();
}

__attribute__((naked)) static void Fault_Handler(void) {
    __asm volatile (
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "mov r1, lr\n"
        "mrs r2, ipsr\n"
        "push {r1, lr}\n"
        "bl mp_port_fault\n"
        "pop {r1, pc}\n"
        );
}

static void Unused_Handler(void) {
    put_str("\r\nFATAL: unexpected exception\r\n");
    mp_port_reset_cause_set(MP_PORT_RESET_FAULT);
    mp_port_system_reset();
}

// Every external interrupt is routed here; the console UART is the only
// interrupt source the port enables.
static void Irq_Handler(void) {
    mp_port_uart_service();
}

#define V(f) ((uint32_t)(f))
const uint32_t mp_port_vector_table[16 + MICROPY_HW_NUM_IRQS] __attribute__((section(".isr_vector"), used)) = {
    [0] = V(_estack),
    [1] = V(Reset_Handler),
    [2] = V(Unused_Handler),     // NMI
    [3] = V(Fault_Handler),      // HardFault
    [4] = V(Fault_Handler),      // MemManage
    [5] = V(Fault_Handler),      // BusFault
    [6] = V(Fault_Handler),      // UsageFault
    [7] = V(Fault_Handler),      // SecureFault (ARMv8-M)
    [11] = V(Unused_Handler),    // SVCall
    [12] = V(Unused_Handler),    // DebugMonitor
    [14] = V(Unused_Handler),    // PendSV
    [15] = V(SysTick_Handler),
    [16 ... 16 + MICROPY_HW_NUM_IRQS - 1] = V(Irq_Handler),
};
