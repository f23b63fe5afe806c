/*
 * Delegation: partition the op list between a delegate (mn_config_t.delegate) and the kernels.
 *
 * Runs once in prepare, after every node has its kernel and before any kernel prepares:
 *   - supports() of the delegate for every node;
 *   - a new execution order, built group by group: each round takes, in model order, every op of
 *     one kind (supported / not) whose producers already ran or are in the group, then switches
 *     kind (TFLite's GraphPartitionHelper and TI's offload partitioning work the same way). A
 *     supported group can therefore never hold two ops with an unsupported op on a path between
 *     them: no cycle through the CPU ops, and the fewest switches this greedy order finds;
 *   - each supported group is split into connected components (union-find over the tensors
 *     they exchange), each one subgraph unless it is smaller than min_subgraph;
 *   - the node array is permuted into that order, so a subgraph's ops are consecutive and the
 *     memory planner (which uses positions as time) sees the order they run in.
 * Built with MICRONN_DELEGATE (mn_config.h); without it, a delegate is refused at prepare.
 */
#include "mn_graph.h"
#include "kernels/mn_variants.h"

mn_node_t *mn_subgraph_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k) {
    return k < sg->n_nodes ? &ctx->nodes[sg->first + k] : NULL;
}

/* Which subgraph holds execution position i, or NULL. */
const mn_subgraph_t *mn_subgraph_at(const mn_interp_t *it, uint32_t i) {
    for (uint32_t s = 0; s < it->n_subgraphs; s++) {
        const mn_subgraph_t *sg = &it->subgraphs[s];
        if (i >= sg->first && i < sg->first + sg->n_nodes) {
            return sg;
        }
    }
    return NULL;
}

#if MICRONN_DELEGATE

/* Union-find root with path halving. */
static uint32_t uf_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Producer op (model index) of each tensor, or -1 (inputs, constants). */
static void find_producers(const mn_interp_t *it, int32_t *producer) {
    for (uint32_t t = 0; t < it->n_tensors; t++) {
        producer[t] = -1;
    }
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        for (uint16_t k = 0; k < mn_num_outputs(node); k++) {
            if (node->outputs[k] >= 0) {
                producer[node->outputs[k]] = (int32_t)i;
            }
        }
    }
}

/* Temporaries of the partition (all from the prepare-time temp area). */
typedef struct {
    int32_t *producer;  /* per tensor */
    uint8_t *state;     /* per op: SUPPORTED, DONE (scheduled), IN_GROUP (current group), CONVERSION */
    uint32_t *order;    /* execution order (model op indices) */
    uint32_t *parent;   /* union-find over ops */
    uint32_t *group_id; /* per op: subgraph id + 1, 0 = kernels */
} part_t;

enum { SUPPORTED = 1, DONE = 2, IN_GROUP = 4, CONVERSION = 8 };

/* All producers of op i's inputs have run or are in the current group. */
static int ready(const mn_interp_t *it, const part_t *p, uint32_t i) {
    const mn_node_t *node = &it->nodes[i];
    for (uint16_t k = 0; k < mn_num_inputs(node); k++) {
        int32_t t = node->inputs[k];
        int32_t pr = t >= 0 ? p->producer[t] : -1;
        if (pr >= 0 && !(p->state[pr] & (DONE | IN_GROUP))) {
            return 0;
        }
    }
    return 1;
}

/* Join op i with the producers of its inputs that are in the same group. */
static void link_group(const mn_interp_t *it, part_t *p, uint32_t i) {
    const mn_node_t *node = &it->nodes[i];
    for (uint16_t k = 0; k < mn_num_inputs(node); k++) {
        int32_t t = node->inputs[k];
        int32_t pr = t >= 0 ? p->producer[t] : -1;
        if (pr >= 0 && (p->state[pr] & IN_GROUP)) {
            p->parent[uf_find(p->parent, i)] = uf_find(p->parent, (uint32_t)pr);
        }
    }
}

/* Is every consumer of tensor t a natively supported op (and is there one)? */
static bool consumers_supported(const mn_interp_t *it, const part_t *p, int32_t t) {
    bool any = false;
    for (uint32_t j = 0; j < it->n_nodes; j++) {
        const mn_node_t *node = &it->nodes[j];
        for (uint16_t k = 0; k < mn_num_inputs(node); k++) {
            if (node->inputs[k] == t) {
                if ((p->state[j] & (SUPPORTED | CONVERSION)) != SUPPORTED) {
                    return false;
                }
                any = true;
            }
        }
    }
    return any;
}

/* Boundary dtype conversions a converts_boundaries delegate takes into its subgraphs: QUANTIZE
 * float32 -> integer feeding only supported ops, DEQUANTIZE integer -> float32 of a supported
 * op's output. Only natively supported neighbours count: conversions never chain. */
static void take_conversions(const mn_interp_t *it, part_t *p) {
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        if (p->state[i] || mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1 || node->inputs[0] < 0 ||
            node->outputs[0] < 0) {
            continue;
        }
        const mn_tensor_t *in = mn_input((mn_ctx_t *)it, node, 0), *out = mn_output((mn_ctx_t *)it, node, 0);
        int32_t pr = p->producer[node->inputs[0]];
        bool take = false;
        if (node->builtin == MN_BUILTIN_QUANTIZE && in->dtype == MN_FLOAT32 && out->dtype != MN_FLOAT32) {
            take = consumers_supported(it, p, node->outputs[0]);
        } else if (node->builtin == MN_BUILTIN_DEQUANTIZE && in->dtype != MN_FLOAT32 && out->dtype == MN_FLOAT32) {
            take = pr >= 0 && (p->state[pr] & (SUPPORTED | CONVERSION)) == SUPPORTED;
        }
        if (take) {
            p->state[i] = SUPPORTED | CONVERSION;
        }
    }
}

/* The schedule (p->order) and, per supported op, its component root in p->parent. */
static void schedule(const mn_interp_t *it, part_t *p) {
    uint32_t n = it->n_nodes, done = 0;
    int kind = 0;   /* start with the kernels' ops: inputs usually need CPU work first */
    while (done < n) {
        uint32_t start = done;
        for (uint32_t i = 0; i < n; i++) {
            if ((p->state[i] & (DONE | IN_GROUP)) || (p->state[i] & SUPPORTED) != kind || !ready(it, p, i)) {
                continue;
            }
            p->state[i] |= IN_GROUP;
            if (kind) {
                link_group(it, p, i);
            }
            p->order[done++] = i;
        }
        for (uint32_t k = start; k < done; k++) {
            p->state[p->order[k]] = (uint8_t)((p->state[p->order[k]] & ~IN_GROUP) | DONE);
        }
        kind ^= SUPPORTED;
    }
}

mn_status_t mn_partition(mn_interp_t *it) {
    const mn_delegate_t *d = it->cfg.delegate;
    uint32_t n = it->n_nodes;
    if (!d || !n) {
        return MN_OK;
    }
    if (!d->supports || !d->invoke) {
        return mn_err_set(&it->err, MN_ERR_ARG, "delegate %s: supports and invoke are required",
            d->name ? d->name : "?");
    }
    part_t p;
    p.producer = mn_arena_temp(it, mn_mul(it->n_tensors ? it->n_tensors : 1, sizeof(int32_t)));
    p.state = mn_arena_temp(it, n);
    p.order = mn_arena_temp(it, mn_mul(n, sizeof(uint32_t)));
    p.parent = mn_arena_temp(it, mn_mul(n, sizeof(uint32_t)));
    p.group_id = mn_arena_temp(it, mn_mul(n, sizeof(uint32_t)));
    mn_node_t *copy = mn_arena_temp(it, mn_mul(n, sizeof(mn_node_t)));
    if (!p.producer || !p.state || !p.order || !p.parent || !p.group_id || !copy) {
        return MN_ERR_ARENA;
    }
    find_producers(it, p.producer);
    for (uint32_t i = 0; i < n; i++) {
        it->cur_op = i;
        p.state[i] = d->supports(it, &it->nodes[i]) ? SUPPORTED : 0;
        p.parent[i] = i;
        p.group_id[i] = 0;
    }
    if (d->converts_boundaries) {
        take_conversions(it, &p);
    }
    schedule(it, &p);

    /* Components -> subgraphs (numbered in order of their first op in the schedule), dropping
     * the small ones. A component's ops are consecutive in the schedule only if no other
     * component of the same group sits between them, so ops are regrouped by component below. */
    uint32_t min = it->cfg.min_subgraph ? it->cfg.min_subgraph : 1;
    uint32_t n_sg = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = p.order[k];
        if (!(p.state[i] & SUPPORTED)) {
            continue;
        }
        uint32_t r = uf_find(p.parent, i);
        if (!p.group_id[r]) {
            uint32_t size = 0;
            for (uint32_t j = 0; j < n; j++) {
                size += (p.state[j] & (SUPPORTED | CONVERSION)) == SUPPORTED && uf_find(p.parent, j) == r;
            }
            p.group_id[r] = size >= min ? ++n_sg : UINT32_MAX;
        }
    }
    it->n_subgraphs = 0;
    if (!n_sg) {
        return MN_OK;
    }
    it->subgraphs = mn_arena_persistent(it, mn_mul(n_sg, sizeof(mn_subgraph_t)));
    if (!it->subgraphs) {
        return MN_ERR_ARENA;
    }
    /* Final order: walk the schedule; at a subgraph's first op, emit all of that subgraph's ops
     * (in schedule order). Its other ops come later in the schedule and only depend on ops of
     * the same group or earlier groups, so moving them up keeps the order topological. */
    uint16_t *index = mn_arena_persistent(it, mn_mul(n, sizeof(uint16_t)));
    if (!index) {
        return MN_ERR_ARENA;
    }
    memcpy(copy, it->nodes, n * sizeof(mn_node_t));
    uint32_t pos = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = p.order[k];
        uint32_t g = (p.state[i] & SUPPORTED) ? p.group_id[uf_find(p.parent, i)] : 0;
        if (g == UINT32_MAX || g == 0) {
            index[pos] = (uint16_t)i;
            it->nodes[pos++] = copy[i];
            continue;
        }
        if (p.state[i] & IN_GROUP) {  /* already emitted with its subgraph */
            continue;
        }
        mn_subgraph_t *sg = &it->subgraphs[it->n_subgraphs++];
        sg->delegate = d;
        sg->first = pos;
        sg->n_nodes = 0;
        sg->user_data = NULL;
        uint32_t r = uf_find(p.parent, i);
        for (uint32_t k2 = k; k2 < n; k2++) {
            uint32_t j = p.order[k2];
            if ((p.state[j] & SUPPORTED) && uf_find(p.parent, j) == r) {
                p.state[j] |= IN_GROUP;
                index[pos] = (uint16_t)j;
                it->nodes[pos++] = copy[j];
                sg->n_nodes++;
            }
        }
    }
    it->node_index = index;
    mn_arena_temp_reset(it);
    return MN_OK;
}

/* ---- one delegate per backend ------------------------------------------------------------------
 * Runs the ops a backend has compute variants for with that backend only, while the rest of the
 * model runs as the interpreter is configured (e.g. reference kernels: MN_CFG_REFERENCE_KERNELS).
 * The subgraphs' ops keep their kernels (same glue, same bits): only the variant choice differs,
 * which is what makes the delegated run bit-exact with the undelegated one.
 *
 * Every build knows every backend's coverage, so a host build (which cannot compile Helium code)
 * partitions a model for "mve" exactly as an M55 firmware does (`micronn partition`). A build
 * without the backend runs such subgraphs with its own kernels. */

enum {
    COV_CONV_S8 = 1 << 0, COV_DW_S8 = 1 << 1, COV_CONV_F32 = 1 << 2, COV_DW_F32 = 1 << 3,
    COV_FC_S8 = 1 << 4, COV_FC_F32 = 1 << 5, COV_SVDF_S8 = 1 << 6, COV_ADD_S8 = 1 << 7,
    COV_AVGPOOL_S8 = 1 << 8, COV_MAXPOOL_S8 = 1 << 9, COV_SOFTMAX_S8 = 1 << 10, COV_MUL_S8 = 1 << 11,
};

/* The coverage of a compiled backend, from its variant lists. */
static unsigned coverage_of(const mn_backend_t *b) {
    return (b->conv_s8 ? COV_CONV_S8 : 0) | (b->depthwise_s8 ? COV_DW_S8 : 0) | (b->conv_f32 ? COV_CONV_F32 : 0)
        | (b->depthwise_f32 ? COV_DW_F32 : 0) | (b->fc_s8 ? COV_FC_S8 : 0) | (b->fc_f32 ? COV_FC_F32 : 0)
        | (b->svdf_s8 ? COV_SVDF_S8 : 0) | (b->add_s8 ? COV_ADD_S8 : 0) | (b->avgpool_s8 ? COV_AVGPOOL_S8 : 0)
        | (b->maxpool_s8 ? COV_MAXPOOL_S8 : 0) | (b->softmax_s8 ? COV_SOFTMAX_S8 : 0) | (b->mul_s8 ? COV_MUL_S8 : 0);
}

/* Does a backend with coverage `cov` run this op? Variants need constant weights (they
 * precompute from them), so ops with variable weights stay with the kernels. */
static bool covered(unsigned cov, mn_ctx_t *ctx, const mn_node_t *node) {
    const mn_tensor_t *in = mn_input(ctx, node, 0), *w = mn_input(ctx, node, 1), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return false;
    }
    bool s8 = in->dtype == MN_INT8 && out->dtype == MN_INT8, f32 = in->dtype == MN_FLOAT32 && out->dtype == MN_FLOAT32;
    bool wconst = w && (w->flags & MN_TF_CONST);
    switch (node->builtin) {
        case MN_BUILTIN_CONV_2D:
            return wconst && ((s8 && (cov & COV_CONV_S8)) || (f32 && (cov & COV_CONV_F32)));
        case MN_BUILTIN_DEPTHWISE_CONV_2D:
            return wconst && ((s8 && (cov & COV_DW_S8)) || (f32 && (cov & COV_DW_F32)));
        case MN_BUILTIN_FULLY_CONNECTED:
            return wconst && ((s8 && (cov & COV_FC_S8)) || (f32 && (cov & COV_FC_F32)));
        case MN_BUILTIN_SVDF:
            return wconst && s8 && (cov & COV_SVDF_S8);
        case MN_BUILTIN_ADD:
        case MN_BUILTIN_SUB:   /* (the add_s8 variants run both) */
            return s8 && (cov & COV_ADD_S8);
        case MN_BUILTIN_MUL:
            return s8 && (cov & COV_MUL_S8);
        case MN_BUILTIN_AVERAGE_POOL_2D:
            return s8 && (cov & COV_AVGPOOL_S8);
        case MN_BUILTIN_MAX_POOL_2D:
            return s8 && (cov & COV_MAXPOOL_S8);
        case MN_BUILTIN_SOFTMAX:
            return s8 && (cov & COV_SOFTMAX_S8);
        default:
            return false;
    }
}

static mn_status_t backend_invoke(mn_ctx_t *ctx, mn_subgraph_t *sg) {
    for (uint32_t k = 0; k < sg->n_nodes; k++) {
        mn_status_t s = mn_delegate_eval_node(ctx, sg, k);
        if (s != MN_OK) {
            return s;
        }
    }
    return MN_OK;
}

#define MN_BACKEND_DELEGATE(NAME, COMPILED, COV) \
    static const mn_backend_t *const NAME##_only[] = { COMPILED ? &mn_backend_##NAME : NULL, NULL }; \
    static bool NAME##_supports(mn_ctx_t *ctx, const mn_node_t *node) { \
        return covered(COV, ctx, node); \
    } \
    static const mn_delegate_t NAME##_delegate = { #NAME, NAME##_supports, NULL, backend_invoke, NULL, \
        COMPILED ? NAME##_only : NULL, true };

/* The coverage of each backend as its sources define it (mn_delegate_coverage_ok checks it
 * against the sources of the backends compiled in). */
#define COV_MVE (COV_CONV_S8 | COV_DW_S8 | COV_CONV_F32 | COV_DW_F32 | COV_FC_S8 | COV_FC_F32 | COV_SVDF_S8 \
    | COV_ADD_S8 | COV_MUL_S8)
#define COV_DSP (COV_CONV_S8 | COV_DW_S8 | COV_FC_S8 | COV_SVDF_S8 | COV_ADD_S8 | COV_MUL_S8)
#define COV_GENERIC COV_MVE

MN_BACKEND_DELEGATE(mve, MICRONN_KERNELS_MVE, COV_MVE)
MN_BACKEND_DELEGATE(dsp, MICRONN_KERNELS_DSP, COV_DSP)
MN_BACKEND_DELEGATE(generic, MICRONN_KERNELS_GENERIC, COV_GENERIC)

static const struct {
    const mn_delegate_t *delegate;
    unsigned cov;
} delegate_list[] = {
    { &mve_delegate, COV_MVE },
    { &dsp_delegate, COV_DSP },
    { &generic_delegate, COV_GENERIC },
};

const mn_delegate_t *mn_delegate_find(const char *name) {
    for (size_t i = 0; name && i < sizeof delegate_list / sizeof delegate_list[0]; i++) {
        if (strcmp(delegate_list[i].delegate->name, name) == 0) {
            return delegate_list[i].delegate;
        }
    }
    return NULL;
}

const char *mn_delegate_name(size_t i) {
    return i < sizeof delegate_list / sizeof delegate_list[0] ? delegate_list[i].delegate->name : NULL;
}

int mn_delegate_coverage_ok(void) {
    for (size_t i = 0; i < sizeof delegate_list / sizeof delegate_list[0]; i++) {
        const mn_delegate_t *d = delegate_list[i].delegate;
        if (d->variants && d->variants[0] && coverage_of(d->variants[0]) != delegate_list[i].cov) {
            return 0;
        }
    }
    return 1;
}

#else   /* built without delegation */

mn_status_t mn_partition(mn_interp_t *it) {
    const mn_delegate_t *d = it->cfg.delegate;
    if (!d || !it->n_nodes) {
        return MN_OK;
    }
    return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "delegate %s: " MN_DELEGATE_NOT_BUILT, d->name ? d->name : "?");
}

const mn_delegate_t *mn_delegate_find(const char *name) {
    (void)name;
    return NULL;
}

const char *mn_delegate_name(size_t i) {
    (void)i;
    return NULL;
}

int mn_delegate_coverage_ok(void) {
    return 1;   /* no delegate to check */
}

#endif
