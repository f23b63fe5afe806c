/*
 * Builtin-options accessors for kernels. The verifier checked that each op's options table and its
 * vtable lie inside the model; field sizes are only known here, so every read is checked against
 * the table's object size (a hostile table yields the default, never an out-of-bounds read).
 */
#include "mn_modelview.h"

/* Pointer to `size` bytes of field `field`, or NULL if absent / not inside the table. */
static const uint8_t *opt_field(const mn_node_t *node, int field, uint32_t size) {
    const uint8_t *t = node->options;
    if (!t || field < 0) {
        return NULL;
    }
    const uint8_t *vt = t - mn_ld_i32(t);
    uint32_t vtsize = mn_ld_u16(vt), objsize = mn_ld_u16(vt + 2);
    uint32_t vo = 4u + 2u * (uint32_t)field;
    if (vo + 2 > vtsize) {
        return NULL;
    }
    uint32_t fo = mn_ld_u16(vt + vo);
    if (!fo || fo + size > objsize) {
        return NULL;
    }
    return t + fo;
}

int32_t mn_opt_i32(const mn_node_t *node, int field, int32_t def) {
    const uint8_t *p = opt_field(node, field, 4);
    return p ? mn_ld_i32(p) : def;
}

int32_t mn_opt_i8(const mn_node_t *node, int field, int32_t def) {
    const uint8_t *p = opt_field(node, field, 1);
    return p ? (int32_t)(int8_t)p[0] : def;
}

bool mn_opt_bool(const mn_node_t *node, int field, bool def) {
    const uint8_t *p = opt_field(node, field, 1);
    return p ? p[0] != 0 : def;
}

float mn_opt_f32(const mn_node_t *node, int field, float def) {
    const uint8_t *p = opt_field(node, field, 4);
    return p ? mn_ld_f32(p) : def;
}

int32_t mn_opt_vec_i32(const mn_ctx_t *ctx, const mn_node_t *node, int field, int32_t *out, int32_t max) {
    const uint8_t *p = opt_field(node, field, 4);
    if (!p) {
        return -1;
    }
    const mn_model_t *m = ctx->model;
    uint64_t pos = (uint64_t)(p - m->buf);
    uint64_t v = pos + mn_ld_u32(p);
    if (v + 4 > m->len) {
        return -1;
    }
    uint32_t n = mn_ld_u32(m->buf + v);
    if (v + 4 + 4 * (uint64_t)n > m->len) {
        return -1;
    }
    for (uint32_t i = 0; i < n && (int32_t)i < max; i++) {
        out[i] = mn_ld_i32(m->buf + v + 4 + 4 * i);
    }
    return (int32_t)n;
}

bool mn_opt_str(const mn_ctx_t *ctx, const mn_node_t *node, int field, const char **out) {
    return mn_opt_str_in(ctx->model, node, field, out);
}

bool mn_opt_str_in(const mn_model_t *m, const mn_node_t *node, int field, const char **out) {
    *out = NULL;
    const uint8_t *p = opt_field(node, field, 4);
    if (!p) {
        return true;
    }
    uint64_t s = (uint64_t)(p - m->buf) + mn_ld_u32(p);
    if (s + 4 > m->len) {
        return false;
    }
    uint64_t n = mn_ld_u32(m->buf + s);
    if (s + 4 + n + 1 > m->len || m->buf[s + 4 + n] != 0) {
        return false;   /* a flatbuffer string ends with a NUL after its n bytes */
    }
    *out = (const char *)(m->buf + s + 4);
    return true;
}
