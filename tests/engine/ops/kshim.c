/*
 * kshim.c — a stand-in interpreter for single-op kernel tests.
 *
 * Implements the kernel-facing API of mn_kernel.h (persistent/scratch memory
 * from malloc, options from a plain array, error recording) so that the
 * reference kernels' real prepare/eval code can be driven from Python via
 * ctypes without the full engine.  Test-only; never linked into firmware.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mn_graph.h"
#include "mn_registry.h"

/* One option field as passed from Python. */
typedef struct {
    int32_t present;
    int32_t i;
    float f;
    int32_t nvec;
    int32_t vec[8];
} kshim_opt_t;

typedef struct {
    int32_t n;
    kshim_opt_t f[16];
} kshim_opts_t;

typedef struct {
    mn_interp_t it;
    mn_node_t node;
    kshim_opts_t opts;
    int32_t inputs[1 + 24], outputs[1 + 8], intermediates[8];   /* operand lists: length, then indices */
    int n_intermediates;
    void *allocs[256];
    int n_allocs;
    void *scratch[16];
    int n_scratch;
    char err[256];
} kshim_t;

static kshim_t *cur;

static void *track(kshim_t *k, size_t bytes) {
    if (k->n_allocs >= 256) {
        return NULL;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    k->allocs[k->n_allocs++] = p;
    return p;
}

void *mn_alloc_persistent(mn_ctx_t *ctx, size_t bytes) {
    (void)ctx;
    return track(cur, bytes);
}

void *mn_alloc_temp(mn_ctx_t *ctx, size_t bytes) {
    (void)ctx;
    return track(cur, bytes);
}

mn_status_t mn_request_scratch(mn_ctx_t *ctx, size_t bytes, int32_t *index) {
    (void)ctx;
    if (cur->n_scratch >= 16) {
        return MN_ERR_ARENA;
    }
    /* poison so kernels cannot rely on zeroed scratch */
    void *p = track(cur, bytes);
    if (!p) {
        return MN_ERR_ARENA;
    }
    memset(p, 0xA5, bytes);
    cur->scratch[cur->n_scratch] = p;
    *index = cur->n_scratch++;
    return MN_OK;
}

/* The model stores no tables here: kernel data and table in one block, as the engine does then. */
void *mn_table_alloc(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, size_t head, size_t bytes,
    void **table, bool *fill) {
    (void)node, (void)tag;
    const size_t h = (head + 3u) & ~(size_t)3u;
    uint8_t *p = (uint8_t *)mn_alloc_persistent(ctx, h + bytes);
    *table = p ? p + h : NULL;
    *fill = true;
    return head ? (void *)p : *table;
}

const void *mn_table_keep(mn_ctx_t *ctx, const mn_node_t *node, uint32_t tag, void *table, size_t bytes) {
    (void)ctx, (void)node, (void)tag, (void)bytes;
    return table;
}

const void *mn_kernel_data(mn_ctx_t *ctx, const mn_node_t *node, const void *data, size_t bytes) {
    (void)node;
    void *p = mn_alloc_persistent(ctx, bytes);
    if (p) {
        memcpy(p, data, bytes);
    }
    return p;
}

int mn_num_intermediates(const mn_ctx_t *ctx, const mn_node_t *node) {
    (void)ctx, (void)node;
    return cur->n_intermediates;
}

mn_tensor_t *mn_input(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    int32_t t = (i >= 0 && i < mn_num_inputs(node)) ? node->inputs[i] : -1;
    return t >= 0 ? &ctx->tensors[t] : (mn_tensor_t *)0;
}

mn_tensor_t *mn_output(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    int32_t t = (i >= 0 && i < mn_num_outputs(node)) ? node->outputs[i] : -1;
    return t >= 0 ? &ctx->tensors[t] : (mn_tensor_t *)0;
}

/* Every tensor has a record here (rec_of is NULL), so these are never reached. */
mn_tensor_t *mn_const_tensor(mn_ctx_t *ctx, const mn_node_t *node, int32_t t) {
    (void)node;
    return &ctx->tensors[t];
}

const void *mn_const_data(const mn_ctx_t *ctx, int32_t t) {
    return ctx->tensors[t].data;
}

mn_tensor_t *mn_intermediate(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    (void)node;
    int32_t t = (i >= 0 && i < cur->n_intermediates) ? cur->intermediates[i] : -1;
    return t >= 0 ? &ctx->tensors[t] : (mn_tensor_t *)0;
}

const uint8_t *mn_custom_options(const mn_ctx_t *ctx, const mn_node_t *node, size_t *len) {
    (void)ctx, (void)node;
    *len = 0;
    return NULL;
}

bool mn_sizing_only(const mn_ctx_t *ctx) {
    (void)ctx;
    return false;
}

void *mn_get_scratch(mn_ctx_t *ctx, int32_t index) {
    (void)ctx;
    return (index >= 0 && index < cur->n_scratch) ? cur->scratch[index] : NULL;
}

mn_status_t mn_fail(mn_ctx_t *ctx, mn_status_t code, const char *fmt, ...) {
    (void)ctx;
    va_list ap;
    va_start(ap, fmt);
    mn_vfmt(cur->err, sizeof cur->err, fmt, ap);
    va_end(ap);
    return code;
}

static const kshim_opt_t *opt(const mn_node_t *node, int field) {
    const kshim_opts_t *o = (const kshim_opts_t *)(const void *)node->options;
    if (!o || field < 0 || field >= o->n || !o->f[field].present) {
        return NULL;
    }
    return &o->f[field];
}

int32_t mn_opt_i32(const mn_node_t *node, int field, int32_t def) {
    const kshim_opt_t *o = opt(node, field);
    return o ? o->i : def;
}
int32_t mn_opt_i8(const mn_node_t *node, int field, int32_t def) {
    const kshim_opt_t *o = opt(node, field);
    return o ? (int32_t)(int8_t)o->i : def;
}
bool mn_opt_bool(const mn_node_t *node, int field, bool def) {
    const kshim_opt_t *o = opt(node, field);
    return o ? o->i != 0 : def;
}
float mn_opt_f32(const mn_node_t *node, int field, float def) {
    const kshim_opt_t *o = opt(node, field);
    return o ? o->f : def;
}
int32_t mn_opt_vec_i32(const mn_ctx_t *ctx, const mn_node_t *node, int field, int32_t *out, int32_t max) {
    (void)ctx;
    const kshim_opt_t *o = opt(node, field);
    if (!o) {
        return -1;
    }
    for (int32_t i = 0; i < o->nvec && i < max; ++i) {
        out[i] = o->vec[i];
    }
    return o->nvec;
}

/* The engine's own registry (mn_registry.c): every kernel of mn_ops.h, no per-op list here. */
static const mn_kernel_t *find(int32_t builtin) {
    return mn_registry_find(NULL, builtin, NULL);
}

/* Tensor description from Python (flat, stable layout). */
typedef struct {
    void *data;
    const float *scales;      /* q_count floats, or NULL */
    const int64_t *zps;       /* q_count int64, or NULL */
    int32_t q_count, q_dim;
    int32_t ndim, dtype, flags;
    int32_t dims[6];
} kshim_tensor_t;

/* Intermediate tensor indices for the next kshim_prepare (consumed by it). */
static int32_t pending_intermediates[8];
static int32_t n_pending_intermediates;

void kshim_set_intermediates(const int32_t *idx, int32_t n) {
    n_pending_intermediates = n < 0 ? 0 : (n > 8 ? 8 : n);
    memcpy(pending_intermediates, idx, sizeof(int32_t) * (size_t)n_pending_intermediates);
}

/* The engine reads quantization from the model (mn_tensor_t.quant): a QuantizationParameters
 * flatbuffer table with the scale and zero_point vectors (zps may be NULL: none stored).
 * Layout: vtable (fields 0-3), table, scale vector, zero-point vector; host is little-endian. */
static const uint8_t *quant_table(kshim_t *k, const float *scales, const int64_t *zps, int32_t n) {
    const size_t sv = 24, zv = sv + 4 + 4 * (size_t)n;
    uint8_t *b = (uint8_t *)track(k, zv + 4 + 8 * (size_t)n);
    if (!b) {
        return NULL;
    }
    const uint16_t vt[6] = { 12, 12, 0, 0, 4, (uint16_t)(zps ? 8 : 0) };
    const int32_t soff = 12;
    const uint32_t to_sv = (uint32_t)(sv - 16), to_zv = (uint32_t)(zv - 20), len = (uint32_t)n;
    memcpy(b, vt, sizeof vt);
    memcpy(b + 12, &soff, 4);
    memcpy(b + 16, &to_sv, 4);
    memcpy(b + 20, &to_zv, 4);
    memcpy(b + sv, &len, 4);
    memcpy(b + sv + 4, scales, 4 * (size_t)n);
    if (zps) {
        memcpy(b + zv, &len, 4);
        memcpy(b + zv + 4, zps, 8 * (size_t)n);
    }
    return b + 12;
}

/* Build, init and prepare.  Returns a handle, or NULL with *status/err set. */
void *kshim_prepare(int32_t builtin, const kshim_tensor_t *ts, int32_t n_tensors,
    const int32_t *inputs, int32_t n_in, const int32_t *outputs, int32_t n_out,
    const kshim_opt_t *opts, int32_t n_opts, int32_t *status, char *err, int32_t errcap) {
    kshim_t *k = (kshim_t *)calloc(1, sizeof *k);
    cur = k;
    const mn_kernel_t *kern = find(builtin);
    if (!kern || n_in > 24 || n_out > 8 || n_opts > 16) {
        *status = MN_ERR_UNSUPPORTED;
        snprintf(err, (size_t)errcap, "kshim: no kernel for builtin %d", (int)builtin);
        free(k);
        return NULL;
    }
    mn_tensor_t *tensors = (mn_tensor_t *)track(k, sizeof(mn_tensor_t) * (size_t)n_tensors);
    for (int i = 0; i < n_tensors; ++i) {
        mn_tensor_t *t = &tensors[i];
        t->data = ts[i].data;
        t->q_dim = (int8_t)ts[i].q_dim;
        if (ts[i].q_count > 0) {
            t->quant = quant_table(k, ts[i].scales, ts[i].zps, ts[i].q_count);
        }
        t->ndim = (uint8_t)ts[i].ndim;
        t->dtype = (uint8_t)ts[i].dtype;
        t->flags = (uint8_t)ts[i].flags;
        int32_t *dims = (int32_t *)track(k, sizeof(int32_t) * 6);
        for (int d = 0; d < 6; ++d) {
            dims[d] = ts[i].dims[d];
        }
        t->dims = dims;
    }
    k->it.tensors = tensors;
    k->it.n_tensors = (uint32_t)n_tensors;
    k->inputs[0] = n_in;
    k->outputs[0] = n_out;
    memcpy(k->inputs + 1, inputs, sizeof(int32_t) * (size_t)n_in);
    memcpy(k->outputs + 1, outputs, sizeof(int32_t) * (size_t)n_out);
    k->opts.n = n_opts;
    memcpy(k->opts.f, opts, sizeof(kshim_opt_t) * (size_t)n_opts);
    mn_node_t *node = &k->node;
    node->kernel = kern;
    node->inputs = k->inputs + 1;
    node->outputs = k->outputs + 1;
    memcpy(k->intermediates, pending_intermediates, sizeof(int32_t) * (size_t)n_pending_intermediates);
    k->n_intermediates = n_pending_intermediates;
    n_pending_intermediates = 0;
    node->options = n_opts ? (const uint8_t *)(const void *)&k->opts : NULL;
    node->builtin = builtin;
    mn_status_t st = MN_OK;
    if (kern->init) {
        st = kern->init(&k->it, node);
    }
    if (st == MN_OK && kern->prepare) {
        st = kern->prepare(&k->it, node);
    }
    *status = (int32_t)st;
    if (st != MN_OK) {
        snprintf(err, (size_t)errcap, "%s", k->err);
        for (int i = 0; i < k->n_allocs; ++i) {
            free(k->allocs[i]);
        }
        free(k);
        return NULL;
    }
    return k;
}

int32_t kshim_invoke(void *h, char *err, int32_t errcap) {
    kshim_t *k = (kshim_t *)h;
    cur = k;
    mn_status_t st = k->node.kernel->eval(&k->it, &k->node);
    if (st != MN_OK) {
        snprintf(err, (size_t)errcap, "%s", k->err);
    }
    return (int32_t)st;
}

void kshim_free(void *h) {
    kshim_t *k = (kshim_t *)h;
    if (!k) {
        return;
    }
    if (k->node.kernel->free) {
        cur = k;
        k->node.kernel->free(&k->it, &k->node);
    }
    for (int i = 0; i < k->n_allocs; ++i) {
        free(k->allocs[i]);
    }
    free(k);
}
