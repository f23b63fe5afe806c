CROSS_COMPILE ?= arm-none-eabi-
CFLAGS_ARCH = -mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard
SRC_C_ARCH = arm/startup.c stm32f4/board.c
SRC_O_SHARED = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o
UART_DRIVER = uart_stm32
LDSCRIPT = $(BOARD_DIR)/stm32f405.ld
HW_SQRT = 1
MPY_CROSS_FLAGS += -march=armv7emsp
# Optimized kernel backends, in order of preference (KERNELS=reference: none).
MICRONN_KERNELS ?= dsp generic
