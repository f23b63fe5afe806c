/*
 * Zero-copy model view: accessors over a flatbuffer mn_model_init (mn_verify.c) has accepted.
 */
#include "mn_modelview.h"
#include "mn_registry.h"
#include "mn_util.h"

mn_status_t mn_model_subgraph(const mn_model_t *m, size_t k, mn_model_t *out) {
    if (!m || !out || !m->buf || k >= m->n_subgraphs) {
        return MN_ERR_ARG;
    }
    *out = *m;
    const uint8_t *b = m->buf;
    uint32_t n, first = fb_vec(b, mn_ld_u32(b), F_MODEL_SUBGRAPHS, &n);
    uint32_t sg = fb_vec_table(b, first, (uint32_t)k);
    out->subgraph = sg;
    out->tensors = fb_vec(b, sg, F_SG_TENSORS, &out->n_tensors);
    out->ops = fb_vec(b, sg, F_SG_OPERATORS, &out->n_ops);
    out->inputs = fb_vec(b, sg, F_SG_INPUTS, &out->n_inputs);
    out->outputs = fb_vec(b, sg, F_SG_OUTPUTS, &out->n_outputs);
    return MN_OK;
}

size_t mn_model_num_inputs(const mn_model_t *m) {
    return m->n_inputs;
}
size_t mn_model_num_outputs(const mn_model_t *m) {
    return m->n_outputs;
}
size_t mn_model_num_ops(const mn_model_t *m) {
    return m->n_ops;
}
size_t mn_model_num_tensors(const mn_model_t *m) {
    return m->n_tensors;
}
size_t mn_model_num_subgraphs(const mn_model_t *m) {
    return m->n_subgraphs;
}

uint32_t mn_model_op_table(const mn_model_t *m, uint32_t op) {
    return fb_vec_table(m->buf, m->ops, op);
}

uint32_t mn_model_tensor_table(const mn_model_t *m, uint32_t t) {
    return fb_vec_table(m->buf, m->tensors, t);
}

int32_t mn_opcode_builtin(const uint8_t *b, uint32_t oc) {
    /* Newer files keep small codes in deprecated_builtin_code and the full code in builtin_code;
     * the larger of the two is the real one (as TFLite's GetBuiltinCode does). */
    int32_t dep = fb_i8(b, oc, F_OC_DEPRECATED_CODE, 0);
    int32_t code = fb_i32(b, oc, F_OC_BUILTIN_CODE, 0);
    return code > dep ? code : dep;
}

const uint8_t *mn_model_buffer(const mn_model_t *m, uint32_t index, size_t *size) {
    *size = 0;
    if (index >= m->n_buffers) {
        return NULL;
    }
    const uint8_t *b = m->buf;
    uint32_t bt = fb_vec_table(b, m->buffers, index);
    uint32_t n;
    uint32_t d = fb_vec(b, bt, F_BUF_DATA, &n);
    if (d && n) {
        *size = n;
        return b + d;
    }
    uint32_t po = fb_field(b, bt, F_BUF_OFFSET), ps = fb_field(b, bt, F_BUF_SIZE);
    uint64_t off = po ? mn_ld_u64(b + po) : 0, sz = ps ? mn_ld_u64(b + ps) : 0;
    if (off > 1 && sz) {
        *size = (size_t)sz;
        return b + off;
    }
    return NULL;
}

const uint8_t *mn_model_metadata(const mn_model_t *m, const char *name, size_t *size) {
    *size = 0;
    for (uint32_t i = 0; i < m->n_metadata; i++) {
        uint32_t md = fb_vec_table(m->buf, m->metadata, i);
        const char *n = fb_str(m->buf, md, F_MD_NAME);
        if (n && strcmp(n, name) == 0) {
            return mn_model_buffer(m, fb_u32(m->buf, md, F_MD_BUFFER, 0), size);
        }
    }
    return NULL;
}

int32_t mn_model_input_index(const mn_model_t *m, size_t i) {
    return i < m->n_inputs ? mn_ld_i32(m->buf + m->inputs + 4 * i) : -1;
}

int32_t mn_model_output_index(const mn_model_t *m, size_t i) {
    return i < m->n_outputs ? mn_ld_i32(m->buf + m->outputs + 4 * i) : -1;
}

const char *mn_model_tensor_name(const mn_model_t *m, size_t index) {
    if (!m || !m->buf || index >= m->n_tensors) {
        return NULL;
    }
    const char *name = fb_str(m->buf, mn_model_tensor_table(m, (uint32_t)index), F_T_NAME);
    return name ? name : "";
}

mn_status_t mn_model_tensor(const mn_model_t *m, size_t index, mn_tensor_t *out) {
    if (!m || !out || index >= m->n_tensors) {
        return MN_ERR_ARG;
    }
    const uint8_t *b = m->buf;
    uint32_t t = mn_model_tensor_table(m, (uint32_t)index);
    uint32_t nd, shape = fb_vec(b, t, F_T_SHAPE, &nd);
    static const int32_t no_dims[1] = { 0 };
    memset(out, 0, sizeof *out);
    out->ndim = (uint8_t)nd;   /* the verifier bounds nd by MN_MAX_DIMS */
    if (!nd) {
        out->dims = no_dims;
    } else if (mn_i32_in_place(b + shape)) {
        out->dims = (const int32_t *)(const void *)(b + shape);   /* zero copy */
    } else {
        /* Unaligned model: a per-model buffer (mn_model_t is always caller RAM; the interpreter
         * copies these dims into its arena right away). */
        int32_t *tmp = ((mn_model_t *)(uintptr_t)m)->dims_tmp;
        for (uint32_t d = 0; d < nd; d++) {
            tmp[d] = mn_ld_i32(b + shape + 4 * d);
        }
        out->dims = tmp;
    }
    out->dtype = (uint8_t)fb_i8(b, t, F_T_TYPE, 0);
    if (fb_u8(b, t, F_T_IS_VARIABLE, 0)) {
        out->flags |= MN_TF_VARIABLE;
    }
    size_t dlen;
    const uint8_t *data = mn_model_buffer(m, fb_u32(b, t, F_T_BUFFER, 0), &dlen);
    if (data) {
        out->data = (void *)(uintptr_t)data;  /* read-only: MN_TF_CONST */
        out->flags |= MN_TF_CONST;
    }
    uint32_t q = fb_ref(b, t, F_T_QUANT);
    uint32_t nsc;
    if (q && (fb_vec(b, q, F_Q_SCALE, &nsc), nsc)) {
        out->quant = b + q;
        int32_t qd = fb_i32(b, q, F_Q_QDIM, 0);
        out->q_dim = (int8_t)(qd > 127 ? 127 : qd < -128 ? -128 : qd);
    }
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        if ((size_t)mn_ld_i32(b + m->inputs + 4 * i) == index) {
            out->flags |= MN_TF_INPUT;
        }
    }
    for (uint32_t i = 0; i < m->n_outputs; i++) {
        if ((size_t)mn_ld_i32(b + m->outputs + 4 * i) == index) {
            out->flags |= MN_TF_OUTPUT;
        }
    }
    return MN_OK;
}

static uint32_t op_opcode(const mn_model_t *m, uint32_t o) {
    return fb_vec_table(m->buf, m->opcodes, fb_u32(m->buf, o, F_OP_OPCODE_INDEX, 0));
}

mn_status_t mn_model_op_code(const mn_model_t *m, size_t op, int32_t *builtin, const char **custom) {
    if (!m || !builtin || !custom || op >= m->n_ops) {
        return MN_ERR_ARG;
    }
    uint32_t oc = op_opcode(m, mn_model_op_table(m, (uint32_t)op));
    *builtin = mn_opcode_builtin(m->buf, oc);
    *custom = fb_str(m->buf, oc, F_OC_CUSTOM_CODE);
    return MN_OK;
}

mn_status_t mn_model_op_info(const mn_model_t *m, size_t op, mn_op_info_t *out) {
    if (!m || !out || op >= m->n_ops) {
        return MN_ERR_ARG;
    }
    const uint8_t *b = m->buf;
    uint32_t o = mn_model_op_table(m, (uint32_t)op);
    uint32_t oc = op_opcode(m, o);
    uint32_t n;
    memset(out, 0, sizeof *out);
    out->builtin = mn_opcode_builtin(b, oc);
    out->version = fb_i32(b, oc, F_OC_VERSION, 1);
    const char *custom = fb_str(b, oc, F_OC_CUSTOM_CODE);
    out->name = (out->builtin == MN_BUILTIN_CUSTOM && custom) ? custom : mn_op_name(out->builtin, out->name_buf);
    fb_vec(b, o, F_OP_INPUTS, &n);
    out->n_inputs = (int32_t)n;
    fb_vec(b, o, F_OP_OUTPUTS, &n);
    out->n_outputs = (int32_t)n;
    out->supported = mn_registry_find(NULL, out->builtin, custom) != NULL;
    return MN_OK;
}

mn_status_t mn_model_op_tensor(const mn_model_t *m, size_t op, int which, size_t k, int32_t *tensor) {
    static const int fields[3] = { F_OP_INPUTS, F_OP_OUTPUTS, F_OP_INTERMEDIATES };
    if (!m || !m->buf || !tensor || op >= m->n_ops || which < 0 || which > 2) {
        return MN_ERR_ARG;
    }
    uint32_t n, v = fb_vec(m->buf, mn_model_op_table(m, (uint32_t)op), fields[which], &n);
    if (k >= n) {
        return MN_ERR_ARG;
    }
    *tensor = mn_ld_i32(m->buf + v + 4 * k);
    return MN_OK;
}

const uint8_t *mn_model_op_custom_options(const mn_model_t *m, size_t op, size_t *len) {
    uint32_t n = 0, v = (m && m->buf && op < m->n_ops) ? fb_vec(m->buf, mn_model_op_table(m, (uint32_t)op),
        F_OP_CUSTOM_OPTIONS, &n) : 0;
    if (len) {
        *len = v ? n : 0;
    }
    return v ? m->buf + v : NULL;
}

size_t mn_tensor_struct_size(void) {
    return sizeof(mn_tensor_t);
}
