/*
 * int8 ADD / SUB and MUL on Helium (mve.add_s8, mve.mul_s8), bit-exact with mn_add_s8 /
 * mn_sub_s8 / mn_mul_s8 for the shapes of mn_ew_shape (same shape, a scalar operand, a
 * per-channel operand along the innermost dimension) under mn_ew_add_s8_ok / mn_ew_mul_s8_ok.
 *
 * Four elements per step in 32-bit lanes (the rescaling needs 32 bits): VLDRB.S32 widens four
 * int8, VSTRB.32 narrows them back, and a last partial step is predicated (VCTP), so any length
 * runs without a scalar tail. Each mn_mul_by_qm is VQRDMULH then the rounding right shift as in mve.h
 * (mn_mve_requant_x): exact while no multiplier is INT32_MIN (fits()). A scalar operand is
 * rescaled once; a per-channel one restarts each row.
 */
#include "mve.h"

#if (MICRONN_OP_ADD || MICRONN_OP_SUB || MICRONN_OP_MUL) && MICRONN_TYPE_INT8

#define EW_INLINE static inline __attribute__((always_inline))

/* mn_mul_by_qm(x, m, shift) for shift <= 0 (right = vector of shift). */
EW_INLINE int32x4_t ew_scale(int32x4_t x, int32_t m, int32x4_t right) {
    x = vqrdmulhq_n_s32(x, m);
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
    return vrshlq_s32(x, right);
}

/* ---- ADD / SUB ---------------------------------------------------------------------------- */

typedef struct {
    int32_t off1, off2, m1, m2, mo, out_off, lo, hi;
    int32_t sh1, sh2, sho;
} add_k_t;

/* Four int8 widened; FULL: all lanes (no predication), else the lanes of pr (others 0). */
EW_INLINE int32x4_t ew_load(const int8_t *p, mve_pred16_t pr, bool full) {
    return full ? vldrbq_s32(p) : vldrbq_z_s32(p, pr);
}

EW_INLINE void ew_store(int8_t *p, int32x4_t v, mve_pred16_t pr, bool full) {
    if (full) {
        vstrbq_s32(p, v);
    } else {
        vstrbq_p_s32(p, v, pr);
    }
}

EW_INLINE int32x4_t add_in(const int8_t *p, mve_pred16_t pr, bool full, int32_t off, int32_t m, int32x4_t right) {
    return ew_scale(vshlq_n_s32(vaddq_n_s32(ew_load(p, pr, full), off), 20), m, right);
}

/* mn_add_quant_init gives the input with the larger scale the multiplier 1/2 exactly (2^30, no
 * shift): rescaled, it is (x + offset) << 19, one VMLA by 2^19 onto offset << 19. */
EW_INLINE int32x4_t unit_in(const int8_t *p, mve_pred16_t pr, bool full, int32x4_t ku) {
    return vmlaq_n_s32(ku, ew_load(p, pr, full), 1 << 19);
}

/* One step of four elements (predicated by pr). U: 1 / 2 when input 1 / 2 is a unit one (and
 * both advance), 0: both rescaled in full. */
#define ADD_STEP(pr, full) \
    do { \
        const int32x4_t s1 = !sa ? va : u == 1 ? unit_in(a + i, pr, full, ku1) \
            : add_in(a + i, pr, full, off1, m1, r1); \
        const int32x4_t s2 = !sb ? vb : u == 2 ? unit_in(b + i, pr, full, ku2) \
            : add_in(b + i, pr, full, off2, m2, r2); \
        const int32x4_t v = mn_mve_requant_x(sub ? vsubq_s32(s1, s2) : vaddq_s32(s1, s2), mo, ro, out_off, lo, \
            hi, false); \
        ew_store(o + i, v, pr, full); \
    } while (0)

/* n elements; SA / SB: whether in1 / in2 advance (0: a scalar, rescaled once). */
EW_INLINE void add_loop(const add_k_t *k, const int8_t *a, const int8_t *b, int8_t *o, int32_t n, int sub,
    int sa, int sb, int u) {
    const int32x4_t r1 = vdupq_n_s32(k->sh1), r2 = vdupq_n_s32(k->sh2);
    const int32x4_t mo = vdupq_n_s32(k->mo), ro = vdupq_n_s32(k->sho);
    const int32x4_t ku1 = vdupq_n_s32((int32_t)((uint32_t)k->off1 << 19));
    const int32x4_t ku2 = vdupq_n_s32((int32_t)((uint32_t)k->off2 << 19));
    const int32_t off1 = k->off1, off2 = k->off2, m1 = k->m1, m2 = k->m2, out_off = k->out_off, lo = k->lo,
                  hi = k->hi;
    const int32x4_t ca = sa ? vdupq_n_s32(0) : add_in(a, vctp32q(1), false, off1, m1, r1);
    const int32x4_t cb = sb ? vdupq_n_s32(0) : add_in(b, vctp32q(1), false, off2, m2, r2);
    const int32x4_t va = vdupq_n_s32(vgetq_lane_s32(ca, 0)), vb = vdupq_n_s32(vgetq_lane_s32(cb, 0));
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {   /* whole steps unpredicated */
        ADD_STEP(0, true);
    }
    if (i < n) {
        const mve_pred16_t tail = vctp32q((uint32_t)(n - i));
        ADD_STEP(tail, false);
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

static bool add_unit(int32_t mult, int shift) {
    return mult == (1 << 30) && shift == 0;
}

static void add_run(const mn_add_quant_t *p, const mn_bcast_t *b, int sub, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    const add_k_t k = { p->input1_offset, p->input2_offset, p->input1_mult, p->input2_mult, p->output_mult,
                        p->output_offset, p->act_min, p->act_max, p->input1_shift, p->input2_shift,
                        p->output_shift };
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
                add_same(&k, shape == MN_EW_CHAN1 ? in1 : in1 + r, shape == MN_EW_CHAN2 ? in2 : in2 + r, out + r,
                    inner, sub, u);
            }
            break;
    }
}

const mn_add_s8_variant_t mn_mve_add_s8 = { "mve.add_s8", mn_mve_add_s8_fits, add_run };

/* ---- MUL ---------------------------------------------------------------------------------- */

/* n elements; SB: whether in2 advances (0: in2 is the scalar cb, offset added); LEFT: a left shift. */
EW_INLINE void mul_loop(const mn_mul_quant_t *p, const int8_t *a, const int8_t *b, int8_t *o, int32_t n,
    int sb, int32_t cb, bool left) {
    const int32x4_t mult = vdupq_n_s32(p->mult), shift = vdupq_n_s32(p->shift);
    const int32_t off1 = p->input1_offset, off2 = p->input2_offset, out_off = p->output_offset, lo = p->act_min,
                  hi = p->act_max;
    for (int32_t i = 0; i < n; i += 4) {
        const mve_pred16_t pr = vctp32q((uint32_t)(n - i));
        const int32x4_t x = vaddq_n_s32(vldrbq_z_s32(a + i, pr), off1);
        const int32x4_t prod = sb ? vmulq_s32(x, vaddq_n_s32(vldrbq_z_s32(b + i, pr), off2)) : vmulq_n_s32(x, cb);
        vstrbq_p_s32(o + i, mn_mve_requant_x(prod, mult, shift, out_off, lo, hi, left), pr);
    }
}

static void mul_vec(const mn_mul_quant_t *p, const int8_t *a, const int8_t *b, int8_t *o, int32_t n) {
    if (p->shift > 0) {
        mul_loop(p, a, b, o, n, 1, 0, true);
    } else {
        mul_loop(p, a, b, o, n, 1, 0, false);
    }
}

/* a times the scalar c (offset added); the product is symmetric, so either input may be a. */
static void mul_scalar(const mn_mul_quant_t *p, const int8_t *a, int32_t off_a, int32_t c, int8_t *o, int32_t n) {
    mn_mul_quant_t q = *p;
    q.input1_offset = off_a;
    if (p->shift > 0) {
        mul_loop(&q, a, NULL, o, n, 0, c, true);
    } else {
        mul_loop(&q, a, NULL, o, n, 0, c, false);
    }
}

static void mul_run(const mn_mul_quant_t *p, const mn_bcast_t *b, const int8_t *in1, const int8_t *in2,
    int8_t *out) {
    int32_t inner;
    const int shape = mn_ew_shape(b, &inner);
    const int32_t n = b->size;
    if (n <= 0) {
        return;
    }
    switch (shape) {
        case MN_EW_SAME:
            mul_vec(p, in1, in2, out, n);
            break;
        case MN_EW_SCALAR2:
            mul_scalar(p, in1, p->input1_offset, in2[0] + p->input2_offset, out, n);
            break;
        case MN_EW_SCALAR1:
            mul_scalar(p, in2, p->input2_offset, in1[0] + p->input1_offset, out, n);
            break;
        default:
            for (int32_t r = 0; r < n; r += inner) {
                mul_vec(p, shape == MN_EW_CHAN1 ? in1 : in1 + r, shape == MN_EW_CHAN2 ? in2 : in2 + r, out + r, inner);
            }
            break;
    }
}

const mn_mul_s8_variant_t mn_mve_mul_s8 = { "mve.mul_s8", mn_mve_mul_s8_fits, mul_run };

#endif
