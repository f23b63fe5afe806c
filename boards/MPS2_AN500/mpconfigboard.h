// Arm MPS2+ with the AN500 FPGA image: Cortex-M7 (FPv5, double precision) at 25 MHz.
#define MICROPY_HW_MCU_NAME         "Cortex-M7"
#define MICROPY_HW_CPU_HZ           (25000000)

#define MICROPY_HW_UART_BASE        (0x40004000)   // UART0, QEMU serial 0
#define MICROPY_HW_UART_BAUD        (115200)
#define MICROPY_HW_UART_IRQS        0              // UART0 RX
#define MICROPY_HW_NUM_IRQS         (32)

#define MICROPY_HW_RAM_BYTES        (4 * 1024 * 1024)  // ZBT SSRAM2&3
#define MICROPY_HW_FLASH_BYTES      (2 * 1024 * 1024)  // image part of SSRAM1
#define MICROPY_HW_FS_BLOCK_SIZE    (1024)

// PSRAM ends at 0x61000000 and the Ethernet MAC is at 0xa0000000; nothing
// decodes 0x70000000, so a load faults.
#define MICROPY_HW_FAULT_ADDRESS    (0x70000000)

// ROMFS region (linker script): models deployed there are used in place.
#define MICROPY_HW_ROMFS            (1)
