/*
 * micronn engine build configuration. Every option can be overridden with -D on the command line
 * (or in the port's mpconfigport.h / the usermod's makefile).
 *
 * Op selection: a firmware links only the kernels it registers. MICRONN_OPS_ALL (default 1) is the
 * default for each MICRONN_OP_<NAME>; build e.g. with -DMICRONN_OPS_ALL=0 -DMICRONN_OP_CONV_2D=1 ...
 * to keep only what a model needs (`micronn inspect` lists a model's ops). mn_ops.h and
 * mn_custom_ops.h list every kernel the engine has; mn_opsel.h (generated from them by
 * tools/gen_opsel.py) gives each switch its default. Each MICRONN_OP_<NAME> is 0 or 1 (the
 * registry selects with them by token pasting, mn_registry.c).
 */
#ifndef MN_CONFIG_H
#define MN_CONFIG_H

/* The MicroPython module's make build passes its settings (MICRONN_OPS, _TYPES, _KERNELS, ...) as
 * #defines in a generated header rather than -D flags: every object that includes this file then
 * depends on it through the compiler's dependency files and is rebuilt when a setting changes
 * (usermod/micronn/micropython.mk). */
#if defined(MICRONN_BUILD_SETTINGS) && MICRONN_BUILD_SETTINGS
#include "micronn_settings.h"
#endif

#ifndef MICRONN_OPS_ALL
#define MICRONN_OPS_ALL 1
#endif

#include "mn_opsel.h"   /* MICRONN_OP_<NAME> for every op of mn_ops.h and mn_custom_ops.h */

/*
 * Type families: the kernels with several dtype paths (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
 * AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX, and the optimized backends' variants) compile only the
 * paths of the families a firmware is built for. A path belongs to the family of the op's input
 * activation (input 0): int8 (also uint8), int16 (int16x8), float32, or hybrid (float32
 * activations with int8 weights, quantized on the fly). MICRONN_TYPES_ALL (default 1) is the
 * default of each MICRONN_TYPE_<FAMILY>; `make firmware MODELS=...` builds with only the families
 * its models use (micronn_tools.opset --types). A node that needs a family left out is refused at
 * prepare ("float32 kernels not linked in this firmware (built for int8)"). Values must be 0 or 1.
 */
#ifndef MICRONN_TYPES_ALL
#define MICRONN_TYPES_ALL 1
#endif
#ifndef MICRONN_TYPE_INT8
#define MICRONN_TYPE_INT8 MICRONN_TYPES_ALL
#endif
#ifndef MICRONN_TYPE_INT16
#define MICRONN_TYPE_INT16 MICRONN_TYPES_ALL
#endif
#ifndef MICRONN_TYPE_FLOAT32
#define MICRONN_TYPE_FLOAT32 MICRONN_TYPES_ALL
#endif
#ifndef MICRONN_TYPE_HYBRID
#define MICRONN_TYPE_HYBRID MICRONN_TYPES_ALL
#endif
/* All four: no node is refused for its family (the check compiles to nothing). */
#define MICRONN_TYPES_EVERY (MICRONN_TYPE_INT8 && MICRONN_TYPE_INT16 && MICRONN_TYPE_FLOAT32 && MICRONN_TYPE_HYBRID)

/* 1: a selected kernel that is not linked is a link error (default: reported as unsupported). */
#ifndef MICRONN_STRICT_KERNELS
#define MICRONN_STRICT_KERNELS 0
#endif

/* Keep the table of builtin op names (~3 KB of strings) for error messages and inspection. */
#ifndef MICRONN_OP_NAMES
#define MICRONN_OP_NAMES 1
#endif

/* Keep each kernel's dtype list (mn_ops.h, ~1 KB of strings) for `micronn.ops()` / inspection. */
#ifndef MICRONN_OP_INFO
#define MICRONN_OP_INFO MICRONN_OP_NAMES
#endif

/* Per-op profiling support (a tick function must still be given in mn_config_t). */
#ifndef MICRONN_PROFILE
#define MICRONN_PROFILE 1
#endif

/* Patch-based execution (mn_patch.c, Interpreter(patches=...)): in every build of all ops; a
 * model-specific firmware (make firmware MODELS=...) has it with PATCHES=1 or when one of its
 * models stores a patch stage (`micronn plan --patches --write`). */
#ifndef MICRONN_PATCHES
#define MICRONN_PATCHES MICRONN_OPS_ALL
#endif

/* Delegation (mn_delegate.c: Interpreter(delegate=...), mn_config_t.delegate): in every build of
 * all ops and with the custom op micronn_subgraph (a `micronn partition` model runs its subgraphs
 * through its backend's delegate); a model-specific firmware (make firmware MODELS=...) has it
 * with DELEGATE=1. Without it, a delegate is refused at prepare (MN_DELEGATE_NOT_BUILT). */
#ifndef MICRONN_DELEGATE
#define MICRONN_DELEGATE (MICRONN_OPS_ALL || MICRONN_OP_micronn_subgraph)
#endif

/* What a build was compiled with, as bits (mn_build_flags(): the engine's objects' view; a file
 * that tests a setting itself can compare its own MN_BUILD_FLAGS with it, as the MicroPython
 * binding does in micronn.build_config()). MICRONN_VARIANTS_ALL's default (1) is mn_variants.h's. */
#define MN_BUILD_OPS_ALL 0x01u
#define MN_BUILD_TYPE_INT8 0x02u
#define MN_BUILD_TYPE_INT16 0x04u
#define MN_BUILD_TYPE_FLOAT32 0x08u
#define MN_BUILD_TYPE_HYBRID 0x10u
#define MN_BUILD_VARIANTS_ALL 0x20u
#define MN_BUILD_PATCHES 0x40u
#define MN_BUILD_DELEGATE 0x80u
#if defined(MICRONN_VARIANTS_ALL) && !MICRONN_VARIANTS_ALL
#define MN_BUILD_VARIANTS_BIT 0u
#else
#define MN_BUILD_VARIANTS_BIT MN_BUILD_VARIANTS_ALL
#endif
#define MN_BUILD_FLAGS ((MICRONN_OPS_ALL ? MN_BUILD_OPS_ALL : 0u) | (MICRONN_TYPE_INT8 ? MN_BUILD_TYPE_INT8 : 0u) | \
    (MICRONN_TYPE_INT16 ? MN_BUILD_TYPE_INT16 : 0u) | (MICRONN_TYPE_FLOAT32 ? MN_BUILD_TYPE_FLOAT32 : 0u) | \
    (MICRONN_TYPE_HYBRID ? MN_BUILD_TYPE_HYBRID : 0u) | MN_BUILD_VARIANTS_BIT | \
    (MICRONN_PATCHES ? MN_BUILD_PATCHES : 0u) | (MICRONN_DELEGATE ? MN_BUILD_DELEGATE : 0u))

/* The double-precision libm functions the engine calls (TFLite computes some tables and the
 * float FLOOR_DIV in double): the C library's, or with MICRONN_OWN_LIBM_DBL=1 (the MicroPython
 * module) MicroPython's lib/libm_dbl compiled under micronn_ names (usermod/micronn/libm/), so
 * the module needs no double libm from the port and never clashes with one. */
#if MICRONN_OWN_LIBM_DBL
double micronn_exp(double x);
double micronn_floor(double x);
double micronn_round(double x);
#define MN_EXP_F64 micronn_exp
#define MN_FLOOR_F64 micronn_floor
#define MN_ROUND_F64 micronn_round
#else
#define MN_EXP_F64 exp
#define MN_FLOOR_F64 floor
#define MN_ROUND_F64 round
#endif

#endif /* MN_CONFIG_H */
