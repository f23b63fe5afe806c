/*
 * The kernel context (mn_kernel.h) as kernels see it: names and errors of the current node, its
 * custom options and intermediates, and the memory API (persistent, temporary, scratch), each
 * allowed only in the phase mn_kernel.h names.
 */
#include "mn_context.h"

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

#if !MICRONN_TYPES_EVERY
mn_status_t mn_check_family(mn_ctx_t *ctx, int32_t act_dtype, int32_t w_dtype) {
    const char *family;
    if (act_dtype == MN_FLOAT32 && w_dtype == MN_INT8) {
        if (MICRONN_TYPE_HYBRID) {
            return MN_OK;
        }
        family = "hybrid (float32 with int8 weights)";
    } else if (act_dtype == MN_FLOAT32) {
        if (MICRONN_TYPE_FLOAT32) {
            return MN_OK;
        }
        family = "float32";
    } else if (act_dtype == MN_INT16) {
        if (MICRONN_TYPE_INT16) {
            return MN_OK;
        }
        family = "int16";
    } else if (act_dtype == MN_INT8 || act_dtype == MN_UINT8) {
        if (MICRONN_TYPE_INT8) {
            return MN_OK;
        }
        family = "int8";
    } else {
        return MN_OK;
    }
    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s kernels not linked in this firmware (built for%s%s%s%s%s)",
        family, MICRONN_TYPE_INT8 ? " int8" : "", MICRONN_TYPE_INT16 ? " int16" : "",
        MICRONN_TYPE_FLOAT32 ? " float32" : "", MICRONN_TYPE_HYBRID ? " hybrid" : "",
        MICRONN_TYPE_INT8 || MICRONN_TYPE_INT16 || MICRONN_TYPE_FLOAT32 || MICRONN_TYPE_HYBRID ? "" : " none");
}
#endif
