/*
 * Custom op "SignalRfft" (TFLM signal/micro/kernels/rfft.cc): the real FFT of each frame of the
 * input's last dimension, zero-padded to fft_length, as fft_length / 2 + 1 complex values
 * (re, im interleaved) per frame. Options: fft_length (a power of two, 4..32768), T (the tensor
 * type: 7 int16, 2 int32).
 *
 * Bit-exact with TFLM, which runs KISS FFT in fixed point (FIXED_POINT 16 or 32): a complex FFT of
 * fft_length / 2 points over the even/odd samples as re/im, decimation in time with radix-4
 * stages (a radix-2 one last when the length is not a power of 4), every butterfly dividing its
 * inputs by its radix first (x * (MAX / radix), rounded, MAX = 2^15-1 or 2^31-1); products
 * rounded to nearest at 15 (31) fractional bits; sums kept in the scalar type (they wrap). The
 * real-FFT post-processing splits the spectrum with fft_length / 4 "super twiddles" (angles
 * -pi ((k + 1) / (fft_length / 2) + 1/2), as KISS FFT's kiss_fftr_alloc computes them). Twiddles
 * are floor(0.5 + MAX * cos) of the same double-precision angles, computed here at prepare by
 * the engine's own cos/sin (no libm: the firmware has no double cos).
 *
 * float32 (T = 0) is not implemented: a clean prepare error.
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalRfft

#define RFFT_T_INT32 2
#define RFFT_T_INT16 7

typedef struct {
    int16_t r, i;
} c16_t;
typedef struct {
    int32_t r, i;
} c32_t;

typedef struct {
    void *tw;               /* ncfft twiddles, then ncfft / 2 super twiddles (c16_t or c32_t) */
    int32_t factors[32];    /* (radix, remaining length) pairs, KISS FFT's kf_factor order */
    int32_t fft_length, in_len, frames, out_len, scratch;
    uint8_t type;
} rfft_data_t;

/* ---- double-precision cos/sin for the twiddles (|x| <= 2 pi) -------------------------------- */

static double rfft_poly_sin(double x) {   /* |x| <= pi/4 */
    const double x2 = x * x;
    double t = x, s = x;
    for (int k = 1; k < 12; k++) {
        t *= -x2 / (double)((2 * k) * (2 * k + 1));
        s += t;
    }
    return s;
}

static double rfft_poly_cos(double x) {
    const double x2 = x * x;
    double t = 1.0, s = 1.0;
    for (int k = 1; k < 12; k++) {
        t *= -x2 / (double)((2 * k - 1) * (2 * k));
        s += t;
    }
    return s;
}

/* cos (want_sin 0) or sin (1) of x */
static double rfft_trig(double x, int want_sin) {
    const double half_pi_hi = 1.5707963267948966, half_pi_lo = 6.123233995736766e-17;
    double qf = x / half_pi_hi;
    long q = (long)(qf < 0 ? qf - 0.5 : qf + 0.5);
    double r = (x - (double)q * half_pi_hi) - (double)q * half_pi_lo;
    int k = (int)(q & 3) + want_sin * 3;   /* sin(x) = cos(x - pi/2): three quarter turns on */
    switch (k & 3) {
        case 0: return rfft_poly_cos(r);
        case 1: return -rfft_poly_sin(r);
        case 2: return -rfft_poly_cos(r);
        default: return rfft_poly_sin(r);
    }
}

/* floor(0.5 + max * v): v in [-1, 1] */
static int64_t rfft_fix(double v, double max) {
    double y = 0.5 + max * v;
    int64_t f = (int64_t)y;
    if ((double)f > y) {
        f--;
    }
    return f;
}

/* KISS FFT's factorisation (radix 4 first, then 2; powers of two only here) */
static void rfft_factor(int32_t n, int32_t *f) {
    while (n > 1) {
        const int32_t p = (n % 4 == 0) ? 4 : 2;
        n /= p;
        *f++ = p;
        *f++ = n;
    }
}

/* ---- the fixed-point FFT, once per scalar width -------------------------------------------- */

/* CPX: complex type, S: scalar, P: product, FB: fractional bits, HALF(a, b): (a + b) / 2 as KISS
 * FFT's HALF_OF computes it (int16: in int, no wrap; int32: the int32 sum wraps first) */
#define RFFT_DEFINE(SUF, CPX, S, P, FB, HALF)                                                        \
    static inline S rnd_##SUF(P x) {                                                              \
        return (S)((x + ((P)1 << (FB - 1))) >> FB);                                               \
    }                                                                                             \
    static inline CPX mul_##SUF(CPX a, CPX b) {                                                   \
        CPX m;                                                                                    \
        m.r = rnd_##SUF((P)a.r * b.r - (P)a.i * b.i);                                             \
        m.i = rnd_##SUF((P)a.r * b.i + (P)a.i * b.r);                                             \
        return m;                                                                                 \
    }                                                                                             \
    static inline CPX div_##SUF(CPX a, P k) {                                                     \
        a.r = rnd_##SUF((P)a.r * k);                                                              \
        a.i = rnd_##SUF((P)a.i * k);                                                              \
        return a;                                                                                 \
    }                                                                                             \
    static inline CPX add_##SUF(CPX a, CPX b) {                                                   \
        a.r = (S)((P)a.r + b.r);                                                                  \
        a.i = (S)((P)a.i + b.i);                                                                  \
        return a;                                                                                 \
    }                                                                                             \
    static inline CPX sub_##SUF(CPX a, CPX b) {                                                   \
        a.r = (S)((P)a.r - b.r);                                                                  \
        a.i = (S)((P)a.i - b.i);                                                                  \
        return a;                                                                                 \
    }                                                                                             \
    static void bfly2_##SUF(CPX *f, size_t fstride, const CPX *tw, int32_t m) {                  \
        const P k2 = (P)((((P)1 << FB) - 1) / 2);                                                 \
        for (int32_t j = 0; j < m; j++) {                                                         \
            CPX a = div_##SUF(f[j], k2), b = div_##SUF(f[j + m], k2);                             \
            const CPX t = mul_##SUF(b, tw[j * fstride]);                                          \
            f[j + m] = sub_##SUF(a, t);                                                           \
            f[j] = add_##SUF(a, t);                                                               \
        }                                                                                         \
    }                                                                                             \
    static void bfly4_##SUF(CPX *f, size_t fstride, const CPX *tw, int32_t m) {                  \
        const P k4 = (P)((((P)1 << FB) - 1) / 4);                                                 \
        for (int32_t j = 0; j < m; j++) {                                                         \
            CPX *q = f + j;                                                                       \
            const CPX x0 = div_##SUF(q[0], k4), x1 = div_##SUF(q[m], k4);                         \
            const CPX x2 = div_##SUF(q[2 * m], k4), x3 = div_##SUF(q[3 * m], k4);                 \
            const CPX s0 = mul_##SUF(x1, tw[j * fstride]);                                        \
            const CPX s1 = mul_##SUF(x2, tw[2 * j * fstride]);                                    \
            const CPX s2 = mul_##SUF(x3, tw[3 * j * fstride]);                                    \
            const CPX s5 = sub_##SUF(x0, s1);                                                     \
            const CPX a0 = add_##SUF(x0, s1);                                                     \
            const CPX s3 = add_##SUF(s0, s2), s4 = sub_##SUF(s0, s2);                             \
            q[2 * m] = sub_##SUF(a0, s3);                                                         \
            q[0] = add_##SUF(a0, s3);                                                             \
            q[m].r = (S)((P)s5.r + s4.i);                                                         \
            q[m].i = (S)((P)s5.i - s4.r);                                                         \
            q[3 * m].r = (S)((P)s5.r - s4.i);                                                     \
            q[3 * m].i = (S)((P)s5.i + s4.r);                                                     \
        }                                                                                         \
    }                                                                                             \
    /* out-of-place decimation in time: out[0 .. p*m) from in[0], in[fstride], ... */            \
    static void work_##SUF(CPX *out, const CPX *in, size_t fstride, const int32_t *fac, const CPX *tw) { \
        const int32_t p = fac[0], m = fac[1];                                                     \
        if (m == 1) {                                                                             \
            for (int32_t j = 0; j < p; j++) {                                                     \
                out[j] = in[j * fstride];                                                         \
            }                                                                                     \
        } else {                                                                                  \
            for (int32_t j = 0; j < p; j++) {                                                     \
                work_##SUF(out + j * m, in + j * fstride, fstride * (size_t)p, fac + 2, tw);      \
            }                                                                                     \
        }                                                                                         \
        if (p == 2) {                                                                             \
            bfly2_##SUF(out, fstride, tw, m);                                                     \
        } else {                                                                                  \
            bfly4_##SUF(out, fstride, tw, m);                                                     \
        }                                                                                         \
    }                                                                                             \
    static void rfft_##SUF(const rfft_data_t *d, const CPX *time, CPX *tmp, CPX *freq) {          \
        const int32_t n = d->fft_length / 2;                                                      \
        const CPX *tw = d->tw, *super = tw + n;                                                   \
        const P k2 = (P)((((P)1 << FB) - 1) / 2);                                                 \
        work_##SUF(tmp, time, 1, d->factors, tw);                                                 \
        const CPX dc = div_##SUF(tmp[0], k2);                                                     \
        freq[0].r = (S)((P)dc.r + dc.i);                                                          \
        freq[n].r = (S)((P)dc.r - dc.i);                                                          \
        freq[0].i = freq[n].i = 0;                                                                \
        for (int32_t k = 1; k <= n / 2; k++) {                                                    \
            CPX nk = tmp[n - k];                                                                  \
            nk.i = (S)-(P)nk.i;                                                                   \
            const CPX pk = div_##SUF(tmp[k], k2);                                                 \
            nk = div_##SUF(nk, k2);                                                               \
            const CPX f1 = add_##SUF(pk, nk), f2 = sub_##SUF(pk, nk);                             \
            const CPX t = mul_##SUF(f2, super[k - 1]);                                            \
            freq[k].r = HALF(f1.r, t.r);                                                          \
            freq[k].i = HALF(f1.i, t.i);                                                          \
            freq[n - k].r = HALF(f1.r, -(P)t.r);                                                  \
            freq[n - k].i = HALF(t.i, -(P)f1.i);                                                  \
        }                                                                                         \
    }

#define HALF16(a, b) ((int16_t)(((int32_t)(a) + (int32_t)(b)) >> 1))
#define HALF32(a, b) ((int32_t)((int32_t)(uint32_t)((uint32_t)(int64_t)(a) + (uint32_t)(int64_t)(b)) >> 1))
RFFT_DEFINE(16, c16_t, int16_t, int32_t, 15, HALF16)
RFFT_DEFINE(32, c32_t, int32_t, int64_t, 31, HALF32)

/* ---- the op --------------------------------------------------------------------------------- */

static mn_status_t rfft_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    mn_flex_map_t m;
    int32_t len, type;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "fft_length", 4, 32768, &len);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "T", 0, 255, &type);
    }
    if (s != MN_OK) {
        return s;
    }
    if (len & (len - 1)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fft_length %d not supported (powers of two only)", (int)len);
    }
    const int dt = type == RFFT_T_INT16 ? MN_INT16 : type == RFFT_T_INT32 ? MN_INT32 : -1;
    if (dt < 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "type T=%d not supported (int16 and int32 only)", (int)type);
    }
    if (in->dtype != dt || out->dtype != dt) {
        return mn_fail(ctx, MN_ERR_MODEL, "dtypes %s -> %s do not match option T (%s)", mn_dtype_name(in->dtype),
            mn_dtype_name(out->dtype), mn_dtype_name(dt));
    }
    const int32_t in_len = mn_dim(in, -1), out_len = mn_dim(out, -1);
    const size_t frames = in_len > 0 ? mn_tensor_count(in) / (size_t)in_len : 0;
    if (in->ndim < 1 || in->ndim != out->ndim || in_len < 1 || in_len > len || out_len != len + 2
        || mn_tensor_count(out) != frames * (size_t)out_len) {
        return mn_fail(ctx, MN_ERR_MODEL, "input [..., N <= fft_length] and output [..., fft_length + 2] expected");
    }
    const size_t esz = dt == MN_INT16 ? 2 : 4, ncfft = (size_t)len / 2;
    rfft_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    void *tw = d ? mn_alloc_persistent(ctx, (ncfft + ncfft / 2) * 2 * esz) : NULL;
    if (!tw) {
        return MN_ERR_ARENA;
    }
    s = mn_request_scratch(ctx, ((size_t)len + 2 * ncfft) * esz, &d->scratch);
    if (s != MN_OK) {
        return s;
    }
    d->tw = tw;
    d->fft_length = len;
    d->in_len = in_len;
    d->out_len = out_len;
    d->frames = (int32_t)frames;
    d->type = (uint8_t)dt;
    rfft_factor((int32_t)ncfft, d->factors);
    const double pi = 3.14159265358979323846264338327, max = dt == MN_INT16 ? 32767.0 : 2147483647.0;
    for (size_t i = 0; i < ncfft + ncfft / 2; i++) {
        const double ph = i < ncfft ? -2 * pi * (double)i / (double)ncfft
                                    : -pi * ((double)(i - ncfft + 1) / (double)ncfft + .5);
        const int64_t c = rfft_fix(rfft_trig(ph, 0), max), sn = rfft_fix(rfft_trig(ph, 1), max);
        if (dt == MN_INT16) {
            ((c16_t *)tw)[i].r = (int16_t)c;
            ((c16_t *)tw)[i].i = (int16_t)sn;
        } else {
            ((c32_t *)tw)[i].r = (int32_t)c;
            ((c32_t *)tw)[i].i = (int32_t)sn;
        }
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t rfft_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const rfft_data_t *d = node->user_data;
    const size_t esz = d->type == MN_INT16 ? 2 : 4, len = (size_t)d->fft_length;
    uint8_t *work = mn_get_scratch(ctx, d->scratch), *tmp = work + len * esz;
    const uint8_t *x = mn_input_data(ctx, node, 0);
    uint8_t *y = mn_output(ctx, node, 0)->data;
    for (int32_t f = 0; f < d->frames; f++) {
        memcpy(work, x + (size_t)f * (size_t)d->in_len * esz, (size_t)d->in_len * esz);
        memset(work + (size_t)d->in_len * esz, 0, (len - (size_t)d->in_len) * esz);
        uint8_t *o = y + (size_t)f * (size_t)d->out_len * esz;
        if (d->type == MN_INT16) {
            rfft_16(d, (const c16_t *)work, (c16_t *)tmp, (c16_t *)o);
        } else {
            rfft_32(d, (const c32_t *)work, (c32_t *)tmp, (c32_t *)o);
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalRfft = { NULL, rfft_prepare, rfft_eval, NULL, NULL };

#endif
