/*
 * Op registry: builtin code / custom name -> kernel, fixed at compile time.
 *
 * Each kernel is referenced only when its MICRONN_OP_<NAME> macro is set (mn_config.h), so a
 * firmware built with a subset links only those kernels. With GCC/Clang the references are weak:
 * a selected kernel whose file is not part of the build resolves to NULL and is reported as
 * "unsupported op" at prepare instead of breaking the link (define MICRONN_STRICT_KERNELS=1 to get
 * link errors instead).
 */
#include "mn_internal.h"

#if (defined(__GNUC__) || defined(__clang__)) && !MICRONN_STRICT_KERNELS
#define MN_WEAK __attribute__((weak))
#else
#define MN_WEAK
#endif

#define MN_DECLARE(NAME) extern const mn_kernel_t mn_kernel_##NAME MN_WEAK;
#define MN_ENTRY(NAME) { MN_BUILTIN_##NAME, NULL, &mn_kernel_##NAME },

#if MICRONN_OP_ADD
MN_DECLARE(ADD)
#endif
#if MICRONN_OP_ARG_MAX
MN_DECLARE(ARG_MAX)
#endif
#if MICRONN_OP_ARG_MIN
MN_DECLARE(ARG_MIN)
#endif
#if MICRONN_OP_AVERAGE_POOL_2D
MN_DECLARE(AVERAGE_POOL_2D)
#endif
#if MICRONN_OP_BATCH_TO_SPACE_ND
MN_DECLARE(BATCH_TO_SPACE_ND)
#endif
#if MICRONN_OP_BROADCAST_ARGS
MN_DECLARE(BROADCAST_ARGS)
#endif
#if MICRONN_OP_BROADCAST_TO
MN_DECLARE(BROADCAST_TO)
#endif
#if MICRONN_OP_CONCATENATION
MN_DECLARE(CONCATENATION)
#endif
#if MICRONN_OP_CONV_2D
MN_DECLARE(CONV_2D)
#endif
#if MICRONN_OP_CUMSUM
MN_DECLARE(CUMSUM)
#endif
#if MICRONN_OP_DEPTHWISE_CONV_2D
MN_DECLARE(DEPTHWISE_CONV_2D)
#endif
#if MICRONN_OP_DEPTH_TO_SPACE
MN_DECLARE(DEPTH_TO_SPACE)
#endif
#if MICRONN_OP_DEQUANTIZE
MN_DECLARE(DEQUANTIZE)
#endif
#if MICRONN_OP_EMBEDDING_LOOKUP
MN_DECLARE(EMBEDDING_LOOKUP)
#endif
#if MICRONN_OP_EXPAND_DIMS
MN_DECLARE(EXPAND_DIMS)
#endif
#if MICRONN_OP_FILL
MN_DECLARE(FILL)
#endif
#if MICRONN_OP_FULLY_CONNECTED
MN_DECLARE(FULLY_CONNECTED)
#endif
#if MICRONN_OP_GATHER
MN_DECLARE(GATHER)
#endif
#if MICRONN_OP_GATHER_ND
MN_DECLARE(GATHER_ND)
#endif
#if MICRONN_OP_MAX_POOL_2D
MN_DECLARE(MAX_POOL_2D)
#endif
#if MICRONN_OP_MEAN
MN_DECLARE(MEAN)
#endif
#if MICRONN_OP_MIRROR_PAD
MN_DECLARE(MIRROR_PAD)
#endif
#if MICRONN_OP_PACK
MN_DECLARE(PACK)
#endif
#if MICRONN_OP_PAD
MN_DECLARE(PAD)
#endif
#if MICRONN_OP_PADV2
MN_DECLARE(PADV2)
#endif
#if MICRONN_OP_QUANTIZE
MN_DECLARE(QUANTIZE)
#endif
#if MICRONN_OP_REDUCE_MAX
MN_DECLARE(REDUCE_MAX)
#endif
#if MICRONN_OP_REDUCE_MIN
MN_DECLARE(REDUCE_MIN)
#endif
#if MICRONN_OP_REDUCE_PROD
MN_DECLARE(REDUCE_PROD)
#endif
#if MICRONN_OP_RESHAPE
MN_DECLARE(RESHAPE)
#endif
#if MICRONN_OP_RESIZE_BILINEAR
MN_DECLARE(RESIZE_BILINEAR)
#endif
#if MICRONN_OP_RESIZE_NEAREST_NEIGHBOR
MN_DECLARE(RESIZE_NEAREST_NEIGHBOR)
#endif
#if MICRONN_OP_SHAPE
MN_DECLARE(SHAPE)
#endif
#if MICRONN_OP_SLICE
MN_DECLARE(SLICE)
#endif
#if MICRONN_OP_SOFTMAX
MN_DECLARE(SOFTMAX)
#endif
#if MICRONN_OP_SPACE_TO_BATCH_ND
MN_DECLARE(SPACE_TO_BATCH_ND)
#endif
#if MICRONN_OP_SPACE_TO_DEPTH
MN_DECLARE(SPACE_TO_DEPTH)
#endif
#if MICRONN_OP_SPLIT
MN_DECLARE(SPLIT)
#endif
#if MICRONN_OP_SPLIT_V
MN_DECLARE(SPLIT_V)
#endif
#if MICRONN_OP_SQUEEZE
MN_DECLARE(SQUEEZE)
#endif
#if MICRONN_OP_STRIDED_SLICE
MN_DECLARE(STRIDED_SLICE)
#endif
#if MICRONN_OP_SUM
MN_DECLARE(SUM)
#endif
#if MICRONN_OP_SVDF
MN_DECLARE(SVDF)
#endif
#if MICRONN_OP_TRANSPOSE
MN_DECLARE(TRANSPOSE)
#endif
#if MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM
MN_DECLARE(UNIDIRECTIONAL_SEQUENCE_LSTM)
#endif
#if MICRONN_OP_UNPACK
MN_DECLARE(UNPACK)
#endif
#if MICRONN_OP_ZEROS_LIKE
MN_DECLARE(ZEROS_LIKE)
#endif

static const mn_registration_t mn_builtin_ops[] = {
#if MICRONN_OP_ADD
    MN_ENTRY(ADD)
#endif
#if MICRONN_OP_ARG_MAX
    MN_ENTRY(ARG_MAX)
#endif
#if MICRONN_OP_ARG_MIN
    MN_ENTRY(ARG_MIN)
#endif
#if MICRONN_OP_AVERAGE_POOL_2D
    MN_ENTRY(AVERAGE_POOL_2D)
#endif
#if MICRONN_OP_BATCH_TO_SPACE_ND
    MN_ENTRY(BATCH_TO_SPACE_ND)
#endif
#if MICRONN_OP_BROADCAST_ARGS
    MN_ENTRY(BROADCAST_ARGS)
#endif
#if MICRONN_OP_BROADCAST_TO
    MN_ENTRY(BROADCAST_TO)
#endif
#if MICRONN_OP_CONCATENATION
    MN_ENTRY(CONCATENATION)
#endif
#if MICRONN_OP_CONV_2D
    MN_ENTRY(CONV_2D)
#endif
#if MICRONN_OP_CUMSUM
    MN_ENTRY(CUMSUM)
#endif
#if MICRONN_OP_DEPTHWISE_CONV_2D
    MN_ENTRY(DEPTHWISE_CONV_2D)
#endif
#if MICRONN_OP_DEPTH_TO_SPACE
    MN_ENTRY(DEPTH_TO_SPACE)
#endif
#if MICRONN_OP_DEQUANTIZE
    MN_ENTRY(DEQUANTIZE)
#endif
#if MICRONN_OP_EMBEDDING_LOOKUP
    MN_ENTRY(EMBEDDING_LOOKUP)
#endif
#if MICRONN_OP_EXPAND_DIMS
    MN_ENTRY(EXPAND_DIMS)
#endif
#if MICRONN_OP_FILL
    MN_ENTRY(FILL)
#endif
#if MICRONN_OP_FULLY_CONNECTED
    MN_ENTRY(FULLY_CONNECTED)
#endif
#if MICRONN_OP_GATHER
    MN_ENTRY(GATHER)
#endif
#if MICRONN_OP_GATHER_ND
    MN_ENTRY(GATHER_ND)
#endif
#if MICRONN_OP_MAX_POOL_2D
    MN_ENTRY(MAX_POOL_2D)
#endif
#if MICRONN_OP_MEAN
    MN_ENTRY(MEAN)
#endif
#if MICRONN_OP_MIRROR_PAD
    MN_ENTRY(MIRROR_PAD)
#endif
#if MICRONN_OP_PACK
    MN_ENTRY(PACK)
#endif
#if MICRONN_OP_PAD
    MN_ENTRY(PAD)
#endif
#if MICRONN_OP_PADV2
    MN_ENTRY(PADV2)
#endif
#if MICRONN_OP_QUANTIZE
    MN_ENTRY(QUANTIZE)
#endif
#if MICRONN_OP_REDUCE_MAX
    MN_ENTRY(REDUCE_MAX)
#endif
#if MICRONN_OP_REDUCE_MIN
    MN_ENTRY(REDUCE_MIN)
#endif
#if MICRONN_OP_REDUCE_PROD
    MN_ENTRY(REDUCE_PROD)
#endif
#if MICRONN_OP_RESHAPE
    MN_ENTRY(RESHAPE)
#endif
#if MICRONN_OP_RESIZE_BILINEAR
    MN_ENTRY(RESIZE_BILINEAR)
#endif
#if MICRONN_OP_RESIZE_NEAREST_NEIGHBOR
    MN_ENTRY(RESIZE_NEAREST_NEIGHBOR)
#endif
#if MICRONN_OP_SHAPE
    MN_ENTRY(SHAPE)
#endif
#if MICRONN_OP_SLICE
    MN_ENTRY(SLICE)
#endif
#if MICRONN_OP_SOFTMAX
    MN_ENTRY(SOFTMAX)
#endif
#if MICRONN_OP_SPACE_TO_BATCH_ND
    MN_ENTRY(SPACE_TO_BATCH_ND)
#endif
#if MICRONN_OP_SPACE_TO_DEPTH
    MN_ENTRY(SPACE_TO_DEPTH)
#endif
#if MICRONN_OP_SPLIT
    MN_ENTRY(SPLIT)
#endif
#if MICRONN_OP_SPLIT_V
    MN_ENTRY(SPLIT_V)
#endif
#if MICRONN_OP_SQUEEZE
    MN_ENTRY(SQUEEZE)
#endif
#if MICRONN_OP_STRIDED_SLICE
    MN_ENTRY(STRIDED_SLICE)
#endif
#if MICRONN_OP_SUM
    MN_ENTRY(SUM)
#endif
#if MICRONN_OP_SVDF
    MN_ENTRY(SVDF)
#endif
#if MICRONN_OP_TRANSPOSE
    MN_ENTRY(TRANSPOSE)
#endif
#if MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM
    MN_ENTRY(UNIDIRECTIONAL_SEQUENCE_LSTM)
#endif
#if MICRONN_OP_UNPACK
    MN_ENTRY(UNPACK)
#endif
#if MICRONN_OP_ZEROS_LIKE
    MN_ENTRY(ZEROS_LIKE)
#endif
    { -1, NULL, NULL },  /* keeps the array non-empty when every op is deselected */
};

static const mn_kernel_t *find_in(const mn_registration_t *r, size_t n, int32_t builtin, const char *custom) {
    for (size_t i = 0; i < n; i++) {
        if (!r[i].kernel || r[i].builtin != builtin) {
            continue;
        }
        if (builtin != MN_BUILTIN_CUSTOM) {
            return r[i].kernel;
        }
        if (custom && r[i].custom_name && strcmp(custom, r[i].custom_name) == 0) {
            return r[i].kernel;
        }
    }
    return NULL;
}

const mn_kernel_t *mn_registry_find(const mn_config_t *cfg, int32_t builtin, const char *custom_name) {
    const mn_kernel_t *k = NULL;
    if (cfg && cfg->ops) {
        k = find_in(cfg->ops, cfg->n_ops, builtin, custom_name);
    }
    if (!k) {
        k = find_in(mn_builtin_ops, sizeof mn_builtin_ops / sizeof mn_builtin_ops[0], builtin, custom_name);
    }
    return (k && k->eval) ? k : NULL;
}

int mn_op_supported(const mn_config_t *cfg, int32_t builtin, const char *custom_name) {
    return mn_registry_find(cfg, builtin, custom_name) != NULL;
}
