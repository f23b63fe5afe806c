// Netduino Plus 2: STM32F405RG, Cortex-M4F at 168 MHz (25 MHz HSE + PLL).
#define MICROPY_HW_MCU_NAME         "STM32F405RG"
#define MICROPY_HW_CPU_HZ           (168000000)
// RAM is scarce (128 KB for heap, stack and buffers): a smaller raw-paste window.
#define MICROPY_REPL_STDIN_BUFFER_MAX (512)

#define MICROPY_HW_UART_BASE        (0x40011000)   // USART1, QEMU serial 0
#define MICROPY_HW_UART_BAUD        (115200)
#define MICROPY_HW_UART_IRQ         (37)
#define MICROPY_HW_NUM_IRQS         (82)

#define MICROPY_HW_RAM_BYTES        (128 * 1024)   // SRAM1+SRAM2 (CCM holds the FS)
#define MICROPY_HW_FLASH_BYTES      (1024 * 1024)
#define MICROPY_HW_FS_BLOCK_SIZE    (512)

// Reserved on the chip and unmapped in QEMU: a load bus-faults on both.
#define MICROPY_HW_FAULT_ADDRESS    (0x30000000)
