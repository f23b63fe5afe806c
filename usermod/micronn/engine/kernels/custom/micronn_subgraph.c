/*
 * Custom op "micronn_subgraph": runs another subgraph of the same model with a second interpreter,
 * on a given kernel backend. `micronn partition MODEL --backend B` (host_tools/micronn_tools/
 * partition.py) writes models where each delegated subgraph became one such op (as TI's TIDL
 * offload does), so the file stays a standard .tflite.
 *
 * Custom options (ASCII): "backend=<name>;subgraph=<index>". The op's inputs and outputs are the
 * subgraph's inputs and outputs, in order, with the same dtypes and sizes. The subgraph runs with
 * that backend as delegate (mn_delegate_find); a build without that backend runs it with its own
 * kernels (same bits either way; the variant reported says "kernels:subgraphK"). Its interpreter and arena live in this op's persistent
 * memory; at eval its boundary tensors are pointed at this op's operands (no copies). A
 * micronn_subgraph op inside such a subgraph is refused (no recursion).
 */
#include "mn_kernel.h"

#if MICRONN_OP_micronn_subgraph

#define NAME_MAX_LEN 16

typedef struct {
    mn_model_t model;           /* view of the subgraph */
    mn_config_t cfg;
    mn_interp_t it;
    uint32_t index;
    char label[NAME_MAX_LEN + 24];   /* "<backend>:subgraph<k>", the variant reported */
    bool ready;
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

static mn_status_t check_boundary(mn_ctx_t *ctx, const char *what, const mn_tensor_t *outer,
    const mn_tensor_t *inner, int i) {
    if (!outer || !inner) {
        return mn_fail(ctx, MN_ERR_MODEL, "%s %d missing", what, i);
    }
    if (outer->dtype != inner->dtype || outer->bytes != inner->bytes) {
        return mn_fail(ctx, MN_ERR_MODEL, "%s %d is %s (%zu bytes), the subgraph's is %s (%zu bytes)", what, i,
            mn_dtype_name(outer->dtype), outer->bytes, mn_dtype_name(inner->dtype), inner->bytes);
    }
    return MN_OK;
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
    if (index == 0 || index >= mn_model_num_subgraphs(node->model)) {
        return mn_fail(ctx, MN_ERR_MODEL, "subgraph %u does not exist (the model has %zu; 0 is the main one)",
            (unsigned)index, mn_model_num_subgraphs(node->model));
    }
    sub_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->index = index;
    mn_model_subgraph(node->model, index, &d->model);
    d->cfg.delegate = mn_delegate_find(backend);
    d->cfg.ops = no_nesting;
    d->cfg.n_ops = 1;
    /* host tools collecting per-op tables (mn_config_t.table_hook) get the subgraph's too */
    d->cfg.table_hook = ctx->cfg.table_hook;
    d->cfg.table_user = ctx->cfg.table_user;
    /* label: "<backend>:subgraph" + the index digits, as given */
    const char *who = d->cfg.delegate && d->cfg.delegate->variants ? backend : "kernels";
    size_t lw = strlen(who);
    memcpy(d->label, who, lw);
    memcpy(d->label + lw, ":subgraph", 9);
    memcpy(d->label + lw + 9, num, strlen(num) + 1);
    if (mn_model_num_inputs(&d->model) != (size_t)mn_num_inputs(node)
        || mn_model_num_outputs(&d->model) != (size_t)mn_num_outputs(node)) {
        return mn_fail(ctx, MN_ERR_MODEL, "has %d inputs / %d outputs, subgraph %u has %zu / %zu",
            mn_num_inputs(node), mn_num_outputs(node), (unsigned)index, mn_model_num_inputs(&d->model),
            mn_model_num_outputs(&d->model));
    }

    /* The subgraph's arena: sized by a dry run in temporary memory, then one persistent block. */
    size_t work = mn_dry_run_work_hint(&d->model), need = 0;
    mn_error_t err;
    mn_status_t s = MN_ERR_ARENA;
    for (int attempt = 0; attempt < 2 && s == MN_ERR_ARENA; attempt++) {
        void *w = mn_alloc_temp(ctx, work);
        if (!w) {
            return MN_ERR_ARENA;
        }
        s = mn_arena_needed(&d->model, &d->cfg, w, work, &need, &err);
        work = need > work ? need : 2 * work;
    }
    if (s != MN_OK) {
        return mn_fail(ctx, s, "subgraph %u: %s", (unsigned)index, err.msg);
    }
    void *arena = mn_alloc_persistent(ctx, need);
    if (!arena) {
        return MN_ERR_ARENA;
    }
    node->user_data = d;
    if (mn_sizing_only(ctx)) {
        return MN_OK;   /* sized; nothing of it is kept */
    }
    if ((s = mn_interp_init(&d->it, &d->model, arena, need, &d->cfg)) != MN_OK
        || (s = mn_interp_prepare(&d->it)) != MN_OK) {
        mn_fail(ctx, s, "subgraph %u: %s", (unsigned)index, mn_interp_error(&d->it));
        mn_interp_deinit(&d->it);
        return s;
    }
    d->ready = true;
    for (int i = 0; i < mn_num_inputs(node) && s == MN_OK; i++) {
        s = check_boundary(ctx, "input", mn_input(ctx, node, i), mn_interp_input(&d->it, i), i);
    }
    for (int i = 0; i < mn_num_outputs(node) && s == MN_OK; i++) {
        s = check_boundary(ctx, "output", mn_output(ctx, node, i), mn_interp_output(&d->it, i), i);
    }
    return s;
}

static mn_status_t sub_eval(mn_ctx_t *ctx, mn_node_t *node) {
    sub_data_t *d = node->user_data;
    /* Point the subgraph's boundary tensors at this op's operands (planned by the outer plan). */
    for (int i = 0; i < mn_num_inputs(node); i++) {
        mn_interp_input(&d->it, i)->data = mn_input(ctx, node, i)->data;
    }
    for (int i = 0; i < mn_num_outputs(node); i++) {
        mn_interp_output(&d->it, i)->data = mn_output(ctx, node, i)->data;
    }
    mn_status_t s = mn_interp_invoke(&d->it);
    if (s != MN_OK) {
        return mn_fail(ctx, s, "subgraph %u: %s", (unsigned)d->index, mn_interp_error(&d->it));
    }
    return MN_OK;
}

static void sub_free(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    sub_data_t *d = node->user_data;
    if (d && d->ready) {
        mn_interp_deinit(&d->it);
        d->ready = false;
    }
}

static const char *sub_variant(const mn_node_t *node) {
    const sub_data_t *d = node->user_data;
    return d ? d->label : NULL;
}

const mn_kernel_t mn_kernel_micronn_subgraph = { NULL, sub_prepare, sub_eval, sub_free, sub_variant };

#endif
