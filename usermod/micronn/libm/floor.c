// micronn_floor: MicroPython's lib/libm_dbl/floor.c, or the C library's (see micronn_libm.h).
#include "micronn_libm.h"
#if MICRONN_LIBM_FROM_LIBC
double micronn_floor(double x) {
    return floor(x);
}
#else
#include "lib/libm_dbl/floor.c"
#endif
