/*
 * In-place ops: before planning, the output of a shape-only op (RESHAPE, SQUEEZE, EXPAND_DIMS)
 * or of an element-wise op (unary, or ADD / SUB / MUL with input 0 of the output's shape) whose
 * input dies there is made to share its input's memory. The
 * planner then sees one buffer per group (the first tensor of the chain, with the union of the
 * lifetimes); afterwards every member gets the group's pointer. Kernels need no change: a
 * shape-only kernel skips its copy when input and output coincide, and an element-wise kernel
 * computes out[i] from in[i] only, so running it with out == in is exact.
 */
#include "mn_graph.h"
#include "mn_registry.h"
#include "kernels/reference/mn_ref.h"

enum { INPLACE_NONE = 0, INPLACE_VIEW = 1, INPLACE_ELEMENTWISE = 2, INPLACE_BINARY = 3 };

static int inplace_kind(int32_t builtin) {
    switch (builtin) {
        case MN_BUILTIN_RESHAPE:
        case MN_BUILTIN_SQUEEZE:
        case MN_BUILTIN_EXPAND_DIMS:
            return INPLACE_VIEW;
        /* Element-wise, out[i] = f(in[i]) and nothing else read from the input (see the kernels;
         * CAST is left out: reading int32 and writing float32 through one address is not C). */
        case MN_BUILTIN_QUANTIZE:
        case MN_BUILTIN_RELU:
        case MN_BUILTIN_RELU6:
        case MN_BUILTIN_RELU_N1_TO_1:
        case MN_BUILTIN_RELU_0_TO_1:
        case MN_BUILTIN_LEAKY_RELU:
        case MN_BUILTIN_LOGISTIC:
        case MN_BUILTIN_TANH:
        case MN_BUILTIN_HARD_SWISH:
        case MN_BUILTIN_ELU:
        case MN_BUILTIN_GELU:
        case MN_BUILTIN_ABS:
        case MN_BUILTIN_NEG:
        case MN_BUILTIN_SQRT:
        case MN_BUILTIN_RSQRT:
        case MN_BUILTIN_LOG:
        case MN_BUILTIN_EXP:
        case MN_BUILTIN_SIN:
        case MN_BUILTIN_COS:
        case MN_BUILTIN_CEIL:
        case MN_BUILTIN_FLOOR:
        case MN_BUILTIN_ROUND:
        case MN_BUILTIN_SQUARE:
            return INPLACE_ELEMENTWISE;
        /* out[k] from in1[k] and in2[k or its broadcast element] only (MN_BCAST_FOR): the output
         * may take input 0's memory when input 0 is not broadcast (a residual ADD) */
        case MN_BUILTIN_ADD:
        case MN_BUILTIN_SUB:
        case MN_BUILTIN_MUL:
            return INPLACE_BINARY;
        default:
            return INPLACE_NONE;
    }
}

/* Whether the node runs the engine's own kernel for its op (only those are known to cope with
 * shared memory): always, unless the caller passed extra kernels (mn_config_t.ops). */
static int own_kernel(const mn_interp_t *it, const mn_node_t *node) {
    return !it->cfg.ops || node->kernel == mn_registry_find(NULL, node->builtin, NULL);
}

static int plannable(const mn_tensor_t *t) {
    return !(t->flags & (MN_TF_CONST | MN_TF_VARIABLE | MN_TF_PATCH)) && mn_tensor_bytes(t) > 0;
}

/* May the group of root r be overwritten at op i: nothing reads it later and the caller does
 * not read it after invoke (model outputs; inputs unless the caller allowed their reuse)? */
static int group_dies_at(const mn_interp_t *it, int32_t r, uint32_t i) {
    int32_t first, last;
    uint8_t guarded = MN_TF_OUTPUT | ((it->cfg.flags & MN_CFG_REUSE_INPUTS) ? 0 : MN_TF_INPUT);
    if (!mn_tensor_lifetime(it, (uint32_t)r, &first, &last) || last != (int32_t)i
        || (mn_tflags(it, (uint32_t)r) & guarded)) {
        return 0;
    }
    for (uint32_t u = 0; (mn_tflags(it, (uint32_t)r) & MN_TF_ALIASED) && u < it->n_tensors; u++) {
        const uint8_t f = mn_tflags(it, u);
        if ((f & guarded) && (u == (uint32_t)r || ((f & MN_TF_INPLACE) && mn_inplace_root(it, (int32_t)u) == r))) {
            return 0;
        }
    }
    return 1;
}

void mn_inplace_clear(mn_interp_t *it) {
    for (uint32_t t = 0; t < it->n_tensors; t++) {
        mn_tensor_t *r = mn_rec(it, t);
        if (r) {
            r->flags &= (uint8_t)~(MN_TF_INPLACE | MN_TF_ALIASED);
        }
    }
}

void mn_inplace_mark(mn_interp_t *it, const uint8_t *offline) {
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        int kind = inplace_kind(node->builtin);
        /* Only the engine's own kernels are known to handle out == in. */
        if (!kind || mn_num_outputs(node) != 1 || mn_num_inputs(node) < 1 || !own_kernel(it, node)) {
            continue;
        }
        int32_t in = node->inputs[0], out = node->outputs[0];
        /* (only the first op writing `out`: a hostile model may name it twice) */
        if (in < 0 || out < 0 || in == out || mn_inplace_source(it, out) != in) {
            continue;
        }
        if (offline && mn_ld_i32(offline + 4 * (uint32_t)out) >= 0) {
            continue;   /* a stored plan gave it a place of its own */
        }
        mn_tensor_t *a = mn_rec(it, (uint32_t)in), *o = mn_rec(it, (uint32_t)out);
        if (!a || !o || !plannable(a) || !plannable(o) || mn_tensor_bytes(a) != mn_tensor_bytes(o) || mn_tensor_count(a) != mn_tensor_count(o)
            || (o->flags & (MN_TF_INPUT | MN_TF_INPLACE | MN_TF_ALIASED))) {
            continue;
        }
        int32_t r = mn_inplace_root(it, in);
        /* (input 1 must not live in input 0's memory under another shape: ADD(a, reshape(a))) */
        if ((kind == INPLACE_ELEMENTWISE && mn_num_inputs(node) != 1)
            || (kind == INPLACE_BINARY && (mn_num_inputs(node) != 2 || node->inputs[1] < 0
                || (node->inputs[1] != in && mn_inplace_root(it, node->inputs[1]) == r)))
            || (kind != INPLACE_VIEW && !group_dies_at(it, r, i))) {
            continue;
        }
        o->flags |= MN_TF_INPLACE;
        mn_rec(it, (uint32_t)r)->flags |= MN_TF_ALIASED;
    }
}

void mn_inplace_resolve(mn_interp_t *it) {
    for (uint32_t t = 0; t < it->n_tensors; t++) {
        mn_tensor_t *r = mn_rec(it, t);
        if (r && (r->flags & MN_TF_INPLACE)) {
            r->data = mn_rec(it, (uint32_t)mn_inplace_root(it, (int32_t)t))->data;
        }
    }
}

/* ---- convolutions over their own input ------------------------------------------------------ */

int64_t mn_conv_slide(const mn_conv_geom_t *g, size_t in_size, size_t out_size) {
    const int64_t in_row64 = (int64_t)g->in_w * g->in_c * (int64_t)in_size;
    const int64_t out_row64 = (int64_t)g->out_w * g->out_c * (int64_t)out_size;
    const int32_t s = g->stride_h > 0 ? g->stride_h : 1;
    /* (32-bit factors, 64-bit products: one multiply instruction each on a 32-bit core) */
    if (in_row64 > INT32_MAX || out_row64 > INT32_MAX || (int64_t)g->batches * (g->in_h + g->out_h) > INT32_MAX) {
        return INT64_MIN / 2;   /* beyond any arena: no overlap */
    }
    const int32_t in_row = (int32_t)in_row64, out_row = (int32_t)out_row64;
    /* Bytes from the end of output row r (over all batches) to the first input row the windows of
     * rows >= r read: linear in the batch, and in the row between where that first row stops
     * being clamped to 0 (y0) and starts being clamped to in_h (y1); so the least is at one of
     * these rows of the first or the last batch. */
    const int32_t y0 = (g->pad_h + s - 1) / s, y1 = (g->in_h + g->pad_h + s - 1) / s;
    const int32_t ys[4] = { y0 - 1, y0, y1 - 1, g->out_h - 1 };
    int64_t best = INT64_MAX;
    for (int k = 0; k < (g->batches > 1 ? 8 : 4); k++) {
        const int32_t b = k < 4 ? 0 : g->batches - 1, y = ys[k & 3];
        if (y >= 0 && y < g->out_h && b >= 0) {
            int32_t first = y * s - g->pad_h;   /* (the first tap inside the image is no lower) */
            first = first < 0 ? 0 : first > g->in_h ? g->in_h : first;
            const int64_t room = (int64_t)(b * g->in_h + first) * in_row - (int64_t)(b * g->out_h + y + 1) * out_row;
            best = room < best ? room : best;
        }
    }
    return best == INT64_MAX ? 0 : best;   /* (no rows: nothing to write) */
}

/* The slide of output t over the input of CONV_2D / DEPTHWISE_CONV_2D / pooling node i (see the
 * header; the pooling kernels keep the same contract as the convolutions). */
static int conv_slide(const mn_interp_t *it, uint32_t i, int32_t t, int32_t *x, int32_t *shift) {
    const mn_node_t *node = &it->nodes[i];
    const int op = node->builtin, dw = op == MN_BUILTIN_DEPTHWISE_CONV_2D;
    const int pool = op == MN_BUILTIN_AVERAGE_POOL_2D || op == MN_BUILTIN_MAX_POOL_2D || op == MN_BUILTIN_L2_POOL_2D;
    if ((!dw && !pool && op != MN_BUILTIN_CONV_2D) || mn_num_outputs(node) != 1 || mn_num_inputs(node) < 2 - pool
        || node->inputs[0] < 0 || (!pool && node->inputs[1] < 0) || node->inputs[0] == t) {
        return 0;
    }
    const mn_tensor_t *a = mn_rec(it, (uint32_t)node->inputs[0]), *o = mn_rec(it, (uint32_t)t);
    if (!a || !o) {
        return 0;
    }
    const mn_tensor_t *w = pool ? NULL : mn_input((mn_ctx_t *)it, node, 1);   /* (weights: maybe a slot) */
    const int32_t r = mn_inplace_root(it, node->inputs[0]);
    /* int8, int16(x8) and float32, not hybrid (that quantizes its input first anyway); prepare
     * checked the shapes */
    if (a->dtype != o->dtype || (w && w->dtype != (a->dtype == MN_FLOAT32 ? MN_FLOAT32 : MN_INT8))
        || !plannable(o) || (o->flags & (MN_TF_INPLACE | MN_TF_INPUT)) || !plannable(mn_rec(it, (uint32_t)r)) || !group_dies_at(it, r, i)
        || !own_kernel(it, node) || mn_subgraph_at(it, i) || mn_patch_runs(it, i)) {
        return 0;
    }
    mn_conv_geom_t g;
    memset(&g, 0, sizeof g);
    g.batches = a->dims[0];
    g.in_h = a->dims[1];
    g.in_w = a->dims[2];
    g.in_c = a->dims[3];
    g.out_h = o->dims[1];
    g.out_w = o->dims[2];
    g.out_c = o->dims[3];
    g.stride_h = mn_opt_i32(node, MN_CONV2D_STRIDE_H, 1);   /* = MN_DWCONV_STRIDE_H, MN_POOL_STRIDE_H */
    g.dil_h = pool ? 1 : mn_opt_i32(node, dw ? MN_DWCONV_DILATION_H : MN_CONV2D_DILATION_H, 1);
    g.pad_h = mn_conv_padding(g.stride_h, g.dil_h, g.in_h, w ? w->dims[1] : mn_opt_i32(node, MN_POOL_FILTER_H, 1),
        g.out_h);   /* as prepare */
    const int64_t es = (int64_t)mn_dtype_size(a->dtype), s = mn_conv_slide(&g, (size_t)es, (size_t)es);
    /* (offsets are multiples of the alignment: round down) */
    const int64_t aligned = s - (int64_t)(((uint64_t)s) & (MN_ARENA_ALIGN - 1));
    if (aligned + (int64_t)mn_tensor_bytes(o) <= 0) {
        return 0;   /* entirely below the input: no overlap to allow */
    }
    *x = r;
    *shift = aligned > INT32_MAX / 2 ? INT32_MAX / 2 & ~(int32_t)(MN_ARENA_ALIGN - 1) : (int32_t)aligned;
    return 1;
}

int mn_inplace_slide(const mn_interp_t *it, int32_t t, int32_t first, int32_t *x, int32_t *shift) {
    /* (a tensor written at op `first` and used no earlier: that op is its first writer) */
    return first >= 0 && (uint32_t)first < it->n_nodes && mn_num_outputs(&it->nodes[first]) >= 1
        && it->nodes[first].outputs[0] == t && conv_slide(it, (uint32_t)first, t, x, shift);
}
