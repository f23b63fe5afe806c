/*
 * mn_conv_multipliers (integer path for positive normal scales) against TFLite's formula in
 * double precision, QuantizeMultiplier(double(in) * double(filter) / double(out)), on random and
 * adversarial scales; and mn_udivmod64 (the engine's 64/32-bit division without libgcc) against
 * the compiler's 64-bit division. Prints "N passed, M failed"; exit status 1 on any difference.
 */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "mn_quant.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A scale: random bits in a plausible exponent range, or an edge significand. */
static float scale(void) {
    uint32_t exp = 100 + next() % 60, mant;
    switch (next() % 6) {
        case 0: mant = 0; break;                  /* powers of two */
        case 1: mant = 0x7fffff; break;           /* all ones */
        case 2: mant = next() & 0x7ff000; break;  /* short significands: ties are likely */
        default: mant = next() & 0x7fffff;
    }
    return from_bits(exp << 23 | mant);
}

int main(void) {
    long passed = 0, failed = 0;
    for (long i = 0; i < 2000000; ++i) {
        float in = scale(), f = scale(), out = scale();
        if (i % 97 == 0) {
            out = from_bits(1u << 23 | (next() & 0x7fffff));  /* tiny: huge multiplier, saturates */
        }
        int32_t m;
        int8_t s;
        mn_conv_multipliers(in, &f, 1, out, 1, &m, &s);
        int32_t m_ref;
        int s_ref;
        mn_quantize_multiplier((double)in * (double)f / (double)out, &m_ref, &s_ref);
        if (m != m_ref || s != s_ref) {
            if (failed < 10) {
                printf("in %a filter %a out %a: got %ld<<%d, want %ld<<%d\n", (double)in, (double)f, (double)out,
                    (long)m, s, (long)m_ref, s_ref);
            }
            ++failed;
        } else {
            ++passed;
        }
    }
    for (long i = 0; i < 2000000; ++i) {
        const uint64_t n = ((uint64_t)next() << 32 | next()) >> (next() % 64);
        uint32_t d = next() >> (next() % 32);  /* every path: 32-bit n, base 256, base 2 */
        d = d ? d : 1;
        uint32_t r = 0;
        const uint64_t q = mn_udivmod64(n, d, &r);
        if (q != n / d || r != n % d) {
            if (failed < 10) {
                printf("udivmod64 %llu / %lu: got %llu rem %lu\n", (unsigned long long)n, (unsigned long)d,
                    (unsigned long long)q, (unsigned long)r);
            }
            ++failed;
        } else {
            ++passed;
        }
    }
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
