/*
 * Flatbuffer readers (mn_fb.h): functions, not inlined at each of the engine's many reads, for
 * smaller code (the reads are outside kernels' inner loops).
 */
#include "mn_fb.h"

uint32_t fb_field(const uint8_t *b, uint32_t t, int field) {
    uint32_t vt = (uint32_t)((int64_t)t - (int64_t)mn_ld_i32(b + t));
    uint32_t vtsize = mn_ld_u16(b + vt);
    uint32_t vo = 4u + 2u * (uint32_t)field;
    if (vo + 2u > vtsize) {
        return 0;
    }
    uint32_t fo = mn_ld_u16(b + vt + vo);
    return fo ? t + fo : 0;
}

uint32_t fb_u32(const uint8_t *b, uint32_t t, int field, uint32_t def) {
    uint32_t p = fb_field(b, t, field);
    return p ? mn_ld_u32(b + p) : def;
}

uint32_t fb_ref(const uint8_t *b, uint32_t t, int field) {
    uint32_t p = fb_field(b, t, field);
    return p ? p + mn_ld_u32(b + p) : 0;
}

uint32_t fb_vec(const uint8_t *b, uint32_t t, int field, uint32_t *n) {
    uint32_t v = fb_ref(b, t, field);
    if (!v) {
        *n = 0;
        return 0;
    }
    *n = mn_ld_u32(b + v);
    return v + 4;
}
