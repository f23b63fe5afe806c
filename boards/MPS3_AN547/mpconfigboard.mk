CROSS_COMPILE ?= arm-none-eabi-
CFLAGS_ARCH = -mthumb -mcpu=cortex-m55 -mfloat-abi=hard
SRC_C_ARCH = arm/startup.c
SRC_O_SHARED = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o
UART_DRIVER = uart_cmsdk
LDSCRIPT = $(BOARD_DIR)/mps3_an547.ld
HW_SQRT = 1
MPY_CROSS_FLAGS += -march=armv7emdp
# Vectors live in ITCM (0x0), the image in FPGA SRAM (0x01000000).
FIRMWARE_BIN_SPLIT = 1
# Optimized kernel backends, in order of preference (KERNELS=reference: none).
MICRONN_KERNELS ?= mve dsp generic
