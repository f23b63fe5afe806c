/*
 * Resource variables (VAR_HANDLE, ASSIGN_VARIABLE, READ_VARIABLE), as TFLM's
 * MicroResourceVariables: one table per top interpreter, shared by its nested interpreters
 * (mn_nested.c). See mn_kernel.h ("Resource variables").
 *
 * The table is built at prepare from the model alone, before any kernel runs: one entry per
 * distinct (container, shared_name) of the VAR_HANDLE ops of all subgraphs. Every ASSIGN_VARIABLE
 * whose handle is the output of a VAR_HANDLE of its own subgraph gives its variable a dtype and
 * size (its value tensor's static shape); the first fixes them, any other must agree. Then each
 * variable's memory is allocated in the persistent arena (counted, not allocated, in dry runs),
 * so the arena size is the same however the kernels are prepared, and invoke allocates nothing.
 */
#include "mn_graph.h"

#if MICRONN_OP_VAR_HANDLE || MICRONN_OP_READ_VARIABLE || MICRONN_OP_ASSIGN_VARIABLE   /* MN_HAS_RESOURCES */

struct mn_resources {
    uint32_t n, cap;
    mn_resource_t v[];
};

/* Builtin code of op table o of model view v. */
static int32_t op_builtin(const mn_model_t *v, uint32_t o) {
    const uint8_t *b = v->buf;
    return mn_opcode_builtin(b, fb_vec_table(b, v->opcodes, fb_u32(b, o, F_OP_OPCODE_INDEX, 0)));
}

/* The variable of a VAR_HANDLE node: find (or, when add, create) its entry. */
static int32_t lookup(struct mn_resources *r, const mn_model_t *m, const mn_node_t *node, bool add, mn_error_t *err,
    const char *where) {
    const char *container, *name;
    if (!mn_opt_str_in(m, node, MN_VAR_HANDLE_CONTAINER, &container)
        || !mn_opt_str_in(m, node, MN_VAR_HANDLE_SHARED_NAME, &name)) {
        mn_err_set(err, MN_ERR_MODEL, "%sVAR_HANDLE: VarHandleOptions holds a string outside the model", where);
        return -1;
    }
    container = container ? container : "";
    name = name ? name : "";
    for (uint32_t i = 0; r && i < r->n; i++) {
        if (strcmp(r->v[i].container, container) == 0 && strcmp(r->v[i].shared_name, name) == 0) {
            return (int32_t)i;
        }
    }
    if (!add || !r || r->n >= r->cap) {
        mn_err_set(err, MN_ERR_MODEL, "%sVAR_HANDLE: no variable '%s' (container '%s')", where, name, container);
        return -1;
    }
    r->v[r->n].container = container;
    r->v[r->n].shared_name = name;
    return (int32_t)r->n++;
}

/* A node over op table o of view v (enough for the options accessors). */
static void view_node(const mn_model_t *v, uint32_t o, mn_node_t *node) {
    memset(node, 0, sizeof *node);
    uint32_t opt = fb_ref(v->buf, o, F_OP_OPTIONS);
    if (opt && fb_u8(v->buf, o, F_OP_OPTIONS_TYPE, 0) == MN_OPTIONS_VarHandleOptions) {
        node->options = v->buf + opt;
    }
}

/* Variable id of the VAR_HANDLE op of view v producing tensor t, or -1 (none: not an error here,
 * the kernel's prepare reports it). */
static int32_t producer(struct mn_resources *r, const mn_model_t *v, int32_t t, mn_error_t *err, int *bad) {
    const uint8_t *b = v->buf;
    for (uint32_t i = 0; i < v->n_ops; i++) {
        uint32_t o = mn_model_op_table(v, i), n, outs = fb_vec(b, o, F_OP_OUTPUTS, &n);
        for (uint32_t k = 0; k < n; k++) {
            if (mn_ld_i32(b + outs + 4 * k) == t) {
                if (op_builtin(v, o) != MN_BUILTIN_VAR_HANDLE) {
                    return -1;
                }
                mn_node_t node;
                view_node(v, o, &node);
                int32_t id = lookup(r, v, &node, false, err, "");
                *bad = id < 0;
                return id;
            }
        }
    }
    return -1;
}

mn_status_t mn_resources_setup(mn_interp_t *it) {
    const mn_model_t *m = it->model;
    const uint8_t *b = m->buf;
    mn_model_t v;
    char where[48];
    size_t count = 0;
    for (uint32_t k = 0; k < m->n_subgraphs; k++) {
        mn_model_subgraph(m, k, &v);
        for (uint32_t i = 0; i < v.n_ops; i++) {
            count += op_builtin(&v, mn_model_op_table(&v, i)) == MN_BUILTIN_VAR_HANDLE;
        }
    }
    if (!count) {
        return MN_OK;
    }
    struct mn_resources *r = mn_arena_persistent(it, sizeof *r + mn_mul(count, sizeof(mn_resource_t)));
    if (!r) {
        return MN_ERR_ARENA;
    }
    r->cap = (uint32_t)count;
    it->resources = r;
    /* Variables, in the order their VAR_HANDLEs appear. */
    for (uint32_t k = 0; k < m->n_subgraphs; k++) {
        mn_model_subgraph(m, k, &v);
        for (uint32_t i = 0; i < v.n_ops; i++) {
            uint32_t o = mn_model_op_table(&v, i);
            if (op_builtin(&v, o) == MN_BUILTIN_VAR_HANDLE) {
                mn_node_t node;
                view_node(&v, o, &node);
                mn_fmt(where, sizeof where, "subgraph %u op %u ", (unsigned)k, (unsigned)i);
                if (lookup(r, &v, &node, true, &it->err, where) < 0) {
                    return it->err.status;
                }
            }
        }
    }
    /* Their dtypes and sizes, from the assignments. */
    for (uint32_t k = 0; k < m->n_subgraphs; k++) {
        mn_model_subgraph(m, k, &v);
        for (uint32_t i = 0; i < v.n_ops; i++) {
            uint32_t o = mn_model_op_table(&v, i), n, ins = fb_vec(b, o, F_OP_INPUTS, &n);
            if (op_builtin(&v, o) != MN_BUILTIN_ASSIGN_VARIABLE || n < 2) {
                continue;
            }
            int32_t tr = mn_ld_i32(b + ins), tv = mn_ld_i32(b + ins + 4);
            int bad = 0;
            int32_t id = tr >= 0 && tv >= 0 ? producer(r, &v, tr, &it->err, &bad) : -1;
            if (bad) {
                return it->err.status;
            }
            mn_tensor_t val;
            if (id < 0 || mn_model_tensor(&v, (size_t)tv, &val) != MN_OK) {
                continue;   /* ASSIGN_VARIABLE's prepare names the problem */
            }
            mn_resource_t *e = &r->v[id];
            if (!e->sized) {
                e->sized = true;
                e->dtype = val.dtype;
                e->bytes = mn_tensor_bytes(&val);
                e->fixed_by = k << 16 | (i & 0xffff);
            } else if (e->dtype != val.dtype || e->bytes != mn_tensor_bytes(&val)) {
                return mn_err_set(&it->err, MN_ERR_MODEL, "subgraph %u op %u ASSIGN_VARIABLE: variable '%s' "
                    "changes dtype or size: %s (%zu bytes) here, %s (%zu bytes) at subgraph %u op %u", (unsigned)k,
                    (unsigned)i, e->shared_name, mn_dtype_name(val.dtype), mn_tensor_bytes(&val), mn_dtype_name(e->dtype), e->bytes,
                    (unsigned)(e->fixed_by >> 16), (unsigned)(e->fixed_by & 0xffff));
            }
        }
    }
    for (uint32_t i = 0; i < r->n; i++) {
        mn_resource_t *e = &r->v[i];
        if (!e->sized) {
            continue;
        }
        if (it->dry_run) {
            it->dry_extra += MN_PBLOCK(e->bytes ? e->bytes : 1);
        } else if (!(e->data = mn_arena_persistent(it, e->bytes))) {
            return MN_ERR_ARENA;
        }
    }
    return MN_OK;
}

void mn_resources_reset(mn_interp_t *it) {
    struct mn_resources *r = it->resources;
    for (uint32_t i = 0; r && i < r->n; i++) {
        r->v[i].assigned = false;
        if (r->v[i].data) {
            memset(r->v[i].data, 0, r->v[i].bytes);
        }
    }
}

int32_t mn_resource_handle(mn_ctx_t *ctx, const mn_node_t *var_handle) {
    mn_error_t e;
    int32_t id = lookup(ctx->resources, ctx->model, var_handle, false, &e, "");
    if (id < 0) {
        mn_fail(ctx, e.status, "%s", e.msg);
    }
    return id;
}

int32_t mn_resource_of(mn_ctx_t *ctx, const mn_node_t *node, int input) {
    int32_t t = input < mn_num_inputs(node) ? node->inputs[input] : -1;
    for (uint32_t i = 0; t >= 0 && i < ctx->n_nodes; i++) {
        const mn_node_t *p = &ctx->nodes[i];
        for (uint16_t k = 0; k < mn_num_outputs(p); k++) {
            if (p->outputs[k] == t) {
                if (p->builtin == MN_BUILTIN_VAR_HANDLE) {
                    return mn_resource_handle(ctx, p);
                }
                i = ctx->n_nodes;
                break;
            }
        }
    }
    mn_fail(ctx, MN_ERR_UNSUPPORTED, "resource handle (input %d, tensor %d) does not come from a VAR_HANDLE op of "
        "this subgraph", input, (int)t);
    return -1;
}

mn_resource_t *mn_resource_get(mn_ctx_t *ctx, int32_t id) {
    struct mn_resources *r = ctx->resources;
    return r && id >= 0 && (uint32_t)id < r->n ? &r->v[id] : NULL;
}

#endif
