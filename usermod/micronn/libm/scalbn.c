// micronn_scalbn, which lib/libm_dbl's exp calls: MicroPython's lib/libm_dbl/scalbn.c (see
// micronn_libm.h); nothing with the C library's.
#include "micronn_libm.h"
#if !MICRONN_LIBM_FROM_LIBC
#include "lib/libm_dbl/scalbn.c"
#endif
