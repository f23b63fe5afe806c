// micronn_scalbn, which lib/libm_dbl's exp calls: MicroPython's lib/libm_dbl/scalbn.c (see
// micronn_libm.h); nothing with the C library's.
#include "micronn_libm.h"
#if !MICRONN_LIBM_FROM_LIBC
// scalbn.c takes double_t from math.h, which C libraries leave undefined when GCC reports
// FLT_EVAL_METHOD 16 (cores with half-precision arithmetic, e.g. Cortex-M55); libm.h defines it
// as lib/libm_dbl assumes (double), as for the other files.
#include "lib/libm_dbl/libm.h"
#include "lib/libm_dbl/scalbn.c"
#endif
