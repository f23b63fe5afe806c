/*
 * Shared helpers of the signal-library kernels (kernels/signal/, TFLM's signal/ ops: the audio
 * front end of micro_speech and friends). Their custom options are a flexbuffer map; every key a
 * kernel reads is required here (TFLM reads them by position and takes a missing one as 0) and
 * range-checked at prepare, so a malformed or incomplete blob is a clean prepare error.
 *
 * The integer helpers reproduce TFLM's signal/src arithmetic exactly (most significant bit,
 * rounded integer square roots); they are static inline: each kernel is one translation unit.
 */
#ifndef MN_SIGNAL_H
#define MN_SIGNAL_H

#include <stdint.h>

#include "mn_flexbuf.h"
#include "mn_kernel.h"

/* The op's options map; an error when the op has none or they are not a valid map. */
static inline mn_status_t mn_sig_options(mn_ctx_t *ctx, const mn_node_t *node, mn_flex_map_t *m) {
    size_t len;
    const uint8_t *opts = mn_custom_options(ctx, node, &len);
    if (!opts || !len) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom options missing");
    }
    mn_flex_status_t s = mn_flex_root_map(opts, len, m);
    if (s != MN_FLEX_OK) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom options: %s", mn_flex_status_str(s));
    }
    return MN_OK;
}

/* Required integer option `key` in [lo, hi]. */
static inline mn_status_t mn_sig_int(mn_ctx_t *ctx, const mn_flex_map_t *m, const char *key, int32_t lo, int32_t hi,
    int32_t *out) {
    mn_flex_status_t s = mn_flex_i32(m, key, out);
    if (s != MN_FLEX_OK) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option '%s': %s", key, mn_flex_status_str(s));
    }
    if (*out < lo || *out > hi) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option '%s' = %d outside [%d, %d]", key, (int)*out, (int)lo,
            (int)hi);
    }
    return MN_OK;
}

/* Required bool option `key`. */
static inline mn_status_t mn_sig_bool(mn_ctx_t *ctx, const mn_flex_map_t *m, const char *key, bool *out) {
    mn_flex_status_t s = mn_flex_bool(m, key, out);
    if (s != MN_FLEX_OK) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option '%s': %s", key, mn_flex_status_str(s));
    }
    return MN_OK;
}

/* 1 + the index of the highest set bit; 32 (64) for 0, as TFLM's GCC build (__builtin_clz path). */
static inline uint32_t mn_sig_msb32(uint32_t x) {
    uint32_t n = 0;
    if (!x) {
        return 32;
    }
    while (x) {
        x >>= 1;
        n++;
    }
    return n;
}

static inline uint32_t mn_sig_msb64(uint64_t x) {
    uint32_t n = 0;
    if (!x) {
        return 64;
    }
    while (x) {
        x >>= 1;
        n++;
    }
    return n;
}

/* Bit-by-bit integer square root of a 32-bit value, rounded to nearest (TFLM's Sqrt32). */
static inline uint16_t mn_sig_sqrt32(uint32_t v) {
    if (!v) {
        return 0;
    }
    const int top = (int)(32 - mn_sig_msb32(v)) | 1;   /* leading zeros, made odd */
    uint32_t r = 0, b = (uint32_t)1 << (31 - top);
    for (int k = (31 - top) / 2 + 1; k > 0; k--, b >>= 2) {
        if (v >= r + b) {
            v -= r + b;
            r = (r >> 1) + b;
        } else {
            r >>= 1;
        }
    }
    if (v > r && r != 0xFFFF) {
        r++;
    }
    return (uint16_t)r;
}

/* The same over 64 bits (TFLM's Sqrt64: values below 2^32 take the 32-bit routine). */
static inline uint32_t mn_sig_sqrt64(uint64_t v) {
    if (!(v >> 32)) {
        return mn_sig_sqrt32((uint32_t)v);
    }
    const int top = (int)(64 - mn_sig_msb64(v)) | 1;
    uint64_t r = 0, b = (uint64_t)1 << (63 - top);
    for (int k = (63 - top) / 2 + 1; k > 0; k--, b >>= 2) {
        if (v >= r + b) {
            v -= r + b;
            r = (r >> 1) + b;
        } else {
            r >>= 1;
        }
    }
    if (v > r && r != 0xFFFFFFFFu) {
        r++;
    }
    return (uint32_t)r;
}

/* Elements of a 1-D tensor (or of its last dimension). */
static inline int32_t mn_sig_last(const mn_tensor_t *t) {
    return mn_dim(t, -1);
}

#endif /* MN_SIGNAL_H */
