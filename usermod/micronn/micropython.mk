# micronn: the _micronn user C module for MicroPython's make-based ports.
#   make ... USER_C_MODULES=<repo>/usermod [MICRONN_MODELS="..."] [MICRONN_OPS="..."]
#
# Variables (all optional):
#   MICRONN_MODELS      .tflite files built into the firmware as micronn.models[<stem>], read in
#                       place from flash. A directory entry means every *.tflite in it. Use
#                       absolute paths (make runs in the port's directory; relative paths are also
#                       tried against the repo root). Default: none.
#   MICRONN_MODELS_DIR  used only when MICRONN_MODELS is not set: every *.tflite in this directory.
#   MICRONN_OPS         builtin ops whose kernels are linked, e.g. "CONV_2D DEPTHWISE_CONV_2D
#                       AVERAGE_POOL_2D RESHAPE SOFTMAX". Default: every kernel the engine has.
#   MICRONN_TYPES       type families the kernels with several dtype paths keep (mn_config.h), of
#                       int8 int16 float32 hybrid, e.g. "int8". Default: all of them.
#   MICRONN_KERNELS     optimized kernel backends (engine/kernels/<name>/), in order of preference,
#                       e.g. "dsp generic" (Armv7E-M), "mve dsp generic" (Helium), "generic".
#                       "reference" or empty: reference kernels only. Boards set a default.
#   MICRONN_PATCHES     1/0: patch-based execution (mn_patch.c). Default: with every op only.
#   MICRONN_DELEGATE    1/0: delegation (mn_delegate.c, Interpreter(delegate=...)). Default: with
#                       every op, or with the custom op micronn_subgraph (mn_config.h).
#   MICRONN_VARIANTS    optimized variants of those backends that are linked, by name, e.g.
#                       "dsp.conv_s8 dsp.depthwise_s8_mult1" (the ones models select:
#                       micronn_tools.opset --variants); "none": none. Default (or "all"): every one.
#                       A node whose variant is left out runs the next that fits, or the reference;
#                       the reference int8 convolutions are selectable too ("ref.conv_s8",
#                       "ref.depthwise_s8"): left out, a node that needs one is refused at prepare.
# Changing any of them rebuilds every object whose preprocessor input it changes, binding files
# included (the values are #defines in $(BUILD)/micronn_gen/micronn_settings.h, see the end).

MICRONN_DIR := $(USERMOD_DIR)
MICRONN_ENGINE := $(MICRONN_DIR)/engine
MICRONN_ROOT := $(abspath $(MICRONN_DIR)/../..)
MICRONN_GEN := $(BUILD)/micronn_gen
# Object directory of this module's files (py.mk strips USER_C_MODULES from source paths).
MICRONN_OBJ_DIR := $(BUILD)/$(patsubst $(USER_C_MODULES)/%,%,$(MICRONN_DIR))

MICRONN_BACKENDS := $(filter-out reference,$(MICRONN_KERNELS))
$(foreach k,$(MICRONN_BACKENDS),$(if $(wildcard $(MICRONN_ENGINE)/kernels/$(k)/.),,$(error micronn: MICRONN_KERNELS: no backend $(k) (engine/kernels/$(k)/))))
include $(MICRONN_ENGINE)/engine.mk

# Binding files (scanned for qstrs).
SRC_USERMOD_C += \
	$(MICRONN_DIR)/modmicronn.c \
	$(MICRONN_DIR)/mod_model.c \
	$(MICRONN_DIR)/mod_interp.c \
	$(MICRONN_DIR)/mod_tensor.c \
	$(MICRONN_DIR)/mod_arena.c \
	$(MICRONN_DIR)/mod_pyops.c

# The portable engine and the built-in model table use no qstrs.
SRC_USERMOD_LIB_C += $(MICRONN_DIR)/mod_models.c $(MICRONN_ENGINE_SRC)

CFLAGS_USERMOD += -I$(MICRONN_DIR) -I$(MICRONN_ENGINE) -I$(MICRONN_ENGINE)/kernels/reference -I$(MICRONN_GEN)
# The settings below are not -D flags but #defines in a generated header, micronn_settings.h,
# that mn_config.h includes (see "the settings header" at the end).
CFLAGS_USERMOD += -DMICRONN_BUILD_SETTINGS=1
MICRONN_SETTINGS := $(foreach k,$(MICRONN_BACKENDS),MICRONN_KERNELS_$(shell echo $(k) | tr a-z A-Z)=1)

# ---- optimisation ------------------------------------------------------------------------------
# Ports build MicroPython for size (-Os); the engine's inner loops are worth -O2 (see README).
# MICRONN_COPT= (empty) keeps the port's setting. It applies to what runs per inference: the
# kernels, mn_quant.c (fixed-point helpers the kernels call) and mn_const.c (the weights'
# descriptors, decoded at each eval). The rest of the engine (model
# verifier, interpreter setup and prepare, planner, registry, names: about 60% of a model-specific
# firmware's engine bytes, a few hundred instructions per invoke) keeps the port's setting (-Os on
# our boards), or MICRONN_CORE_COPT when set; so does the kernels' prepare-time code: the
# <op>_prepare.c files (an op's prepare kept apart from its compute and eval), the reference
# kernels' shared prepare checks (ref_glue.c) and the variant selection (mn_variants.c).
MICRONN_COPT ?= -O2
MICRONN_CORE_COPT ?=
# (MICRONN_HOT_SRC, MICRONN_CORE_SRC: engine/engine.mk)
ifneq ($(strip $(MICRONN_COPT)),)
$(patsubst $(MICRONN_DIR)/%.c,$(MICRONN_OBJ_DIR)/%.o,$(MICRONN_HOT_SRC)): CFLAGS += $(MICRONN_COPT)
endif
ifneq ($(strip $(MICRONN_CORE_COPT)),)
$(patsubst $(MICRONN_DIR)/%.c,$(MICRONN_OBJ_DIR)/%.o,$(MICRONN_CORE_SRC)): CFLAGS += $(MICRONN_CORE_COPT)
endif

# ---- double-precision libm --------------------------------------------------------------------
# The engine computes a few tables like TFLite in double (exp, floor, round). It takes them from
# MicroPython's own lib/libm_dbl compiled under micronn_ names (libm/; on hosted ports the C
# library's), so no port has to link a double libm and none can clash with it (mn_config.h).
SRC_USERMOD_LIB_C += $(addprefix $(MICRONN_DIR)/libm/,exp.c floor.c round.c scalbn.c)
CFLAGS_USERMOD += -DMICRONN_OWN_LIBM_DBL=1
# Third-party code: its libm.h redefines DBL_EPSILON & co. when the C library's float.h (e.g.
# picolibc's) already did, with the same values; -Wdouble-promotion and the like do not apply.
$(MICRONN_OBJ_DIR)/libm/%.o: CFLAGS += -w

# ---- op selection ------------------------------------------------------------------------------
MICRONN_KNOWN_OPS := ${shell sed -n 's/^MN_OP(\([A-Z0-9_]*\),.*/\1/p' $(MICRONN_ENGINE)/mn_ops.h}
MICRONN_KNOWN_OPS += ${shell sed -n 's/^MN_CUSTOM_OP(\([A-Za-z0-9_]*\),.*/\1/p' $(MICRONN_ENGINE)/mn_custom_ops.h}
ifneq ($(strip $(MICRONN_OPS)),)
$(foreach op,$(filter-out $(MICRONN_KNOWN_OPS),$(MICRONN_OPS)),$(warning micronn: MICRONN_OPS: the engine has no kernel option for $(op); known: $(MICRONN_KNOWN_OPS)))
MICRONN_SETTINGS += MICRONN_OPS_ALL=0 $(foreach op,$(MICRONN_OPS),MICRONN_OP_$(op)=1)
endif

# ---- type families -----------------------------------------------------------------------------
MICRONN_KNOWN_TYPES := int8 int16 float32 hybrid
ifneq ($(strip $(MICRONN_TYPES)),)
$(foreach t,$(filter-out $(MICRONN_KNOWN_TYPES),$(MICRONN_TYPES)),$(error micronn: MICRONN_TYPES: unknown type family $(t); known: $(MICRONN_KNOWN_TYPES)))
MICRONN_SETTINGS += MICRONN_TYPES_ALL=0 $(foreach t,$(sort $(MICRONN_TYPES)),MICRONN_TYPE_$(shell echo $(t) | tr a-z A-Z)=1)
endif

# ---- kernel variants (kernels/mn_variants.h) ----------------------------------------------------
ifneq ($(filter-out all,$(strip $(MICRONN_VARIANTS))),)
MICRONN_SETTINGS += MICRONN_VARIANTS_ALL=0 $(foreach v,$(filter-out none,$(MICRONN_VARIANTS)),MICRONN_VARIANT_$(subst .,_,$(v))=1)
endif

# ---- patch-based execution (mn_patch.c): 1/0; empty: mn_config.h's default (with all ops) ----
ifneq ($(strip $(MICRONN_PATCHES)),)
MICRONN_SETTINGS += MICRONN_PATCHES=$(strip $(MICRONN_PATCHES))
endif

# ---- delegation (mn_delegate.c): 1/0; empty: mn_config.h's default (with all ops) ---------------
ifneq ($(strip $(MICRONN_DELEGATE)),)
MICRONN_SETTINGS += MICRONN_DELEGATE=$(strip $(MICRONN_DELEGATE))
endif

# ---- built-in models ---------------------------------------------------------------------------
ifeq ($(origin MICRONN_MODELS),undefined)
MICRONN_MODELS := $(MICRONN_MODELS_DIR)
endif
micronn_path = $(firstword $(wildcard $(1) $(MICRONN_ROOT)/$(1)) $(1))
MICRONN_MODEL_FILES := $(foreach p,$(MICRONN_MODELS),$(if $(wildcard $(call micronn_path,$(p))/.),\
	$(sort $(wildcard $(abspath $(call micronn_path,$(p)))/*.tflite)),$(abspath $(call micronn_path,$(p)))))
$(foreach f,$(MICRONN_MODEL_FILES),$(if $(wildcard $(f)),,$(error micronn: MICRONN_MODELS: no such file: $(f))))

# Record the settings; the files change only when the settings do, so make rebuilds exactly then.
$(shell mkdir -p $(MICRONN_GEN))
ifneq ($(wildcard $(MICRONN_GEN)/models.txt)$(file < $(MICRONN_GEN)/models.txt),$(MICRONN_GEN)/models.txt$(strip $(MICRONN_MODEL_FILES)))
$(file > $(MICRONN_GEN)/models.txt,$(strip $(MICRONN_MODEL_FILES)))
endif
# (the optimisation split too: objects built under another one are rebuilt)
MICRONN_COPT_REC := kernels+mn_quant (not *_prepare.c): $(strip $(MICRONN_COPT)); rest: $(strip $(MICRONN_CORE_COPT))
ifneq ($(wildcard $(MICRONN_GEN)/copt.txt)$(file < $(MICRONN_GEN)/copt.txt),$(MICRONN_GEN)/copt.txt$(MICRONN_COPT_REC))
$(file > $(MICRONN_GEN)/copt.txt,$(MICRONN_COPT_REC))
endif

MICRONN_MODELS_H := $(MICRONN_GEN)/micronn_models.h

$(MICRONN_MODELS_H): $(MICRONN_GEN)/models.txt $(MICRONN_MODEL_FILES) $(MICRONN_ROOT)/host_tools/micronn_tools/convert.py
	$(ECHO) "GEN $@"
	$(Q)PYTHONPATH=$(MICRONN_ROOT)/host_tools $(PYTHON) -m micronn_tools.convert --table $@ $(MICRONN_MODEL_FILES)

$(MICRONN_OBJ_DIR)/mod_models.o: $(MICRONN_MODELS_H)

# Compiler options are not seen by the dependency files: the engine's objects depend on the
# recorded optimisation split.
$(patsubst $(MICRONN_DIR)/%.c,$(MICRONN_OBJ_DIR)/%.o,$(MICRONN_ENGINE_SRC)): $(MICRONN_GEN)/copt.txt

# ---- the settings header -----------------------------------------------------------------------
# MICRONN_KERNELS, _OPS, _TYPES, _VARIANTS, _PATCHES and _DELEGATE as #defines in
# $(MICRONN_GEN)/micronn_settings.h, rewritten only when they change. mn_config.h includes it, so
# the compiler's dependency files (-MD) make every object that includes mn_config.h, directly or
# through micronn.h (the binding files mod_*.c as well as the engine), depend on it: a change of
# settings rebuilds exactly the objects whose preprocessor input it changes, with no list to keep.
# The qstr scan depends on it too (a binding file's qstrs may sit under #if MICRONN_DELEGATE).
MICRONN_SETTINGS_H := $(MICRONN_GEN)/micronn_settings.h
MICRONN_SETTINGS_REC := $(strip $(MICRONN_SETTINGS))
define MICRONN_NL


endef
MICRONN_HASH := \#
MICRONN_SETTINGS_TEXT := /* Generated by usermod/micronn/micropython.mk from the build's MICRONN_* settings. */$(MICRONN_NL)$(subst $(MICRONN_NL) ,$(MICRONN_NL),$(foreach d,$(MICRONN_SETTINGS_REC),$(MICRONN_HASH)define $(subst =, ,$(d))$(MICRONN_NL)))
ifneq ($(wildcard $(MICRONN_SETTINGS_H))$(file < $(MICRONN_GEN)/settings.txt),$(MICRONN_SETTINGS_H)$(MICRONN_SETTINGS_REC))
$(file > $(MICRONN_SETTINGS_H),$(MICRONN_SETTINGS_TEXT))
$(file > $(MICRONN_GEN)/settings.txt,$(MICRONN_SETTINGS_REC))
endif
QSTR_GLOBAL_DEPENDENCIES += $(MICRONN_SETTINGS_H)
