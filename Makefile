# micronn — top-level entry points (see README.md). Contract targets:
#   setup, firmware, run, repl, test
BOARD ?= MPS2_AN386
# Every board is a directory with a board.json (micronn_tools.boards reads them the same way).
ALL_BOARDS := $(patsubst boards/%/board.json,%,$(sort $(wildcard boards/*/board.json)))

MICROPY_DIR ?= $(CURDIR)/build/micropython
export MICROPY_DIR
VENV := $(CURDIR)/.venv
PYTHON := $(VENV)/bin/python
JOBS ?= $(shell nproc)

USERMOD := $(CURDIR)/usermod
MODELS_DIR ?= $(abspath $(CURDIR)/../shared/models)
# Test firmware freezes every shared model and links every kernel.
TEST_MODELS := $(wildcard $(MODELS_DIR)/*.tflite)

# MODELS="a.tflite b.tflite": freeze these models into the firmware (micronn.models) and link only
# the kernels they use, as the engine reads them (micronn_tools.opset). OPS=all links every kernel;
# OPS="CONV_2D ..." names the kernels explicitly. The build fails, naming the op, when the engine
# cannot run one of the MODELS (no kernel for an op, or a kernel that refuses it) unless
# ALLOW_UNSUPPORTED=1. The kernels with several dtype paths get only the type families the MODELS
# use (int8, int16, float32, hybrid: micronn_tools.opset --types); TYPES="int8 float32" names them,
# TYPES=all (the default with OPS= or without MODELS) keeps every family. Patch-based execution
# (Interpreter(patches=...)) is in every build of all ops; a build for MODELS has it when one of
# them stores a patch stage (`micronn plan --patches --write`) or with PATCHES=1 (PATCHES=0: never).
# Delegation (Interpreter(delegate=...)) likewise is in every build of all ops; a build for MODELS
# has it with DELEGATE=1 or when a model runs `micronn partition` subgraphs (DELEGATE=0: never).
# Of the optimized kernel variants (kernels/mn_variants.h) it links those the MODELS' nodes select
# on the board's backends (micronn_tools.opset --variants; another model's nodes fall back to the
# next variant that fits or to the reference kernel), and the reference int8 convolutions
# (ref.conv_s8, ref.depthwise_s8) only when one of the MODELS' nodes runs them: a node of another
# model that needs one left out is refused by Interpreter() with the remedy (VARIANTS=all, or
# MODELS= with that model). VARIANTS="dsp.conv_s8 ..." names them, VARIANTS=all (the default with
# OPS= or without MODELS) links every one.
MODEL_FILES := $(abspath $(MODELS))
OPSET := PYTHONPATH=$(CURDIR)/host_tools $(PYTHON) -m micronn_tools.opset $(if $(filter-out 0,$(ALLOW_UNSUPPORTED)),--allow-unsupported)
ifneq ($(MODELS),)
CHECK_MODELS_CMD := $(OPSET) $(MODEL_FILES) >/dev/null
else
CHECK_MODELS_CMD := true
endif
ifeq ($(OPS),all)
OPS_CMD := echo
else ifneq ($(OPS),)
OPS_CMD := echo $(OPS)
else ifneq ($(MODELS),)
OPS_CMD := $(OPSET) $(MODEL_FILES) 2>/dev/null
else
OPS_CMD := echo
endif
ifeq ($(TYPES),all)
TYPES_CMD := echo
else ifneq ($(TYPES),)
TYPES_CMD := echo $(TYPES)
else ifeq ($(MODELS)$(OPS),$(MODELS))
TYPES_CMD := $(if $(MODELS),$(OPSET) --types $(MODEL_FILES) 2>/dev/null,echo)
else
TYPES_CMD := echo
endif
ifneq ($(PATCHES),)
PATCHES_CMD := echo $(PATCHES)
else ifeq ($(MODELS)$(OPS),$(MODELS))
PATCHES_CMD := $(if $(MODELS),$(OPSET) --patches $(MODEL_FILES) 2>/dev/null,echo)
else
PATCHES_CMD := echo
endif
# The board's optimized kernel backends (KERNELS=..., else its mpconfigboard.mk / mpconfigvariant.mk).
BOARD_KERNELS = $(if $(KERNELS),$(KERNELS),$(shell sed -n 's/^MICRONN_KERNELS *?= *//p' \
	$(wildcard boards/$(BOARD)/mpconfigboard.mk boards/$(BOARD)/mpconfigvariant.mk)))
ifeq ($(VARIANTS),all)
VARIANTS_CMD := echo
else ifneq ($(VARIANTS),)
VARIANTS_CMD := echo $(VARIANTS)
else ifeq ($(MODELS)$(OPS),$(MODELS))
VARIANTS_CMD = $(if $(MODELS),$(OPSET) --variants --kernels "$(BOARD_KERNELS)" $(MODEL_FILES) 2>/dev/null,echo)
else
VARIANTS_CMD := echo
endif
HOST_LIB := build/host/libmicronn.so
# KERNELS="dsp generic" / KERNELS=reference: optimized kernel backends (default: the board's).
KERNELS_ARG := $(if $(KERNELS),MICRONN_KERNELS="$(KERNELS)")

.PHONY: setup firmware firmware-all firmware-test run repl test test-engine test-hil test-full clean help bench demo demo-speech fuzz gen

help:
	@echo "make setup                 install toolchains, QEMU, MicroPython source, .venv (idempotent)"
	@echo "make firmware BOARD=X      build one board (default $(BOARD)); boards: $(ALL_BOARDS)"
	@echo "make firmware BOARD=X MODELS=\"a.tflite ...\" [OPS=all]"
	@echo "                           freeze models into X, link only the kernels they use"
	@echo "                           (fails naming the op if micronn cannot run a model; ALLOW_UNSUPPORTED=1)"
	@echo "                           and only their type families (TYPES=\"int8 float32\" / TYPES=all)"
	@echo "                           and only the kernel variants they select (VARIANTS=\"dsp.conv_s8 ...\" / VARIANTS=all),"
	@echo "                           the reference int8 convolutions only if a node needs them (ref.conv_s8 ref.depthwise_s8)"
	@echo "                           PATCHES=1: keep patch-based execution (default: only if a model stores a stage)"
	@echo "                           DELEGATE=1: keep delegation, Interpreter(delegate=...) (default: only with OPS=all)"
	@echo "make firmware BOARD=X KERNELS=reference"
	@echo "                           reference kernels only (default: the board's optimized backends)"
	@echo "make firmware-all          build every board"
	@echo "make firmware-test         the test suite's firmware of every board (build/test/<BOARD>)"
	@echo "make run BOARD=X           boot X under QEMU, UART on a pty (path printed first);"
	@echo "                           builds X only if missing or MODELS=/OPS= are given"
	@echo "make repl BOARD=X          boot X under QEMU with its REPL on this terminal"
	@echo "make test                  the test suite as CI runs it (its fixed slice of board tests)"
	@echo "make test-full             every test on every board (before a release; ~2x make test)"
	@echo "make fuzz [FUZZ_SECONDS=N] coverage-guided fuzzing of the engine (libFuzzer, default 60 s)"
	@echo "make gen [GEN_MODELS=N GEN_SEED=S GEN_WORKERS=W]"
	@echo "                           generated models (tests/gen) on micronn vs the oracle; findings shrunk"
	@echo "                           into build/gen/findings, log build/gen/gen-SEED.log"
	@echo "make demo                  person detection on the default emulated board"
	@echo "make demo-speech           micro_speech from raw audio (the shared .wav clips) on it"
	@echo "make bench                 benchmark report (build/bench/report.md + .json)"

setup:
	@tools/setup.sh
	@$(MAKE) --no-print-directory $(HOST_LIB)

# Other targets run setup first only when its results are missing.
$(MICROPY_DIR)/mpy-cross/build/mpy-cross $(VENV)/bin/micronn:
	@tools/setup.sh

SETUP_DONE := $(MICROPY_DIR)/mpy-cross/build/mpy-cross $(VENV)/bin/micronn $(HOST_LIB)

# The host build of the engine (used to read models: op sets, inspect, convert checks).
MICRONN_ENGINE := $(USERMOD)/micronn/engine
MICRONN_BACKENDS := generic
include $(MICRONN_ENGINE)/engine.mk
$(HOST_LIB): $(MICRONN_ENGINE_SRC) $(MICRONN_ENGINE_HDRS) $(wildcard $(MICRONN_ENGINE)/tools/*.c)
	@$(MAKE) --no-print-directory -s -C tests/engine -j$(JOBS) lib

ifeq ($(BOARD),UNIX)
BUILD_FIRMWARE = $(MAKE) -C $(MICROPY_DIR)/ports/unix -j$(JOBS) \
	VARIANT_DIR=$(CURDIR)/boards/UNIX BUILD=$(if $(FIRMWARE_BUILD),$(abspath $(FIRMWARE_BUILD)),$(CURDIR)/build/UNIX) USER_C_MODULES=$(USERMOD) \
	MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_AXTLS=0 MICROPY_PY_FFI=0 $(KERNELS_ARG)
else
BUILD_FIRMWARE = $(MAKE) -C port -j$(JOBS) BOARD=$(BOARD) USER_C_MODULES=$(USERMOD) \
	$(if $(FIRMWARE_BUILD),BUILD=$(abspath $(FIRMWARE_BUILD))) $(KERNELS_ARG)
endif

firmware: $(SETUP_DONE)
	@$(CHECK_MODELS_CMD) || exit 1; \
	ops="$$($(OPS_CMD))" || exit 1; \
	types="$$($(TYPES_CMD))" || exit 1; \
	patches="$$($(PATCHES_CMD))" || exit 1; \
	variants="$$($(VARIANTS_CMD))" || exit 1; \
	echo "firmware $(BOARD): models: $(if $(MODELS),$(notdir $(MODEL_FILES)),none); ops: $${ops:-all}; types: $${types:-all}$${patches:+; patches: $$patches}$(if $(DELEGATE),; delegate: $(DELEGATE)); variants: $${variants:-all}"; \
	$(BUILD_FIRMWARE) MICRONN_MODELS="$(MODEL_FILES)" MICRONN_OPS="$$ops" MICRONN_TYPES="$$types" MICRONN_PATCHES="$$patches" \
		MICRONN_DELEGATE="$(DELEGATE)" MICRONN_VARIANTS="$$variants"

firmware-all: $(SETUP_DONE)
	@for b in $(ALL_BOARDS); do $(MAKE) --no-print-directory firmware BOARD=$$b || exit 1; done

# Firmware for the test suite: every shared model frozen in, every kernel linked, in a build
# directory of its own (build/test/<BOARD>), so that what `make firmware`, `make demo` or
# `make bench` build in build/<BOARD> never meets the test suite, and the reverse. The suite
# (tests/conftest.py) boots build/test/ by default and checks each firmware's build_config().
TEST_BUILD := $(CURDIR)/build/test
firmware-test: $(SETUP_DONE)
	@for b in $(ALL_BOARDS); do \
		$(MAKE) --no-print-directory firmware BOARD=$$b MODELS="$(TEST_MODELS)" OPS=all \
			FIRMWARE_BUILD=$(TEST_BUILD)/$$b || exit 1; done

# run/repl boot what `make firmware` built last (with its MODELS); they build only when the
# firmware is missing or MODELS/OPS are given. Build output goes to stderr so that the pty path
# is the first line on stdout.
FIRMWARE_FILE = build/$(BOARD)/firmware.elf
BUILD_IF_NEEDED = if [ -n "$(MODELS)$(OPS)" ] || [ ! -f $(FIRMWARE_FILE) ]; then \
	$(MAKE) --no-print-directory firmware BOARD=$(BOARD) >&2 || exit 1; fi

run: $(SETUP_DONE)
	@$(BUILD_IF_NEEDED)
	@$(PYTHON) -m micronn_tools.qemu run $(BOARD)

repl: $(SETUP_DONE)
	@$(BUILD_IF_NEEDED)
	@$(PYTHON) -m micronn_tools.qemu repl $(BOARD)

# The engine's steps (builds, unit runs, pytest, fuzz) are independent: run them side by side,
# each step's output printed in one piece when it ends.
test-engine: $(SETUP_DONE)
	$(MAKE) -C tests/engine -j$(JOBS) --output-sync=target test

FUZZ_SECONDS ?= 60
fuzz: $(SETUP_DONE)
	$(MAKE) -C tests/engine fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

# Differential testing with generated models (tests/gen): GEN_MODELS models from GEN_SEED on
# GEN_WORKERS processes (nice'd), each on every host configuration of micronn against the oracle;
# every failure is shrunk and saved in build/gen/findings (tests/gen/README.md).
GEN_MODELS ?= 10000
GEN_SEED ?= 1
GEN_WORKERS ?= 2
gen: $(SETUP_DONE)
	mkdir -p build/gen
	PYTHONPATH=$(CURDIR)/host_tools nice -n 10 $(PYTHON) -m tests.gen run --seed $(GEN_SEED) --count $(GEN_MODELS) \
	  --workers $(GEN_WORKERS) --findings build/gen/findings --log build/gen/gen-$(GEN_SEED).log

# Each test's time goes to build/test-reports/hil.xml (JUnit XML: where a run's minutes went).
# CI's fixed slice (--ci-slice, tests/conftest.py): the port's link and filesystem tests on one
# board per UART driver, backend-bound sweeps on one board per kernel backend set, full_only
# checks left out; HIL_SLICE= (make test-full) runs all of it on every board.
HIL_SLICE ?= --ci-slice
test-hil: firmware-test
	MICRONN_BUILD_DIR=$(TEST_BUILD) $(VENV)/bin/pytest -n 2 tests --board all,UNIX --ignore=tests/engine \
		$(HIL_SLICE) --junitxml=build/test-reports/hil.xml

test: $(SETUP_DONE)
	$(MAKE) test-engine
	$(MAKE) test-hil

test-full: $(SETUP_DONE)
	$(MAKE) test-engine
	$(MAKE) test-hil HIL_SLICE=

clean:
	rm -rf build/MPS* build/NETDUINO* build/VIRT* build/UNIX build/host build/test build/test-builds

# ---- demo and bench (the logic is Python: `micronn demo`, micronn_tools.bench_report) ----------
DEMO_MODELS_DIR := $(or $(MICRONN_MODELS_DIR),$(MODELS_DIR))
BENCH_BOARDS ?= MPS2_AN386 MPS2_AN500 MPS3_AN547 VIRT_RV32
BENCH_MODELS ?= person_detect keyword_scrambled
BENCH_MODEL_FILES = $(foreach m,$(BENCH_MODELS),$(DEMO_MODELS_DIR)/$(m).tflite) $(abspath $(BENCH_EXTRA))
BENCH_REF_BUILD := build/bench-ref

demo: $(SETUP_DONE)
	$(MAKE) --no-print-directory firmware BOARD=$(BOARD) MODELS="$(DEMO_MODELS_DIR)/person_detect.tflite"
	MICRONN_MODELS_DIR=$(DEMO_MODELS_DIR) $(PYTHON) -m micronn_tools.cli demo --board $(BOARD)

# micro_speech from raw audio: TFLM's audio front end and the classifier frozen in, the clips
# copied to the board, micronn.audio.Speech fed 20 ms at a time on the board.
demo-speech: $(SETUP_DONE)
	$(MAKE) --no-print-directory firmware BOARD=$(BOARD) \
		MODELS="$(DEMO_MODELS_DIR)/audio/audio_preprocessor_int8.tflite $(DEMO_MODELS_DIR)/micro_speech_quantized.tflite"
	MICRONN_MODELS_DIR=$(DEMO_MODELS_DIR) $(PYTHON) -m micronn_tools.cli demo speech --board $(BOARD)

# Each board twice: its optimized kernels (build/B) and KERNELS=reference (build/bench-ref/B).
# BENCH_EXTRA="my.tflite ..." adds models; BENCH_BOARDS / BENCH_MODELS narrow the run.
bench: $(SETUP_DONE)
	@for b in $(BENCH_BOARDS); do \
		$(MAKE) --no-print-directory firmware BOARD=$$b MODELS="$(BENCH_MODEL_FILES)" || exit 1; \
		$(MAKE) --no-print-directory firmware BOARD=$$b MODELS="$(BENCH_MODEL_FILES)" KERNELS=reference \
			FIRMWARE_BUILD=$(BENCH_REF_BUILD)/$$b || exit 1; done
	@mkdir -p build/bench
	$(MAKE) --no-print-directory -C tests/engine arm-bench > build/bench/arm-bench.txt
	MICRONN_MODELS_DIR=$(DEMO_MODELS_DIR) $(PYTHON) -m micronn_tools.bench_report --out build/bench \
		--reference-build $(BENCH_REF_BUILD) --arm-bench build/bench/arm-bench.txt \
		$(addprefix --board ,$(BENCH_BOARDS)) $(addprefix --model ,$(BENCH_MODEL_FILES))
