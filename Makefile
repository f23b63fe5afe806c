# micronn — top-level entry points (see README.md). Contract targets:
#   setup, firmware, run, repl, test
BOARD ?= MPS2_AN386
EMULATED_BOARDS := MPS2_AN386 MPS2_AN500 MPS3_AN547 NETDUINOPLUS2 VIRT_RV32
ALL_BOARDS := $(EMULATED_BOARDS) UNIX

MICROPY_DIR ?= $(CURDIR)/build/micropython
export MICROPY_DIR
VENV := $(CURDIR)/.venv
PYTHON := $(VENV)/bin/python
JOBS ?= $(shell nproc)

# The C module is linked in once it exists.
USERMOD := $(if $(wildcard usermod/micronn/micropython.mk),$(CURDIR)/usermod)

.PHONY: setup firmware firmware-all run repl test test-engine test-hil clean help

help:
	@echo "make setup                 install toolchains, QEMU, MicroPython source, .venv (idempotent)"
	@echo "make firmware BOARD=X      build one board (default $(BOARD)); boards: $(ALL_BOARDS)"
	@echo "make firmware-all          build every board"
	@echo "make run BOARD=X           boot X under QEMU, UART on a pty (path printed first)"
	@echo "make repl BOARD=X          boot X under QEMU with its REPL on this terminal"
	@echo "make test                  the whole test suite (what CI runs)"

setup:
	@tools/setup.sh

# Other targets run setup first only when its results are missing.
$(MICROPY_DIR)/mpy-cross/build/mpy-cross $(VENV)/bin/micronn:
	@tools/setup.sh

SETUP_DONE := $(MICROPY_DIR)/mpy-cross/build/mpy-cross $(VENV)/bin/micronn

firmware: $(SETUP_DONE)
ifeq ($(BOARD),UNIX)
	$(MAKE) -C $(MICROPY_DIR)/ports/unix -j$(JOBS) \
		VARIANT_DIR=$(CURDIR)/boards/UNIX BUILD=$(CURDIR)/build/UNIX \
		PROG=$(CURDIR)/build/UNIX/micropython \
		FROZEN_MANIFEST=$(CURDIR)/boards/UNIX/manifest.py MPY_LIB_DIR=$(CURDIR)/build/mpy-lib-stub \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_AXTLS=0 MICROPY_PY_FFI=0 \
		$(if $(USERMOD),USER_C_MODULES=$(USERMOD))
else
	$(MAKE) -C port -j$(JOBS) BOARD=$(BOARD) $(if $(USERMOD),USER_C_MODULES=$(USERMOD))
endif

firmware-all: $(SETUP_DONE)
	@for b in $(ALL_BOARDS); do $(MAKE) --no-print-directory firmware BOARD=$$b || exit 1; done

run: firmware
	@$(PYTHON) -m micronn_tools.qemu run $(BOARD)

repl: firmware
	@$(PYTHON) -m micronn_tools.qemu repl $(BOARD)

test-engine: $(SETUP_DONE)
	$(MAKE) -C tests/engine test

test-hil: firmware-all
	$(VENV)/bin/pytest -n 2 tests --board all

test: $(SETUP_DONE)
	$(MAKE) test-engine
	$(MAKE) test-hil

clean:
	rm -rf build/MPS* build/NETDUINO* build/VIRT* build/UNIX build/host
