/*
 * int8 ADD / SUB and MUL on Armv7E-M (dsp.add_s8, dsp.mul_s8), bit-exact with
 * mn_add_s8 / mn_sub_s8 / mn_mul_s8 for the shapes of mn_ew_shape (same shape, a scalar operand,
 * a per-channel operand along the innermost dimension) under mn_ew_add_s8_ok / mn_ew_mul_s8_ok.
 *
 * The parameters are unpacked once per call and the loops walk flat pointers (no per-element
 * broadcast index arithmetic); a scalar operand is rescaled once. Every
 * SaturatingRoundingDoublingHighMul(x, m) here has |x| < 2^30, so it is one SMMULR(2x, m)
 * (dsp.h, dsp_smmulr). RoundingDivideByPOT(x, r) is (x + 2^(r-1) - (x < 0)) >> r for r >= 1 and
 * x for r = 0 (MUL: the constants half and fix make both one expression); where r >= 1 is known
 * (ADD) it is ((x - (x < 0)) >> (r - 1) + 1) >> 1, and an offset k added after it folds into
 * the + 1 as + 1 + 2k (dsp_out_fast_r).
 */
#include "dsp.h"

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

/* SaturatingRoundingDoublingHighMul(x, m) for |x| < 2^30. */
EW_INLINE int32_t ew_srdhm(int32_t x, int32_t m) {
    return dsp_smmulr((int32_t)((uint32_t)x << 1), m);
}

/* ---- ADD / SUB ---------------------------------------------------------------------------- */

/*
 * mn_add_quant_init gives the input with the larger scale the multiplier 1/2 exactly (2^30, no
 * shift): its rescaled value is v << 19 ("unit" input, one ADD with a shifted operand). The other
 * one has a multiplier below 1/2 (a right shift r >= 1: the folded rounding below); when it is a
 * unit input too (equal scales) it is written as SMMULR(v << 22, 2^30) = v << 20 with r = 1, so
 * the general form covers it: x = SMMULR((x + off) << ps, m) = SMMULR(x * 2^ps + K, m), then
 * RoundingDivideByPOT(x, r) = ((x - (x < 0)) >> (r - 1) + 1) >> 1.
 */
typedef struct {
    int32_t ku;          /* unit input: offset << 19 */
    int32_t pg, kg, mg;  /* the other: 2^ps, offset << ps, multiplier */
    int rg;              /* its right shift - 1 */
    int32_t mo, c1, lo, hi;
    int ro;              /* output right shift - 1 */
} add_k_t;

EW_INLINE int32_t unit_in(const add_k_t *k, int32_t x) {
    return k->ku + (int32_t)((uint32_t)x << 19);
}

EW_INLINE int32_t gen_in(const add_k_t *k, int32_t x) {
    const int32_t t = dsp_smmulr(x * k->pg + k->kg, k->mg);
    return (((t + (t >> 31)) >> k->rg) + 1) >> 1;
}

/* (int32: the caller's byte store narrows it, no sign extension in between) */
EW_INLINE int32_t add_out(const add_k_t *k, int32_t s) {
    const int32_t x = ew_srdhm(s, k->mo);
    int32_t v = (((x + (x >> 31)) >> k->ro) + k->c1) >> 1;
    v = v < k->lo ? k->lo : v;
    return v > k->hi ? k->hi : v;
}

/* Both inputs advance, u the unit one, g the other: MODE 0: u + g, 1: u - g, 2: g - u. */
EW_INLINE void add_loop2(const add_k_t *kp, const int8_t *u, const int8_t *g, int8_t *o, int32_t n, int mode) {
    const add_k_t kl = *kp, *k = &kl;   /* a local copy: the int8 stores cannot alias it */
    for (int32_t i = 0; i < n; ++i) {
        const int32_t su = unit_in(k, u[i]), sg = gen_in(k, g[i]);
        o[i] = (int8_t)add_out(k, mode == 0 ? su + sg : mode == 1 ? su - sg : sg - su);
    }
}

/* One input advances (a, rescaled in the general form), the other is the constant c:
 * NEG 0: c + a, 1: c - a. */
EW_INLINE void add_loop1(const add_k_t *kp, const int8_t *a, int32_t c, int8_t *o, int32_t n, int neg) {
    const add_k_t kl = *kp, *k = &kl;
    for (int32_t i = 0; i < n; ++i) {
        const int32_t sa = gen_in(k, a[i]);
        o[i] = (int8_t)add_out(k, neg ? c - sa : c + sa);
    }
}

static void add_same(const add_k_t *k, const int8_t *u, const int8_t *g, int8_t *o, int32_t n, int mode) {
    if (mode == 0) {
        add_loop2(k, u, g, o, n, 0);
    } else if (mode == 1) {
        add_loop2(k, u, g, o, n, 1);
    } else {
        add_loop2(k, u, g, o, n, 2);
    }
}

static void add_scalar(const add_k_t *k, const int8_t *a, int32_t c, int8_t *o, int32_t n, int neg) {
    if (neg) {
        add_loop1(k, a, c, o, n, 1);
    } else {
        add_loop1(k, a, c, o, n, 0);
    }
}

/* The general form's constants for an input with (offset, multiplier, shift). */
static void gen_k(add_k_t *k, int32_t off, int32_t mult, int shift) {
    const bool unit = mult == (1 << 30) && shift == 0;
    const int ps = unit ? 22 : 21;
    k->pg = (int32_t)1 << ps;
    k->kg = (int32_t)((uint32_t)off << ps);
    k->mg = mult;
    k->rg = unit ? 0 : -shift - 1;
}

static void add_run(const mn_add_quant_t *p, const mn_bcast_t *b, int sub, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    int32_t inner;
    const int shape = mn_ew_shape(b, &inner);
    const int32_t n = b->size;
    if (n <= 0) {
        return;
    }
    add_k_t k;
    k.mo = p->output_mult;
    k.c1 = 1 + 2 * p->output_offset;
    k.ro = -p->output_shift - 1;
    k.lo = p->act_min;
    k.hi = p->act_max;
    if (shape == MN_EW_SCALAR2 || shape == MN_EW_SCALAR1) {
        /* the scalar rescaled once (in the general form, like the other) */
        const bool s2 = shape == MN_EW_SCALAR2;
        gen_k(&k, s2 ? p->input2_offset : p->input1_offset, s2 ? p->input2_mult : p->input1_mult,
            s2 ? p->input2_shift : p->input1_shift);
        const int32_t c = gen_in(&k, s2 ? in2[0] : in1[0]);
        gen_k(&k, s2 ? p->input1_offset : p->input2_offset, s2 ? p->input1_mult : p->input2_mult,
            s2 ? p->input1_shift : p->input2_shift);
        /* in1 + c, in1 - c = -c + in1, c + in2, c - in2 */
        add_scalar(&k, s2 ? in1 : in2, s2 && sub ? -c : c, out, n, !s2 && sub);
        return;
    }
    const bool u1 = p->input1_mult == (1 << 30) && p->input1_shift == 0;   /* else input 2 is (fits) */
    k.ku = (int32_t)((uint32_t)(u1 ? p->input1_offset : p->input2_offset) << 19);
    gen_k(&k, u1 ? p->input2_offset : p->input1_offset, u1 ? p->input2_mult : p->input1_mult,
        u1 ? p->input2_shift : p->input1_shift);
    const int mode = !sub ? 0 : u1 ? 1 : 2;
    if (shape == MN_EW_SAME) {
        add_same(&k, u1 ? in1 : in2, u1 ? in2 : in1, out, n, mode);
        return;
    }
    /* per channel: one input advances by rows, the other restarts each row */
    for (int32_t r = 0; r < n; r += inner) {
        const int8_t *a = shape == MN_EW_CHAN1 ? in1 : in1 + r, *c = shape == MN_EW_CHAN2 ? in2 : in2 + r;
        add_same(&k, u1 ? a : c, u1 ? c : a, out + r, inner, mode);
    }
}

const mn_add_s8_variant_t mn_dsp_add_s8 = { "dsp.add_s8", mn_dsp_add_s8_fits, add_run };

/* ---- MUL ---------------------------------------------------------------------------------- */

typedef struct {
    int32_t off1, off2, mult, out_off, lo, hi;
    int left;   /* left shift + 1 (SMMULR doubles) */
    ew_rdiv_t d;
} mul_k_t;

EW_INLINE int8_t mul_one(const mul_k_t *k, int32_t x, int32_t y) {
    const int32_t prod = (x + k->off1) * (y + k->off2);   /* |prod| <= 2^16 */
    int32_t v = ew_div(dsp_smmulr((int32_t)((uint32_t)prod << k->left), k->mult), k->d) + k->out_off;
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
                  (p->shift > 0 ? p->shift : 0) + 1, ew_rdiv(p->shift > 0 ? 0 : p->shift) };
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

const mn_mul_s8_variant_t mn_dsp_mul_s8 = { "dsp.mul_s8", mn_dsp_mul_s8_fits, mul_run };

#endif
