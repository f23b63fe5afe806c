CROSS_COMPILE ?= riscv64-unknown-elf-
CFLAGS_ARCH = -march=rv32imc_zicsr -mabi=ilp32 -mcmodel=medany
# No rv32imc multilib in Debian's toolchain; rv32im's libgcc links with it.
LIBGCC_ARCH = -march=rv32im -mabi=ilp32
# Headers only: we link -nostdlib, MicroPython brings its own libc pieces.
CFLAGS += --specs=picolibc.specs
SRC_C_ARCH = rv32/startup.c
SRC_S_ARCH = rv32/entry.S
SRC_O_SHARED = shared/runtime/gchelper_native.o shared/runtime/gchelper_rv32i.o
UART_DRIVER = uart_ns16550
LDSCRIPT = $(BOARD_DIR)/virt_rv32.ld
MPY_CROSS_FLAGS += -march=rv32imc
# Optimized kernel backends, in order of preference (KERNELS=reference: none).
MICRONN_KERNELS ?= generic
# Engine optimisation: -O2 as every board, without GCC's scheduling before register allocation,
# which on RV32 hoists the loads of unrolled kernel loops ahead of their uses and then spills
# registers inside them (the post-allocation scheduling pass still runs).
MICRONN_COPT ?= -O2 -fno-schedule-insns
