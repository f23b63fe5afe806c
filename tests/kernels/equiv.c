/*
 * Kernel equivalence harness: every variant of every compiled-in backend (mn_variants.h) against
 * the reference compute function it replaces, on thousands of random cases per function (shapes,
 * strides, padding, dilation, odd channel counts, depth multipliers, zero points, per-channel
 * multipliers/shifts of both signs, activation ranges, batch > 1). Each case runs every variant
 * whose fits() accepts it, not only the one the selector would pick. int8 results must match bit
 * for bit; float32 within 1e-5 of the sum of |terms| (summation order may differ).
 *
 * In place (CONV_2D / DEPTHWISE_CONV_2D), as the memory planner places a convolution over its
 * dying input: on every INPLACE_EVERY-th case every variant that fits (and on every other one of
 * those the reference function) runs again with the input copied into a shared region (16-byte
 * aligned, as in the arena) and the output at input + d, d = mn_conv_slide() floored to a multiple
 * of 16 (on a quarter of them 16 * k lower still). The result must match the separate-buffer
 * reference and nothing outside the output may change (the row contract, mn_ref.h).
 *
 * Runs on the host (under ASan/UBSan) and bare metal under QEMU (tests/kernels/Makefile).
 * Output: one line per variant with its case count (convolutions: and in-place run count; the
 * reference functions have in-place runs only), then "N passed, M failed" as the last line.
 * Exit status non-zero on any mismatch or when a compiled-in variant ran no case (or no in-place
 * case).
 * Host usage: equiv [cases-per-function-scale] [seed]
 */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mn_variants.h"

#ifndef EQUIV_SCALE
#define EQUIV_SCALE 1   /* cases per function = base count * scale */
#endif

/* ---- random numbers (xorshift32: same sequence on every target) ------------------------------ */

static uint32_t rng = 0x12345678u;

static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* Uniform in [lo, hi]. */
static int rr(int lo, int hi) {
    return lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
}

static bool chance(int percent) {
    return (int)(rnd() % 100) < percent;
}

static float rfloat(void) {
    return (float)(rnd() >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

/* Channel counts: small odd ones and multiples of 4, 8, 16 (vector widths) alike. */
static int rchannels(int max) {
    const int c = rr(1, max);
    switch (rnd() % 4) {
        case 0:
            return c;
        case 1:
            return (c + 3) & ~3;
        case 2:
            return (c + 7) & ~7;
        default:
            return c > 16 ? (c + 15) & ~15 : c;
    }
}

/* ---- memory: a bump pool reset per case (malloc on the host, so ASan sees every overrun) ----- */

#define GUARD 16
#define GUARD_BYTE 0xA5

#if EQUIV_HOST
#define MAX_BLOCKS 32
static void *blocks[MAX_BLOCKS];
static int n_blocks;
static void *alloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p || n_blocks == MAX_BLOCKS) {
        puts("equiv: out of memory");
        exit(2);
    }
    return blocks[n_blocks++] = p;
}
static void reset_pool(void) {
    while (n_blocks) {
        free(blocks[--n_blocks]);
    }
}
#else
static uint64_t pool[(EQUIV_POOL_KB * 1024) / 8];
static size_t pool_used;
static void *alloc(size_t n) {
    const size_t words = (n + 15) / 8 & ~(size_t)1;   /* 16-byte blocks, as the arena's */
    if (pool_used + words > sizeof pool / 8) {
        puts("equiv: out of memory");
        exit(2);
    }
    void *p = &pool[pool_used];
    pool_used += words;
    return p;
}
static void reset_pool(void) {
    pool_used = 0;
}
#endif

static int8_t *rand_s8(size_t n) {
    int8_t *p = alloc(n);
    /* Sometimes mostly extremes, which stress the widest products and sums. */
    const bool extreme = chance(10);
    for (size_t i = 0; i < n; ++i) {
        p[i] = extreme && chance(80) ? (chance(50) ? -128 : 127) : (int8_t)rnd();
    }
    return p;
}

static float *rand_f32(size_t n) {
    float *p = alloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) {
        p[i] = rfloat();
    }
    return p;
}

static float *abs_f32(const float *x, size_t n) {
    float *p = alloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) {
        p[i] = x[i] < 0 ? -x[i] : x[i];
    }
    return p;
}

/* An output buffer with a guard zone behind it, prefilled with noise. */
static void *out_buf(size_t bytes) {
    uint8_t *p = alloc(bytes + GUARD);
    for (size_t i = 0; i < bytes; ++i) {
        p[i] = (uint8_t)rnd();
    }
    memset(p + bytes, GUARD_BYTE, GUARD);
    return p;
}

static bool guard_ok(const void *p, size_t bytes) {
    for (size_t i = 0; i < GUARD; ++i) {
        if (((const uint8_t *)p)[bytes + i] != GUARD_BYTE) {
            return false;
        }
    }
    return true;
}

/* Scratch as the arena gives it: uninitialised (here: noise). */
static void *scratch_buf(size_t bytes) {
    return bytes ? out_buf(bytes) : NULL;
}

/* Persistent data as the arena gives it: zero-filled (with a guard zone behind it too). */
static void *data_buf(size_t bytes) {
    void *p = bytes ? out_buf(bytes) : NULL;
    if (p) {
        memset(p, 0, bytes);
    }
    return p;
}

/* Whether a variant stayed inside the data and scratch it asked for. */
static bool bufs_ok(const mn_vbuf_t *buf, size_t data, size_t scratch) {
    return (!data || guard_ok(buf->data, data)) && (!scratch || guard_ok(buf->scratch, scratch));
}

/* ---- bookkeeping ------------------------------------------------------------------------------ */

#define MAX_VARIANTS 64
static struct {
    const char *name;
    unsigned runs, fails;
    unsigned ip_runs, ip_fails;   /* in-place runs (convolutions) */
    bool conv, ref;               /* checked in place; a reference function (in-place runs only) */
} stats[MAX_VARIANTS];
static int n_stats;
static unsigned passed, failed, reported;

static int stat_index(const char *name) {
    for (int i = 0; i < n_stats; ++i) {
        if (stats[i].name == name) {
            return i;
        }
    }
    if (n_stats == MAX_VARIANTS) {
        puts("equiv: too many variants");
        exit(2);
    }
    stats[n_stats].name = name;
    return n_stats++;
}

/* Record one variant run (in_place: an in-place run); on a mismatch print the case (the first
 * few overall and the first two of each variant and mode). Returns whether it printed a failure. */
static bool record_run(const char *name, bool in_place, bool ok, const char *what, long at, long got, long want) {
    const int i = stat_index(name);
    ++*(in_place ? &stats[i].ip_runs : &stats[i].runs);
    if (ok) {
        ++passed;
        return false;
    }
    ++failed;
    const unsigned fails = ++*(in_place ? &stats[i].ip_fails : &stats[i].fails);
    if (++reported <= 12 || fails <= 2) {
        printf("FAIL %s: %s: element %ld: got %ld, want %ld\n", name, what, at, got, want);
        return true;
    }
    return false;
}

static void record(const char *name, bool ok, const char *what, long at, long got, long want) {
    record_run(name, false, ok, what, at, got, want);
}

/* First index where two int8 buffers differ, or -1. */
static long diff_s8(const int8_t *a, const int8_t *b, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (a[i] != b[i]) {
            return (long)i;
        }
    }
    return -1;
}

static void check_s8(const char *name, const char *what, const int8_t *got, const int8_t *want, size_t n) {
    const long at = diff_s8(got, want, n);
    if (!guard_ok(got, n)) {
        record(name, false, what, (long)n, -1, -1);   /* wrote past the output */
    } else {
        record(name, at < 0, what, at, at < 0 ? 0 : got[at], at < 0 ? 0 : want[at]);
    }
}

/* Float: |got - want| <= 1e-5 * bound, bound = the reference on |inputs| (sum of |terms|). */
static void check_f32(const char *name, const char *what, const float *got, const float *want,
    const float *bound, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const float d = got[i] > want[i] ? got[i] - want[i] : want[i] - got[i];
        if (!(d <= 1e-5f * bound[i] + FLT_MIN)) {
            record(name, false, what, (long)i, (long)(got[i] * 1e6f), (long)(want[i] * 1e6f));
            return;
        }
    }
    record(name, guard_ok(got, n * sizeof(float)), what, (long)n, 0, 0);
}

/* Iterate over every variant in list LIST (an expression of the backend *b_) of every backend. */
#define FOR_EACH_VARIANT(TYPE, LIST, V) \
    for (const mn_backend_t *const *b_ = backends; *b_; ++b_) \
        for (const TYPE *const *v_ = (LIST), *V; v_ && (V = *v_) != NULL; ++v_)

static const mn_backend_t *const *backends;

/* ---- in place: a convolution's output over its own input (mn_conv_slide) --------------------- */

/* Stats names of the reference functions' in-place runs (stat_index compares pointers). */
static const char REF_CONV_S8[] = "reference.conv_s8", REF_DW_S8[] = "reference.depthwise_s8",
                  REF_CONV_F32[] = "reference.conv_f32", REF_DW_F32[] = "reference.depthwise_f32";

/* In-place runs on every INPLACE_EVERY-th case of each test; of the reference function (the
 * slowest) on every other one of those. */
#ifndef INPLACE_EVERY
#define INPLACE_EVERY 2
#endif

/* Its own xorshift stream, so the cases drawn from rnd() are the same with or without it. */
static uint32_t rng_ip = 0x2545f491u;

static uint32_t rnd_ip(void) {
    rng_ip ^= rng_ip << 13;
    rng_ip ^= rng_ip >> 17;
    rng_ip ^= rng_ip << 5;
    return rng_ip;
}

/* One shared region: input at in (16-aligned, as in the arena), output at in + d; offsets
 * relative to in, the region [lo, hi) = the union of both, GUARD bytes either side. */
typedef struct {
    uint8_t *in;
    long d, lo, hi;
    int64_t slide;
    size_t in_bytes, out_bytes;
    bool ref;             /* run the reference function in place too */
    const uint8_t *src;   /* the input */
} inplace_t;

/* Sets up ip for this case (every INPLACE_EVERY-th call per counter); false: no in-place run. */
static bool inplace_init(inplace_t *ip, unsigned *counter, const mn_conv_geom_t *g, size_t es, const void *src,
    size_t n_in, size_t n_out) {
    const unsigned n = (*counter)++;
    if (n % INPLACE_EVERY) {
        return false;
    }
    ip->ref = n % (2 * INPLACE_EVERY) == 0;
    ip->slide = mn_conv_slide(g, es, es);
    int64_t d = ip->slide / 16 * 16;
    if (d > ip->slide) {
        d -= 16;   /* floor, also below zero */
    }
    if (rnd_ip() % 4 == 0) {
        d -= 16 * (int64_t)(1 + rnd_ip() % 4);
    }
    ip->in_bytes = n_in * es;
    ip->out_bytes = n_out * es;
    if (d >= (int64_t)ip->in_bytes || d + (int64_t)ip->out_bytes <= 0) {
        return false;   /* no overlap: nothing the separate-buffer run does not check */
    }
    ip->d = (long)d;
    ip->lo = ip->d < 0 ? ip->d : 0;
    ip->hi = ip->d + (long)ip->out_bytes > (long)ip->in_bytes ? ip->d + (long)ip->out_bytes : (long)ip->in_bytes;
    uint8_t *p = alloc((size_t)(ip->hi - ip->lo) + 2 * GUARD + 15);
    p = (uint8_t *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
    ip->in = p + GUARD - ip->lo;
    ip->src = src;
    return true;
}

/* Before each run: the input, noise in the rest of the output, guard bytes around. */
static void inplace_fill(const inplace_t *ip) {
    memset(ip->in + ip->lo - GUARD, GUARD_BYTE, GUARD);
    memset(ip->in + ip->hi, GUARD_BYTE, GUARD);
    memcpy(ip->in, ip->src, ip->in_bytes);
    for (long i = ip->lo; i < 0; ++i) {
        ip->in[i] = (uint8_t)rnd_ip();
    }
    for (long i = (long)ip->in_bytes; i < ip->hi; ++i) {
        ip->in[i] = (uint8_t)rnd_ip();
    }
}

/* What inplace_fill left at offset i (outside the output): input or guard. */
static uint8_t inplace_byte(const inplace_t *ip, long i) {
    return i >= 0 && i < (long)ip->in_bytes ? ip->src[i] : GUARD_BYTE;
}

/* The first offset (from the input's start) outside the output, within the guards, where a byte
 * is no longer what inplace_fill left (the guards or the input's bytes the output does not
 * cover: the region is the union of both), or LONG_MIN. */
static long inplace_outside_at(const inplace_t *ip) {
    const long end = ip->d + (long)ip->out_bytes;
    if (memcmp(ip->in, ip->src, (size_t)(ip->d > 0 ? ip->d : 0)) == 0 &&
        (end >= (long)ip->in_bytes || memcmp(ip->in + end, ip->src + end, ip->in_bytes - (size_t)end) == 0)) {
        long i = ip->lo - GUARD;
        while (i < ip->lo && ip->in[i] == GUARD_BYTE) {
            ++i;
        }
        if (i == ip->lo) {
            for (i = ip->hi; i < ip->hi + GUARD && ip->in[i] == GUARD_BYTE; ++i) {
            }
            if (i == ip->hi + GUARD) {
                return LONG_MIN;
            }
        }
        return i;
    }
    for (long i = 0;; ++i) {
        if ((i < ip->d || i >= end) && ip->in[i] != ip->src[i]) {
            return i;
        }
    }
}

static void print_geom(const mn_conv_geom_t *g, const inplace_t *ip) {
    printf("  case: batches %d, in %dx%dx%d, filter %dx%d (in_c %d), stride %d,%d, dilation %d,%d, pad %d,%d, "
           "out %dx%dx%d, depth_mult %d; d %ld (slide %ld), in %lu B, out %lu B\n",
        g->batches, g->in_h, g->in_w, g->in_c, g->f_h, g->f_w, g->f_in_c, g->stride_h, g->stride_w, g->dil_h,
        g->dil_w, g->pad_h, g->pad_w, g->out_h, g->out_w, g->out_c, g->depth_mult, ip->d, (long)ip->slide,
        (unsigned long)ip->in_bytes, (unsigned long)ip->out_bytes);
}

/* Check an in-place run of name against want (int8: bit-exact; float: bound as check_f32). */
static void inplace_check(const char *name, const char *what, const inplace_t *ip, const mn_conv_geom_t *g,
    const void *want, const float *bound) {
    bool printed;
    const long out_at = inplace_outside_at(ip);
    if (out_at != LONG_MIN) {
        /* wrote outside its output: element = byte offset from the output's start */
        printed = record_run(name, true, false, what, out_at - ip->d, (int8_t)ip->in[out_at],
            (int8_t)inplace_byte(ip, out_at));
        if (printed) {
            printf("  (wrote outside its output)\n");
        }
    } else if (!bound) {
        const int8_t *got = (const int8_t *)(ip->in + ip->d), *w = want;
        const long at = diff_s8(got, w, ip->out_bytes);
        printed = record_run(name, true, at < 0, what, at, at < 0 ? 0 : got[at], at < 0 ? 0 : w[at]);
    } else {
        const float *got = (const float *)(void *)(ip->in + ip->d), *w = want;
        const size_t n = ip->out_bytes / sizeof(float);
        long at = -1;
        for (size_t i = 0; i < n && at < 0; ++i) {
            const float e = got[i] > w[i] ? got[i] - w[i] : w[i] - got[i];
            at = e <= 1e-5f * bound[i] + FLT_MIN ? -1 : (long)i;
        }
        printed = record_run(name, true, at < 0, what, at, at < 0 ? 0 : (long)(got[at] * 1e6f),
            at < 0 ? 0 : (long)(w[at] * 1e6f));
    }
    if (printed) {
        print_geom(g, ip);
    }
}

/* ---- case generators -------------------------------------------------------------------------- */

/* Output size for an input of n, window f (dilated), stride s, leading pad p; trailing pad random. */
static int out_dim(int n, int f_eff, int s, int p) {
    const int trail = rr(0, f_eff - 1 > p + s ? p + s : f_eff - 1);
    const int span = n + p + trail - f_eff;
    return span < 0 ? 0 : span / s + 1;
}

static int rshift(void) {
    if (chance(10)) {
        return rr(-31, 31);
    }
    return rr(-14, 3);
}

static int32_t rmult(void) {
    if (chance(3)) {
        return 0;
    }
    if (chance(25)) {
        /* few significant bits: products land exactly on rounding ties */
        return (int32_t)(0x40000000u + ((rnd() & 0x3fu) << 24));
    }
    return (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
}

static void rand_act(int32_t *lo, int32_t *hi) {
    *lo = -128;
    *hi = 127;
    if (chance(30)) {
        *lo = rr(-128, 127);
        *hi = rr(*lo, 127);
    } else if (chance(30)) {
        *lo = rr(-128, 0);   /* fused ReLU: the output zero point */
    }
}

static int32_t *rand_bias(int n) {
    if (chance(10)) {
        return NULL;
    }
    int32_t *b = alloc((size_t)n * sizeof(int32_t));
    const bool wide = chance(10);
    for (int i = 0; i < n; ++i) {
        b[i] = wide ? (int32_t)rnd() : rr(-70000, 70000);
    }
    return b;
}

/* Conv geometry; depthwise: f_in_c = 1, out_c = in_c * depth_mult. */
static bool rand_conv_geom(mn_conv_geom_t *g, bool depthwise) {
    memset(g, 0, sizeof *g);
    const int kind = rr(0, 9);   /* 0-3: 1x1, 4-6: 3x3, 7-9: anything (9: windows beyond 5x5 too) */
    const int f_max = kind == 9 ? 7 : 5;
    g->batches = chance(15) ? rr(2, 3) : 1;
    g->in_h = rr(1, 10);
    g->in_w = rr(1, 10);
    if (depthwise && chance(20)) {
        g->in_w = rr(12, 16);   /* rows of 12+ outputs (dsp.depthwise_s8_pair's 3x3 two-output pass) */
    }
    g->f_h = g->f_w = kind < 4 ? 1 : kind < 7 ? 3 : rr(1, f_max);
    if (kind >= 7 && chance(50)) {
        g->f_w = rr(1, f_max);
    }
    g->stride_h = g->stride_w = chance(60) ? 1 : rr(1, 3);
    if (chance(20)) {
        g->stride_w = rr(1, 3);
    }
    g->dil_h = g->dil_w = chance(85) ? 1 : rr(1, 3);
    int eh = g->dil_h * (g->f_h - 1) + 1, ew = g->dil_w * (g->f_w - 1) + 1;
    g->pad_h = kind < 4 && chance(80) ? 0 : rr(0, eh - 1);
    g->pad_w = kind < 4 && chance(80) ? 0 : rr(0, ew - 1);
    if (depthwise && chance(12)) {
        /* 1-D: Kx1 over 1xTx1xC or 1xK over 1x1xTxC, as streaming audio nets run them */
        const bool col = chance(50);
        const int t = rr(1, 50), k = rr(2, 10), s = chance(70) ? 1 : rr(2, 3), d = chance(85) ? 1 : 2;
        const int e = d * (k - 1) + 1, p = chance(30) ? 0 : rr(0, e - 1);
        g->in_h = col ? t : 1;
        g->in_w = col ? 1 : t;
        g->f_h = col ? k : 1;
        g->f_w = col ? 1 : k;
        g->stride_h = col ? s : 1;
        g->stride_w = col ? 1 : s;
        g->dil_h = col ? d : 1;
        g->dil_w = col ? 1 : d;
        g->pad_h = col ? p : 0;
        g->pad_w = col ? 0 : p;
        eh = g->dil_h * (g->f_h - 1) + 1;
        ew = g->dil_w * (g->f_w - 1) + 1;
    }
    g->out_h = out_dim(g->in_h, eh, g->stride_h, g->pad_h);
    g->out_w = out_dim(g->in_w, ew, g->stride_w, g->pad_w);
    if (g->out_h < 1 || g->out_w < 1) {
        return false;
    }
    if (depthwise) {
        /* one input channel with a large multiplier: a first layer on a grayscale image */
        const bool single = chance(15);
        g->in_c = single ? 1 : rchannels(40);
        g->depth_mult = single ? rr(1, 12) : chance(70) ? 1 : rr(2, 4);
        g->f_in_c = 1;
        g->out_c = g->in_c * g->depth_mult;
    } else {
        const int groups = chance(10) ? rr(2, 4) : 1;
        g->f_in_c = rchannels(kind < 4 ? 64 : 24);
        g->in_c = g->f_in_c * groups;
        g->out_c = groups * (rchannels(32) + groups - 1) / groups;
        g->out_c -= g->out_c % groups;
        if (g->out_c < groups) {
            g->out_c = groups;
        }
    }
    return true;
}

static void rand_conv_quant(mn_conv_quant_t *q, int out_c) {
    q->input_offset = -rr(-128, 127);
    q->output_offset = rr(-128, 127);
    rand_act(&q->act_min, &q->act_max);
    int32_t *mult = alloc((size_t)out_c * sizeof(int32_t));
    int8_t *shift = alloc((size_t)out_c);
    /* same: per-tensor scale; right: all shifts negative (scales < 0.5, as in most models) */
    const bool same = chance(20), right = chance(50);
    for (int i = 0; i < out_c; ++i) {
        mult[i] = same && i ? mult[0] : rmult();
        shift[i] = (int8_t)(same && i ? shift[0] : right ? rr(-14, -1) : rshift());
    }
    q->mult = mult;
    q->shift = shift;
}

/* ---- per-function tests ----------------------------------------------------------------------- */

static size_t conv_sizes(const mn_conv_geom_t *g, bool depthwise, size_t *n_in, size_t *n_f) {
    *n_in = (size_t)g->batches * g->in_h * g->in_w * g->in_c;
    *n_f = (size_t)g->f_h * g->f_w * (depthwise ? g->out_c : g->f_in_c * g->out_c);
    return (size_t)g->batches * g->out_h * g->out_w * g->out_c;
}

static void test_conv_s8(bool depthwise) {
    mn_conv_geom_t g;
    if (!rand_conv_geom(&g, depthwise)) {
        return;
    }
    mn_conv_quant_t q;
    rand_conv_quant(&q, g.out_c);
    size_t n_in, n_f;
    const size_t n_out = conv_sizes(&g, depthwise, &n_in, &n_f);
    const int8_t *in = rand_s8(n_in), *f = rand_s8(n_f);
    const int32_t *bias = rand_bias(g.out_c);
    int8_t *want = out_buf(n_out);
    void (*ref)(const mn_conv_geom_t *, const mn_conv_quant_t *, const int8_t *, const int8_t *, const int32_t *,
        int8_t *) = depthwise ? mn_depthwise_conv_s8_per_channel : mn_conv_s8_per_channel;
    ref(&g, &q, in, f, bias, want);
    const char *what = depthwise ? "depthwise_s8" : "conv_s8";
    const char *what_ip = depthwise ? "depthwise_s8 in place" : "conv_s8 in place";
    static unsigned counter[2];
    inplace_t ip;
    const bool in_place = inplace_init(&ip, &counter[depthwise], &g, 1, in, n_in, n_out);
    if (in_place && ip.ref) {
        inplace_fill(&ip);
        ref(&g, &q, (const int8_t *)ip.in, f, bias, (int8_t *)(ip.in + ip.d));
        inplace_check(depthwise ? REF_DW_S8 : REF_CONV_S8, what_ip, &ip, &g, want, NULL);
    }
    FOR_EACH_VARIANT(mn_conv_s8_variant_t, depthwise ? (*b_)->depthwise_s8 : (*b_)->conv_s8, v) {
        if (!v->fits(&g, &q)) {
            continue;
        }
        mn_vbuf_t buf = { NULL, NULL };
        const size_t data = v->data_bytes ? v->data_bytes(&g) : 0;
        if (data) {
            void *d = data_buf(data);
            v->precompute(&g, &q, f, bias, d);
            buf.data = d;
        }
        const size_t scratch = v->scratch_bytes ? v->scratch_bytes(&g) : 0;
        buf.scratch = scratch_buf(scratch);
        int8_t *got = out_buf(n_out);
        v->run(&g, &q, in, f, bias, got, &buf);
        if (!bufs_ok(&buf, data, scratch)) {
            record(v->name, false, "wrote past its data or scratch", 0, 0, 0);
            continue;
        }
        check_s8(v->name, what, got, want, n_out);
        if (in_place) {
            inplace_fill(&ip);
            v->run(&g, &q, (const int8_t *)ip.in, f, bias, (int8_t *)(ip.in + ip.d), &buf);
            if (!bufs_ok(&buf, data, scratch)) {
                record_run(v->name, true, false, "wrote past its data or scratch (in place)", 0, 0, 0);
                continue;
            }
            inplace_check(v->name, what_ip, &ip, &g, want, NULL);
        }
    }
}

static void test_conv_f32(bool depthwise) {
    mn_conv_geom_t g;
    if (!rand_conv_geom(&g, depthwise)) {
        return;
    }
    size_t n_in, n_f;
    const size_t n_out = conv_sizes(&g, depthwise, &n_in, &n_f);
    const float *in = rand_f32(n_in), *f = rand_f32(n_f), *bias = chance(90) ? rand_f32((size_t)g.out_c) : NULL;
    const float lo = chance(50) ? -FLT_MAX : 0.0f, hi = chance(70) ? FLT_MAX : 6.0f;
    void (*ref)(const mn_conv_geom_t *, float, float, const float *, const float *, const float *, float *) =
        depthwise ? mn_depthwise_conv_f32 : mn_conv_f32;
    float *want = out_buf(n_out * sizeof(float)), *bound = out_buf(n_out * sizeof(float));
    ref(&g, lo, hi, in, f, bias, want);
    ref(&g, -FLT_MAX, FLT_MAX, abs_f32(in, n_in), abs_f32(f, n_f), bias ? abs_f32(bias, (size_t)g.out_c) : NULL,
        bound);
    const char *what = depthwise ? "depthwise_f32" : "conv_f32";
    const char *what_ip = depthwise ? "depthwise_f32 in place" : "conv_f32 in place";
    static unsigned counter[2];
    inplace_t ip;
    const bool in_place = inplace_init(&ip, &counter[depthwise], &g, sizeof(float), in, n_in, n_out);
    if (in_place && ip.ref) {
        inplace_fill(&ip);
        ref(&g, lo, hi, (const float *)(void *)ip.in, f, bias, (float *)(void *)(ip.in + ip.d));
        inplace_check(depthwise ? REF_DW_F32 : REF_CONV_F32, what_ip, &ip, &g, want, bound);
    }
    FOR_EACH_VARIANT(mn_conv_f32_variant_t, depthwise ? (*b_)->depthwise_f32 : (*b_)->conv_f32, v) {
        if (!v->fits(&g)) {
            continue;
        }
        const size_t scratch = v->scratch_bytes ? v->scratch_bytes(&g) : 0;
        mn_vbuf_t buf = { scratch_buf(scratch), NULL };
        float *got = out_buf(n_out * sizeof(float));
        v->run(&g, lo, hi, in, f, bias, got, &buf);
        check_f32(v->name, what, got, want, bound, n_out);
        if (in_place) {
            inplace_fill(&ip);
            v->run(&g, lo, hi, (const float *)(void *)ip.in, f, bias, (float *)(void *)(ip.in + ip.d), &buf);
            if (!bufs_ok(&buf, 0, scratch)) {
                record_run(v->name, true, false, "wrote past its scratch (in place)", 0, 0, 0);
                continue;
            }
            inplace_check(v->name, what_ip, &ip, &g, want, bound);
        }
    }
}

/* A scale for FULLY_CONNECTED: a power of two now and then (exact rounding ties), else 2^-14..2^-2. */
static float fc_rscale(void) {
    const float pot = (float)(1u << rr(2, 14));
    return chance(25) ? 1.0f / pot : (1.0f + 0.5f * (rfloat() + 1.0f)) / pot;
}

/* R = in * ws / out as prepare quantizes it (fc_rscale's range keeps R in 2^-26..2^22). */
static void fc_multiplier(const mn_fc_params_t *p, float ws, int32_t *mult, int8_t *shift) {
    mn_conv_multipliers(p->in_scale, &ws, 1, p->out_scale, 1, mult, shift);
}

static void test_fc_s8(void) {
    mn_fc_params_t p;
    memset(&p, 0, sizeof p);
    p.batches = chance(70) ? 1 : rr(2, 5);
    p.depth = chance(50) ? rchannels(64) : rr(1, 400);
    p.units = rchannels(48);
    p.input_offset = -rr(-128, 127);
    p.weights_offset = chance(70) ? 0 : rr(-127, 127);
    p.output_offset = rr(-128, 127);
    rand_act(&p.act_min, &p.act_max);
    const bool per_channel = chance(50);
    /* Requantization from scales, as prepare derives it (mn_fc_round_fast's fast path uses the
     * multipliers, its slow path the scales): shifts up to 30. */
    p.in_scale = fc_rscale();
    p.out_scale = fc_rscale();
    p.w_scale = fc_rscale();
    if (per_channel) {
        int32_t *mult = alloc((size_t)p.units * sizeof(int32_t));
        int8_t *shift = alloc((size_t)p.units);
        uint8_t *scales = alloc((size_t)p.units * 4);
        for (int i = 0; i < p.units; ++i) {
            const float ws = i && chance(70) ? fc_rscale() : p.w_scale;
            memcpy(scales + 4 * i, &ws, 4);   /* little-endian hosts and boards */
            fc_multiplier(&p, ws, &mult[i], &shift[i]);
        }
        p.mult_pc = mult;
        p.shift_pc = shift;
        p.w_scales = scales;
    } else {
        int8_t s;
        fc_multiplier(&p, p.w_scale, &p.mult, &s);
        p.shift = s;
    }
    const size_t n_in = (size_t)p.batches * p.depth, n_w = (size_t)p.units * p.depth;
    const size_t n_out = (size_t)p.batches * p.units;
    const int8_t *in = rand_s8(n_in), *w = rand_s8(n_w);
    const int32_t *bias = rand_bias(p.units);
    int8_t *want = out_buf(n_out);
    (per_channel ? mn_fully_connected_s8_per_channel : mn_fully_connected_s8)(&p, in, w, bias, want);
    FOR_EACH_VARIANT(mn_fc_s8_variant_t, (*b_)->fc_s8, v) {
        if (!v->fits(&p)) {
            continue;
        }
        mn_vbuf_t buf = { NULL, NULL };
        const size_t data = v->data_bytes ? v->data_bytes(&p) : 0;
        if (data) {
            void *d = data_buf(data);
            v->precompute(&p, w, bias, d);
            buf.data = d;
        }
        const size_t scratch = v->scratch_bytes ? v->scratch_bytes(&p) : 0;
        buf.scratch = scratch_buf(scratch);
        int8_t *got = out_buf(n_out);
        v->run(&p, in, w, bias, got, &buf);
        if (!bufs_ok(&buf, data, scratch)) {
            record(v->name, false, "wrote past its data or scratch", 0, 0, 0);
            continue;
        }
        check_s8(v->name, per_channel ? "fc_s8 per-channel" : "fc_s8 per-tensor", got, want, n_out);
    }
}

static void test_fc_f32(void) {
    mn_fc_params_t p;
    memset(&p, 0, sizeof p);
    p.batches = chance(70) ? 1 : rr(2, 5);
    p.depth = chance(50) ? rchannels(64) : rr(1, 400);
    p.units = rchannels(48);
    const size_t n_in = (size_t)p.batches * p.depth, n_w = (size_t)p.units * p.depth;
    const size_t n_out = (size_t)p.batches * p.units;
    const float *in = rand_f32(n_in), *w = rand_f32(n_w), *bias = chance(90) ? rand_f32((size_t)p.units) : NULL;
    const float lo = chance(50) ? -FLT_MAX : 0.0f, hi = chance(70) ? FLT_MAX : 6.0f;
    float *want = out_buf(n_out * sizeof(float)), *bound = out_buf(n_out * sizeof(float));
    mn_fully_connected_f32(p.batches, p.depth, p.units, lo, hi, in, w, bias, want);
    mn_fully_connected_f32(p.batches, p.depth, p.units, -FLT_MAX, FLT_MAX, abs_f32(in, n_in), abs_f32(w, n_w),
        bias ? abs_f32(bias, (size_t)p.units) : NULL, bound);
    FOR_EACH_VARIANT(mn_fc_f32_variant_t, (*b_)->fc_f32, v) {
        if (!v->fits(&p)) {
            continue;
        }
        float *got = out_buf(n_out * sizeof(float));
        v->run(&p, lo, hi, in, w, bias, got);
        check_f32(v->name, "fc_f32", got, want, bound, n_out);
    }
}

static void test_pool_s8(bool max) {
    mn_pool_geom_t g;
    g.batches = chance(15) ? rr(2, 3) : 1;
    g.in_h = rr(1, 12);
    g.in_w = rr(1, 12);
    g.channels = rchannels(40);
    g.f_h = rr(1, 4);
    g.f_w = chance(70) ? g.f_h : rr(1, 4);
    g.stride_h = rr(1, 3);
    g.stride_w = chance(70) ? g.stride_h : rr(1, 3);
    g.pad_h = chance(60) ? 0 : rr(0, g.f_h - 1);
    g.pad_w = chance(60) ? 0 : rr(0, g.f_w - 1);
    g.out_h = out_dim(g.in_h, g.f_h, g.stride_h, g.pad_h);
    g.out_w = out_dim(g.in_w, g.f_w, g.stride_w, g.pad_w);
    if (g.out_h < 1 || g.out_w < 1) {
        return;
    }
    int32_t lo, hi;
    rand_act(&lo, &hi);
    const size_t n_in = (size_t)g.batches * g.in_h * g.in_w * g.channels;
    const size_t n_out = (size_t)g.batches * g.out_h * g.out_w * g.channels;
    const int8_t *in = rand_s8(n_in);
    int8_t *want = out_buf(n_out);
    int want_r = 0;
    if (max) {
        mn_max_pool_s8(&g, lo, hi, in, want);
    } else {
        want_r = mn_average_pool_s8(&g, lo, hi, in, want);
    }
    FOR_EACH_VARIANT(mn_pool_s8_variant_t, max ? (*b_)->maxpool_s8 : (*b_)->avgpool_s8, v) {
        if (!v->fits(&g)) {
            continue;
        }
        int8_t *got = out_buf(n_out);
        const int r = v->run(&g, lo, hi, in, got);
        const char *what = max ? "maxpool_s8" : "avgpool_s8";
        if (r != want_r) {
            record(v->name, false, what, -1, r, want_r);
        } else if (r == 0) {
            check_s8(v->name, what, got, want, n_out);
        } else {
            record(v->name, true, what, 0, 0, 0);
        }
    }
}

/* A scale in [2^lo, 2^(hi + 1)): wide ratios between inputs exercise every rescaling shift. */
static float rscale(int lo, int hi) {
    float x = 1.0f + (float)(rnd() % 1000) * 1e-3f;
    for (int e = rr(lo, hi); e < 0; ++e) {
        x *= 0.5f;
    }
    return x;
}

/* Broadcast shapes for the elementwise ops: arbitrary (numpy rules), or on purpose one of the
 * classes the variants handle (mn_ew_shape): same shape, a scalar operand, a per-channel one. */
static bool rand_ew_shapes(mn_bcast_t *b, size_t *s1, size_t *s2) {
    int32_t d1[4], d2[4];
    int n1 = rr(1, 4), n2 = chance(70) ? n1 : rr(1, 4);
    const int kind = rr(0, 3);   /* 0 arbitrary, 1 same, 2 scalar, 3 per channel */
    const bool second = chance(50);   /* which input is the scalar / per-channel one */
    const int n = n1 > n2 ? n1 : n2;
    const bool bcast = chance(50);
    for (int i = 0; i < n; ++i) {   /* right-aligned dims; broadcast ones set to 1 in one input */
        const int32_t dim = rr(1, i == n - 1 ? 40 : 6);
        const int k1 = i - (n - n1), k2 = i - (n - n2);
        const int which = kind == 0 && bcast ? rr(0, 2) : 0;
        if (k1 >= 0) {
            d1[k1] = which == 1 ? 1 : dim;
        }
        if (k2 >= 0) {
            d2[k2] = which == 2 ? 1 : dim;
        }
    }
    if (kind >= 2) {   /* the small operand: [1], [1, 1, ...] or [C], [1, C], [1, 1, 1, C] */
        int32_t *d = second ? d2 : d1, *full = second ? d1 : d2;
        int *nd = second ? &n2 : &n1;
        const int nf = second ? n1 : n2;
        const int m = rr(1, nf);
        for (int i = 0; i < m; ++i) {
            d[i] = 1;
        }
        if (kind == 3) {
            d[m - 1] = full[nf - 1];
        }
        *nd = m;
    }
    if (mn_bcast_init(b, d1, n1, d2, n2) != 0) {
        return false;
    }
    *s1 = *s2 = 1;
    for (int i = 0; i < n1; ++i) {
        *s1 *= (size_t)d1[i];
    }
    for (int i = 0; i < n2; ++i) {
        *s2 *= (size_t)d2[i];
    }
    return true;
}

/* ADD / SUB (op 0 / 1) and MUL (op 2), int8. Variants that fit also run in place (output over
 * input 1, as the memory planner may place it) when input 1 has the output's shape. */
static void test_elementwise_s8(int op) {
    mn_bcast_t b;
    size_t s1, s2;
    if (!rand_ew_shapes(&b, &s1, &s2)) {
        return;
    }
    const size_t n_out = (size_t)b.size;
    int32_t lo, hi;
    rand_act(&lo, &hi);
    const int32_t z1 = rr(-128, 127), z2 = rr(-128, 127), zo = rr(-128, 127);
    mn_add_quant_t q;
    mn_mul_quant_t m;
    if (op < 2) {
        const float sc1 = rscale(-12, -2), sc2 = chance(20) ? sc1 : rscale(-12, -2);   /* equal: both 1/2 */
        mn_add_quant_init(&q, sc1, z1, sc2, z2, rscale(-12, -1), zo, lo, hi);
    } else {
        mn_mul_quant_init(&m, rscale(-12, -2), z1, rscale(-12, -2), z2, rscale(-16, 0), zo, lo, hi);
    }
    const int8_t *in1 = rand_s8(s1), *in2 = rand_s8(s2);
    int8_t *want = out_buf(n_out);
    if (op == 0) {
        mn_add_s8(&q, &b, in1, in2, want);
    } else if (op == 1) {
        mn_sub_s8(&q, &b, in1, in2, want);
    } else {
        mn_mul_s8(&m, &b, in1, in2, want);
    }
    const char *what = op == 0 ? "add_s8" : op == 1 ? "sub_s8" : "mul_s8";
    const bool in_place = s1 == n_out && chance(25);
    if (op < 2) {
        FOR_EACH_VARIANT(mn_add_s8_variant_t, (*b_)->add_s8, v) {
            if (!v->fits(&q, &b)) {
                continue;
            }
            int8_t *got = out_buf(n_out);
            v->run(&q, &b, op, in1, in2, got);
            check_s8(v->name, what, got, want, n_out);
            if (in_place) {
                memcpy(got, in1, n_out);
                v->run(&q, &b, op, got, in2, got);
                check_s8(v->name, "in place", got, want, n_out);
            }
        }
    } else {
        FOR_EACH_VARIANT(mn_mul_s8_variant_t, (*b_)->mul_s8, v) {
            if (!v->fits(&m, &b)) {
                continue;
            }
            int8_t *got = out_buf(n_out);
            v->run(&m, &b, in1, in2, got);
            check_s8(v->name, what, got, want, n_out);
            if (in_place) {
                memcpy(got, in1, n_out);
                v->run(&m, &b, got, in2, got);
                check_s8(v->name, "in place", got, want, n_out);
            }
        }
    }
}

static void test_add_s8(void) {
    test_elementwise_s8(chance(30) ? 1 : 0);
}

static void test_mul_s8(void) {
    test_elementwise_s8(2);
}

static void test_softmax_s8(void) {
    mn_softmax_q_t p;
    const float scale = chance(50) ? 1.0f / 256.0f : 0.001f + (float)(rnd() % 1000) * 5e-4f;
    if (mn_softmax_q_init(&p, scale, chance(80) ? 1.0f : 0.5f + (float)(rnd() % 100) * 0.02f) != 0) {
        return;
    }
    const int outer = rr(1, 6), depth = chance(50) ? rr(1, 16) : rr(1, 300);
    const size_t n = (size_t)outer * depth;
    const int8_t *in = rand_s8(n);
    int8_t *want = out_buf(n);
    mn_softmax_s8_s8(&p, outer, depth, in, want);
    FOR_EACH_VARIANT(mn_softmax_s8_variant_t, (*b_)->softmax_s8, v) {
        if (!v->fits(&p, outer, depth)) {
            continue;
        }
        int8_t *got = out_buf(n);
        v->run(&p, outer, depth, in, got);
        check_s8(v->name, "softmax_s8", got, want, n);
    }
}

/* SVDF int8 (int16 state): the output and the updated state must both match. */
static void test_svdf_s8(void) {
    mn_svdf_params_t p;
    memset(&p, 0, sizeof p);
    p.batches = chance(20) ? rr(2, 3) : 1;
    p.input_size = chance(50) ? rr(1, 20) : rr(1, 200);
    p.rank = chance(70) ? 1 : rr(2, 3);
    p.units = rr(1, 40);
    p.filters = p.units * p.rank;
    p.memory = chance(50) ? rr(1, 12) : rr(1, 40);
    p.input_zp = rr(-128, 127);
    p.output_zp = rr(-128, 127);
    p.mult1 = rmult();
    p.shift1 = rshift();
    p.mult2 = rmult();
    p.shift2 = rshift();
    const size_t n_state = (size_t)p.batches * p.filters * p.memory, n_out = (size_t)p.batches * p.units;
    const int8_t *in = rand_s8((size_t)p.batches * p.input_size);
    const int8_t *wf = rand_s8((size_t)p.filters * p.input_size);
    int16_t *wt = alloc((size_t)p.filters * p.memory * sizeof(int16_t));
    int16_t *state0 = alloc(n_state * sizeof(int16_t));
    const bool wide = chance(20);   /* full int16 range: the time sums wrap */
    for (size_t i = 0; i < (size_t)p.filters * p.memory; ++i) {
        wt[i] = wide ? (int16_t)rnd() : (int16_t)rr(-2000, 2000);
    }
    for (size_t i = 0; i < n_state; ++i) {
        state0[i] = wide ? (int16_t)rnd() : (int16_t)rr(-3000, 3000);
    }
    const int32_t *bias = rand_bias(p.units);
    int16_t *want_state = alloc(n_state * sizeof(int16_t));
    memcpy(want_state, state0, n_state * sizeof(int16_t));
    int8_t *want = out_buf(n_out);
    mn_svdf_s8(&p, in, wf, wt, bias, want_state, alloc((size_t)p.batches * p.filters * sizeof(int32_t)),
        alloc(n_out * sizeof(int32_t)), want);
    FOR_EACH_VARIANT(mn_svdf_s8_variant_t, (*b_)->svdf_s8, v) {
        if (!v->fits(&p)) {
            continue;
        }
        mn_vbuf_t buf = { NULL, NULL };
        const size_t data = v->data_bytes ? v->data_bytes(&p) : 0;
        if (data) {
            void *d = data_buf(data);
            v->precompute(&p, wf, d);
            buf.data = d;
        }
        int16_t *state = out_buf(n_state * sizeof(int16_t));
        memcpy(state, state0, n_state * sizeof(int16_t));
        int8_t *got = out_buf(n_out);
        v->run(&p, in, wf, wt, bias, state, got, &buf);   /* no scratch */
        if (!bufs_ok(&buf, data, 0) || !guard_ok(state, n_state * sizeof(int16_t))) {
            record(v->name, false, "wrote past its data or state", 0, 0, 0);
            continue;
        }
        long at = -1;
        for (size_t i = 0; i < n_state && at < 0; ++i) {
            at = state[i] != want_state[i] ? (long)i : -1;
        }
        if (at >= 0) {
            record(v->name, false, "svdf_s8 state", at, state[at], want_state[at]);
            continue;
        }
        check_s8(v->name, "svdf_s8", got, want, n_out);
    }
}

/* QUANTIZE requantization int8 / int16 -> int8 / int16 (mn_requantize_*). */
static void test_requant(void) {
    static const struct {
        int in_dt, out_dt;
        size_t in_size, out_size;
    } pairs[] = {
        { MN_INT8, MN_INT8, 1, 1 }, { MN_INT16, MN_INT8, 2, 1 }, { MN_INT16, MN_INT16, 2, 2 },
        { MN_INT8, MN_UINT8, 1, 1 }, { MN_UINT8, MN_INT8, 1, 1 }, { MN_UINT8, MN_UINT8, 1, 1 },
        { MN_INT16, MN_INT32, 2, 4 }, { MN_INT32, MN_INT8, 4, 1 }, { MN_INT32, MN_INT16, 4, 2 },
    };
    const int k = rr(0, (int)(sizeof pairs / sizeof pairs[0]) - 1);
    const int in_dt = pairs[k].in_dt, out_dt = pairs[k].out_dt;
    const size_t n = (size_t)(chance(50) ? rr(1, 20) : rr(1, 600));
    mn_requant_t r;
    r.mult = rmult();
    r.shift = rshift();
    r.in_zp = in_dt == MN_INT16 ? (chance(50) ? 0 : rr(-32768, 32767)) : in_dt == MN_UINT8 ? rr(0, 255) : rr(-128, 127);
    r.out_zp = out_dt == MN_INT16 ? (chance(50) ? 0 : rr(-32768, 32767)) : out_dt == MN_UINT8 ? rr(0, 255) : rr(-128, 127);
    uint8_t *in = alloc(n * pairs[k].in_size);
    for (size_t i = 0; i < n * pairs[k].in_size; ++i) {
        in[i] = (uint8_t)rnd();
    }
    const size_t out_bytes = n * pairs[k].out_size;
    uint8_t *want = out_buf(out_bytes);
    switch (k) {
        case 0: mn_requantize_s8_s8(n, &r, (const int8_t *)in, (int8_t *)want); break;
        case 1: mn_requantize_s16_s8(n, &r, (const int16_t *)in, (int8_t *)want); break;
        case 2: mn_requantize_s16_s16(n, &r, (const int16_t *)in, (int16_t *)want); break;
        case 3: mn_requantize_s8_u8(n, &r, (const int8_t *)in, want); break;
        case 4: mn_requantize_u8_s8(n, &r, in, (int8_t *)want); break;
        case 5: mn_requantize_u8_u8(n, &r, in, want); break;
        case 6: mn_requantize_s16_s32(n, &r, (const int16_t *)in, (int32_t *)want); break;
        case 7: mn_requantize_s32_s8(n, &r, (const int32_t *)in, (int8_t *)want); break;
        default: mn_requantize_s32_s16(n, &r, (const int32_t *)in, (int16_t *)want); break;
    }
    FOR_EACH_VARIANT(mn_requant_variant_t, (*b_)->requant, v) {
        if (!v->fits(in_dt, out_dt, &r)) {
            continue;
        }
        uint8_t *got = out_buf(out_bytes);
        v->run(n, &r, in, got);
        if (!guard_ok(got, out_bytes)) {
            record(v->name, false, "wrote past its output", 0, 0, 0);
            continue;
        }
        check_s8(v->name, "requant (bytes)", (const int8_t *)got, (const int8_t *)want, out_bytes);
    }
}

static void t_conv_s8(void) {
    test_conv_s8(false);
}
static void t_dw_s8(void) {
    test_conv_s8(true);
}
static void t_conv_f32(void) {
    test_conv_f32(false);
}
static void t_dw_f32(void) {
    test_conv_f32(true);
}
static void t_maxpool(void) {
    test_pool_s8(true);
}
static void t_avgpool(void) {
    test_pool_s8(false);
}

/* Register every compiled-in variant, so one that never fits any case shows up with 0 runs. */
#define REGISTER(TYPE, FIELD) \
    FOR_EACH_VARIANT(TYPE, (*b_)->FIELD, v) { \
        stat_index(v->name); \
    }
/* Convolutions: also checked in place, as are the reference functions (which have only those runs). */
#define REGISTER_CONV(TYPE, FIELD, REF) \
    stats[stat_index(REF)].ref = stats[stat_index(REF)].conv = true; \
    FOR_EACH_VARIANT(TYPE, (*b_)->FIELD, v) { \
        stats[stat_index(v->name)].conv = true; \
    }

int main(int argc, char **argv) {
    int scale = EQUIV_SCALE;
    if (argc > 1) {
        scale = atoi(argv[1]);
    }
    if (argc > 2) {
        rng = (uint32_t)strtoul(argv[2], NULL, 0) | 1u;
    }
    int n_backends;
    backends = mn_backends(&n_backends);
    printf("backends:");
    for (int i = 0; i < n_backends; ++i) {
        printf(" %s", backends[i]->name);
    }
    printf("\n");
    REGISTER_CONV(mn_conv_s8_variant_t, conv_s8, REF_CONV_S8);
    REGISTER_CONV(mn_conv_s8_variant_t, depthwise_s8, REF_DW_S8);
    REGISTER_CONV(mn_conv_f32_variant_t, conv_f32, REF_CONV_F32);
    REGISTER_CONV(mn_conv_f32_variant_t, depthwise_f32, REF_DW_F32);
    REGISTER(mn_fc_s8_variant_t, fc_s8);
    REGISTER(mn_fc_f32_variant_t, fc_f32);
    REGISTER(mn_add_s8_variant_t, add_s8);
    REGISTER(mn_mul_s8_variant_t, mul_s8);
    REGISTER(mn_pool_s8_variant_t, avgpool_s8);
    REGISTER(mn_pool_s8_variant_t, maxpool_s8);
    REGISTER(mn_softmax_s8_variant_t, softmax_s8);
    REGISTER(mn_svdf_s8_variant_t, svdf_s8);
    REGISTER(mn_requant_variant_t, requant);

    static const struct {
        void (*fn)(void);
        int cases;
    } tests[] = {
        { t_conv_s8, 1500 }, { t_dw_s8, 1500 }, { test_fc_s8, 1500 }, { t_conv_f32, 300 }, { t_dw_f32, 300 },
        { test_fc_f32, 300 }, { test_add_s8, 1500 }, { test_mul_s8, 1000 }, { t_avgpool, 800 }, { t_maxpool, 800 }, { test_softmax_s8, 500 },
        { test_svdf_s8, 400 }, { test_requant, 1000 },
    };
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; ++t) {
        for (int i = 0; i < tests[t].cases * scale; ++i) {
            tests[t].fn();
            reset_pool();
        }
    }
    int idle = 0;
    for (int i = 0; i < n_stats; ++i) {
        const bool ran = stats[i].runs || stats[i].ref, ran_ip = stats[i].ip_runs || !stats[i].conv;
        if (stats[i].ref) {
            printf("%-32s %25s  ", stats[i].name, "");
        } else {
            printf("%-32s %6u cases %4u failed%s", stats[i].name, stats[i].runs, stats[i].fails,
                stats[i].conv ? ", " : "");
        }
        if (stats[i].conv) {
            printf("%5u in place %4u failed", stats[i].ip_runs, stats[i].ip_fails);
        }
        printf("%s%s\n", ran ? "" : "  <- never ran", ran_ip ? "" : "  <- never ran in place");
        idle += !ran || !ran_ip;
    }
    if (idle) {
        printf("%d variant(s) ran no case\n", idle);
    }
    printf("%u passed, %u failed\n", passed, failed);
    const int status = failed || idle ? 1 : 0;
#if defined(__riscv) && !EQUIV_HOST
    /* QEMU virt: the SiFive test device ends the emulation with our exit status. */
    *(volatile uint32_t *)0x100000 = status ? (uint32_t)status << 16 | 0x3333u : 0x5555u;
#endif
    return status;
}
