// The double-precision functions the engine needs (exp, floor, round; scalbn for exp), as
// micronn_exp & co. (see engine/mn_config.h, MICRONN_OWN_LIBM_DBL). One file per function, as
// each lib/libm_dbl file has its own static constants.
// - Bare metal: MicroPython's own lib/libm_dbl, renamed. Such ports link only the single-precision
//   lib/libm, and a port that compiles lib/libm_dbl itself (double floats) cannot clash with it.
// - Hosted (unix port): the C library's, which is there anyway (and glibc's math.h declares
//   names lib/libm_dbl's libm.h redefines).
// math.h first, before the renaming: its declarations keep the C library's names.
#include <math.h>
#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
#define MICRONN_LIBM_FROM_LIBC (1)
#else
#define MICRONN_LIBM_FROM_LIBC (0)
#define exp micronn_exp
#define floor micronn_floor
#define round micronn_round
#define scalbn micronn_scalbn
double exp(double x);
double floor(double x);
double round(double x);
double scalbn(double x, int n);
#endif
