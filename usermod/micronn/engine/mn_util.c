/*
 * Small utilities: status/dtype names, a tiny printf subset for error messages (so the engine
 * needs no stdio and works on bare-metal libc-less builds), error records.
 */
#include "mn_fb.h"
#include "mn_util.h"
#include "mn_quant.h"

const char *mn_status_str(mn_status_t s) {
    switch (s) {
        case MN_OK: return "ok";
        case MN_ERR_ARG: return "bad argument";
        case MN_ERR_MODEL: return "invalid model";
        case MN_ERR_UNSUPPORTED: return "unsupported";
        case MN_ERR_ARENA: return "arena too small";
        case MN_ERR_STATE: return "bad state";
        case MN_ERR_KERNEL: return "kernel error";
        case MN_ERR_ABORTED: return "aborted";
        default: return "?";
    }
}

size_t mn_dtype_size(int32_t dtype) {
    switch (dtype) {
        case MN_FLOAT32: case MN_INT32: case MN_UINT32: return 4;
        case MN_FLOAT16: case MN_INT16: case MN_UINT16: return 2;
        case MN_UINT8: case MN_INT8: case MN_BOOL: case MN_INT4: return 1;
        case MN_INT64: case MN_UINT64: case MN_FLOAT64: case MN_COMPLEX64: return 8;
        case MN_COMPLEX128: return 16;
        default: return 0;
    }
}

size_t mn_tensor_count(const mn_tensor_t *t) {
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        n *= (size_t)t->dims[i];
    }
    return n;
}

/* Vector `field` of a verified table at q, found from q alone (flatbuffer offsets are relative):
 * its first element, *n = its length (NULL, 0 when absent). */
static const uint8_t *table_vec(const uint8_t *q, int field, uint32_t *n) {
    const uint8_t *vt = q - mn_ld_i32(q);
    uint32_t vo = 4u + 2u * (uint32_t)field;
    uint32_t fo = vo + 2u <= mn_ld_u16(vt) ? mn_ld_u16(vt + vo) : 0;
    if (!fo) {
        *n = 0;
        return NULL;
    }
    const uint8_t *v = q + fo + mn_ld_u32(q + fo);
    *n = mn_ld_u32(v);
    return v + 4;
}

const uint8_t *mn_tensor_scales(const mn_tensor_t *t) {
    uint32_t n;
    return t->quant ? table_vec(t->quant, F_Q_SCALE, &n) : NULL;
}

const uint8_t *mn_tensor_zero_points(const mn_tensor_t *t) {
    uint32_t n = 0;
    const uint8_t *v = t->quant ? table_vec(t->quant, F_Q_ZERO_POINT, &n) : NULL;
    return n ? v : NULL;
}

int32_t mn_tensor_q_count(const mn_tensor_t *t) {
    uint32_t n = 0;
    if (t->quant) {
        table_vec(t->quant, F_Q_SCALE, &n);
    }
    return (int32_t)n;
}

/* Element ch of a stored vector of n (channel 0 when ch is out of range). */
static size_t channel(int32_t ch, uint32_t n) {
    return ch >= 0 && (uint32_t)ch < n ? (size_t)ch : 0;
}

float mn_tensor_scale(const mn_tensor_t *t, int32_t ch) {
    uint32_t n = 0;
    const uint8_t *v = t->quant ? table_vec(t->quant, F_Q_SCALE, &n) : NULL;
    return n ? mn_ld_f32(v + 4 * channel(ch, n)) : 0.0f;
}

int32_t mn_tensor_zero_point(const mn_tensor_t *t, int32_t ch) {
    uint32_t n = 0;   /* the verifier: as many zero points as scales, or none */
    const uint8_t *v = t->quant ? table_vec(t->quant, F_Q_ZERO_POINT, &n) : NULL;
    return n ? (int32_t)mn_ld_u64(v + 8 * channel(ch, n)) : 0;
}

size_t mn_tensor_bytes(const mn_tensor_t *t) {
    size_t count = mn_tensor_count(t);
    return t->dtype == MN_INT4 ? (count + 1) / 2 : count * mn_dtype_size(t->dtype);
}

typedef struct {
    char *out;
    size_t cap;
    size_t len;
} fmt_buf_t;

static void put_c(fmt_buf_t *f, char c) {
    if (f->len + 1 < f->cap) {
        f->out[f->len] = c;
    }
    f->len++;
}

static void put_s(fmt_buf_t *f, const char *s) {
    if (!s) {
        s = "(null)";
    }
    while (*s) {
        put_c(f, *s++);
    }
}

static void put_u(fmt_buf_t *f, uint64_t v, unsigned base) {
    char tmp[24];
    int n = 0;
    do {
        uint32_t d;
        v = mn_udivmod64(v, base, &d);
        tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    } while (v);
    while (n) {
        put_c(f, tmp[--n]);
    }
}

size_t mn_vfmt(char *out, size_t cap, const char *fmt, va_list ap) {
    fmt_buf_t f = { out, cap, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put_c(&f, *fmt);
            continue;
        }
        fmt++;
        int lng = 0, sz = 0;
        while (*fmt == 'l') {
            lng++;
            fmt++;
        }
        if (*fmt == 'z') {
            sz = 1;
            fmt++;
        }
        switch (*fmt) {
            case 'd': case 'i': {
                int64_t v = sz ? (int64_t)va_arg(ap, ptrdiff_t) : lng > 1 ? (int64_t)va_arg(ap, long long)
                          : lng ? (int64_t)va_arg(ap, long) : (int64_t)va_arg(ap, int);
                if (v < 0) {
                    put_c(&f, '-');
                    put_u(&f, (uint64_t)0 - (uint64_t)v, 10);
                } else {
                    put_u(&f, (uint64_t)v, 10);
                }
                break;
            }
            case 'u': case 'x': {
                uint64_t v = sz ? (uint64_t)va_arg(ap, size_t) : lng > 1 ? (uint64_t)va_arg(ap, unsigned long long)
                           : lng ? (uint64_t)va_arg(ap, unsigned long) : (uint64_t)va_arg(ap, unsigned);
                put_u(&f, v, *fmt == 'x' ? 16 : 10);
                break;
            }
            case 's': put_s(&f, va_arg(ap, const char *)); break;
            case 'c': put_c(&f, (char)va_arg(ap, int)); break;
            case '%': put_c(&f, '%'); break;
            case '\0': fmt--; break;
            default: put_c(&f, '%'); put_c(&f, *fmt); break;
        }
    }
    if (cap) {
        out[f.len < cap ? f.len : cap - 1] = '\0';
    }
    return f.len;
}

size_t mn_fmt(char *out, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t n = mn_vfmt(out, cap, fmt, ap);
    va_end(ap);
    return n;
}

mn_status_t mn_err_set(mn_error_t *e, mn_status_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    e->status = code;
    mn_vfmt(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

size_t mn_model_struct_size(void) {
    return sizeof(mn_model_t);
}

size_t mn_interp_struct_size(void) {
    return sizeof(mn_interp_t);
}

const char *mn_model_errmsg(const mn_model_t *m) {
    return m->err.msg;
}

const char *mn_interp_errmsg(const mn_interp_t *it) {
    return it->err.msg;
}
