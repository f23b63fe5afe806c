# The engine's source list, written once. Included by usermod/micronn/micropython.mk (make ports),
# the top-level Makefile, tests/engine/Makefile and tests/kernels/Makefile; micropython.cmake
# (cmake ports) and tests/engine/opselect.sh read the three pattern lines below, so keep each on
# one line.
#
# Inputs: MICRONN_ENGINE (this directory, an absolute path), MICRONN_BACKENDS (optimized kernel
# backends, e.g. "dsp generic": kernels/<backend>/*.c each). Patterns are shell globs relative to
# this directory.
#
# Every source of the engine: core, variant table, reference and custom kernels.
MICRONN_ENGINE_PATTERNS := *.c kernels/mn_variants.c kernels/reference/*.c kernels/custom/*.c kernels/signal/*.c
# What runs per inference (built with MICRONN_COPT, -O2 by default: ports build for size) ...
MICRONN_HOT_PATTERNS := kernels/* kernels/signal/* mn_quant.c mn_const.c
# ... except the kernels' prepare-time code, which keeps the port's setting like the rest.
MICRONN_COLD_PATTERNS := *_prepare.c kernels/mn_variants.c kernels/reference/ref_glue.c

# Make's view of the lists (cmake builds its own from the patterns).
mn_glob = $(sort $(wildcard $(addprefix $(MICRONN_ENGINE)/,$(1))))
mn_match = $(filter $(addprefix $(MICRONN_ENGINE)/,$(subst *,%,$(1))),$(2))
# $(call mn_engine_src,BACKENDS): the sources of a build with those backends.
mn_engine_src = $(call mn_glob,$(MICRONN_ENGINE_PATTERNS)) $(foreach k,$(1),$(call mn_glob,kernels/$(k)/*.c))
MICRONN_ENGINE_SRC := $(call mn_engine_src,$(MICRONN_BACKENDS))
MICRONN_ENGINE_HDRS := $(call mn_glob,$(subst .c,.h,$(MICRONN_ENGINE_PATTERNS)) kernels/*.h) \
	$(foreach k,$(MICRONN_BACKENDS),$(call mn_glob,kernels/$(k)/*.h))
MICRONN_COLD_SRC := $(call mn_match,$(MICRONN_COLD_PATTERNS),$(MICRONN_ENGINE_SRC))
MICRONN_HOT_SRC := $(filter-out $(MICRONN_COLD_SRC),$(call mn_match,$(MICRONN_HOT_PATTERNS),$(MICRONN_ENGINE_SRC)))
MICRONN_CORE_SRC := $(filter-out $(MICRONN_HOT_SRC),$(MICRONN_ENGINE_SRC))
