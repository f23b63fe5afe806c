/*
 * Layer 0: message formatting and error records (mn_util.c), used by every layer above.
 */
#ifndef MN_UTIL_H
#define MN_UTIL_H

#include <stdarg.h>
#include "mn_kernel.h"

size_t mn_vfmt(char *out, size_t cap, const char *fmt, va_list ap);
size_t mn_fmt(char *out, size_t cap, const char *fmt, ...);
mn_status_t mn_err_set(mn_error_t *e, mn_status_t code, const char *fmt, ...);
/* The one format of the dry runs' error (args: who, bytes needed, bytes given; one string). */
#define MN_WORK_TOO_SMALL "%s: work buffer too small: need at least %zu bytes, have %zu"


/* a * b, or SIZE_MAX on overflow (such a request then simply never fits the arena). */
static inline size_t mn_mul(size_t a, size_t b) {
    return (b && a > SIZE_MAX / b) ? SIZE_MAX : a * b;
}

#endif /* MN_UTIL_H */
