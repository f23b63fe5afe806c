CROSS_COMPILE ?= arm-none-eabi-
CFLAGS_ARCH = -mthumb -mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard
SRC_C_ARCH = arm/startup.c
SRC_O_SHARED = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o
UART_DRIVER = uart_cmsdk
LDSCRIPT = $(BOARD_DIR)/mps2.ld
HW_SQRT = 1
MPY_CROSS_FLAGS += -march=armv7emdp
# Optimized kernel backends, in order of preference (KERNELS=reference: none).
MICRONN_KERNELS ?= dsp generic
