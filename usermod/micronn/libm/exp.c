// micronn_exp: MicroPython's lib/libm_dbl/exp.c, or the C library's (see micronn_libm.h).
#include "micronn_libm.h"
#if MICRONN_LIBM_FROM_LIBC
double micronn_exp(double x) {
    return exp(x);
}
#else
#include "lib/libm_dbl/exp.c"
#endif
