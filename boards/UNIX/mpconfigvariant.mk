# micronn UNIX board: MicroPython's unix port with our frozen manifest (see README.md).

FROZEN_MANIFEST ?= $(VARIANT_DIR)/manifest.py

# mkrules.mk refuses a non-empty manifest unless $(MPY_LIB_DIR)/README.md exists, and the
# micropython-lib submodule is empty in the source tarball. Nothing is required from it, so point
# MPY_LIB_DIR at a stub under our build directory (created while the makefiles are parsed,
# because this file is read before any rule could run). Never edit MICROPY_DIR for this.
MPY_LIB_DIR ?= $(abspath $(BUILD))/mpy-lib-stub
ifeq ($(wildcard $(MPY_LIB_DIR)/README.md),)
$(shell mkdir -p "$(MPY_LIB_DIR)" && echo "micropython-lib stub: nothing is required from it" > "$(MPY_LIB_DIR)/README.md")
endif

# Modules our host build does not need and the source tarball cannot build (empty submodules).
# Plain "=" because the port's mpconfigport.mk, read earlier, already set them.
MICROPY_PY_BTREE = 0
MICROPY_PY_SSL = 0
MICROPY_SSL_AXTLS = 0
MICROPY_PY_FFI = 0

# Lets manifest.py find the repo without relying on the port directory's location.
MICROPY_MANIFEST_MICRONN_ROOT ?= $(abspath $(VARIANT_DIR)/../..)

# Optimized kernel backends, in order of preference (KERNELS=reference: none).
MICRONN_KERNELS ?= generic
