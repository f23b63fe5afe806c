/*
 * Layer 0: flatbuffer readers over a buffer mn_verify has accepted (mn_fb.c), and the TFLite
 * schema's field ids. Nothing here knows a model, an interpreter or a kernel.
 */
#ifndef MN_FB_H
#define MN_FB_H

#include "mn_kernel.h"

/* ---- flatbuffer access (only after mn_verify has accepted the buffer) --------------------- */
/* fb_field, fb_u32, fb_ref and fb_vec are functions (mn_model.c), not inlined at each of the
 * engine's many reads: smaller code (the reads are outside kernels' inner loops). */

/* Absolute position of field `field` of the table at `t`, or 0 if absent. */
uint32_t fb_field(const uint8_t *b, uint32_t t, int field);
/* 32-bit scalar field, def if absent. */
uint32_t fb_u32(const uint8_t *b, uint32_t t, int field, uint32_t def);
static inline int32_t fb_i32(const uint8_t *b, uint32_t t, int field, int32_t def) {
    return (int32_t)fb_u32(b, t, field, (uint32_t)def);
}
static inline int32_t fb_i8(const uint8_t *b, uint32_t t, int field, int32_t def) {
    uint32_t p = fb_field(b, t, field);
    return p ? (int32_t)(int8_t)b[p] : def;
}
static inline uint32_t fb_u8(const uint8_t *b, uint32_t t, int field, uint32_t def) {
    uint32_t p = fb_field(b, t, field);
    return p ? b[p] : def;
}
/* Follow the uoffset stored in field `field`: absolute position of the target, or 0. */
uint32_t fb_ref(const uint8_t *b, uint32_t t, int field);
/* Vector field: returns position of the first element (0 if absent), *n = length. */
uint32_t fb_vec(const uint8_t *b, uint32_t t, int field, uint32_t *n);
/* i-th table of a vector of tables starting at element position v. */
static inline uint32_t fb_vec_table(const uint8_t *b, uint32_t v, uint32_t i) {
    uint32_t p = v + 4u * i;
    return p + mn_ld_u32(b + p);
}
/* String field as a C string in the buffer (verified NUL-terminated), or NULL. */
static inline const char *fb_str(const uint8_t *b, uint32_t t, int field) {
    uint32_t s = fb_ref(b, t, field);
    return s ? (const char *)(b + s + 4) : (const char *)0;
}

/* Schema field ids. */
enum { F_MODEL_VERSION = 0, F_MODEL_OPCODES = 1, F_MODEL_SUBGRAPHS = 2, F_MODEL_DESCRIPTION = 3,
       F_MODEL_BUFFERS = 4, F_MODEL_METADATA_BUFFER = 5, F_MODEL_METADATA = 6 };
enum { F_SG_TENSORS = 0, F_SG_INPUTS = 1, F_SG_OUTPUTS = 2, F_SG_OPERATORS = 3, F_SG_NAME = 4 };
enum { F_T_SHAPE = 0, F_T_TYPE = 1, F_T_BUFFER = 2, F_T_NAME = 3, F_T_QUANT = 4, F_T_IS_VARIABLE = 5,
       F_T_SPARSITY = 6, F_T_SHAPE_SIGNATURE = 7 };
enum { F_Q_MIN = 0, F_Q_MAX = 1, F_Q_SCALE = 2, F_Q_ZERO_POINT = 3, F_Q_DETAILS_TYPE = 4, F_Q_DETAILS = 5,
       F_Q_QDIM = 6 };
enum { F_OP_OPCODE_INDEX = 0, F_OP_INPUTS = 1, F_OP_OUTPUTS = 2, F_OP_OPTIONS_TYPE = 3, F_OP_OPTIONS = 4,
       F_OP_CUSTOM_OPTIONS = 5, F_OP_CUSTOM_FORMAT = 6, F_OP_MUTATING = 7, F_OP_INTERMEDIATES = 8,
       F_OP_LARGE_CUSTOM_OFFSET = 9, F_OP_LARGE_CUSTOM_SIZE = 10 };
enum { F_OC_DEPRECATED_CODE = 0, F_OC_CUSTOM_CODE = 1, F_OC_VERSION = 2, F_OC_BUILTIN_CODE = 3 };
enum { F_BUF_DATA = 0, F_BUF_OFFSET = 1, F_BUF_SIZE = 2 };
enum { F_MD_NAME = 0, F_MD_BUFFER = 1 };

/* Can the int32 vector element at p be read in place as an int32_t (aligned, little-endian
 * target)? Otherwise it is read with mn_ld_i32 / copied. */
static inline int mn_i32_in_place(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return ((uintptr_t)p & 3u) == 0;
#else
    (void)p;
    return 0;
#endif
}

#endif /* MN_FB_H */
