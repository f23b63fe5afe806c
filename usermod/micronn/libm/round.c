// micronn_round: MicroPython's lib/libm_dbl/round.c, or the C library's (see micronn_libm.h).
#include "micronn_libm.h"
#if MICRONN_LIBM_FROM_LIBC
double micronn_round(double x) {
    return round(x);
}
#else
#include "lib/libm_dbl/round.c"
#endif
