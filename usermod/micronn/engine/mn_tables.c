/*
 * Per-op tables stored in the model (mn_kernel.h, "tables"): input-independent data a kernel
 * computes in prepare (per-channel multipliers and shifts, biases with the input offset folded
 * in, ...) may also be stored in the model by a host tool (`micronn tables`), in the metadata
 * buffer "micronn_quant_v1". The engine still computes every table, compares it byte for byte
 * with the stored candidates and, when one is identical, uses that copy in place (in flash on a
 * board) instead of keeping its own in the arena. A stored table is never trusted: a wrong, stale
 * or foreign one (another backend's data, another engine version) only costs arena bytes.
 *
 * Buffer layout (little-endian, untrusted: every field is checked where it is used):
 *     u32 n                         number of entries
 *     n x { u16 subgraph; u16 tag; u32 op; u32 offset; u32 bytes }
 *     table data                    at `offset` from the start of the buffer
 * A table is used in place only when its address is MN_ARENA_ALIGN-aligned (as arena blocks).
 */
#include "mn_context.h"

#define ENTRY_BYTES 16u

/* Index of the interpreter's subgraph in the model (its "subgraph 0" may be another one). */
static uint32_t subgraph_index(const mn_model_t *m) {
    const uint8_t *b = m->buf;
    uint32_t n, first = fb_vec(b, mn_ld_u32(b), F_MODEL_SUBGRAPHS, &n);
    for (uint32_t k = 0; k < n; k++) {
        if (fb_vec_table(b, first, k) == m->subgraph) {
            return k;
        }
    }
    return UINT32_MAX;
}

/* A stored table for (op, tag) of `bytes` bytes that is usable in place: the one equal to `want`,
 * or with want == NULL the first candidate. NULL if none. */
static const uint8_t *stored_table(const mn_interp_t *it, uint32_t op, uint32_t tag, const void *want,
    size_t bytes) {
    size_t size;
    const uint8_t *p = mn_model_metadata(it->model, MN_TABLES_METADATA, &size);
    if (!p || size < 4 || !bytes) {
        return NULL;
    }
    const uint32_t n = mn_ld_u32(p), sg = subgraph_index(it->model);
    if (n > (size - 4) / ENTRY_BYTES) {
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = p + 4 + ENTRY_BYTES * i;
        const uint32_t off = mn_ld_u32(e + 8), len = mn_ld_u32(e + 12);
        if (mn_ld_u16(e) != sg || mn_ld_u16(e + 2) != tag || mn_ld_u32(e + 4) != op || len != bytes
            || off > size || len > size - off || ((uintptr_t)(p + off) % MN_ARENA_ALIGN) != 0) {
            continue;
        }
        if (!want || memcmp(p + off, want, bytes) == 0) {
            return p + off;
        }
    }
    return NULL;
}

/* Hand a kept table to the host tool that stores them (mn_config_t.table_hook). */
static void report(const mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, const void *table, size_t bytes) {
    if (ctx->cfg.table_hook && !ctx->dry_run && bytes) {
        ctx->cfg.table_hook(ctx->cfg.table_user, subgraph_index(ctx->model), mn_node_index(ctx, node), tag,
            table, bytes);
    }
}

void *mn_table_alloc(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, size_t head, size_t bytes,
    void **table, bool *fill) {
    const size_t h = (head + 3u) & ~(size_t)3u;
    *table = NULL;
    *fill = !mn_sizing_only(ctx);
    if (stored_table(ctx, mn_node_index(ctx, node), tag, NULL, bytes)) {
        /* compare first: the kernel data alone is persistent, the table a temporary */
        void *d = head ? mn_alloc_persistent(ctx, head) : NULL;
        if ((head && !d) || !(*table = mn_alloc_temp(ctx, bytes))) {
            return NULL;
        }
        memset(*table, 0, bytes);   /* as a persistent block: bytes a kernel leaves alone compare equal */
        *fill = true;   /* also in a sizing run: whether it matches decides the bytes */
        return head ? d : *table;
    }
    uint8_t *p = (uint8_t *)mn_alloc_persistent(ctx, bytes > SIZE_MAX / 2 - h ? SIZE_MAX / 2 : h + bytes);
    if (p) {
        *table = p + h;
    }
    return head ? p : *table;
}

/* The stored table equal to `data`, else a persistent copy of it (NULL: arena exhausted). */
static const void *stored_or_copy(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, const void *data,
    size_t bytes) {
    const void *out = stored_table(ctx, mn_node_index(ctx, node), tag, data, bytes);
    if (!out) {
        void *copy = mn_alloc_persistent(ctx, bytes);
        if (!copy) {
            return NULL;
        }
        memcpy(copy, data, bytes);
        out = copy;
    }
    return out;
}

const void *mn_table_keep(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, void *table, size_t bytes) {
    const void *out = table;
    /* with candidates, table is the temporary of mn_table_alloc */
    if (stored_table(ctx, mn_node_index(ctx, node), tag, NULL, bytes)
        && !(out = stored_or_copy(ctx, node, tag, table, bytes))) {
        return NULL;
    }
    report(ctx, node, tag, out, bytes);
    return out;
}

const void *mn_kernel_data(mn_ctx_t *ctx, const mn_node_t *node, const void *data, size_t bytes) {
    const void *out = stored_or_copy(ctx, node, MN_TABLE_KDATA, data, bytes);
    if (out) {
        report(ctx, node, MN_TABLE_KDATA, out, bytes);
    }
    return out;
}
