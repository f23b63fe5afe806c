/*
 * Bounds-checked reader of FlexBuffers (the schema-less format of TFLite custom options: TFLM's
 * and LiteRT's custom ops read their parameters from a FlexBuffers map, e.g.
 * {"cycles_max": 1} for CIRCULAR_BUFFER).
 *
 *     mn_flex_map_t m;
 *     int32_t v = 100;                                   // the default when the key is absent
 *     mn_flex_status_t s = mn_flex_root_map(buf, len, &m);
 *     if (s == MN_FLEX_OK) s = mn_flex_i32(&m, "max_detections", &v);
 *     if (s > MN_FLEX_ABSENT) fail("option %s: %s", "max_detections", mn_flex_status_str(s));
 *
 * Format (flatbuffers' flexbuffers.h): the last byte of the blob is the root's byte width, the one
 * before it the root's packed type (type << 2 | log2 of the width of the data it refers to), and
 * before that the root value. Scalars (null, int, uint, float, bool) sit inline in their parent's
 * slot; everything else is an unsigned offset pointing backwards from the slot. A map of n
 * entries at p with element width w: [keys offset][keys width][n] before p (each w bytes), n
 * values from p, then n packed type bytes; its keys are a vector of n offsets to NUL-terminated
 * strings (sorted, though lookups here do not rely on it).
 *
 * Every offset, width and count is checked against the blob's length (64-bit arithmetic) before a
 * byte is read: a malformed blob yields MN_FLEX_MALFORMED, never a read outside [buf, buf + len).
 * No allocation, no global state; the blob is read in place, with byte loads (any alignment).
 */
#ifndef MN_FLEXBUF_H
#define MN_FLEXBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mn_flex_status {
    MN_FLEX_OK = 0,
    MN_FLEX_ABSENT = 1,      /* no such key (or its value is null): use the default */
    MN_FLEX_MALFORMED = 2,   /* offsets / widths / counts outside the blob, or inconsistent */
    MN_FLEX_TYPE = 3,        /* present, but not of a type the accessor converts */
    MN_FLEX_RANGE = 4,       /* a number that does not fit the requested type */
} mn_flex_status_t;

/* FlexBuffers value types (flexbuffers::Type). */
enum {
    MN_FLEX_T_NULL = 0, MN_FLEX_T_INT = 1, MN_FLEX_T_UINT = 2, MN_FLEX_T_FLOAT = 3, MN_FLEX_T_KEY = 4,
    MN_FLEX_T_STRING = 5, MN_FLEX_T_INDIRECT_INT = 6, MN_FLEX_T_INDIRECT_UINT = 7,
    MN_FLEX_T_INDIRECT_FLOAT = 8, MN_FLEX_T_MAP = 9, MN_FLEX_T_VECTOR = 10, MN_FLEX_T_BLOB = 25,
    MN_FLEX_T_BOOL = 26,
};

/* A map inside a blob (from mn_flex_root_map); plain data, valid as long as the blob. */
typedef struct mn_flex_map {
    const uint8_t *buf;
    size_t len;
    size_t values;      /* offset of value 0 */
    size_t keys;        /* offset of the keys vector's slot 0 */
    uint32_t count;
    uint8_t width;      /* byte width of the values (and of the map's prefix fields) */
    uint8_t key_width;  /* byte width of the keys vector's slots */
} mn_flex_map_t;

/* One scalar value (mn_flex_at / mn_flex_find): type, and where its bytes are. */
typedef struct mn_flex_value {
    const uint8_t *p;   /* its bytes (NULL for null) */
    uint8_t type;       /* MN_FLEX_T_*; indirect scalars are resolved to INT / UINT / FLOAT */
    uint8_t width;      /* 1, 2, 4 or 8 */
} mn_flex_value_t;

/* The blob's root, which must be a map (TFLite custom options are). MN_FLEX_TYPE if the root is
 * another type; MN_FLEX_MALFORMED for a blob too short or inconsistent (len 0 included). */
mn_flex_status_t mn_flex_root_map(const uint8_t *buf, size_t len, mn_flex_map_t *out);

/* Entry i (< m->count) of the map in stored (key) order: its key (NUL-terminated, inside the blob)
 * and value. Either output may be NULL. Non-scalar values (strings, vectors, maps, blobs) come back
 * with their type and p = NULL: the scalar accessors refuse them as MN_FLEX_TYPE. */
mn_flex_status_t mn_flex_at(const mn_flex_map_t *m, uint32_t i, const char **key, mn_flex_value_t *value);

/* The value of `key` (MN_FLEX_ABSENT if no entry has it, or its value is null). Every key of the map
 * is checked on the way (a malformed key before the match is MN_FLEX_MALFORMED). */
mn_flex_status_t mn_flex_find(const mn_flex_map_t *m, const char *key, mn_flex_value_t *value);

/* Conversions of a value, as flexbuffers' As*() convert but without truncating: int64 from int,
 * uint (<= INT64_MAX) or bool; double from float, int or uint; bool from bool, int or uint (!= 0). */
mn_flex_status_t mn_flex_value_i64(const mn_flex_value_t *v, int64_t *out);
mn_flex_status_t mn_flex_value_f64(const mn_flex_value_t *v, double *out);
mn_flex_status_t mn_flex_value_bool(const mn_flex_value_t *v, bool *out);

/* Lookup + conversion. *out is written only on MN_FLEX_OK (so it may hold the default before the
 * call). i32: MN_FLEX_RANGE outside int32; f32: a double value is rounded to float. */
mn_flex_status_t mn_flex_i32(const mn_flex_map_t *m, const char *key, int32_t *out);
mn_flex_status_t mn_flex_f32(const mn_flex_map_t *m, const char *key, float *out);
mn_flex_status_t mn_flex_bool(const mn_flex_map_t *m, const char *key, bool *out);

/* "ok", "absent", "malformed flexbuffer", "wrong type", "out of range". */
const char *mn_flex_status_str(mn_flex_status_t s);

#ifdef __cplusplus
}
#endif

#endif /* MN_FLEXBUF_H */
