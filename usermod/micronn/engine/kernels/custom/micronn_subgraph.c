/*
 * Custom op "micronn_subgraph": runs another subgraph of the same model with a second interpreter,
 * on a given kernel backend. `micronn partition MODEL --backend B` (host_tools/micronn_tools/
 * partition.py) writes models where each delegated subgraph became one such op (as TI's TIDL
 * offload does), so the file stays a standard .tflite.
 *
 * Custom options (ASCII): "backend=<name>;subgraph=<index>". The op's inputs and outputs are the
 * subgraph's inputs and outputs, in order, with the same dtypes and sizes. The subgraph runs with
 * that backend as delegate (mn_delegate_find); a build without that backend runs it with its own
 * kernels (same bits either way; the variant reported says "kernels:subgraphK"). Its interpreter
 * (mn_nested.c, as IF / WHILE use) and arena live in this op's persistent memory; at eval its
 * boundary tensors are pointed at this op's operands (no copies, except for an output that is
 * also an input or another output). A
 * micronn_subgraph op inside such a subgraph is refused (no recursion).
 */
#include "mn_kernel.h"

#if MICRONN_OP_micronn_subgraph

#define NAME_MAX_LEN 16

typedef struct {
    mn_nested_t n;              /* the subgraph's interpreter (mn_nested.c) */
    char label[NAME_MAX_LEN + 24];   /* "<backend>:subgraph<k>", the variant reported */
} sub_data_t;

static mn_status_t refuse_nested(mn_ctx_t *ctx, mn_node_t *node) {
    (void)node;
    return mn_fail(ctx, MN_ERR_MODEL, "micronn_subgraph inside a delegated subgraph is not supported");
}
static const mn_kernel_t nested_refusal = { NULL, refuse_nested, NULL, NULL, NULL };
static const mn_registration_t no_nesting[] = {
    { MN_BUILTIN_CUSTOM, "micronn_subgraph", &nested_refusal, 0, 0, NULL },
};

/* Value of `key=` in the options (up to ';'), copied to out (NUL-terminated); length or -1. */
static int option(const mn_ctx_t *ctx, const mn_node_t *node, const char *key, char *out, size_t cap) {
    size_t n, klen = strlen(key);
    const char *o = (const char *)mn_custom_options(ctx, node, &n);
    for (size_t i = 0; o && i + klen < n; i++) {
        if ((i == 0 || o[i - 1] == ';') && memcmp(o + i, key, klen) == 0 && o[i + klen] == '=') {
            size_t j = i + klen + 1, k = 0;
            while (j < n && o[j] != ';' && o[j] && k + 1 < cap) {
                out[k++] = o[j++];
            }
            out[k] = 0;
            return (int)k;
        }
    }
    return -1;
}

static mn_status_t sub_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    char backend[NAME_MAX_LEN], num[12];
    if (option(ctx, node, "backend", backend, sizeof backend) <= 0 || option(ctx, node, "subgraph", num, sizeof num) <= 0) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom options must read \"backend=<name>;subgraph=<index>\"");
    }
    uint32_t index = 0;
    for (const char *p = num; *p; p++) {
        if (*p < '0' || *p > '9' || index > 100000) {
            return mn_fail(ctx, MN_ERR_MODEL, "bad subgraph index \"%s\"", num);
        }
        index = index * 10 + (uint32_t)(*p - '0');
    }
    sub_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    mn_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delegate = mn_delegate_find(backend);
    cfg.ops = no_nesting;
    cfg.n_ops = 1;
    cfg.should_stop = ctx->cfg.should_stop;
    cfg.stop_user = ctx->cfg.stop_user;
    /* host tools collecting per-op tables (mn_config_t.table_hook) get the subgraph's too */
    cfg.table_hook = ctx->cfg.table_hook;
    cfg.table_user = ctx->cfg.table_user;
    /* label: "<backend>:subgraph" + the index digits, as given */
    const char *who = cfg.delegate && cfg.delegate->variants ? backend : "kernels";
    size_t lw = strlen(who);
    memcpy(d->label, who, lw);
    memcpy(d->label + lw, ":subgraph", 9);
    memcpy(d->label + lw + 9, num, strlen(num) + 1);
    node->user_data = d;
    mn_status_t s;
    if (index == 0) {
        return mn_fail(ctx, MN_ERR_MODEL, "subgraph 0 does not exist as a delegated one (0 is the main one)");
    }
    if ((s = mn_nested_open(ctx, &d->n, (int32_t)index, "delegated")) != MN_OK
        || (s = mn_nested_check_io(ctx, node, &d->n, false, 0, mn_num_inputs(node))) != MN_OK
        || (s = mn_nested_check_io(ctx, node, &d->n, true, 0, mn_num_outputs(node))) != MN_OK) {
        return s;
    }
    return mn_nested_prepare(ctx, &d->n, &cfg);
}

/* Whether inner tensor t is one of the subgraph's inputs or one of its outputs before output k. */
static bool boundary_seen(mn_nested_t *n, const mn_tensor_t *t, int k) {
    for (size_t i = 0; i < mn_model_num_inputs(&n->model); i++) {
        if (mn_nested_tensor(n, false, i) == t) {
            return true;
        }
    }
    for (int i = 0; i < k; i++) {
        if (mn_nested_tensor(n, true, (size_t)i) == t) {
            return true;
        }
    }
    return false;
}

static mn_status_t sub_eval(mn_ctx_t *ctx, mn_node_t *node) {
    sub_data_t *d = node->user_data;
    mn_nested_t *n = &d->n;
    /* Point the subgraph's boundary tensors at this op's operands (planned by the outer plan). A
     * tensor that is an input and an output, or two outputs, keeps its first role; the outputs
     * it could not be pointed at are copied afterwards. */
    for (int i = 0; i < mn_num_inputs(node); i++) {
        mn_nested_tensor(n, false, (size_t)i)->data = mn_input(ctx, node, i)->data;
    }
    for (int i = 0; i < mn_num_outputs(node); i++) {
        mn_tensor_t *t = mn_nested_tensor(n, true, (size_t)i);
        if (!boundary_seen(n, t, i)) {
            t->data = mn_output(ctx, node, i)->data;
        }
    }
    mn_status_t s = mn_nested_invoke(ctx, n);
    for (int i = 0; i < mn_num_outputs(node) && s == MN_OK; i++) {
        mn_tensor_t *out = mn_output(ctx, node, i), *t = mn_nested_tensor(n, true, (size_t)i);
        if (t->data != out->data) {
            memcpy(out->data, t->data, mn_tensor_bytes(out));
        }
    }
    return s;
}

static void sub_free(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    sub_data_t *d = node->user_data;
    if (d) {
        mn_nested_free(&d->n);
    }
}

static const char *sub_variant(const mn_node_t *node) {
    const sub_data_t *d = node->user_data;
    return d ? d->label : NULL;
}

const mn_kernel_t mn_kernel_micronn_subgraph = { NULL, sub_prepare, sub_eval, sub_free, sub_variant };

#endif
