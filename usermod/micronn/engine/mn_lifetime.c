/*
 * Tensor lifetimes: the op-index interval in which each planned tensor must hold its value (its
 * readers and writer, kept longer for graph inputs and outputs and for a patch stage's input;
 * merged over the in-place outputs that share its memory).
 */
#include "mn_graph.h"

#define NO_USE 0xffffu   /* tensor_uses: no op uses the tensor (op indices are below 65535) */


/* Every tensor's first and last using op, in one pass over the operand lists: a temporary of 4
 * bytes per tensor (NULL when it is not taken, and tensor_lifetime then scans the nodes for each
 * tensor). It is taken when the planner's own temporaries still fit beside it, or when they do
 * not fit anyway: the memory-less planner asks for lifetimes many times per buffer. */
const uint16_t *mn_tensor_uses(mn_interp_t *it) {
    size_t n_bufs = it->n_scratch;   /* what the planner can get (tensor_lifetime's first test) */
    for (uint32_t t = 0; t < it->n_tensors; t++) {
        const mn_tensor_t *r = mn_rec(it, t);
        n_bufs += r && !(r->flags & (MN_TF_CONST | MN_TF_VARIABLE)) && mn_tensor_bytes(r);
    }
    const size_t bytes = mn_mul(it->n_tensors, 2 * sizeof(uint16_t)), block = MN_BLOCK(bytes);
    const size_t planner = MN_BLOCK(mn_mul(n_bufs, sizeof(mn_plan_buf_t))) + MN_BLOCK(mn_mul(n_bufs, 2 * sizeof(int32_t)));
    const size_t avail = it->arena_size - (it->head + it->temp + it->tail);
    if (!it->n_tensors || bytes > SIZE_MAX / 4 || planner > SIZE_MAX / 4 || block > avail
        || (planner <= avail && block + planner > avail)) {
        return NULL;
    }
    uint16_t *life = mn_arena_temp(it, bytes);
    if (!life) {
        return NULL;
    }
    for (uint32_t t = 0; t < it->n_tensors; t++) {
        life[2 * t] = NO_USE;
    }
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        const uint8_t *b = it->model->buf;
        uint32_t n_int, v_int = fb_vec(b, mn_model_op_table(it->model, mn_node_index(it, node)), F_OP_INTERMEDIATES, &n_int);
        const uint16_t counts[3] = { mn_num_inputs(node), mn_num_outputs(node), (uint16_t)n_int };
        for (int l = 0; l < 3; l++) {
            for (uint16_t k = 0; k < counts[l]; k++) {
                const int32_t t = l == 0 ? node->inputs[k] : l == 1 ? node->outputs[k] : mn_ld_i32(b + v_int + 4u * k);
                if (t >= 0 && (uint32_t)t < it->n_tensors) {
                    if (life[2 * t] == NO_USE) {
                        life[2 * t] = (uint16_t)i;
                    }
                    life[2 * t + 1] = (uint16_t)i;
                }
            }
        }
    }
    return life;
}

/* Merge the ops using tensor t (and its fate after invoke) into [*first, *last]. */
static void own_lifetime(const mn_interp_t *it, uint32_t t, int32_t *first, int32_t *last) {
    const mn_tensor_t *tt = mn_rec(it, t);   /* (planned tensors have records) */
    int32_t end = it->n_nodes > 0 ? (int32_t)it->n_nodes - 1 : 0;
    if (tt->flags & MN_TF_INPUT) {
        /* Inputs are written before invoke; they keep their value unless the caller allows reuse. */
        *first = 0;
        if (!(it->cfg.flags & MN_CFG_REUSE_INPUTS)) {
            *last = end;
        }
    }
    const uint16_t *life = it->plan_life;
    if (life && life[2 * t] != NO_USE) {
        if (life[2 * t] < *first) {
            *first = life[2 * t];
        }
        if (life[2 * t + 1] > *last) {
            *last = life[2 * t + 1];
        }
    }
    for (uint32_t i = 0; !life && i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        const uint8_t *b = it->model->buf;
        uint32_t n_int, v_int = fb_vec(b, mn_model_op_table(it->model, mn_node_index(it, node)), F_OP_INTERMEDIATES, &n_int);
        uint16_t counts[3] = { mn_num_inputs(node), mn_num_outputs(node), (uint16_t)n_int };
        for (int l = 0; l < 3; l++) {
            for (uint16_t k = 0; k < counts[l]; k++) {
                const int32_t u = l == 0 ? node->inputs[k] : l == 1 ? node->outputs[k] : mn_ld_i32(b + v_int + 4u * k);
                if (u == (int32_t)t) {
                    if ((int32_t)i < *first) {
                        *first = (int32_t)i;
                    }
                    if ((int32_t)i > *last) {
                        *last = (int32_t)i;
                    }
                }
            }
        }
    }
    if (it->patch) {
        mn_patch_lifetime(it, t, last);
    }
    if (tt->flags & MN_TF_OUTPUT) {
        /* Outputs stay valid after invoke. */
        if (*first == INT32_MAX) {
            *first = 0;
        }
        *last = end;
    }
}

int mn_tensor_lifetime(const mn_interp_t *it, uint32_t t, int32_t *first, int32_t *last) {
    const mn_tensor_t *tt = mn_rec(it, t);
    if (!tt || (tt->flags & (MN_TF_CONST | MN_TF_VARIABLE | MN_TF_INPLACE | MN_TF_PATCH)) || mn_tensor_bytes(tt) == 0) {
        return 0;
    }
    *first = INT32_MAX;
    *last = (tt->flags & MN_TF_INPUT) ? 0 : -1;
    own_lifetime(it, t, first, last);
    if (tt->flags & MN_TF_ALIASED) {
        for (uint32_t u = 0; u < it->n_tensors; u++) {
            if ((mn_tflags(it, u) & MN_TF_INPLACE) && mn_inplace_root(it, (int32_t)u) == (int32_t)t) {
                own_lifetime(it, u, first, last);
            }
        }
    }
    return *last >= 0;
}


/* Input 0 of the op that first writes tensor t, if that op has it as its only output; else -1.
 * Derived from the graph (not stored), so it holds before, during and after planning. */
int32_t mn_inplace_source(const mn_interp_t *it, int32_t t) {
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        for (uint16_t k = 0; k < mn_num_outputs(node); k++) {
            if (node->outputs[k] == t) {
                return (mn_num_outputs(node) == 1 && mn_num_inputs(node) >= 1) ? node->inputs[0] : -1;
            }
        }
    }
    return -1;
}

int32_t mn_inplace_root(const mn_interp_t *it, int32_t t) {
    while (mn_tflags(it, (uint32_t)t) & MN_TF_INPLACE) {
        t = mn_inplace_source(it, t);
    }
    return t;
}

