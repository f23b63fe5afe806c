/*
 * Tensors of a node, and the constants that have no record in the arena (mn_kernel.h).
 *
 * Most constants are weights read in place from the model. Keeping a 16-byte record for each was
 * most of a small model's persistent data (keyword_scrambled: 31 of its 54 tensors), so prepare
 * leaves them out: a kernel asking for one (mn_input) gets its descriptor decoded from the model
 * into a slot of the op, and an eval that only needs the weights' data (mn_input_data) gets that
 * in a dozen reads of the flatbuffer fields. Those run at every eval, so this file is built like
 * the kernels (-O2). The model was verified, and only constants that are no model input or
 * output, not variable and whose shape is in place are left without a record.
 */
#include "mn_context.h"

/* Position of field `field` of the table at t whose vtable is at vt, or 0 if absent. */
static inline uint32_t vt_field(const uint8_t *b, uint32_t t, uint32_t vt, int field) {
    const uint32_t vo = 4u + 2u * (uint32_t)field;
    const uint32_t fo = vo + 2u <= mn_ld_u16(b + vt) ? mn_ld_u16(b + vt + vo) : 0u;
    return fo ? t + fo : 0u;
}

/* Target of the uoffset at position p (p != 0), as fb_ref. */
static inline uint32_t follow(const uint8_t *b, uint32_t p) {
    return p + mn_ld_u32(b + p);
}

/* Data of buffer `index` (the same as mn_model_buffer, in fewer reads for the usual layout). */
static const uint8_t *buffer_data(const mn_model_t *m, uint32_t index) {
    const uint8_t *b = m->buf;
    if (index < m->n_buffers) {
        const uint32_t bt = follow(b, m->buffers + 4u * index), vt = bt - mn_ld_u32(b + bt);
        const uint32_t p = vt_field(b, bt, vt, F_BUF_DATA);
        if (p) {
            const uint32_t v = follow(b, p);
            if (mn_ld_u32(b + v)) {
                return b + v + 4;
            }
        }
    }
    size_t len;
    return mn_model_buffer(m, index, &len);   /* (offset/size buffers of large models) */
}

const void *mn_const_data(const mn_ctx_t *ctx, int32_t i) {
    const mn_model_t *m = ctx->model;
    const uint8_t *b = m->buf;
    const uint32_t t = follow(b, m->tensors + 4u * (uint32_t)i), vt = t - mn_ld_u32(b + t);
    const uint32_t p = vt_field(b, t, vt, F_T_BUFFER);
    return buffer_data(m, p ? mn_ld_u32(b + p) : 0u);
}

mn_tensor_t *mn_input(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    int32_t t = (i >= 0 && i < mn_num_inputs(node)) ? node->inputs[i] : -1;
    return t >= 0 ? mn_tensor_of(ctx, node, t) : (mn_tensor_t *)0;
}

mn_tensor_t *mn_output(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    int32_t t = (i >= 0 && i < mn_num_outputs(node)) ? node->outputs[i] : -1;
    return t >= 0 ? mn_tensor_of(ctx, node, t) : (mn_tensor_t *)0;
}

/* Slot k of the op's constants is its k-th input position holding a record-less constant, so each
 * operand keeps its own slot while the kernel holds several (LSTM's weights). An operand that is
 * not an input (a constant intermediate or output, which prepare refuses) uses const_view. */
mn_tensor_t *mn_const_tensor(mn_ctx_t *ctx, const mn_node_t *node, int32_t t) {
    mn_tensor_t *slot = &ctx->const_view;
    for (int j = 0, k = 0; j < mn_num_inputs(node); j++) {
        const int32_t u = node->inputs[j];
        if (u == t) {
            slot = &ctx->const_slots[k];
            break;
        }
        k += u >= 0 && ctx->rec_of[u] == MN_NO_REC;
    }
    mn_model_tensor(ctx->model, (size_t)t, slot);   /* (evals that only need the data: mn_const_data) */
    return slot;
}
