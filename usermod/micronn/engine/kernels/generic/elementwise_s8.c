/*
 * int8 ADD / SUB and MUL in portable C (generic.add_s8, generic.mul_s8), bit-exact with
 * mn_add_s8 / mn_sub_s8 / mn_mul_s8 for the shapes of mn_ew_shape (same shape, a scalar operand,
 * a per-channel operand along the innermost dimension) under mn_ew_add_s8_ok / mn_ew_mul_s8_ok.
 *
 * The parameters are unpacked once per call and the loops walk flat pointers (no per-element
 * broadcast index arithmetic); a scalar operand is rescaled once. ADD's input rescaling
 * SaturatingRoundingDoublingHighMul(v << 20, m) is floor((v * m + 2^10) / 2^11) (the double
 * rounding's nudge works out to that for either sign, and nothing saturates for |v| <= 256); with
 * m = mh * 2^11 + ml (0 <= ml < 2^11) it is v * mh + ((v * ml + 2^10) >> 11), two 32-bit products
 * and no 64-bit sum (which RV32 builds from MUL, MULH and a carry); for the input with the larger
 * scale, whose multiplier mn_add_quant_init makes 1/2 exactly, it is v << 19. RoundingDivideByPOT(x, r) is
 * (x + 2^(r-1) - (x < 0)) >> r for r >= 1, and x for r = 0: the constants half and fix below make
 * both one expression.
 */
#include "generic.h"

#if (MICRONN_OP_ADD || MICRONN_OP_SUB || MICRONN_OP_MUL) && MICRONN_TYPE_INT8

#if defined(__GNUC__)
#define EW_INLINE static inline __attribute__((always_inline))
#else
#define EW_INLINE static inline
#endif

/* One RoundingDivideByPOT by a right shift r in [0, 31], as constants. */
typedef struct {
    int32_t half, fix;
    int r;
} ew_rdiv_t;

static ew_rdiv_t ew_rdiv(int shift) {
    const int r = -shift;
    ew_rdiv_t d = { r ? (int32_t)1 << (r - 1) : 0, r ? -1 : 0, r };
    return d;
}

EW_INLINE int32_t ew_div(int32_t x, ew_rdiv_t d) {
    return (x + ((x >> 31) & d.fix) + d.half) >> d.r;
}

/* SaturatingRoundingDoublingHighMul(x, m) for m != INT32_MIN. */
EW_INLINE int32_t ew_srdhm(int32_t x, int32_t m) {
    return (int32_t)(((int64_t)x * m + ((int64_t)1 << 30)) >> 31);
}

/* ---- ADD / SUB ---------------------------------------------------------------------------- */

typedef struct {
    int32_t off1, off2, mh1, ml1, mh2, ml2, mo, out_off, lo, hi;
    int32_t ku1, ku2;   /* offset << 19, for an input whose multiplier is 1/2 */
    ew_rdiv_t d1, d2, dout;
} add_k_t;

static void add_k(add_k_t *k, const mn_add_quant_t *p) {
    k->off1 = p->input1_offset;
    k->off2 = p->input2_offset;
    k->mh1 = p->input1_mult >> 11;
    k->ml1 = p->input1_mult & 0x7ff;
    k->mh2 = p->input2_mult >> 11;
    k->ml2 = p->input2_mult & 0x7ff;
    k->mo = p->output_mult;
    k->out_off = p->output_offset;
    k->lo = p->act_min;
    k->hi = p->act_max;
    k->d1 = ew_rdiv(p->input1_shift);
    k->d2 = ew_rdiv(p->input2_shift);
    k->dout = ew_rdiv(p->output_shift);
    k->ku1 = (int32_t)((uint32_t)p->input1_offset << 19);
    k->ku2 = (int32_t)((uint32_t)p->input2_offset << 19);
}

/* mn_add_quant_init gives the input with the larger scale the multiplier 1/2 exactly (2^30, no
 * shift): rescaled, it is (x + offset) << 19. */
static bool add_unit(int32_t mult, int shift) {
    return mult == (1 << 30) && shift == 0;
}

/* An input value v (offset added) rescaled: mn_mul_by_qm(v << 20, m, shift). */
EW_INLINE int32_t add_in(int32_t v, int32_t mh, int32_t ml, ew_rdiv_t d) {
    return ew_div(v * mh + ((v * ml + 1024) >> 11), d);
}

/* (int32: the caller's byte store narrows it) */
EW_INLINE int32_t add_out(const add_k_t *k, int32_t s) {
    int32_t v = ew_div(ew_srdhm(s, k->mo), k->dout) + k->out_off;
    v = v < k->lo ? k->lo : v;
    return v > k->hi ? k->hi : v;
}

/* n elements; SA / SB: whether in1 / in2 advance (0: a scalar, rescaled once); U: 1 / 2 when
 * input 1 / 2 has the multiplier 1/2 (add_unit), else 0. */
EW_INLINE void add_loop(const add_k_t *kp, const int8_t *a, const int8_t *b, int8_t *o, int32_t n, int sub,
    int sa, int sb, int u) {
    const add_k_t kl = *kp, *k = &kl;   /* a local copy: the int8 stores cannot alias it */
    const int32_t ca = sa ? 0 : add_in(*a + k->off1, k->mh1, k->ml1, k->d1);
    const int32_t cb = sb ? 0 : add_in(*b + k->off2, k->mh2, k->ml2, k->d2);
    for (int32_t i = 0; i < n; ++i) {
        const int32_t s1 = !sa ? ca : u == 1 ? k->ku1 + (int32_t)((uint32_t)a[i] << 19)
            : add_in(a[i] + k->off1, k->mh1, k->ml1, k->d1);
        const int32_t s2 = !sb ? cb : u == 2 ? k->ku2 + (int32_t)((uint32_t)b[i] << 19)
            : add_in(b[i] + k->off2, k->mh2, k->ml2, k->d2);
        o[i] = (int8_t)add_out(k, sub ? s1 - s2 : s1 + s2);
    }
}

static void add_same(const add_k_t *k, const int8_t *a, const int8_t *b, int8_t *o, int32_t n, int sub, int u) {
    if (u == 1) {
        if (sub) {
            add_loop(k, a, b, o, n, 1, 1, 1, 1);
        } else {
            add_loop(k, a, b, o, n, 0, 1, 1, 1);
        }
    } else if (u == 2) {
        if (sub) {
            add_loop(k, a, b, o, n, 1, 1, 1, 2);
        } else {
            add_loop(k, a, b, o, n, 0, 1, 1, 2);
        }
    } else if (sub) {
        add_loop(k, a, b, o, n, 1, 1, 1, 0);
    } else {
        add_loop(k, a, b, o, n, 0, 1, 1, 0);
    }
}

static void add_run(const mn_add_quant_t *p, const mn_bcast_t *b, int sub, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    add_k_t k;
    add_k(&k, p);
    int32_t inner;
    const int shape = mn_ew_shape(b, &inner);
    const int32_t n = b->size;
    if (n <= 0) {
        return;
    }
    const int u = add_unit(p->input1_mult, p->input1_shift) ? 1 : add_unit(p->input2_mult, p->input2_shift) ? 2 : 0;
    switch (shape) {
        case MN_EW_SAME:
            add_same(&k, in1, in2, out, n, sub, u);
            break;
        case MN_EW_SCALAR2:
            if (sub) {
                add_loop(&k, in1, in2, out, n, 1, 1, 0, 0);
            } else {
                add_loop(&k, in1, in2, out, n, 0, 1, 0, 0);
            }
            break;
        case MN_EW_SCALAR1:
            if (sub) {
                add_loop(&k, in1, in2, out, n, 1, 0, 1, 0);
            } else {
                add_loop(&k, in1, in2, out, n, 0, 0, 1, 0);
            }
            break;
        default:   /* per channel: one input advances by rows, the other restarts each row */
            for (int32_t r = 0; r < n; r += inner) {
                const int8_t *a = shape == MN_EW_CHAN1 ? in1 : in1 + r;
                const int8_t *c = shape == MN_EW_CHAN2 ? in2 : in2 + r;
                add_same(&k, a, c, out + r, inner, sub, u);
            }
            break;
    }
}

static bool add_fits(const mn_add_quant_t *p, const mn_bcast_t *b) {
    return mn_ew_add_s8_ok(p, b);
}

const mn_add_s8_variant_t mn_generic_add_s8 = { "generic.add_s8", add_fits, add_run };

/* ---- MUL ---------------------------------------------------------------------------------- */

typedef struct {
    int32_t off1, off2, mult, out_off, lo, hi;
    int left;
    ew_rdiv_t d;
} mul_k_t;

EW_INLINE int8_t mul_one(const mul_k_t *k, int32_t x, int32_t y) {
    const int32_t prod = (x + k->off1) * (y + k->off2);   /* |prod| <= 2^16 */
    int32_t v = ew_div(ew_srdhm((int32_t)((uint32_t)prod << k->left), k->mult), k->d) + k->out_off;
    v = v < k->lo ? k->lo : v;
    return (int8_t)(v > k->hi ? k->hi : v);
}

static void mul_vec(const mul_k_t *kp, const int8_t *a, const int8_t *b, int8_t *o, int32_t n) {
    const mul_k_t kl = *kp, *k = &kl;   /* a local copy: the int8 stores cannot alias it */
    for (int32_t i = 0; i < n; ++i) {
        o[i] = mul_one(k, a[i], b[i]);
    }
}

/* One operand a scalar c (already offset: the product is linear in the other). */
static void mul_scalar(const mul_k_t *k, const int8_t *a, int32_t off, int32_t c, int8_t *o, int32_t n) {
    mul_k_t ks = *k;
    ks.off1 = off;
    ks.off2 = 0;
    for (int32_t i = 0; i < n; ++i) {
        o[i] = mul_one(&ks, a[i], c);
    }
}

static void mul_run(const mn_mul_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    mul_k_t k = { p->input1_offset, p->input2_offset, p->mult, p->output_offset, p->act_min, p->act_max,
                  p->shift > 0 ? p->shift : 0, ew_rdiv(p->shift > 0 ? 0 : p->shift) };
    int32_t inner;
    const int shape = mn_ew_shape(b, &inner);
    const int32_t n = b->size;
    if (n <= 0) {
        return;
    }
    switch (shape) {
        case MN_EW_SAME:
            mul_vec(&k, in1, in2, out, n);
            break;
        case MN_EW_SCALAR2:
            mul_scalar(&k, in1, k.off1, in2[0] + k.off2, out, n);
            break;
        case MN_EW_SCALAR1:   /* (a * b == b * a: the product is the same int32) */
            mul_scalar(&k, in2, k.off2, in1[0] + k.off1, out, n);
            break;
        default:
            for (int32_t r = 0; r < n; r += inner) {
                mul_vec(&k, shape == MN_EW_CHAN1 ? in1 : in1 + r, shape == MN_EW_CHAN2 ? in2 : in2 + r, out + r,
                    inner);
            }
            break;
    }
}

static bool mul_fits(const mn_mul_quant_t *p, const mn_bcast_t *b) {
    return mn_ew_mul_s8_ok(p, b);
}

const mn_mul_s8_variant_t mn_generic_mul_s8 = { "generic.mul_s8", mul_fits, mul_run };

#endif
