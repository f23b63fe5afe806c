/*
 * Graph setup, the first steps of prepare and of mn_check_ops: tensor records (constants used in
 * place from the model), the node array with each node's kernel, operands and options.
 */
#include "mn_graph.h"
#include "mn_registry.h"

void mn_reset_variable(mn_tensor_t *t) {
    int v = (t->dtype == MN_INT8) ? mn_tensor_zero_point(t, 0) : 0;
    memset(t->data, v, mn_tensor_bytes(t));
}

static size_t const_align(int32_t dtype) {
    size_t es = mn_dtype_size(dtype);
    return es > 8 ? 8 : (es ? es : 1);
}

/* Whether tensor t (decoded into *t) needs a record: a constant read in place from the model needs
 * none unless it is a model input or output (which callers look up by index). */
static int needs_record(const mn_tensor_t *t) {
    return !(t->flags & MN_TF_CONST) || (t->flags & (MN_TF_VARIABLE | MN_TF_INPUT | MN_TF_OUTPUT))
        || ((uintptr_t)t->data % const_align(t->dtype)) != 0;
}

/* Records for every tensor but the constants used in place (rec_of maps indices to records),
 * unless there are more than 254 records or the model's shapes are unaligned (then all tensors
 * have one, in index order, and rec_of is NULL). */
static mn_status_t alloc_records(mn_interp_t *it, size_t n_dims) {
    const mn_model_t *m = it->model;
    uint32_t n_rec = 0;
    mn_tensor_t t;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        mn_model_tensor(m, i, &t);
        n_rec += needs_record(&t) ? 1 : 0;
    }
    const int map = n_dims == 0 && n_rec < m->n_tensors && n_rec < MN_NO_REC;
    it->n_tensors = m->n_tensors;
    it->tensors = mn_arena_persistent(it, mn_mul(map ? n_rec : m->n_tensors, sizeof(mn_tensor_t)));
    if (!it->tensors && (map ? n_rec : m->n_tensors)) {
        return MN_ERR_ARENA;
    }
    if (map) {
        uint8_t *rec_of = mn_arena_persistent(it, m->n_tensors);
        if (!rec_of) {
            return MN_ERR_ARENA;
        }
        for (uint32_t i = 0, r = 0; i < m->n_tensors; i++) {
            mn_model_tensor(m, i, &t);
            rec_of[i] = needs_record(&t) ? (uint8_t)r++ : MN_NO_REC;
        }
        it->rec_of = rec_of;
    }
    return MN_OK;
}

static mn_status_t setup_tensors(mn_interp_t *it) {
    const mn_model_t *m = it->model;
    /* Shapes are used in place in the model; only an unaligned model needs copies (one block). */
    size_t n_dims = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        uint32_t nd, shape = fb_vec(m->buf, mn_model_tensor_table(m, i), F_T_SHAPE, &nd);
        n_dims += (nd && !mn_i32_in_place(m->buf + shape)) ? nd : 0;
    }
    mn_status_t s = alloc_records(it, n_dims);
    if (s) {
        return s;
    }
    int32_t *dims_pool = n_dims ? mn_arena_persistent(it, mn_mul(n_dims, sizeof(int32_t))) : NULL;
    if (n_dims && !dims_pool) {
        return MN_ERR_ARENA;
    }
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        mn_tensor_t *t = mn_rec(it, i), view;
        if (fb_field(m->buf, mn_model_tensor_table(m, i), F_T_SPARSITY)) {
            return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "tensor %u (%s): sparse tensors are not supported",
                (unsigned)i, mn_model_tensor_name(m, i));
        }
        mn_model_tensor(m, i, t ? t : &view);
        if (!t) {
            continue;
        }
        if (t->dims == m->dims_tmp) {
            memcpy(dims_pool, t->dims, sizeof(int32_t) * t->ndim);
            t->dims = dims_pool;
            dims_pool += t->ndim;
        }
        if ((t->flags & (MN_TF_INPUT | MN_TF_CONST)) == (MN_TF_INPUT | MN_TF_CONST)) {
            return mn_err_set(&it->err, MN_ERR_MODEL, "invalid model: input tensor %u is constant", (unsigned)i);
        }
        if (t->flags & MN_TF_VARIABLE) {
            t->flags &= (uint8_t)~MN_TF_CONST;
            if (it->dry_run) {
                /* prepare never sees non-constant data: count it, allocate nothing */
                t->data = NULL;
                it->dry_extra += MN_PBLOCK(mn_tensor_bytes(t) ? mn_tensor_bytes(t) : 1);
                continue;
            }
            if (!(t->data = mn_arena_persistent(it, mn_tensor_bytes(t)))) {
                return MN_ERR_ARENA;
            }
            mn_reset_variable(t);
        } else if ((t->flags & MN_TF_CONST) && ((uintptr_t)t->data % const_align(t->dtype)) != 0) {
            /* Unaligned constant (e.g. frozen bytes): copy once so kernels may load words. */
            void *copy = mn_arena_persistent(it, mn_tensor_bytes(t));
            if (!copy) {
                return MN_ERR_ARENA;
            }
            memcpy(copy, t->data, mn_tensor_bytes(t));
            t->data = copy;
            t->flags |= MN_TF_COPIED;
            it->stats.copied_bytes += mn_tensor_bytes(t);
        }
    }
    return MN_OK;
}

/* An operand list (flatbuffer int32 vector at b + v) can be used in place, without a copy in the
 * arena, when it is 4-byte aligned and the target is little-endian (the usual case: flatbuffers
 * align int32 vectors, so any 4-byte aligned model qualifies). */
static int idx_in_place(const uint8_t *b, uint32_t v) {
    return mn_i32_in_place(b + v);
}

/* int32 slots the operand lists of op table o need in the copy pool (each list is preceded by its
 * length): with copies_only, 0 for a list used in place; otherwise every non-empty list. */
static size_t idx_count(const uint8_t *b, uint32_t o, int copies_only) {
    static const int fields[2] = { F_OP_INPUTS, F_OP_OUTPUTS };   /* intermediates stay in the model */
    size_t total = 0;
    for (int f = 0; f < 2; f++) {
        uint32_t n, v = fb_vec(b, o, fields[f], &n);
        total += (n && (!copies_only || !idx_in_place(b, v))) ? n + 1 : 0;
    }
    return total;
}

static const int32_t no_operands[1] = { 0 };   /* an empty operand list: just its length */

/* Operand list `field` of op table o, preceded by its length as a flatbuffer vector is: the
 * model's own vector when it can be used in place, else a copy in the pool. */
static const int32_t *operands(const uint8_t *b, uint32_t o, int field, int32_t **pool) {
    uint32_t cnt, v = fb_vec(b, o, field, &cnt);
    if (!cnt) {
        return no_operands + 1;
    }
    if (idx_in_place(b, v)) {
        return (const int32_t *)(const void *)(b + v);   /* zero copy; the engine never writes it */
    }
    int32_t *list = *pool + 1;
    (*pool)[0] = (int32_t)cnt;
    for (uint32_t i = 0; i < cnt; i++) {
        list[i] = mn_ld_i32(b + v + 4 * i);
    }
    *pool += cnt + 1;
    return list;
}

/* Name of options table `type`, else "type N" in buf: an op-selected build keeps only the names
 * of the tables its kernels take (mn_opnames.c). */
static const char *options_label(int32_t type, char buf[16]) {
    const char *name = mn_options_name(type);
    if (*name != '?') {
        return name;
    }
    mn_fmt(buf, 16, "type %d", (int)type);
    return buf;
}

mn_status_t mn_setup_node(mn_interp_t *it, uint32_t i, int32_t **pool_next) {
    const mn_model_t *m = it->model;
    const uint8_t *b = m->buf;
    mn_node_t *node = &it->nodes[i];
    uint32_t o = mn_model_op_table(m, i);
    uint32_t oc = fb_vec_table(b, m->opcodes, fb_u32(b, o, F_OP_OPCODE_INDEX, 0));
    uint32_t nin, nout, nint;
    char name_buf[MN_OP_NAME_LEN];
    it->cur_op = i;
    node->inputs = node->outputs = no_operands + 1;   /* until read below (a failed node has none) */
    const int32_t builtin = mn_opcode_builtin(b, oc), version = fb_i32(b, oc, F_OC_VERSION, 1);
    node->builtin = (uint8_t)(builtin >= 0 && builtin < 255 ? builtin : 255);
    node->variant = 0;
    const char *custom = fb_str(b, oc, F_OC_CUSTOM_CODE);
    mn_registration_t reg_buf;
    const mn_registration_t *reg = mn_registry_lookup(&it->cfg, builtin, custom, &reg_buf);
    node->kernel = mn_registry_find(&it->cfg, builtin, custom);
    if (!node->kernel) {
        if (node->builtin == MN_BUILTIN_CUSTOM) {
            const char *hint = mn_custom_op_hint(custom);
            return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "unsupported custom op \"%s\" (op %u)%s%s",
                custom ? custom : "", (unsigned)i, hint ? ": " : "", hint ? hint : "");
        }
        /* (mn_fail starts the message with "op <i> <name>: ") */
        const char *name = mn_op_name(builtin, name_buf);
        if (reg) {
            return mn_fail(it, MN_ERR_UNSUPPORTED, "this firmware was built without the %s kernel "
                "(rebuild with OPS=%s or MODELS=<this model>)", name, name);
        }
        return mn_fail(it, MN_ERR_UNSUPPORTED, "micronn has no kernel for %s yet (builtin %d)", name, (int)builtin);
    }
    /* Options are read by field id, which only means something in the op's own options table. */
    const int32_t options_type = (int32_t)fb_u8(b, o, F_OP_OPTIONS_TYPE, 0);
    if (reg && reg->max_version) {
        if (version < 1 || version > reg->max_version) {
            return mn_fail(it, MN_ERR_UNSUPPORTED, "opcode version %d not supported (the kernel implements "
                "versions 1 to %d)", (int)version, (int)reg->max_version);
        }
        if (options_type != MN_OPTIONS_NONE && options_type != reg->options_type) {
            char found[16], takes[16];
            const char *name = mn_node_name(it, node, name_buf);
            return mn_fail(it, MN_ERR_MODEL, "builtin options table is %s, %s takes %s",
                options_label(options_type, found), name, options_label(reg->options_type, takes));
        }
    }
    fb_vec(b, o, F_OP_INPUTS, &nin);
    fb_vec(b, o, F_OP_OUTPUTS, &nout);
    fb_vec(b, o, F_OP_INTERMEDIATES, &nint);
    if (nin > 0xffff || nout > 0xffff || nint > 0xff) {
        return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "op %u: more than 65535 inputs or outputs, or more "
            "than 255 intermediates", (unsigned)i);
    }
    node->inputs = operands(b, o, F_OP_INPUTS, pool_next);
    node->outputs = operands(b, o, F_OP_OUTPUTS, pool_next);
    for (uint32_t k = 0; k < nout; k++) {
        int32_t t = node->outputs[k];
        if (t >= 0 && (mn_tflags(it, (uint32_t)t) & MN_TF_CONST)) {
            return mn_err_set(&it->err, MN_ERR_MODEL, "invalid model: op %u (%s) writes constant tensor %d",
                (unsigned)i, mn_node_name(it, node, name_buf), (int)t);
        }
    }
    uint32_t opt = fb_ref(b, o, F_OP_OPTIONS);
    node->options = opt ? b + opt : NULL;
    return MN_OK;
}

/* After the nodes: as many slots as an op has input positions holding record-less constants. */
mn_status_t mn_setup_const_slots(mn_interp_t *it) {
    uint32_t most = 0;
    for (uint32_t i = 0; it->rec_of && i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        uint32_t k = 0;
        for (int j = 0; j < mn_num_inputs(node); j++) {
            k += node->inputs[j] >= 0 && it->rec_of[node->inputs[j]] == MN_NO_REC;
        }
        most = k > most ? k : most;
    }
    it->const_slots = most ? mn_arena_persistent(it, most * sizeof(mn_tensor_t)) : NULL;
    return (most && !it->const_slots) ? MN_ERR_ARENA : MN_OK;
}

/*
 * First steps of prepare and of check_ops: tensors, the node array and one block (*pool) for the
 * operand lists (saves per-allocation rounding). Prepare (copies_only) sizes the block for the
 * lists that cannot be used in place and allocates none when there are none; check_ops always
 * allocates one, for every operand.
 */
mn_status_t mn_setup_graph(mn_interp_t *it, int copies_only, int32_t **pool) {
    const mn_model_t *m = it->model;
    mn_status_t s;
    if ((s = setup_tensors(it))) {
        return s;
    }
    if (m->n_ops > 0xffff) {
        return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "more than 65535 operators (%u)", (unsigned)m->n_ops);
    }
#if MN_HAS_RESOURCES   /* MICRONN_OP_VAR_HANDLE || MICRONN_OP_READ_VARIABLE || MICRONN_OP_ASSIGN_VARIABLE */
    if (!it->parent && (s = mn_resources_setup(it))) {
        return s;
    }
#endif
    it->n_nodes = m->n_ops;
    it->nodes = mn_arena_persistent(it, mn_mul(m->n_ops, sizeof(mn_node_t)));
    if (!it->nodes && m->n_ops) {
        return MN_ERR_ARENA;
    }
    size_t n_idx = 0;
    for (uint32_t i = 0; i < m->n_ops; i++) {
        n_idx += idx_count(m->buf, mn_model_op_table(m, i), copies_only);
    }
    *pool = (n_idx || !copies_only) ? mn_arena_persistent(it, mn_mul(n_idx, sizeof(int32_t))) : NULL;
    if (!*pool && n_idx) {
        return MN_ERR_ARENA;
    }
    return MN_OK;
}

