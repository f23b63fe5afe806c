/*
 * micronn engine build configuration. Every option can be overridden with -D on the command line
 * (or in the port's mpconfigport.h / the usermod's makefile).
 *
 * Op selection: a firmware links only the kernels it registers. MICRONN_OPS_ALL (default 1) is the
 * default for each MICRONN_OP_<NAME>; build e.g. with -DMICRONN_OPS_ALL=0 -DMICRONN_OP_CONV_2D=1 ...
 * to keep only what a model needs (`micronn inspect` lists a model's ops). mn_ops.h lists every
 * kernel the engine has; each needs its block here. Each MICRONN_OP_<NAME> is 0 or 1 (the
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

#ifndef MICRONN_OP_ABS
#define MICRONN_OP_ABS MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ADD
#define MICRONN_OP_ADD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ADD_N
#define MICRONN_OP_ADD_N MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ARG_MAX
#define MICRONN_OP_ARG_MAX MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ARG_MIN
#define MICRONN_OP_ARG_MIN MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ASSIGN_VARIABLE
#define MICRONN_OP_ASSIGN_VARIABLE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_AVERAGE_POOL_2D
#define MICRONN_OP_AVERAGE_POOL_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_BATCH_MATMUL
#define MICRONN_OP_BATCH_MATMUL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_BATCH_TO_SPACE_ND
#define MICRONN_OP_BATCH_TO_SPACE_ND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_BROADCAST_ARGS
#define MICRONN_OP_BROADCAST_ARGS MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_BROADCAST_TO
#define MICRONN_OP_BROADCAST_TO MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CALL_ONCE
#define MICRONN_OP_CALL_ONCE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CAST
#define MICRONN_OP_CAST MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CEIL
#define MICRONN_OP_CEIL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CONCATENATION
#define MICRONN_OP_CONCATENATION MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CONV_2D
#define MICRONN_OP_CONV_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_COS
#define MICRONN_OP_COS MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CUMSUM
#define MICRONN_OP_CUMSUM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_DEPTHWISE_CONV_2D
#define MICRONN_OP_DEPTHWISE_CONV_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_DEPTH_TO_SPACE
#define MICRONN_OP_DEPTH_TO_SPACE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_DEQUANTIZE
#define MICRONN_OP_DEQUANTIZE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_DIV
#define MICRONN_OP_DIV MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_DYNAMIC_UPDATE_SLICE
#define MICRONN_OP_DYNAMIC_UPDATE_SLICE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ELU
#define MICRONN_OP_ELU MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_EMBEDDING_LOOKUP
#define MICRONN_OP_EMBEDDING_LOOKUP MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_EQUAL
#define MICRONN_OP_EQUAL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_EXP
#define MICRONN_OP_EXP MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_EXPAND_DIMS
#define MICRONN_OP_EXPAND_DIMS MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_FILL
#define MICRONN_OP_FILL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_FLOOR
#define MICRONN_OP_FLOOR MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_FLOOR_DIV
#define MICRONN_OP_FLOOR_DIV MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_FLOOR_MOD
#define MICRONN_OP_FLOOR_MOD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_FULLY_CONNECTED
#define MICRONN_OP_FULLY_CONNECTED MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_GATHER
#define MICRONN_OP_GATHER MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_GATHER_ND
#define MICRONN_OP_GATHER_ND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_GELU
#define MICRONN_OP_GELU MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_GREATER
#define MICRONN_OP_GREATER MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_GREATER_EQUAL
#define MICRONN_OP_GREATER_EQUAL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_HARD_SWISH
#define MICRONN_OP_HARD_SWISH MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_IF
#define MICRONN_OP_IF MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_L2_NORMALIZATION
#define MICRONN_OP_L2_NORMALIZATION MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_L2_POOL_2D
#define MICRONN_OP_L2_POOL_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LEAKY_RELU
#define MICRONN_OP_LEAKY_RELU MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LESS
#define MICRONN_OP_LESS MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LESS_EQUAL
#define MICRONN_OP_LESS_EQUAL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOG
#define MICRONN_OP_LOG MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOGICAL_AND
#define MICRONN_OP_LOGICAL_AND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOGICAL_NOT
#define MICRONN_OP_LOGICAL_NOT MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOGICAL_OR
#define MICRONN_OP_LOGICAL_OR MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOGISTIC
#define MICRONN_OP_LOGISTIC MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_LOG_SOFTMAX
#define MICRONN_OP_LOG_SOFTMAX MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MAXIMUM
#define MICRONN_OP_MAXIMUM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MAX_POOL_2D
#define MICRONN_OP_MAX_POOL_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MEAN
#define MICRONN_OP_MEAN MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MINIMUM
#define MICRONN_OP_MINIMUM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MIRROR_PAD
#define MICRONN_OP_MIRROR_PAD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MUL
#define MICRONN_OP_MUL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_NEG
#define MICRONN_OP_NEG MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_NOT_EQUAL
#define MICRONN_OP_NOT_EQUAL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_PACK
#define MICRONN_OP_PACK MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_PAD
#define MICRONN_OP_PAD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_PADV2
#define MICRONN_OP_PADV2 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_PRELU
#define MICRONN_OP_PRELU MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_QUANTIZE
#define MICRONN_OP_QUANTIZE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_READ_VARIABLE
#define MICRONN_OP_READ_VARIABLE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REDUCE_ALL
#define MICRONN_OP_REDUCE_ALL MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REDUCE_ANY
#define MICRONN_OP_REDUCE_ANY MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REDUCE_MAX
#define MICRONN_OP_REDUCE_MAX MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REDUCE_MIN
#define MICRONN_OP_REDUCE_MIN MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REDUCE_PROD
#define MICRONN_OP_REDUCE_PROD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RELU
#define MICRONN_OP_RELU MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RELU6
#define MICRONN_OP_RELU6 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RELU_0_TO_1
#define MICRONN_OP_RELU_0_TO_1 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RELU_N1_TO_1
#define MICRONN_OP_RELU_N1_TO_1 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RESHAPE
#define MICRONN_OP_RESHAPE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RESIZE_BILINEAR
#define MICRONN_OP_RESIZE_BILINEAR MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RESIZE_NEAREST_NEIGHBOR
#define MICRONN_OP_RESIZE_NEAREST_NEIGHBOR MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_REVERSE_V2
#define MICRONN_OP_REVERSE_V2 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ROUND
#define MICRONN_OP_ROUND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RSQRT
#define MICRONN_OP_RSQRT MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SELECT
#define MICRONN_OP_SELECT MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SELECT_V2
#define MICRONN_OP_SELECT_V2 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SHAPE
#define MICRONN_OP_SHAPE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SIN
#define MICRONN_OP_SIN MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SLICE
#define MICRONN_OP_SLICE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SOFTMAX
#define MICRONN_OP_SOFTMAX MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SPACE_TO_BATCH_ND
#define MICRONN_OP_SPACE_TO_BATCH_ND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SPACE_TO_DEPTH
#define MICRONN_OP_SPACE_TO_DEPTH MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SPLIT
#define MICRONN_OP_SPLIT MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SPLIT_V
#define MICRONN_OP_SPLIT_V MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SQRT
#define MICRONN_OP_SQRT MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SQUARE
#define MICRONN_OP_SQUARE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SQUARED_DIFFERENCE
#define MICRONN_OP_SQUARED_DIFFERENCE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SQUEEZE
#define MICRONN_OP_SQUEEZE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_STRIDED_SLICE
#define MICRONN_OP_STRIDED_SLICE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SUB
#define MICRONN_OP_SUB MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SUM
#define MICRONN_OP_SUM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SVDF
#define MICRONN_OP_SVDF MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_TANH
#define MICRONN_OP_TANH MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_TRANSPOSE
#define MICRONN_OP_TRANSPOSE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_TRANSPOSE_CONV
#define MICRONN_OP_TRANSPOSE_CONV MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM
#define MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_UNPACK
#define MICRONN_OP_UNPACK MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_VAR_HANDLE
#define MICRONN_OP_VAR_HANDLE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_WHILE
#define MICRONN_OP_WHILE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_ZEROS_LIKE
#define MICRONN_OP_ZEROS_LIKE MICRONN_OPS_ALL
#endif

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
/* Custom-op kernels (mn_custom_ops.h), selected like builtin ones. */
#ifndef MICRONN_OP_Atan2
#define MICRONN_OP_Atan2 MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_micronn_subgraph
#define MICRONN_OP_micronn_subgraph MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CIRCULAR_BUFFER
#define MICRONN_OP_CIRCULAR_BUFFER MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_TFLite_Detection_PostProcess
#define MICRONN_OP_TFLite_Detection_PostProcess MICRONN_OPS_ALL
#endif

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
