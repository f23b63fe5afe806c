/* Helpers shared by the portable ("generic") kernel variants. */
#ifndef MN_GENERIC_H
#define MN_GENERIC_H

#include "../mn_variants.h"

/* Per-channel requantization of an int32 accumulator to int8 (mn_mul_by_qm, as conv). */
typedef struct {
    const int32_t *mult;
    const int8_t *shift;
    int32_t out_off, act_min, act_max;
} mn_generic_requant_t;

/* folded[o] = bias[o] + offset * sum_c w[o][c] (wrapping 32-bit), for `rows` rows of `cols` weights. */
void mn_generic_fold_offset(int rows, int cols, int32_t offset, const int8_t *w, const int32_t *bias,
    int32_t *folded);

/* out[o] = requant(folded[o] + sum_c w[o][c] * x[c]) for o < rows. */
void mn_generic_matvec_s8(const int8_t *x, const int8_t *w, const int32_t *folded, int cols, int rows,
    const mn_generic_requant_t *rq, int8_t *out);

/* Plain int8 dot product of n elements (wrapping 32-bit sum). */
int32_t mn_generic_dot_s8(const int8_t *a, const int8_t *b, int n);

extern const mn_conv_s8_variant_t mn_generic_conv_s8_1x1;

#endif /* MN_GENERIC_H */
