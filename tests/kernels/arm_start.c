/*
 * Bare-metal start for the equivalence harness on QEMU's Cortex-M machines (mps2-an386,
 * mps3-an547): vector table, FPU/MVE access enabled before any C code, then newlib's rdimon crt0
 * (semihosting: stdout, exit). A fault prints and exits, so a crashing variant fails the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern int _start(void);
extern uint32_t __stack;

/* -nostartfiles drops crti/crtn, which newlib still calls. */
void _init(void) {}
void _fini(void) {}

/* CPACR: full access to CP10/CP11 (FPU, and MVE on Armv8.1-M), before the first FP instruction. */
__attribute__((naked, noreturn)) void reset_handler(void) {
    __asm volatile(
        "ldr r0, =__stack\n mov sp, r0\n"
        "ldr r0, =0xE000ED88\n ldr r1, [r0]\n orr r1, r1, #(0xF << 20)\n str r1, [r0]\n dsb\n isb\n"
        "bl _start\n b .");
}

static void fault(void) {
    puts("fault: the harness crashed");
    puts("0 passed, 1 failed");
    exit(3);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack, reset_handler, fault, fault, fault, fault, fault, 0, 0, 0, 0, fault, fault, 0, fault,
    fault,
};
