/*
 * Interpreter: init -> prepare (metadata, kernel init/prepare, memory plan) -> invoke.
 *
 * Everything the interpreter needs at run time lives in the persistent (tail) part of the arena;
 * invoke only walks the node list and calls eval, so it allocates nothing.
 */
#include "mn_internal.h"

enum { ST_INIT = 0, ST_PREPARING = 1, ST_READY = 2, ST_FAILED = 3 };
enum { PH_NONE = 0, PH_INIT = 1, PH_PREPARE = 2, PH_EVAL = 3 };

/* ---- names / errors ------------------------------------------------------------------------ */

const char *mn_node_name(const mn_ctx_t *it, const mn_node_t *node, char *buf) {
    if (node->builtin == MN_BUILTIN_CUSTOM) {
        const uint8_t *b = it->model->buf;
        uint32_t o = mn_model_op_table(it->model, mn_node_index(it, node));
        uint32_t oc = fb_vec_table(b, it->model->opcodes, fb_u32(b, o, F_OP_OPCODE_INDEX, 0));
        const char *c = fb_str(b, oc, F_OC_CUSTOM_CODE);
        return c ? c : "CUSTOM";
    }
    return mn_op_name(node->builtin, buf);
}

int mn_num_intermediates(const mn_ctx_t *ctx, const mn_node_t *node) {
    uint32_t n;
    fb_vec(ctx->model->buf, mn_model_op_table(ctx->model, mn_node_index(ctx, node)), F_OP_INTERMEDIATES, &n);
    return (int)n;   /* (setup refuses more than 255) */
}

mn_tensor_t *mn_intermediate(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    const uint8_t *b = ctx->model->buf;
    uint32_t n, v = fb_vec(b, mn_model_op_table(ctx->model, mn_node_index(ctx, node)), F_OP_INTERMEDIATES, &n);
    const int32_t t = i >= 0 && (uint32_t)i < n ? mn_ld_i32(b + v + 4u * (uint32_t)i) : -1;
    return (t >= 0 && (uint32_t)t < ctx->n_tensors) ? mn_tensor_of(ctx, node, t) : (mn_tensor_t *)0;
}

const uint8_t *mn_custom_options(const mn_ctx_t *ctx, const mn_node_t *node, size_t *len) {
    const uint8_t *b = ctx->model->buf;
    uint32_t o = mn_model_op_table(ctx->model, mn_node_index(ctx, node)), cn;
    uint32_t co = fb_vec(b, o, F_OP_CUSTOM_OPTIONS, &cn);
    *len = 0;
    if (co && cn) {
        *len = cn;
        return b + co;
    }
    /* large custom options (outside the flatbuffer proper; the verifier checked the range) */
    uint32_t po = fb_field(b, o, F_OP_LARGE_CUSTOM_OFFSET), ps = fb_field(b, o, F_OP_LARGE_CUSTOM_SIZE);
    uint64_t lo = po ? mn_ld_u64(b + po) : 0, ls = ps ? mn_ld_u64(b + ps) : 0;
    if (ls) {
        *len = (size_t)ls;
        return b + lo;
    }
    return NULL;
}

mn_status_t mn_fail(mn_ctx_t *ctx, mn_status_t code, const char *fmt, ...) {
    char *msg = ctx->err.msg;
    size_t n = 0;
    if (ctx->nodes && ctx->cur_op < ctx->n_nodes) {
        const mn_node_t *node = &ctx->nodes[ctx->cur_op];
        char name[MN_OP_NAME_LEN];
        n = mn_fmt(msg, MN_ERR_MSG_LEN, "op %u %s: ", (unsigned)mn_node_index(ctx, node), mn_node_name(ctx, node, name));
        if (n >= MN_ERR_MSG_LEN) {
            n = MN_ERR_MSG_LEN - 1;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    mn_vfmt(msg + n, MN_ERR_MSG_LEN - n, fmt, ap);
    va_end(ap);
    ctx->err.status = code == MN_OK ? MN_ERR_KERNEL : code;
    return ctx->err.status;
}

/* ---- kernel memory API ---------------------------------------------------------------------- */

void *mn_alloc_persistent(mn_ctx_t *ctx, size_t bytes) {
    if (ctx->phase != PH_INIT && ctx->phase != PH_PREPARE) {
        return NULL;
    }
    return mn_arena_persistent(ctx, bytes);
}

void *mn_alloc_temp(mn_ctx_t *ctx, size_t bytes) {
    if (ctx->phase != PH_PREPARE) {
        return NULL;
    }
    return mn_arena_temp(ctx, bytes);
}

mn_status_t mn_request_scratch(mn_ctx_t *ctx, size_t bytes, int32_t *index) {
    if (ctx->phase != PH_PREPARE || !index) {
        return mn_fail(ctx, MN_ERR_STATE, "scratch buffers can only be requested in prepare");
    }
    mn_scratch_t *s = mn_arena_persistent(ctx, sizeof *s);
    if (!s) {
        return MN_ERR_ARENA;
    }
    s->bytes = bytes;
    s->op = ctx->cur_op;
    s->next = ctx->scratch_req;
    ctx->scratch_req = s;
    *index = (int32_t)ctx->n_scratch++;
    return MN_OK;
}

void *mn_get_scratch(mn_ctx_t *ctx, int32_t index) {
    if (!ctx->scratch_ptr || index < 0 || (uint32_t)index >= ctx->n_scratch) {
        return NULL;
    }
    return ctx->scratch_ptr[index];
}

bool mn_sizing_only(const mn_ctx_t *ctx) {
    return ctx->dry_run == DRY_RUN_SIZING;
}

/* ---- init ------------------------------------------------------------------------------------ */

mn_status_t mn_interp_init(mn_interp_t *it, const mn_model_t *m, void *arena, size_t arena_size,
    const mn_config_t *cfg) {
    if (!it) {
        return MN_ERR_ARG;
    }
    memset(it, 0, sizeof *it);
    if (!m || !m->buf || !m->n_subgraphs) {
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARG, "model is not initialised (mn_model_init failed?)");
    }
    it->model = m;
    if (cfg) {
        it->cfg = *cfg;
    }
    if (it->cfg.planner > MN_PLANNER_OFFLINE) {
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARG, "unknown planner %u", (unsigned)it->cfg.planner);
    }
    mn_arena_setup(it, arena, arena_size);
    it->stats.arena_size = arena_size;
    return MN_OK;
}

mn_status_t mn_interp_set_persistent(mn_interp_t *it, void *buf, size_t size) {
    if (!it || it->state != ST_INIT || !it->model) {
        return MN_ERR_STATE;
    }
    mn_arena_setup_persistent(it, buf, size);
    if (!it->pers) {
        return mn_err_set(&it->err, MN_ERR_ARG, "persistent arena: no buffer (or smaller than its alignment)");
    }
    return MN_OK;
}

/* ---- prepare --------------------------------------------------------------------------------- */

static void free_kernels(mn_interp_t *it);

/* Value a variable tensor starts from (TFLM: the zero point for int8, zero otherwise). */
static void reset_variable(mn_tensor_t *t) {
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
            reset_variable(t);
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

static mn_status_t setup_node(mn_interp_t *it, uint32_t i, int32_t **pool_next) {
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
static mn_status_t setup_const_slots(mn_interp_t *it) {
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
 * Dry run: an op's persistent kernel data is only needed by its own eval, which a dry run never
 * calls, so it is counted (dry_extra) and released right after its prepare. The work buffer of a
 * dry run therefore holds the engine's metadata plus one op's data at a time, and a too-small
 * arena can still be sized exactly. Scratch records (needed for planning) are moved down.
 */
typedef struct {
    size_t bytes;
    uint32_t op;
} scratch_copy_t;

static mn_status_t dry_release(mn_interp_t *it, size_t tail0, mn_scratch_t *list0) {
    uint32_t k = 0, j = 0;
    for (mn_scratch_t *r = it->scratch_req; r != list0; r = r->next) {
        k++;
    }
    scratch_copy_t *tmp = k ? mn_arena_temp(it, mn_mul(k, sizeof *tmp)) : NULL;
    if (k && !tmp) {
        return MN_ERR_ARENA;
    }
    for (mn_scratch_t *r = it->scratch_req; r != list0; r = r->next, j++) {
        tmp[j].bytes = r->bytes;
        tmp[j].op = r->op;
    }
    size_t used = it->tail - tail0;
    MN_POISON(mn_arena_tail_end(it) - it->tail, used);
    it->tail = tail0;
    it->dry_extra += used;
    it->scratch_req = list0;
    it->nodes[it->cur_op].user_data = NULL;
    while (j-- > 0) {   /* oldest first, so the list keeps its order */
        mn_scratch_t *r = mn_arena_persistent(it, sizeof *r);
        if (!r) {
            return MN_ERR_ARENA;
        }
        it->dry_extra -= MN_PBLOCK(sizeof *r);  /* counted once, in `used` */
        r->bytes = tmp[j].bytes;
        r->op = tmp[j].op;
        r->next = it->scratch_req;
        it->scratch_req = r;
    }
    mn_arena_temp_reset(it);
    return MN_OK;
}

static mn_status_t prepare_node(mn_interp_t *it, uint32_t i) {
    mn_node_t *node = &it->nodes[i];
    mn_status_t s = MN_OK;
    size_t tail0 = it->tail, extra0 = it->dry_extra;
    mn_scratch_t *list0 = it->scratch_req;
    it->cur_op = i;
    it->err.status = MN_OK;
    it->phase = PH_INIT;
    if (node->kernel->init) {
        s = node->kernel->init(it, node);
    }
    it->phase = PH_PREPARE;
    if (s == MN_OK && node->kernel->prepare) {
        s = node->kernel->prepare(it, node);
    }
    it->phase = PH_NONE;
    mn_arena_temp_reset(it);
    if (s != MN_OK && s != MN_ERR_ARENA && it->err.status == MN_OK) {
        mn_fail(it, s, "prepare failed (%s)", mn_status_str(s));
    }
    if (s == MN_OK && it->dry_run) {
        s = dry_release(it, tail0, list0);
    }
    /* (a dry run moved this op's blocks to dry_extra: the sum is the same) */
    const size_t bytes = it->tail + it->dry_extra - tail0 - extra0;
    node->persistent8 = (uint16_t)(bytes / MN_PERSIST_ALIGN < 0xffff ? bytes / MN_PERSIST_ALIGN : 0xffff);
    it->stats.kernel_persistent += bytes;
    return s;
}

/* Planning context: buffers 0..n_tensors-1 are tensors, the rest scratch buffers by index. */
typedef struct {
    mn_interp_t *it;
    const uint8_t *offline;
    int no_slides;      /* only counting buffers: leave over/shift out (mn_inplace_slide) */
} plan_ctx_t;

#define NO_USE 0xffffu   /* tensor_uses: no op uses the tensor (op indices are below 65535) */

/* Every tensor's first and last using op, in one pass over the operand lists: a temporary of 4
 * bytes per tensor (NULL when it is not taken, and tensor_lifetime then scans the nodes for each
 * tensor). It is taken when the planner's own temporaries still fit beside it, or when they do
 * not fit anyway: the memory-less planner asks for lifetimes many times per buffer. */
static const uint16_t *tensor_uses(mn_interp_t *it) {
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

static int src_get(void *c, int32_t k, mn_plan_buf_t *out) {
    plan_ctx_t *pc = c;
    mn_interp_t *it = pc->it;
    memset(out, 0, sizeof *out);
    if ((uint32_t)k < it->n_tensors) {
        if (!mn_tensor_lifetime(it, (uint32_t)k, &out->first, &out->last)) {
            return 0;
        }
        out->size = MN_BLOCK(mn_tensor_bytes(mn_rec(it, (uint32_t)k)));
        out->id = k;
        if (it->cfg.planner != MN_PLANNER_NO_REUSE && !pc->no_slides
            && mn_inplace_slide(it, k, out->first, &out->over, &out->shift)) {
            out->over++;
        }
        if (pc->offline && mn_ld_i32(pc->offline + 4 * (uint32_t)k) >= 0) {
            out->offset = (size_t)mn_ld_i32(pc->offline + 4 * (uint32_t)k);
            out->fixed = 1;
        }
        return 1;
    }
    const mn_scratch_t *rec = it->scratch_ptr[(uint32_t)k - it->n_tensors];
    out->size = MN_BLOCK(rec->bytes);
    out->first = out->last = (int32_t)rec->op;
    out->id = -1 - (int32_t)((uint32_t)k - it->n_tensors);
    return 1;
}

/* Zero-element tensors are never planned; a valid pointer (zero bytes of the arena) keeps kernels'
 * memcpy(dst, src, 0) and the binding's buffers well defined instead of passing NULL. */
static void point_empty_tensors(mn_interp_t *it) {
    for (uint32_t k = 0; k < it->n_tensors; k++) {
        mn_tensor_t *t = mn_rec(it, k);
        if (t && mn_tensor_bytes(t) == 0 && t->data == NULL) {
            t->data = it->arena;
        }
    }
}

/* While planning without memory, offsets are parked in the tensor's data field / scratch record
 * (as offset + 1, 0 = not placed); plan_assign turns them into pointers afterwards. */
static void src_set_offset(void *c, int32_t k, size_t offset) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    if ((uint32_t)k < it->n_tensors) {
        mn_rec(it, (uint32_t)k)->data = (void *)(uintptr_t)(offset + 1);
    } else {
        ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset = offset + 1;
    }
}

static void src_clear_offset(void *c, int32_t k) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    if ((uint32_t)k < it->n_tensors) {
        mn_rec(it, (uint32_t)k)->data = NULL;
    } else {
        ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset = 0;
    }
}

static int src_get_offset(void *c, int32_t k, size_t *offset) {
    mn_interp_t *it = ((plan_ctx_t *)c)->it;
    size_t v;
    if ((uint32_t)k < it->n_tensors) {
        const mn_tensor_t *t = mn_rec(it, (uint32_t)k);
        if (!t || (t->flags & (MN_TF_CONST | MN_TF_VARIABLE | MN_TF_INPLACE | MN_TF_PATCH))) {
            return 0;
        }
        v = (size_t)(uintptr_t)t->data;
    } else {
        v = ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->offset;
    }
    *offset = v ? v - 1 : 0;
    return v != 0;
}

/* Offline plan ("OfflineMemoryAllocation" metadata): [version, subgraph, n_tensors, offsets...];
 * -1 means "plan online". *plan = the offsets vector (raw, little-endian), NULL without metadata. */
/* Error "offline memory plan: <message>". */
static mn_status_t plan_fail(mn_interp_t *it, mn_status_t code, const char *fmt, ...) {
    va_list ap;
    size_t n = mn_fmt(it->err.msg, MN_ERR_MSG_LEN, "offline memory plan: ");
    if (n >= MN_ERR_MSG_LEN) {
        n = MN_ERR_MSG_LEN - 1;
    }
    va_start(ap, fmt);
    mn_vfmt(it->err.msg + n, MN_ERR_MSG_LEN - n, fmt, ap);
    va_end(ap);
    it->err.status = code;
    return code;
}

static mn_status_t offline_plan(mn_interp_t *it, const uint8_t **plan) {
    const mn_model_t *m = it->model;
    size_t n;
    const uint8_t *p = mn_model_metadata(m, "OfflineMemoryAllocation", &n);
    *plan = NULL;
    if (!p) {
        return MN_OK;
    }
    if (n < 12 || mn_ld_i32(p) != 0 || mn_ld_i32(p + 4) != 0) {
        return plan_fail(it, MN_ERR_UNSUPPORTED, "only version 0 for subgraph 0 is supported (%zu bytes)", n);
    }
    uint32_t nt = mn_ld_u32(p + 8);
    if (nt != m->n_tensors || (uint64_t)12 + 4ull * nt > n) {
        return plan_fail(it, MN_ERR_MODEL, "%u offsets in %zu bytes for %u tensors",
            (unsigned)nt, n, (unsigned)m->n_tensors);
    }
    *plan = p + 12;
    return MN_OK;
}

/* A preset offset must suit the tensor's element type, and tensors alive at the same time must
 * not share bytes: a bad plan would otherwise give misaligned loads or silently wrong results. */
static mn_status_t check_offline_plan(mn_interp_t *it, plan_ctx_t *pc) {
    mn_plan_buf_t a, b;
    for (uint32_t k = 0; k < it->n_tensors; k++) {
        const int32_t off = mn_ld_i32(pc->offline + 4 * k);
        if (off < -1) {
            return plan_fail(it, MN_ERR_MODEL, "tensor %u '%s' has offset %d",
                (unsigned)k, mn_model_tensor_name(it->model, k), (int)off);
        }
        if (!src_get(pc, (int32_t)k, &a) || !a.fixed) {
            continue;
        }
        const mn_tensor_t *t = mn_rec(it, k);   /* (src_get only gives planned tensors) */
        const size_t align = mn_dtype_size(t->dtype);
        if (align > 1 && a.offset % align != 0) {
            return plan_fail(it, MN_ERR_MODEL, "tensor %u '%s' (%s) at offset %zu is not %zu-byte aligned",
                (unsigned)k, mn_model_tensor_name(it->model, k), mn_dtype_name(t->dtype), a.offset, align);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (!src_get(pc, (int32_t)j, &b) || !b.fixed) {
                continue;
            }
            const size_t ea = a.offset + mn_tensor_bytes(t), eb = b.offset + mn_tensor_bytes(mn_rec(it, j));
            /* (an output may start at most `shift` above the dying input it overlaps) */
            const int slides = (a.over == (int32_t)j + 1 && (int64_t)a.offset - (int64_t)b.offset <= a.shift)
                || (b.over == (int32_t)k + 1 && (int64_t)b.offset - (int64_t)a.offset <= b.shift);
            if (a.first <= b.last && b.first <= a.last && a.offset < eb && b.offset < ea && !slides) {
                return plan_fail(it, MN_ERR_MODEL,
                    "tensors %u [%zu,%zu) and %u [%zu,%zu) overlap, both alive at op %d ('%s', '%s')",
                    (unsigned)j, b.offset, eb, (unsigned)k, a.offset, ea, (int)(a.first > b.first ? a.first : b.first),
                    mn_model_tensor_name(it->model, j), mn_model_tensor_name(it->model, k));
            }
        }
    }
    return MN_OK;
}

static mn_status_t plan_memory(mn_interp_t *it) {
    plan_ctx_t pc = { it, NULL, 0 };
    mn_status_t s;
    /* The planner's temporaries are optional, so they do not count towards the arena needed. */
    size_t np, saved_needed = it->stats.needed, saved_peak = it->stats.temp_peak;
    it->plan_life = tensor_uses(it);   /* a temporary: mn_arena_temp_reset forgets it */
    if (it->cfg.planner == MN_PLANNER_OFFLINE && (s = offline_plan(it, &pc.offline))) {
        it->plan_life = NULL;
        return s;
    }
    if (it->cfg.planner != MN_PLANNER_NO_REUSE) {   /* no-reuse keeps every tensor readable */
        mn_inplace_mark(it, pc.offline);
    }
    if (pc.offline && check_offline_plan(it, &pc)) {
        /* A stored plan made without in-place ops may hold only with each tensor's own lifetime. */
        mn_inplace_clear(it);
        it->err.status = MN_OK;
        if ((s = check_offline_plan(it, &pc))) {
            it->plan_life = NULL;
            return s;
        }
    }
    mn_plan_src_t src = { src_get, src_set_offset, src_get_offset, src_clear_offset, &pc,
        (int32_t)(it->n_tensors + it->n_scratch) };
    mn_plan_buf_t tmp;
    uint32_t idx = it->n_scratch;
    for (mn_scratch_t *r = it->scratch_req; r && idx > 0; r = r->next) {
        it->scratch_ptr[--idx] = r;       /* index -> record while planning (newest first) */
    }
    int32_t n = 0;
    size_t sum = 0;
    pc.no_slides = 1;
    for (int32_t k = 0; k < src.n; k++) {
        if (src_get(&pc, k, &tmp)) {
            n++;
            size_t end = tmp.fixed ? tmp.offset : 0;
            /* Keep every offset + size far from overflow (a 32-bit target with absurd models). */
            if (tmp.size > SIZE_MAX / 4 || end > SIZE_MAX / 4 || (sum += tmp.size + end) > SIZE_MAX / 4) {
                it->shortfall = SIZE_MAX / 4;
                it->plan_life = NULL;
                return MN_ERR_ARENA;
            }
        }
    }
    pc.no_slides = 0;
    /* Fast path with temporaries if they fit; otherwise the memory-less planner (same result).
     * plan_temp: the arena they take, which the greedy planner's moves must fit in. */
    const size_t plan_temp = it->head + it->temp + MN_BLOCK(mn_mul((size_t)n, sizeof(mn_plan_buf_t)))
        + MN_BLOCK(mn_mul((size_t)n, 2 * sizeof(int32_t)));
    mn_plan_buf_t *bufs = n ? mn_arena_temp(it, mn_mul((size_t)n, sizeof *bufs)) : NULL;
    int32_t *work = bufs ? mn_arena_temp(it, mn_mul((size_t)n, 2 * sizeof(int32_t))) : NULL;
    if (n && work) {
        int32_t j = 0;
        for (int32_t k = 0; k < src.n && j < n; k++) {
            if (src_get(&pc, k, &tmp)) {
                bufs[j++] = tmp;
            }
        }
        np = mn_plan(bufs, n, it->cfg.planner, work, plan_temp);
        for (int32_t j2 = 0; j2 < n; j2++) {
            int32_t k = bufs[j2].id >= 0 ? bufs[j2].id : (int32_t)it->n_tensors + (-1 - bufs[j2].id);
            src_set_offset(&pc, k, bufs[j2].offset);
        }
    } else {
        it->shortfall = 0;  /* the failed temporaries were optional */
        np = mn_plan_nomem(&src, it->cfg.planner, plan_temp);
    }
    it->stats.needed = saved_needed;
    it->stats.temp_peak = saved_peak;
    mn_arena_temp_reset(it);
    it->stats.nonpersistent = np;
    it->stats.persistent = it->tail + it->dry_extra;
    size_t arena_np = np + (it->pers ? 0 : it->stats.persistent);   /* split: persistent is elsewhere */
    if (arena_np > it->stats.needed) {
        it->stats.needed = arena_np;
    }
    int fits = mn_arena_fits_plan(it, np);
    /* Offsets -> pointers (NULL in a dry run or when the plan does not fit). */
    for (int32_t k = 0; k < src.n; k++) {
        size_t off;
        int placed = src_get_offset(&pc, k, &off);
        void *p = (placed && fits && !it->dry_run) ? it->arena + off : NULL;
        if ((uint32_t)k < it->n_tensors) {
            if (placed) {
                mn_rec(it, (uint32_t)k)->data = p;
                MN_UNPOISON(p, p ? mn_tensor_bytes(mn_rec(it, (uint32_t)k)) : 0);
            }
        } else {
            MN_UNPOISON(p, p ? ((mn_scratch_t *)it->scratch_ptr[(uint32_t)k - it->n_tensors])->bytes : 0);
            it->scratch_ptr[(uint32_t)k - it->n_tensors] = p;
        }
    }
    mn_inplace_resolve(it);
    if (fits && !it->dry_run) {
        point_empty_tensors(it);
    }
    if (!fits && !it->dry_run) {
        return MN_ERR_ARENA;
    }
    if (!it->dry_run) {
        it->head = np;
    }
    return MN_OK;
}

/* Kernel backends of ops outside delegated subgraphs. */
static const struct mn_backend *const no_variants[] = { NULL };
static const struct mn_backend *const *default_variants(const mn_interp_t *it) {
    return (it->cfg.flags & MN_CFG_REFERENCE_KERNELS) ? no_variants : NULL;
}

mn_status_t mn_delegate_prepare_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k) {
    if (ctx->phase != PH_NONE || k >= sg->n_nodes) {
        return mn_fail(ctx, MN_ERR_STATE, "mn_delegate_prepare_node outside a delegate's prepare");
    }
    ctx->variants = sg->delegate->variants ? sg->delegate->variants : default_variants(ctx);
    mn_status_t s = prepare_node(ctx, sg->first + k);
    ctx->variants = default_variants(ctx);
    return s;
}

/*
 * First steps of prepare and of check_ops: tensors, the node array and one block (*pool) for the
 * operand lists (saves per-allocation rounding). Prepare (copies_only) sizes the block for the
 * lists that cannot be used in place and allocates none when there are none; check_ops always
 * allocates one, for every operand.
 */
static mn_status_t setup_graph(mn_interp_t *it, int copies_only, int32_t **pool) {
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

static mn_status_t do_prepare(mn_interp_t *it) {
    const mn_model_t *m = it->model;
    int32_t *pool;
    mn_status_t s;
    if ((s = setup_graph(it, 1, &pool))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        if ((s = setup_node(it, i, &pool))) {
            return s;
        }
    }
    if ((s = setup_const_slots(it))) {
        return s;
    }
#if MICRONN_PROFILE
    if (it->cfg.ticks && m->n_ops) {
        it->prof_ticks = mn_arena_persistent(it, mn_mul(m->n_ops, sizeof(uint64_t)));
        it->prof_calls = mn_arena_persistent(it, mn_mul(m->n_ops, sizeof(uint32_t)));
        if (!it->prof_ticks || !it->prof_calls) {
            return MN_ERR_ARENA;
        }
    }
#endif
    if ((s = mn_partition(it)) || (s = mn_patch_setup(it))) {
        return s;
    }
    it->variants = default_variants(it);
    for (uint32_t i = 0; i < m->n_ops; i++) {
        const mn_subgraph_t *sg = mn_subgraph_at(it, i);
        if (!sg) {
            s = prepare_node(it, i);
        } else if (sg->delegate->prepare) {
            s = sg->delegate->prepare(it, (mn_subgraph_t *)sg);
        } else {
            for (uint32_t k = 0; k < sg->n_nodes && s == MN_OK; k++) {
                s = mn_delegate_prepare_node(it, sg, k);
            }
        }
        if (s) {
            return s;
        }
        if (sg) {
            i += sg->n_nodes - 1;
        }
    }
    if (it->n_scratch) {
        it->scratch_ptr = mn_arena_persistent(it, mn_mul(it->n_scratch, sizeof(void *)));
        if (!it->scratch_ptr) {
            return MN_ERR_ARENA;
        }
    }
    return plan_memory(it);
}

/* "[persistent ]arena too small: need [at least ]N bytes, have M" (one string for both) */
#define ARENA_TOO_SMALL "%sarena too small: need %s%zu bytes, have %zu"

mn_status_t mn_interp_prepare(mn_interp_t *it) {
    if (!it || !it->model) {
        return MN_ERR_ARG;
    }
    if (it->state != ST_INIT) {
        return mn_err_set(&it->err, MN_ERR_STATE, "prepare called twice (or after a failure)");
    }
    it->state = ST_PREPARING;
    it->err.status = MN_OK;
    it->err.msg[0] = 0;
    mn_status_t s = do_prepare(it);
    it->phase = PH_NONE;
    mn_arena_temp_reset(it);
    it->stats.persistent = it->tail + it->dry_extra;
    it->stats.n_scratch = it->n_scratch;
    if (it->shortfall > it->stats.needed) {
        it->stats.needed = it->shortfall;
    }
    /* Headroom for an arbitrarily aligned arena start. */
    it->stats.needed = MN_NEED(it->stats.needed);
    if (s == MN_ERR_ARENA && it->pers_shortfall) {
        /* Split arenas: the persistent buffer is what was short (a lower bound: the prepare
         * stopped there); mn_arena_needed_stats gives both exact figures. */
        it->state = ST_FAILED;
        return mn_err_set(&it->err, MN_ERR_ARENA, ARENA_TOO_SMALL, "persistent ", "at least ",
            MN_NEED(it->pers_shortfall), it->pers_size);
    }
    if (s == MN_ERR_ARENA && it->shortfall && !it->dry_run && it->arena && !it->pers) {
        /* Even the persistent part did not fit, so the total is unknown. A dry run needs much
         * less memory (one op's kernel data at a time): run it in this (now unused) arena. */
        size_t exact;
        free_kernels(it);
        /* The dry run reuses the arena: forget everything that lived in it. */
        it->nodes = NULL;
        it->n_nodes = 0;
        it->tensors = NULL;
        it->rec_of = NULL;
        it->const_slots = NULL;
        it->n_tensors = 0;
        it->scratch_req = NULL;
        it->scratch_ptr = NULL;
        it->prof_ticks = NULL;
        it->prof_calls = NULL;
        it->subgraphs = NULL;
        it->n_subgraphs = 0;
        it->patch = NULL;
        mn_error_t e;
        mn_status_t ds = mn_arena_needed(it->model, &it->cfg, it->arena, it->arena_size, &exact, &e);
        if (ds == MN_OK) {
            it->stats.needed = exact;
            it->shortfall = 0;
        } else if (ds != MN_ERR_ARENA) {
            /* e.g. an unsupported op further on: more useful than a size */
            it->state = ST_FAILED;
            it->err = e;
            return ds;
        }
    }
    if (s == MN_ERR_ARENA) {
        it->state = ST_FAILED;
        int exact = it->shortfall == 0;  /* only the final plan did not fit: the figure is exact */
        return mn_err_set(&it->err, MN_ERR_ARENA, ARENA_TOO_SMALL, "", exact ? "" : "at least ",
            it->stats.needed, it->stats.arena_size);
    }
    if (s != MN_OK) {
        it->state = ST_FAILED;
        if (it->err.status == MN_OK) {
            mn_err_set(&it->err, s, "prepare failed (%s)", mn_status_str(s));
        }
        return s;
    }
    it->state = ST_READY;
    return MN_OK;
}

/* ---- dry run --------------------------------------------------------------------------------- */

size_t mn_dry_run_work_hint(const mn_model_t *m) {
    size_t per_tensor = sizeof(mn_tensor_t) + sizeof(mn_plan_buf_t) + 4 * sizeof(int32_t);
    return MN_ALIGN_UP(m->n_tensors * per_tensor + m->n_ops * (sizeof(mn_node_t) + 96)) + 16384;
}

mn_status_t mn_arena_needed(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    size_t *needed, mn_error_t *err) {
    mn_arena_stats_t st;
    mn_status_t s = mn_arena_needed_stats(m, cfg, work, work_size, &st, err);
    if (needed) {
        *needed = st.needed;
    }
    return s;
}

mn_status_t mn_arena_needed_stats(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_arena_stats_t *out, mn_error_t *err) {
    mn_interp_t it;
    mn_status_t s = mn_interp_init(&it, m, work, work_size, cfg);
    if (s == MN_OK) {
        it.dry_run = DRY_RUN_SIZING;
        s = mn_interp_prepare(&it);
    }
    size_t n = it.stats.needed;
    if (s == MN_ERR_ARENA) {
        /* What the work buffer lacked (a lower bound: later ops may need more). */
        n = MN_NEED(it.shortfall);
        mn_err_set(&it.err, MN_ERR_ARENA, MN_WORK_TOO_SMALL, "dry run", n, work_size);
    }
    if (out) {
        *out = it.stats;
        out->needed = n;
    }
    if (err) {
        *err = it.err;
    }
    mn_interp_deinit(&it);
    return s;
}

/* ---- invoke ------------------------------------------------------------------------------------ */

/* Evaluate the op at execution position i (profiled); ctx->phase is PH_EVAL. */
static mn_status_t eval_node(mn_interp_t *it, uint32_t i) {
    mn_node_t *node = &it->nodes[i];
    mn_status_t s;
    it->cur_op = i;
    if (it->cfg.should_stop && it->cfg.should_stop(it->cfg.stop_user)) {
        return mn_fail(it, MN_ERR_ABORTED, "invoke stopped before this op (should_stop)");
    }
#if MICRONN_PROFILE
    if (it->prof_ticks) {
        uint64_t t0 = it->cfg.ticks(it->cfg.ticks_user);
        s = node->kernel->eval(it, node);
        uint64_t dt = it->cfg.ticks(it->cfg.ticks_user) - t0;
        it->prof_ticks[i] += it->cfg.ticks_mask ? (dt & it->cfg.ticks_mask) : dt;
        it->prof_calls[i]++;
    } else
#endif
    s = node->kernel->eval(it, node);
    if (s != MN_OK && it->err.status == MN_OK) {
        mn_fail(it, s, "eval failed (%s)", mn_status_str(s));
    }
    return s;
}

mn_status_t mn_delegate_eval_node(mn_ctx_t *ctx, const mn_subgraph_t *sg, uint32_t k) {
    if (ctx->phase != PH_EVAL || k >= sg->n_nodes) {
        return mn_fail(ctx, MN_ERR_STATE, "mn_delegate_eval_node outside a delegate's invoke");
    }
    return eval_node(ctx, sg->first + k);
}

mn_status_t mn_interp_invoke(mn_interp_t *it) {
    if (!it || it->state != ST_READY || it->dry_run) {
        if (it) {
            mn_err_set(&it->err, MN_ERR_STATE, "invoke before a successful prepare");
        }
        return MN_ERR_STATE;
    }
    /* A stopped or failed invoke leaves its status behind; this one starts clean. */
    it->err.status = MN_OK;
    it->err.msg[0] = '\0';
    it->phase = PH_EVAL;
    uint32_t next_sg = 0;   /* subgraphs are in execution order */
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        mn_status_t s;
        if (next_sg < it->n_subgraphs && i == it->subgraphs[next_sg].first) {
            mn_subgraph_t *sg = &it->subgraphs[next_sg++];
            it->cur_op = i;
            s = sg->delegate->invoke(it, sg);
            if (s != MN_OK && it->err.status == MN_OK) {
                mn_fail(it, s, "delegate %s failed (%s)", sg->delegate->name, mn_status_str(s));
            }
            i += sg->n_nodes - 1;
        } else {
            s = eval_node(it, i);
        }
        if (s != MN_OK) {
            it->phase = PH_NONE;
            return s;
        }
    }
    it->phase = PH_NONE;
    it->invokes++;
    return MN_OK;
}

/* ---- misc ------------------------------------------------------------------------------------- */

mn_status_t mn_interp_reset(mn_interp_t *it) {
    if (!it || it->state != ST_READY) {
        return MN_ERR_STATE;
    }
    for (uint32_t i = 0; i < it->n_tensors; i++) {
        mn_tensor_t *t = mn_rec(it, i);
        if (t && (t->flags & MN_TF_VARIABLE) && t->data) {
            reset_variable(t);
        }
    }
#if MN_HAS_RESOURCES
    if (!it->parent) {
        mn_resources_reset(it);
    }
#endif
    it->resets++;   /* CALL_ONCE ops run again */
    return MN_OK;
}

static void free_kernels(mn_interp_t *it) {
    if (!it->nodes) {
        return;
    }
    for (uint32_t k = 0; k < it->n_subgraphs; k++) {
        mn_subgraph_t *sg = &it->subgraphs[k];
        if (sg->delegate->free) {
            sg->delegate->free(it, sg);
        }
    }
    it->n_subgraphs = 0;
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        mn_node_t *node = &it->nodes[i];
        if (node->kernel && node->kernel->free) {
            it->cur_op = i;
            node->kernel->free(it, node);
        }
        node->kernel = NULL;
    }
}

void mn_interp_deinit(mn_interp_t *it) {
    if (it && it->arena) {
        MN_UNPOISON(it->arena, it->arena_size);  /* hand the memory back clean */
    }
    if (it && it->pers) {
        MN_UNPOISON(it->pers, it->pers_size);
    }
    if (!it || !it->nodes) {
        return;
    }
    free_kernels(it);
    it->nodes = NULL;
    it->n_nodes = 0;
    it->tensors = NULL;
    it->n_tensors = 0;
    it->state = ST_FAILED;
}

size_t mn_interp_num_inputs(const mn_interp_t *it) {
    return it->model ? it->model->n_inputs : 0;
}

size_t mn_interp_num_outputs(const mn_interp_t *it) {
    return it->model ? it->model->n_outputs : 0;
}

size_t mn_interp_num_tensors(const mn_interp_t *it) {
    return it->state == ST_READY ? it->n_tensors : 0;
}

size_t mn_interp_num_ops(const mn_interp_t *it) {
    return it->state == ST_READY ? it->n_nodes : 0;
}

mn_tensor_t *mn_interp_tensor(mn_interp_t *it, size_t index) {
    if (!it || it->state != ST_READY || it->dry_run || index >= it->n_tensors
        || (mn_tflags(it, (uint32_t)index) & MN_TF_PATCH)) {
        return NULL;   /* (a patch stage's activations only exist in bands) */
    }
    mn_tensor_t *t = mn_rec(it, (uint32_t)index);
    if (!t) {
        mn_model_tensor(it->model, index, &it->const_view);
        t = &it->const_view;
    }
    return t;
}

mn_tensor_t *mn_interp_input(mn_interp_t *it, size_t i) {
    int32_t t = it && it->model ? mn_model_input_index(it->model, i) : -1;
    return t < 0 ? NULL : mn_interp_tensor(it, (size_t)t);
}

mn_tensor_t *mn_interp_output(mn_interp_t *it, size_t i) {
    int32_t t = it && it->model ? mn_model_output_index(it->model, i) : -1;
    return t < 0 ? NULL : mn_interp_tensor(it, (size_t)t);
}

/* Reads back what plan_memory decided, through the same lifetime code, so host tools (offline
 * planners) see exactly the buffers the device plans. */
mn_status_t mn_interp_plan_buffer(const mn_interp_t *it, size_t k, mn_plan_info_t *out) {
    if (!it || !out || it->state != ST_READY || k >= (size_t)it->n_tensors + it->n_scratch) {
        return MN_ERR_ARG;
    }
    memset(out, 0, sizeof *out);
    out->over = -1;
    if (k < it->n_tensors) {
        plan_ctx_t pc = { (mn_interp_t *)it, NULL, 0 };
        mn_plan_buf_t b;
        out->index = (int32_t)k;
        if (src_get(&pc, (int32_t)k, &b)) {
            out->planned = 1;
            out->size = b.size;
            out->first = b.first;
            out->last = b.last;
            const void *data = mn_rec(it, (uint32_t)k)->data;
            out->offset = data ? (size_t)((const uint8_t *)data - it->arena) : 0;
            out->over = b.over - 1;
            out->shift = b.shift;
        }
        return MN_OK;
    }
    /* Scratch records are listed newest first: index n_scratch - 1 is the head. */
    uint32_t idx = (uint32_t)(k - it->n_tensors), j = it->n_scratch - 1;
    const mn_scratch_t *r = it->scratch_req;
    while (r && j > idx) {
        r = r->next;
        j--;
    }
    if (!r) {
        return MN_ERR_ARG;
    }
    out->index = -1 - (int32_t)idx;
    out->planned = 1;
    out->size = MN_BLOCK(r->bytes);
    out->first = out->last = (int32_t)r->op;
    out->offset = it->scratch_ptr && it->scratch_ptr[idx] ? (size_t)((uint8_t *)it->scratch_ptr[idx] - it->arena) : 0;
    return MN_OK;
}

mn_status_t mn_interp_stats(const mn_interp_t *it, mn_arena_stats_t *out) {
    if (!it || !out) {
        return MN_ERR_ARG;
    }
    *out = it->stats;
    return MN_OK;
}

mn_status_t mn_interp_profile(const mn_interp_t *it, size_t op, mn_op_profile_t *out) {
    if (!it || !out || it->state != ST_READY || op >= it->n_nodes) {
        return MN_ERR_ARG;
    }
    const mn_node_t *node = &it->nodes[op];
    out->name = mn_node_name(it, node, out->name_buf);
    out->builtin = node->builtin;
    out->calls = it->prof_calls ? it->prof_calls[op] : 0;
    out->ticks = it->prof_ticks ? it->prof_ticks[op] : 0;
    out->persistent = (size_t)node->persistent8 * MN_PERSIST_ALIGN;
    const char *v = node->kernel && node->kernel->variant ? node->kernel->variant(node) : NULL;
    out->variant = v ? v : "reference";
    const mn_subgraph_t *sg = mn_subgraph_at(it, (uint32_t)op);
    out->backend = sg ? sg->delegate->name : NULL;
    out->subgraph = sg ? (int32_t)(sg - it->subgraphs) : -1;
    out->model_index = mn_node_index(it, node);
    return MN_OK;
}

void mn_interp_profile_clear(mn_interp_t *it) {
    if (it && it->prof_ticks) {
        memset(it->prof_ticks, 0, it->n_nodes * sizeof(uint64_t));
        memset(it->prof_calls, 0, it->n_nodes * sizeof(uint32_t));
    }
}

/* ---- support diagnostics (mn_check_ops) ----------------------------------------------------- */

static void record_op(mn_op_check_t *r, const mn_error_t *e, mn_status_t s) {
    r->status = s;
    memcpy(r->msg, e->msg, sizeof r->msg);
    r->msg[sizeof r->msg - 1] = 0;
    if (!r->msg[0]) {
        mn_fmt(r->msg, sizeof r->msg, "%s", mn_status_str(s));
    }
}

static mn_status_t check_ops(mn_interp_t *it, mn_op_check_t *results, size_t *n_failed) {
    const mn_model_t *m = it->model;
    int32_t *pool;
    mn_status_t s;
    if ((s = setup_graph(it, 0, &pool))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        it->err.status = MN_OK;
        it->err.msg[0] = 0;
        if ((s = setup_node(it, i, &pool))) {
            if (s == MN_ERR_ARENA) {
                return s;
            }
            record_op(&results[i], &it->err, s);
            it->nodes[i].kernel = NULL;
            (*n_failed)++;
        }
    }
    if ((s = setup_const_slots(it))) {
        return s;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        if (!it->nodes[i].kernel) {
            continue;
        }
        size_t tail0 = it->tail;
        mn_scratch_t *list0 = it->scratch_req;
        it->err.msg[0] = 0;
        s = prepare_node(it, i);
        if (s == MN_ERR_ARENA) {
            return s;
        }
        if (s != MN_OK) {
            record_op(&results[i], &it->err, s);
            (*n_failed)++;
            /* forget what the failed op allocated; it is never evaluated or freed */
            it->tail = tail0;
            it->scratch_req = list0;
            it->nodes[i].user_data = NULL;
            it->nodes[i].kernel = NULL;
            mn_arena_temp_reset(it);
        }
    }
    return MN_OK;
}

mn_status_t mn_check_ops(const mn_model_t *m, const mn_config_t *cfg, void *work, size_t work_size,
    mn_op_check_t *results, size_t n_results, size_t *n_failed, size_t *needed, mn_error_t *err) {
    mn_interp_t it;
    size_t failed = 0;
    if (!m || !results || n_results < m->n_ops) {
        if (err) {
            mn_err_set(err, MN_ERR_ARG, "mn_check_ops: results has %zu entries, the model has %zu ops",
                n_results, m ? (size_t)m->n_ops : (size_t)0);
        }
        return MN_ERR_ARG;
    }
    memset(results, 0, m->n_ops * sizeof *results);
    mn_status_t s = mn_interp_init(&it, m, work, work_size, cfg);
    if (s == MN_OK) {
        it.dry_run = DRY_RUN_CHECK;
        it.state = ST_PREPARING;
        s = check_ops(&it, results, &failed);
        it.phase = PH_NONE;
        mn_arena_temp_reset(&it);
    }
    if (s == MN_ERR_ARENA) {
        size_t n = MN_NEED(it.shortfall);
        if (n <= work_size) {
            n = 2 * work_size;
        }
        mn_err_set(&it.err, MN_ERR_ARENA, MN_WORK_TOO_SMALL, "check", n, work_size);
        if (needed) {
            *needed = n;
        }
    } else if (s != MN_OK && it.err.status == MN_OK) {
        mn_err_set(&it.err, s, "check failed (%s)", mn_status_str(s));
    }
    if (err) {
        *err = it.err;
    }
    if (n_failed) {
        *n_failed = failed;
    }
    mn_interp_deinit(&it);
    if (s == MN_OK && failed) {
        return MN_ERR_UNSUPPORTED;
    }
    return s;
}
