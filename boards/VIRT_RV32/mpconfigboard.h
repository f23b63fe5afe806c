// QEMU riscv32 virt machine as an RV32IMC microcontroller. Under
// -icount shift=0 one instruction is 1 ns, i.e. a 1 GHz modelled clock.
#define MICROPY_HW_MCU_NAME         "RV32IMC"
#define MICROPY_HW_CPU_HZ           (1000000000)

#define MICROPY_HW_UART_BASE        (0x10000000)   // ns16550 UART0
#define MICROPY_HW_UART_IRQ         (10)           // PLIC source
#define MICROPY_HW_PLIC_BASE        (0x0c000000)
#define MICROPY_HW_RESET_ADDR       (0x00100000)   // sifive_test finisher

#define MICROPY_HW_RAM_BYTES        (4 * 1024 * 1024)
#define MICROPY_HW_FLASH_BYTES      (4 * 1024 * 1024)  // image region of DRAM
#define MICROPY_HW_FS_BLOCK_SIZE    (4096)

// Nothing is mapped between the test finisher/RTC and the CLINT.
#define MICROPY_HW_FAULT_ADDRESS    (0x00200000)

// ROMFS region (linker script): models deployed there are used in place.
#define MICROPY_HW_ROMFS            (1)
