/*
 * micronn engine build configuration. Every option can be overridden with -D on the command line
 * (or in the port's mpconfigport.h / the usermod's makefile).
 *
 * Op selection: a firmware links only the kernels it registers. MICRONN_OPS_ALL (default 1) is the
 * default for each MICRONN_OP_<NAME>; build e.g. with -DMICRONN_OPS_ALL=0 -DMICRONN_OP_CONV_2D=1 ...
 * to keep only what a model needs (`micronn inspect` lists a model's ops).
 */
#ifndef MN_CONFIG_H
#define MN_CONFIG_H

#ifndef MICRONN_OPS_ALL
#define MICRONN_OPS_ALL 1
#endif

#ifndef MICRONN_OP_ADD
#define MICRONN_OP_ADD MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_AVERAGE_POOL_2D
#define MICRONN_OP_AVERAGE_POOL_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_BATCH_TO_SPACE_ND
#define MICRONN_OP_BATCH_TO_SPACE_ND MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CONCATENATION
#define MICRONN_OP_CONCATENATION MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_CONV_2D
#define MICRONN_OP_CONV_2D MICRONN_OPS_ALL
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
#ifndef MICRONN_OP_EXPAND_DIMS
#define MICRONN_OP_EXPAND_DIMS MICRONN_OPS_ALL
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
#ifndef MICRONN_OP_MAX_POOL_2D
#define MICRONN_OP_MAX_POOL_2D MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_MEAN
#define MICRONN_OP_MEAN MICRONN_OPS_ALL
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
#ifndef MICRONN_OP_QUANTIZE
#define MICRONN_OP_QUANTIZE MICRONN_OPS_ALL
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
#ifndef MICRONN_OP_RESHAPE
#define MICRONN_OP_RESHAPE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RESIZE_BILINEAR
#define MICRONN_OP_RESIZE_BILINEAR MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_RESIZE_NEAREST_NEIGHBOR
#define MICRONN_OP_RESIZE_NEAREST_NEIGHBOR MICRONN_OPS_ALL
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
#ifndef MICRONN_OP_SQUEEZE
#define MICRONN_OP_SQUEEZE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_STRIDED_SLICE
#define MICRONN_OP_STRIDED_SLICE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SUM
#define MICRONN_OP_SUM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_SVDF
#define MICRONN_OP_SVDF MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_TRANSPOSE
#define MICRONN_OP_TRANSPOSE MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM
#define MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM MICRONN_OPS_ALL
#endif
#ifndef MICRONN_OP_UNPACK
#define MICRONN_OP_UNPACK MICRONN_OPS_ALL
#endif

/* 1: a selected kernel that is not linked is a link error (default: reported as unsupported). */
#ifndef MICRONN_STRICT_KERNELS
#define MICRONN_STRICT_KERNELS 0
#endif

/* Keep the table of builtin op names (~3 KB of strings) for error messages and inspection. */
#ifndef MICRONN_OP_NAMES
#define MICRONN_OP_NAMES 1
#endif

/* Per-op profiling support (a tick function must still be given in mn_config_t). */
#ifndef MICRONN_PROFILE
#define MICRONN_PROFILE 1
#endif

#endif /* MN_CONFIG_H */
