/*
 * Helpers shared by the Armv7E-M DSP kernel variants (Cortex-M4/M7, ACLE intrinsics).
 *
 * The int8 dot products run on SMLAD (two 16x16 MACs per instruction). An int8 word
 * x = [x0 x1 x2 x3] is split by SXTB16 into the halfword pairs [x0 x2] and [x1 x3]; activations
 * are expanded once into int16 in that same order ("reordered": x0 x2 x1 x3 per group of four,
 * input offset added), so weights need only two SXTB16 per word and no re-packing. Every sum is
 * taken modulo 2^32 (SMLAD wraps), like the reference's int32 accumulator.
 */
#ifndef MN_DSP_H
#define MN_DSP_H

#include <string.h>

#include "../mn_variants.h"
#include "dsp_fits.h"

#if !defined(__ARM_FEATURE_DSP) || !__ARM_FEATURE_DSP
#error "kernels/dsp needs the Armv7E-M DSP extension (Cortex-M4/M7/M33/M55): build it only for those boards"
#endif

#include <arm_acle.h>

/* Unaligned 32-bit load (LDR allows it on Armv7-M; memcpy keeps the C well defined). */
static inline int32_t dsp_ld32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Bytes 1 and 3 of x, sign-extended to halfwords (SXTB16 with ROR #8, one instruction). */
static inline int32_t dsp_sxtb16_ror8(int32_t x) {
    int32_t r;
    __asm("sxtb16 %0, %1, ror #8" : "=r" (r) : "r" (x));
    return r;
}

/* Requantization of one int32 accumulator, bit-exact with mn_mul_by_qm (the double-rounding
 * MultiplyByQuantizedMultiplier): for a product ab, SaturatingRoundingDoublingHighMul's
 * (ab + nudge) / 2^31 truncated equals (ab + 2^30) >> 31 for either sign; only
 * INT32_MIN * INT32_MIN saturates, so callers must reject mult == INT32_MIN (mn_variant_mults_ok).
 * RoundingDivideByPOT by e > 0 adds one when the remainder r = x mod 2^e exceeds 2^(e-1) - 1 + (x < 0),
 * i.e. when r + 2^(e-1) - (x < 0) >= 2^e (no overflow in uint32). */
static inline __attribute__((always_inline)) int32_t dsp_requant(int32_t acc, int32_t mult, int shift) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    const int64_t ab = (int64_t)(int32_t)((uint32_t)acc << left) * mult;
    int32_t x = (int32_t)((ab + (1 << 30)) >> 31);
    if (right) {
        const uint32_t r = ((uint32_t)x & ((1u << right) - 1)) + (1u << (right - 1)) - (uint32_t)(x < 0);
        x = (x >> right) + (int32_t)(r >> right);
    }
    return x;
}

/* requant + output offset (wrapping, as the reference) + activation clamp, to int8. */
static inline __attribute__((always_inline)) int8_t dsp_out(int32_t acc, int32_t mult, int shift, int32_t out_off, int32_t lo, int32_t hi) {
    int32_t v = (int32_t)((uint32_t)dsp_requant(acc, mult, shift) + (uint32_t)out_off);
    v = v < lo ? lo : v;
    return (int8_t)(v > hi ? hi : v);
}

/* dsp_out as a call, for the paths that cannot take the fast requantization (rare): keeps the
 * 64-bit arithmetic out of the inlined loops. */
int8_t dsp_out_exact(int32_t acc, int32_t mult, int shift, int32_t out_off, int32_t lo, int32_t hi);

/* Fast requantization, exact under two conditions checked once in prepare (dsp_fast_requant_ok):
 * |acc| < 2^30 and shift < 0. Then SaturatingRoundingDoublingHighMul(acc, m) = (2 acc m + 2^31) >> 32
 * is SMMULR(2 acc, m), its result x has |x| < 2^30, and RoundingDivideByPOT by right = -shift >= 1
 * is (x + 2^(right-1) - (x < 0)) >> right with no overflow. */
static inline int32_t dsp_smmulr(int32_t a, int32_t b) {
    int32_t r;
    __asm("smmulr %0, %1, %2" : "=r" (r) : "r" (a), "r" (b));
    return r;
}

/* Clamp to [lo, hi]; full (lo = -128, hi = 127, e.g. ReLU6 on a 6/255 scale): one SSAT. */
static inline __attribute__((always_inline)) int8_t dsp_clamp(int32_t v, int32_t lo, int32_t hi, bool full) {
    if (full) {
        return (int8_t)__ssat(v, 8);
    }
    v = v < lo ? lo : v;
    return (int8_t)(v > hi ? hi : v);
}

/* dsp_out_fast with the rounding folded: for z = x - (x < 0), RoundingDivideByPOT(x, right) =
 * floor((z + 2^(right-1)) / 2^right) = ((z >> (right - 1)) + 1) >> 1, and adding the output offset
 * k before the last halving is adding 2k: one constant c1 = 1 + 2 * out_off. r1 = right - 1. */
static inline __attribute__((always_inline)) int8_t dsp_out_fast_r(int32_t acc, int32_t mult, int r1, int32_t c1,
    int32_t lo, int32_t hi, bool full) {
    const int32_t x = dsp_smmulr((int32_t)((uint32_t)acc << 1), mult);
    return dsp_clamp((((x + (x >> 31)) >> r1) + c1) >> 1, lo, hi, full);
}

static inline __attribute__((always_inline)) int8_t dsp_out_fast(int32_t acc, int32_t mult, int right,
    int32_t out_off, int32_t lo, int32_t hi) {
    return dsp_out_fast_r(acc, mult, right - 1, 1 + 2 * out_off, lo, hi, false);
}

/* Whether dsp_out_fast is exact for n channels: every shift < 0, and every accumulator below 2^30
 * in magnitude: |bias| + taps * 255 * 128 (|input + offset| <= 255, |weight| <= 128). */
bool dsp_fast_requant_ok(const int8_t *shift, int n, const int32_t *bias, int taps);

/* src + offset as int16 into column `which` (0 or 1) of an interleaved pair (layout:
 * dsp_mac_pair_2x2), groups of four reordered (x0 x2 x1 x3). offset in [-255, 255] - max(src) so
 * every value fits int16. */
void dsp_expand_pair(const int8_t *src, int16_t *pair, int which, int n, int32_t offset);

/* Dot products over k elements of int16 columns (reordered, see dsp_expand_pair) with int8 weight
 * rows, added to the accumulators (wrapping). Inlined: the callers' accumulators stay in registers.
 * 2x2: columns c0, c1 times rows w0, w1 into a[0] = c0.w0, a[1] = c0.w1, a[2] = c1.w0, a[3] = c1.w1. */
/* acc += a * b, wrapping like the reference's int32 accumulator. */
#define MAC1(acc, a, b) acc = (int32_t)((uint32_t)(acc) + (uint32_t)((int32_t)(a) * (int32_t)(b)))

/* Two columns interleaved (dsp_expand_pair): per group of four, [c0 x0 x2][c1 x0 x2][c0 x1 x3]
 * [c1 x1 x3], then the k % 4 tail as (c0, c1) pairs; one LDRD feeds four SMLADs. Written in
 * assembly: the compiler's allocation of these 13 live registers spills inside the loop. */
static inline __attribute__((always_inline)) void dsp_mac_pair_2x2(const int16_t *c, const int8_t *w0,
    const int8_t *w1, int k, int32_t acc[4]) {
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
    int n = k >> 2;
    if (n) {
        int32_t u, v, x, y, t;
        __asm volatile(
            "1:\n"
            "ldr %[u], [%[w0]], #4\n"
            "ldr %[v], [%[w1]], #4\n"
            "ldrd %[x], %[y], [%[c]], #8\n"
            "sxtb16 %[t], %[u]\n"
            "smlad %[a00], %[t], %[x], %[a00]\n"
            "smlad %[a10], %[t], %[y], %[a10]\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a01], %[t], %[x], %[a01]\n"
            "smlad %[a11], %[t], %[y], %[a11]\n"
            "ldrd %[x], %[y], [%[c]], #8\n"
            "sxtb16 %[t], %[u], ror #8\n"
            "smlad %[a00], %[t], %[x], %[a00]\n"
            "smlad %[a10], %[t], %[y], %[a10]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a01], %[t], %[x], %[a01]\n"
            "smlad %[a11], %[t], %[y], %[a11]\n"
            "subs %[n], %[n], #1\n"
            "bne 1b\n"
            : [a00] "+r" (a00), [a01] "+r" (a01), [a10] "+r" (a10), [a11] "+r" (a11), [c] "+r" (c),
              [w0] "+r" (w0), [w1] "+r" (w1), [n] "+r" (n), [u] "=&r" (u), [v] "=&r" (v), [x] "=&r" (x),
              [y] "=&r" (y), [t] "=&r" (t)
            :
            : "cc", "memory");
    }
    for (int i = k & 3; i; --i) {
        const int32_t x = c[0], y = c[1], u = *w0++, v = *w1++;
        c += 2;
        MAC1(a00, x, u);
        MAC1(a01, x, v);
        MAC1(a10, y, u);
        MAC1(a11, y, v);
    }
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
}

/* acc[0] += c0.w0, acc[1] += c1.w0 over an interleaved column pair. */
static inline __attribute__((always_inline)) void dsp_mac_pair_2x1(const int16_t *c, const int8_t *w0, int k,
    int32_t acc[2]) {
    int32_t a0 = acc[0], a1 = acc[1];
    for (int n = k >> 2; n; --n) {
        const int32_t u = dsp_ld32(w0);
        int32_t t = __sxtb16(u);
        a0 = __smlad(t, dsp_ld32(c), a0);
        a1 = __smlad(t, dsp_ld32(c + 2), a1);
        t = dsp_sxtb16_ror8(u);
        a0 = __smlad(t, dsp_ld32(c + 4), a0);
        a1 = __smlad(t, dsp_ld32(c + 6), a1);
        w0 += 4;
        c += 8;
    }
    for (int n = k & 3; n; --n) {
        const int32_t u = *w0++;
        MAC1(a0, c[0], u);
        MAC1(a1, c[1], u);
        c += 2;
    }
    acc[0] = a0;
    acc[1] = a1;
}

/* acc[0..3] += (x + off) . rows w0, w0 + s, w2, w2 + s over n values (fewer rows by passing
 * w2 = w0 and/or s = 0; wrapping like the reference's int32 accumulators). Each input word is
 * split into its halfword pairs [x0 x2] / [x1 x3] with the offset added (SXTAB16, off2 = the
 * offset in both halves; |x + off| <= 255) once for the four weight words: 25 instructions per 16
 * MACs. Written in assembly: the compiler's allocation of these 14 live registers spills the row
 * pointers inside the loop. FULLY_CONNECTED and SVDF's feature matmul. */
static inline __attribute__((always_inline)) void dsp_dot_4rows(const int8_t *x, const int8_t *w0, const int8_t *w2,
    int s, int n, int32_t off, int32_t acc[4]) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t off2 = (int32_t)(((uint32_t)off & 0xffffu) * 0x10001u);
    int k = n >> 2;
    if (k) {
        int32_t u, v, xe, t;
        __asm volatile(
            "1:\n"
            "ldr %[u], [%[x]], #4\n"
            "sxtab16 %[xe], %[off2], %[u]\n"
            "sxtab16 %[u], %[off2], %[u], ror #8\n"
            "ldr %[v], [%[w0], %[s]]\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a1], %[t], %[xe], %[a1]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a1], %[t], %[u], %[a1]\n"
            "ldr %[v], [%[w0]], #4\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a0], %[t], %[xe], %[a0]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a0], %[t], %[u], %[a0]\n"
            "ldr %[v], [%[w2], %[s]]\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a3], %[t], %[xe], %[a3]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a3], %[t], %[u], %[a3]\n"
            "ldr %[v], [%[w2]], #4\n"
            "sxtb16 %[t], %[v]\n"
            "smlad %[a2], %[t], %[xe], %[a2]\n"
            "sxtb16 %[t], %[v], ror #8\n"
            "smlad %[a2], %[t], %[u], %[a2]\n"
            "subs %[k], %[k], #1\n"
            "bne 1b\n"
            : [a0] "+r" (a0), [a1] "+r" (a1), [a2] "+r" (a2), [a3] "+r" (a3), [x] "+r" (x), [w0] "+r" (w0),
              [w2] "+r" (w2), [k] "+r" (k), [u] "=&r" (u), [v] "=&r" (v), [xe] "=&r" (xe), [t] "=&r" (t)
            : [s] "r" (s), [off2] "r" (off2)
            : "cc", "memory");
    }
    for (int c = 0; c < (n & 3); ++c) {
        const int32_t xc = x[c] + off;
        MAC1(a0, xc, w0[c]);
        MAC1(a1, xc, w0[s + c]);
        MAC1(a2, xc, w2[c]);
        MAC1(a3, xc, w2[s + c]);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

extern const mn_conv_s8_variant_t mn_dsp_conv_s8;
extern const mn_conv_s8_variant_t mn_dsp_depthwise_s8_c1;
extern const mn_conv_s8_variant_t mn_dsp_depthwise_s8_pair;
extern const mn_conv_s8_variant_t mn_dsp_depthwise_s8_mult1;
extern const mn_conv_s8_variant_t mn_dsp_depthwise_s8;
extern const mn_fc_s8_variant_t mn_dsp_fc_s8;
extern const mn_svdf_s8_variant_t mn_dsp_svdf_s8;
extern const mn_add_s8_variant_t mn_dsp_add_s8;
extern const mn_mul_s8_variant_t mn_dsp_mul_s8;

#endif /* MN_DSP_H */
