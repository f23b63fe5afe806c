/*
 * Bounds-checked FlexBuffers reader (mn_flexbuf.h). Positions are uint64_t offsets into the blob;
 * each is checked before its bytes are read, offsets point backwards from their slot and are never
 * allowed past its start, counts are checked against what the remaining bytes can hold.
 */
#include <string.h>

#include "mn_flexbuf.h"

static bool width_ok(uint64_t w) {
    return w == 1 || w == 2 || w == 4 || w == 8;
}

/* Little-endian unsigned of `w` bytes at `off`, if [off, off + w) is inside the blob. */
static bool rd(const uint8_t *buf, size_t len, uint64_t off, uint64_t w, uint64_t *out) {
    if (!width_ok(w) || off > len || w > len - off) {
        return false;
    }
    uint64_t v = 0;
    for (uint64_t k = w; k-- > 0;) {
        v = v << 8 | buf[off + k];
    }
    *out = v;
    return true;
}

/* Target of the offset stored in the `w`-byte slot at `slot` (must not point before the blob). */
static bool follow(const uint8_t *buf, size_t len, uint64_t slot, uint64_t w, uint64_t *target) {
    uint64_t off;
    if (!rd(buf, len, slot, w, &off) || off > slot) {
        return false;
    }
    *target = slot - off;
    return true;
}

static mn_flex_status_t open_map(const uint8_t *buf, size_t len, uint64_t p, uint64_t w, mn_flex_map_t *m) {
    uint64_t n, kw, kp, kn;
    if (p < 3 * w || !rd(buf, len, p - w, w, &n) || !rd(buf, len, p - 2 * w, w, &kw) || !width_ok(kw)
        || !follow(buf, len, p - 3 * w, w, &kp)) {
        return MN_FLEX_MALFORMED;
    }
    /* n values of w bytes and n type bytes from p; n key slots of kw bytes from kp, preceded by
     * their count, which must be n. */
    /* (divisions in size_t: a 64-bit one pulls in libgcc's __udivmoddi4, whose unwind table
     * upstream ports' linker scripts do not place) */
    if (p > len || n > (len - (size_t)p) / (size_t)(w + 1) || n > UINT32_MAX || kp < kw
        || !rd(buf, len, kp - kw, kw, &kn) || kn != n || kp > len || n > (len - (size_t)kp) / (size_t)kw) {
        return MN_FLEX_MALFORMED;
    }
    m->buf = buf;
    m->len = len;
    m->values = (size_t)p;
    m->keys = (size_t)kp;
    m->count = (uint32_t)n;
    m->width = (uint8_t)w;
    m->key_width = (uint8_t)kw;
    return MN_FLEX_OK;
}

mn_flex_status_t mn_flex_root_map(const uint8_t *buf, size_t len, mn_flex_map_t *out) {
    if (!buf || !out || len < 3) {
        return MN_FLEX_MALFORMED;
    }
    const uint64_t bw = buf[len - 1];
    if (!width_ok(bw) || len < 2 + bw) {
        return MN_FLEX_MALFORMED;
    }
    const uint8_t packed = buf[len - 2];
    if (packed >> 2 != MN_FLEX_T_MAP) {
        return MN_FLEX_TYPE;
    }
    uint64_t p;
    if (!follow(buf, len, len - 2 - bw, bw, &p)) {
        return MN_FLEX_MALFORMED;
    }
    return open_map(buf, len, p, 1u << (packed & 3), out);
}

mn_flex_status_t mn_flex_at(const mn_flex_map_t *m, uint32_t i, const char **key, mn_flex_value_t *value) {
    if (!m || i >= m->count) {
        return MN_FLEX_ABSENT;
    }
    const uint8_t *buf = m->buf;
    const size_t len = m->len;
    if (key) {
        uint64_t k;
        if (!follow(buf, len, m->keys + (uint64_t)i * m->key_width, m->key_width, &k)
            || !memchr(buf + k, 0, len - (size_t)k)) {
            return MN_FLEX_MALFORMED;
        }
        *key = (const char *)(buf + k);
    }
    if (!value) {
        return MN_FLEX_OK;
    }
    /* open_map checked that the values and their type bytes are inside the blob. */
    const uint64_t w = m->width, slot = m->values + (uint64_t)i * w;
    const uint8_t packed = buf[m->values + (uint64_t)m->count * w + i];
    uint64_t type = packed >> 2, at = slot, cw = w;
    if (type >= MN_FLEX_T_INDIRECT_INT && type <= MN_FLEX_T_INDIRECT_FLOAT) {
        cw = 1u << (packed & 3);
        if (!follow(buf, len, slot, w, &at) || cw > len - at) {
            return MN_FLEX_MALFORMED;
        }
        type -= MN_FLEX_T_INDIRECT_INT - MN_FLEX_T_INT;
    }
    value->type = (uint8_t)type;
    value->width = (uint8_t)cw;
    value->p = NULL;
    if (type == MN_FLEX_T_INT || type == MN_FLEX_T_UINT || type == MN_FLEX_T_BOOL || type == MN_FLEX_T_FLOAT) {
        if (type == MN_FLEX_T_FLOAT && cw < 4) {
            return MN_FLEX_MALFORMED;   /* flexbuffers stores floats in 4 or 8 bytes */
        }
        value->p = buf + at;
    }
    return MN_FLEX_OK;
}

mn_flex_status_t mn_flex_find(const mn_flex_map_t *m, const char *key, mn_flex_value_t *value) {
    if (!m || !key) {
        return MN_FLEX_ABSENT;
    }
    for (uint32_t i = 0; i < m->count; i++) {
        const char *k;
        mn_flex_status_t s = mn_flex_at(m, i, &k, NULL);
        if (s != MN_FLEX_OK) {
            return s;
        }
        if (strcmp(k, key) == 0) {
            s = mn_flex_at(m, i, NULL, value);
            return s == MN_FLEX_OK && value->type == MN_FLEX_T_NULL ? MN_FLEX_ABSENT : s;
        }
    }
    return MN_FLEX_ABSENT;
}

/* The value's bytes as an unsigned (p is inside the blob: mn_flex_at checked it). */
static uint64_t raw(const mn_flex_value_t *v) {
    uint64_t r = 0;
    for (unsigned k = v->width; k-- > 0;) {
        r = r << 8 | v->p[k];
    }
    return r;
}

static int64_t raw_signed(const mn_flex_value_t *v) {
    const uint64_t r = raw(v);
    const unsigned bits = 8u * v->width;
    if (bits < 64 && (r >> (bits - 1)) & 1) {
        return (int64_t)(r | ~((UINT64_C(1) << bits) - 1));   /* sign-extend */
    }
    return (int64_t)r;
}

static double raw_float(const mn_flex_value_t *v) {
    const uint64_t r = raw(v);
    if (v->width == 4) {
        uint32_t u = (uint32_t)r;
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    double d;
    memcpy(&d, &r, sizeof d);
    return d;
}

mn_flex_status_t mn_flex_value_i64(const mn_flex_value_t *v, int64_t *out) {
    if (!v->p || v->type == MN_FLEX_T_FLOAT) {
        return MN_FLEX_TYPE;
    }
    if (v->type == MN_FLEX_T_INT) {
        *out = raw_signed(v);
    } else if (v->type == MN_FLEX_T_BOOL) {
        *out = raw(v) != 0;
    } else {
        const uint64_t u = raw(v);
        if (u > (uint64_t)INT64_MAX) {
            return MN_FLEX_RANGE;
        }
        *out = (int64_t)u;
    }
    return MN_FLEX_OK;
}

mn_flex_status_t mn_flex_value_f64(const mn_flex_value_t *v, double *out) {
    if (!v->p || v->type == MN_FLEX_T_BOOL) {
        return MN_FLEX_TYPE;
    }
    *out = v->type == MN_FLEX_T_FLOAT ? raw_float(v)
         : v->type == MN_FLEX_T_INT ? (double)raw_signed(v) : (double)raw(v);
    return MN_FLEX_OK;
}

mn_flex_status_t mn_flex_value_bool(const mn_flex_value_t *v, bool *out) {
    if (!v->p || v->type == MN_FLEX_T_FLOAT) {
        return MN_FLEX_TYPE;
    }
    *out = raw(v) != 0;
    return MN_FLEX_OK;
}

mn_flex_status_t mn_flex_i32(const mn_flex_map_t *m, const char *key, int32_t *out) {
    mn_flex_value_t v;
    int64_t x;
    mn_flex_status_t s = mn_flex_find(m, key, &v);
    if (s == MN_FLEX_OK) {
        s = mn_flex_value_i64(&v, &x);
    }
    if (s == MN_FLEX_OK) {
        if (x < INT32_MIN || x > INT32_MAX) {
            return MN_FLEX_RANGE;
        }
        *out = (int32_t)x;
    }
    return s;
}

mn_flex_status_t mn_flex_f32(const mn_flex_map_t *m, const char *key, float *out) {
    mn_flex_value_t v;
    double x;
    mn_flex_status_t s = mn_flex_find(m, key, &v);
    if (s == MN_FLEX_OK) {
        s = mn_flex_value_f64(&v, &x);
    }
    if (s == MN_FLEX_OK) {
        if (x > 3.4028234663852886e38 || x < -3.4028234663852886e38) {
            return MN_FLEX_RANGE;   /* (NaN passes: the kernel's own checks refuse it) */
        }
        *out = (float)x;
    }
    return s;
}

mn_flex_status_t mn_flex_bool(const mn_flex_map_t *m, const char *key, bool *out) {
    mn_flex_value_t v;
    bool x;
    mn_flex_status_t s = mn_flex_find(m, key, &v);
    if (s == MN_FLEX_OK) {
        s = mn_flex_value_bool(&v, &x);
    }
    if (s == MN_FLEX_OK) {
        *out = x;
    }
    return s;
}

const char *mn_flex_status_str(mn_flex_status_t s) {
    switch (s) {
    case MN_FLEX_OK: return "ok";
    case MN_FLEX_ABSENT: return "absent";
    case MN_FLEX_MALFORMED: return "malformed flexbuffer";
    case MN_FLEX_TYPE: return "wrong type";
    case MN_FLEX_RANGE: return "out of range";
    }
    return "?";
}
