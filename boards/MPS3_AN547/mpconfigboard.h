// Arm MPS3 with the AN547 FPGA image: Cortex-M55 (Helium/MVE, FPU), SSE-300,
// 32 MHz CPU clock, 25 MHz APB peripheral clock.
#define MICROPY_HW_MCU_NAME         "Cortex-M55"
#define MICROPY_HW_CPU_HZ           (32000000)

#define MICROPY_HW_UART_BASE        (0x59303000)   // UART0, Secure alias
#define MICROPY_HW_UART_CLK_HZ      (25000000)
#define MICROPY_HW_UART_BAUD        (115200)
#define MICROPY_HW_UART_IRQS        43             // UART0 combined (RX|TX|overflow)
#define MICROPY_HW_NUM_IRQS         (96)

#define MICROPY_HW_RAM_BYTES        (4 * 1024 * 1024)  // ISRAM0+1
#define MICROPY_HW_FLASH_BYTES      (2 * 1024 * 1024)  // FPGA SRAM holding the image
#define MICROPY_HW_FS_BLOCK_SIZE    (1024)

#define MICROPY_HW_FAULT_ADDRESS    (0x00100000)

// ROMFS region (linker script): models deployed there are used in place.
#define MICROPY_HW_ROMFS            (1)
