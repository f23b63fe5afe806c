// STM32F405 bring-up written for the real chip (Netduino Plus 2: 25 MHz
// HSE, console on USART1 PA9/PA10). QEMU 7.2 models neither RCC nor flash
// interface nor GPIO (they read as zero), so every wait below is bounded.
#include "py/mphal.h"
#include "arm/cortexm.h"
#include "modboard.h"

#define RCC_CR          MP_REG32(0x40023800)
#define RCC_PLLCFGR     MP_REG32(0x40023804)
#define RCC_CFGR        MP_REG32(0x40023808)
#define RCC_AHB1ENR     MP_REG32(0x40023830)
#define RCC_APB1ENR     MP_REG32(0x40023840)
#define RCC_APB2ENR     MP_REG32(0x40023844)
#define FLASH_ACR       MP_REG32(0x40023c00)
#define PWR_CR          MP_REG32(0x40007000)
#define GPIOA_MODER     MP_REG32(0x40020000)
#define GPIOA_OSPEEDR   MP_REG32(0x40020008)
#define GPIOA_PUPDR     MP_REG32(0x4002000c)
#define GPIOA_AFRH      MP_REG32(0x40020024)

#define CR_HSEON        (1u << 16)
#define CR_HSERDY       (1u << 17)
#define CR_PLLON        (1u << 24)
#define CR_PLLRDY       (1u << 25)
#define HSE_HZ          (25000000)
#define HSI_HZ          (16000000)

// APB2 clock, for the USART baud-rate divisor.
uint32_t mp_stm32_pclk2_hz = HSI_HZ;

static int wait_set(volatile uint32_t *reg, uint32_t mask, uint32_t value) {
    for (uint32_t n = 0; n < 100000; ++n) {
        if ((*reg & mask) == value) {
            return 1;
        }
    }
    return 0;
}

static void clock_init(void) {
    if (RCC_CR == 0) {
        // HSION/HSIRDY are set out of reset on silicon; all-zero means the
        // RCC is not modelled (QEMU), which runs the core at 168 MHz anyway.
        mp_port_cpu_hz = MICROPY_HW_CPU_HZ;
        mp_stm32_pclk2_hz = MICROPY_HW_CPU_HZ / 2;
        return;
    }
    mp_port_cpu_hz = HSI_HZ;
    RCC_APB1ENR |= 1u << 28;            // PWR clock
    PWR_CR |= 1u << 14;                 // VOS scale 1 for 168 MHz
    RCC_CR |= CR_HSEON;
    if (!wait_set(&RCC_CR, CR_HSERDY, CR_HSERDY)) {
        return;                         // no crystal: stay on HSI
    }
    // 25 MHz / M=25 * N=336 / P=2 = 168 MHz; / Q=7 = 48 MHz for USB.
    RCC_PLLCFGR = (1u << 22) | 25 | (336u << 6) | (0u << 16) | (7u << 24);
    RCC_CR |= CR_PLLON;
    if (!wait_set(&RCC_CR, CR_PLLRDY, CR_PLLRDY)) {
        return;
    }
    // 5 wait states at 168 MHz/3.3 V, with prefetch and both caches.
    FLASH_ACR = 5 | (1u << 8) | (1u << 9) | (1u << 10);
    wait_set(&FLASH_ACR, 0xf, 5);
    // AHB /1, APB1 /4 (42 MHz), APB2 /2 (84 MHz), then switch to the PLL.
    RCC_CFGR = (5u << 10) | (4u << 13);
    RCC_CFGR |= 2u;
    if (wait_set(&RCC_CFGR, 3u << 2, 2u << 2)) {
        mp_port_cpu_hz = MICROPY_HW_CPU_HZ;
        mp_stm32_pclk2_hz = MICROPY_HW_CPU_HZ / 2;
    }
}

static void console_pins_init(void) {
    RCC_AHB1ENR |= 1u << 0;             // GPIOA
    RCC_APB2ENR |= 1u << 4;             // USART1
    // PA9 = USART1_TX, PA10 = USART1_RX: alternate function 7.
    GPIOA_MODER = (GPIOA_MODER & ~(0xfu << 18)) | (0xau << 18);
    GPIOA_OSPEEDR |= 0x3u << 18;
    GPIOA_PUPDR = (GPIOA_PUPDR & ~(0x3u << 20)) | (0x1u << 20);
    GPIOA_AFRH = (GPIOA_AFRH & ~0xff0u) | 0x770u;
}

void mp_board_early_init(void) {
    clock_init();
    console_pins_init();
}

// The filesystem lives in the 64 KiB CCM on silicon. QEMU 7.2 has no CCM
// but maps 192 KiB of SRAM where the chip has 128 KiB, so under QEMU the
// same 64 KiB come from just above the real SRAM.
void mp_board_fs_region(uint8_t **start, size_t *len) {
    static uint8_t *fs_start;
    static size_t fs_len;
    if (fs_start == NULL) {
        uint32_t v;
        if (mp_port_probe_read32(0x10000000, &v)) {
            fs_start = (uint8_t *)0x10000000;
            fs_len = 64 * 1024;
        } else if (mp_port_probe_read32(0x2002fffc, &v)) {
            fs_start = (uint8_t *)0x20020000;
            fs_len = 64 * 1024;
        } else {
            fs_start = (uint8_t *)0x10000000;
            fs_len = 0;
        }
    }
    *start = fs_start;
    *len = fs_len;
}

size_t mp_port_unique_id(uint8_t *buf, size_t len) {
    // 96-bit factory ID; absent under QEMU, where a fixed one is used.
    uint32_t w[3];
    for (int i = 0; i < 3; ++i) {
        if (!mp_port_probe_read32(0x1fff7a10 + 4 * i, &w[i])) {
            w[0] = 0x4e455444;  // "NETD"
            w[1] = 0x55494e4f;  // "UINO"
            w[2] = 0x2b324551;  // "+2EQ"
            break;
        }
    }
    size_t n = len < 12 ? len : 12;
    for (size_t i = 0; i < n; ++i) {
        buf[i] = w[i / 4] >> (8 * (i % 4));
    }
    return n;
}
