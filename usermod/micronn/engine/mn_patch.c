/*
 * Patch-based execution (MCUNetV2's idea, its first version: halo rows are recomputed, not kept).
 *
 * A stage is a chain of ops first..last (CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D, and
 * AVERAGE_POOL_2D where it pads nothing: TFLite leaves padded taps out of the average), batch 1,
 * constant weights, each op's output read by the next op only. Its input X (the first op's input)
 * and output Y (the last op's output) are planned tensors as usual; the activations in between
 * never exist in full. The stage runs when its last op runs: for each band of `rows` output rows
 * of the last op, the rows every op must compute are found by walking back through the receptive
 * fields, then the ops run forward on band buffers with their own kernels, prepared for band
 * tensors with VALID padding. An op that pads reads a copy of its band whose rows and columns
 * outside the image hold the padding value: the input zero point for convolutions ((zp - zp) * w
 * adds nothing, exactly as the taps the kernels skip), the lowest value for MAX_POOL_2D. Reference
 * and optimized compute variants run unchanged, so the outputs are bit for bit the unbanded ones.
 *
 * Each op is prepared for one output row (a [1, filter height, padded width, C] input view) and
 * run once per row it must compute, writing straight into the next op's band buffer (between its
 * padding columns) or, for the last op, into Y: no copies but the first op's padded input, and at
 * any time only two band buffers are alive. Interior tensors (MN_TF_PATCH) get no planned memory;
 * while an op runs, its input and output descriptors are pointed at row views. The band buffers
 * are one scratch block of the last op, laid out by the greedy planner.
 */
#include <math.h>

#include "mn_graph.h"
#include "mn_registry.h"
#include "mn_quant.h"

#if MICRONN_PATCHES && MN_PATCH_OPS
#define PATCHES_BUILT 1
#else
#define PATCHES_BUILT 0
#endif

#define OPTS_BYTES 52   /* a VALID copy of an options table of at most 7 fields */

typedef struct {
    const mn_kernel_t *kernel;  /* the op's own kernel */
    const uint8_t *options;     /* its options table in the model */
    int32_t in_dims[4];         /* one output row's input view: [1, filter height, padded width, C] */
    int32_t out_dims[4];        /* one output row: [1, 1, width, channels] */
    int32_t h_in, w_in, h_out;  /* image sizes */
    int32_t stride, k_h;        /* vertical stride, filter height with dilation */
    int32_t pad_top, pad_left;
    int32_t buf_rows;           /* rows of its band buffer (0: op 0 reads X in place) */
    uint32_t buf_off;           /* the band buffer in the block */
    uint32_t taps;              /* multiply-accumulates per output element */
    uint8_t padded;             /* pads (op 0: reads a padded copy of X) */
    uint8_t fill[4];            /* the padding value (one element) */
    const uint8_t *fields;      /* its options table's field sizes (valid_options) */
} patch_op_t;

struct mn_patch {
    uint16_t first, n, rows, bands;   /* rows MN_PATCH_STREAM: line buffers, one band */
    int32_t x, y;               /* stage input and output tensors */
    int32_t scratch;            /* the band block */
    uint32_t block;             /* its bytes */
    uint8_t es;                 /* element size */
    patch_op_t op[];
};
typedef struct mn_patch mn_patch_t;

void mn_patch_lifetime(const mn_interp_t *it, uint32_t t, int32_t *last) {
    const mn_patch_t *p = it->patch;
    if ((int32_t)t == p->x && *last < p->first + p->n - 1) {
        *last = p->first + p->n - 1;
    }
}

int mn_patch_runs(const mn_interp_t *it, uint32_t i) {
    const mn_patch_t *p = it->patch;
    return p && i >= p->first && i < (uint32_t)p->first + p->n;
}

#if PATCHES_BUILT

/* ---- band geometry ------------------------------------------------------------------------------ */

/* Output rows [a[k], e[k]) each op computes for band b: the last op's band, and for each earlier
 * one the image rows the next one reads. */
static void band_rows(const mn_patch_t *p, uint32_t b, int32_t *a, int32_t *e) {
    uint32_t k = p->n - 1u;
    a[k] = (int32_t)(b * p->rows);
    e[k] = a[k] + p->rows < p->op[k].h_out ? a[k] + p->rows : p->op[k].h_out;
    for (; k > 0; k--) {
        const patch_op_t *op = &p->op[k];
        const int32_t row0 = a[k] * op->stride - op->pad_top;
        const int32_t end = row0 + (e[k] - a[k] - 1) * op->stride + op->k_h;
        a[k - 1] = row0 < 0 ? 0 : row0;
        e[k - 1] = end > op->h_in ? op->h_in : end;
    }
}

/* First (padded) input row of op k for output rows from a, and how many rows it reads. */
static int32_t in_row0(const patch_op_t *op, int32_t a) {
    return a * op->stride - op->pad_top;
}
static int32_t in_rows(const patch_op_t *op, int32_t a, int32_t e) {
    return (e - a - 1) * op->stride + op->k_h;
}

static size_t row_bytes(const int32_t *dims, size_t es) {
    return es * (size_t)dims[2] * (size_t)dims[3];
}

/* Band buffer rows (the most any band reads) and their places in the block: op k's buffer is
 * written by op k-1 and read by op k, so only two are alive at a time. */
static void plan_block(mn_patch_t *p) {
    mn_plan_buf_t bufs[MN_PATCH_MAX_OPS];
    int32_t work[2 * MN_PATCH_MAX_OPS], a[MN_PATCH_MAX_OPS], e[MN_PATCH_MAX_OPS], n = 0;
    for (uint32_t b = 0; b < p->bands; b++) {
        band_rows(p, b, a, e);
        for (uint32_t k = 0; k < p->n; k++) {
            const int32_t r = in_rows(&p->op[k], a[k], e[k]);
            p->op[k].buf_rows = r > p->op[k].buf_rows ? r : p->op[k].buf_rows;
        }
    }
    if (!p->op[0].padded) {
        p->op[0].buf_rows = 0;
    }
    for (uint32_t k = 0; k < p->n; k++) {
        const patch_op_t *op = &p->op[k];
        if (op->buf_rows) {
            const size_t bytes = row_bytes(op->in_dims, p->es) * (size_t)op->buf_rows;
            bufs[n++] = (mn_plan_buf_t) { MN_BLOCK(bytes), 0, k ? (int32_t)k - 1 : 0, (int32_t)k, (int32_t)k, 0, 0, 0 };
        }
    }
    p->block = (uint32_t)mn_plan(bufs, n, MN_PLANNER_GREEDY, work, 0);
    for (int32_t j = 0; j < n; j++) {
        p->op[bufs[j].id].buf_off = (uint32_t)bufs[j].offset;
    }
}

/* Streaming: each op keeps the filter-height rows of its (padded) input it reads for its current
 * output row, all alive together; every row of every op is computed once. */
static void line_buffers(mn_patch_t *p) {
    uint32_t off = 0;
    for (uint32_t k = 0; k < p->n; k++) {
        patch_op_t *op = &p->op[k];
        op->buf_rows = k || op->padded ? op->k_h : 0;
        op->buf_off = off;
        off += (uint32_t)MN_BLOCK(row_bytes(op->in_dims, p->es) * (size_t)op->buf_rows);
    }
    p->block = off;
}

/* ---- options with VALID padding ------------------------------------------------------------------ */

/* Field sizes of the options tables stage ops read, in schema order (0 ends); field 0 is padding. */
static const uint8_t conv_fields[] = { 1, 4, 4, 1, 4, 4, 1, 0 };   /* Conv2DOptions */
static const uint8_t dw_fields[] = { 1, 4, 4, 4, 1, 4, 4, 0 };     /* DepthwiseConv2DOptions */
static const uint8_t pool_fields[] = { 1, 4, 4, 4, 4, 1, 0 };      /* Pool2DOptions */

static const uint8_t *raw_field(const uint8_t *t, int field, uint32_t size) {
    if (!t) {
        return NULL;
    }
    const uint8_t *vt = t - mn_ld_i32(t);
    uint32_t vo = 4u + 2u * (uint32_t)field, fo;
    if (vo + 2u > mn_ld_u16(vt) || !(fo = mn_ld_u16(vt + vo)) || fo + size > mn_ld_u16(vt + 2)) {
        return NULL;
    }
    return t + fo;
}

static void st_u16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* dst: a vtable (size, object size, one offset per field; 4-byte padded), then the table: its
 * offset back to the vtable and one 4-byte slot per field, the model's values, padding VALID. */
static const uint8_t *valid_options(const uint8_t *t, const uint8_t *sizes, uint8_t *dst) {
    uint32_t n = 0;
    while (sizes[n]) {
        n++;
    }
    const uint32_t vt = (4u + 2u * n + 3u) & ~3u;
    uint8_t *table = dst + vt;
    st_u16(dst, 4u + 2u * n);
    st_u16(dst + 2, 4u + 4u * n);
    st_u16(table, vt);   /* int32 soffset = vt: the vtable is vt bytes before the table */
    st_u16(table + 2, 0);
    for (uint32_t f = 0; f < n; f++) {
        const uint8_t *src = f ? raw_field(t, (int)f, sizes[f]) : NULL;
        st_u16(dst + 4 + 2 * f, (f == 0 || src) ? 4u + 4u * f : 0u);
        if (f == 0) {
            table[4] = MN_PADDING_VALID;
        } else if (src) {
            memcpy(table + 4 + 4 * f, src, sizes[f]);
        }
    }
    return table;
}

/* ---- checking a stage ----------------------------------------------------------------------------- */

static mn_status_t stage_fail(mn_interp_t *it, uint32_t i, const char *why) {
    const mn_config_t *c = &it->cfg;
    char name[MN_OP_NAME_LEN];
    return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "patch stage (ops %u..%u): op %u %s: %s",
        (unsigned)c->patch_first, (unsigned)c->patch_last, (unsigned)i, mn_node_name(it, &it->nodes[i], name), why);
}

static int is_stage_kernel(const mn_node_t *node) {
    switch (node->builtin) {
        case MN_BUILTIN_CONV_2D:
        case MN_BUILTIN_DEPTHWISE_CONV_2D:
        case MN_BUILTIN_MAX_POOL_2D:
        case MN_BUILTIN_AVERAGE_POOL_2D:
            /* the engine's own kernel: its padding semantics are known */
            return node->kernel && node->kernel == mn_registry_find(NULL, node->builtin, NULL);
        default:
            return 0;
    }
}

/* Padding value of op k's input (element of size es). */
static void pad_value(const mn_node_t *node, const mn_tensor_t *in, uint8_t *fill) {
    const int max_pool = node->builtin == MN_BUILTIN_MAX_POOL_2D;
    int32_t v = in->dtype == MN_INT8 ? (max_pool ? -128 : mn_tensor_zero_point(in, 0)) : (max_pool ? -32768 : 0);
    if (in->dtype == MN_FLOAT32) {
        const float f = max_pool ? -INFINITY : 0.0f;
        memcpy(fill, &f, 4);
    } else if (in->dtype == MN_INT16) {
        const int16_t h = (int16_t)v;
        memcpy(fill, &h, 2);
    } else {
        fill[0] = (uint8_t)(int8_t)v;
    }
}

/* Filter size, strides, dilations, padding of a stage op from its options and filter. */
static void op_params(const mn_node_t *node, const mn_tensor_t *filter, int32_t *f, int32_t *s, int32_t *d,
    int *padding, const uint8_t **fields) {
    const int dw = node->builtin == MN_BUILTIN_DEPTHWISE_CONV_2D, conv = node->builtin == MN_BUILTIN_CONV_2D;
    *padding = mn_opt_i8(node, 0, MN_PADDING_SAME);
    s[0] = mn_opt_i32(node, 2, 1);    /* stride_h: field 2 of all three tables */
    s[1] = mn_opt_i32(node, 1, 1);
    if (conv || dw) {
        f[0] = filter->dims[1];
        f[1] = filter->dims[2];
        d[0] = mn_opt_i32(node, conv ? MN_CONV2D_DILATION_H : MN_DWCONV_DILATION_H, 1);
        d[1] = mn_opt_i32(node, conv ? MN_CONV2D_DILATION_W : MN_DWCONV_DILATION_W, 1);
        *fields = conv ? conv_fields : dw_fields;
    } else {
        f[0] = mn_opt_i32(node, MN_POOL_FILTER_H, 1);
        f[1] = mn_opt_i32(node, MN_POOL_FILTER_W, 1);
        d[0] = d[1] = 1;
        *fields = pool_fields;
    }
}

/* Geometry of stage op k (node i); NULL if fine, else why not. */
static const char *check_op(mn_interp_t *it, mn_patch_t *p, uint32_t k, uint32_t i) {
    const mn_node_t *node = &it->nodes[i];
    patch_op_t *op = &p->op[k];
    if (!is_stage_kernel(node)) {
        return "only CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D and AVERAGE_POOL_2D (with the engine's kernels) "
               "run in bands";
    }
    const mn_tensor_t *in = mn_input(it, node, 0), *out = mn_output(it, node, 0);
    const mn_tensor_t *filter = node->builtin == MN_BUILTIN_CONV_2D || node->builtin == MN_BUILTIN_DEPTHWISE_CONV_2D
        ? mn_input(it, node, 1) : NULL;
    if (in && !mn_rec(it, (uint32_t)node->inputs[0])) {
        return "its input is a constant";   /* (bands are views of the input's record) */
    }
    if (!in || !out || mn_num_outputs(node) != 1 || in->ndim != 4 || out->ndim != 4 || in->dims[0] != 1
        || out->dims[0] != 1 || (filter && filter->ndim != 4)) {
        return "needs one 4-D input and output of batch 1";
    }
    if (in->dtype != out->dtype || (in->dtype != MN_INT8 && in->dtype != MN_INT16 && in->dtype != MN_FLOAT32)
        || (filter && in->dtype == MN_FLOAT32 && filter->dtype != MN_FLOAT32)) {
        return "dtypes: int8, int16 or float32 (not hybrid)";
    }
    for (uint16_t j = 1; j < mn_num_inputs(node); j++) {
        if (node->inputs[j] >= 0 && !(mn_tflags(it, (uint32_t)node->inputs[j]) & MN_TF_CONST)) {
            return "weights must be constant";
        }
    }
    int32_t f[2], s[2], d[2];
    int padding;
    const uint8_t *fields;
    op_params(node, filter, f, s, d, &padding, &fields);
    if (f[0] < 1 || f[1] < 1 || s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1
        || (padding != MN_PADDING_SAME && padding != MN_PADDING_VALID)) {
        return "filter, stride, dilation or padding not supported";
    }
    const int32_t h_out = mn_conv_out_size(padding, in->dims[1], f[0], s[0], d[0]);
    const int32_t w_out = mn_conv_out_size(padding, in->dims[2], f[1], s[1], d[1]);
    if (out->dims[1] != h_out || out->dims[2] != w_out || h_out < 1 || w_out < 1) {
        return "output shape does not match";
    }
    const int32_t k_h = (f[0] - 1) * d[0] + 1, k_w = (f[1] - 1) * d[1] + 1;
    const int32_t tot_h = padding == MN_PADDING_SAME && (h_out - 1) * s[0] + k_h > in->dims[1]
        ? (h_out - 1) * s[0] + k_h - in->dims[1] : 0;
    const int32_t tot_w = padding == MN_PADDING_SAME && (w_out - 1) * s[1] + k_w > in->dims[2]
        ? (w_out - 1) * s[1] + k_w - in->dims[2] : 0;
    if (node->builtin == MN_BUILTIN_AVERAGE_POOL_2D && (tot_h || tot_w)) {
        return "AVERAGE_POOL_2D that pads (padded taps are left out of the average)";
    }
    op->kernel = node->kernel;
    op->options = node->options;
    op->h_in = in->dims[1];
    op->w_in = in->dims[2];
    op->h_out = h_out;
    op->stride = s[0];
    op->k_h = k_h;
    op->pad_top = tot_h / 2;
    op->pad_left = tot_w / 2;
    op->padded = tot_h || tot_w;
    op->in_dims[0] = op->out_dims[0] = op->out_dims[1] = 1;
    op->in_dims[1] = k_h;
    op->in_dims[2] = in->dims[2] + tot_w;
    op->in_dims[3] = in->dims[3];
    op->out_dims[2] = w_out;
    op->out_dims[3] = out->dims[3];
    op->taps = (uint32_t)(f[0] * f[1]) * (node->builtin == MN_BUILTIN_CONV_2D ? (uint32_t)filter->dims[3] : 1u);
    pad_value(node, in, op->fill);
    op->fields = fields;
    return NULL;
}

/* Is tensor t read anywhere but as input 0 of op `reader`? */
static int read_elsewhere(const mn_interp_t *it, int32_t t, uint32_t reader) {
    for (uint32_t i = 0; i < it->n_nodes; i++) {
        const mn_node_t *node = &it->nodes[i];
        for (uint16_t j = 0; j < mn_num_inputs(node); j++) {
            if (node->inputs[j] == t && (i != reader || j != 0)) {
                return 1;
            }
        }
        const uint8_t *b = it->model->buf;
        uint32_t n, v = fb_vec(b, mn_model_op_table(it->model, mn_node_index(it, node)), F_OP_INTERMEDIATES, &n);
        for (uint32_t j = 0; j < n; j++) {
            if (mn_ld_i32(b + v + 4u * j) == t) {
                return 1;
            }
        }
    }
    return 0;
}

/* The chain: op k reads op k-1's output, which nothing else reads and the caller never sees. */
static const char *check_chain(mn_interp_t *it, mn_patch_t *p, uint32_t k, uint32_t i) {
    const mn_node_t *node = &it->nodes[i];
    if (k + 1u < p->n) {
        const int32_t t = node->outputs[0];
        if (it->nodes[i + 1].inputs[0] != t) {
            return "the next op does not read its output";
        }
        if ((mn_tflags(it, (uint32_t)t) & (MN_TF_INPUT | MN_TF_OUTPUT | MN_TF_VARIABLE | MN_TF_CONST)) || t == p->x
            || read_elsewhere(it, t, i + 1u)) {
            return "its output is read by another op (or is a model input or output)";
        }
    }
    if (node->outputs[0] == p->x) {
        return "writes the stage input";
    }
    return NULL;
}

static const mn_kernel_t patch_skip;
static const mn_kernel_t patch_driver;

mn_status_t mn_patch_setup(mn_interp_t *it) {
    const mn_config_t *c = &it->cfg;
    if (!c->patch_rows) {
        return MN_OK;
    }
    if (c->delegate) {
        return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "patch stage: not with a delegate");
    }
    const uint32_t first = c->patch_first, last = c->patch_last;
    if (last < first || last >= it->n_nodes || last - first >= MN_PATCH_MAX_OPS) {
        return mn_err_set(&it->err, MN_ERR_ARG, "patch stage (ops %u..%u): the model has %u ops, a stage at "
            "most %d", (unsigned)first, (unsigned)last, (unsigned)it->n_nodes, MN_PATCH_MAX_OPS);
    }
    const uint32_t n = last - first + 1u;
    mn_patch_t *p = mn_arena_persistent(it, sizeof *p + n * sizeof(patch_op_t));
    if (!p) {
        return MN_ERR_ARENA;
    }
    p->first = (uint16_t)first;
    p->n = (uint16_t)n;
    p->x = mn_num_inputs(&it->nodes[first]) ? it->nodes[first].inputs[0] : -1;
    p->y = mn_num_outputs(&it->nodes[last]) ? it->nodes[last].outputs[0] : -1;
    for (uint32_t k = 0; k < n; k++) {
        const char *why = check_op(it, p, k, first + k);
        if (!why) {
            why = check_chain(it, p, k, first + k);
        }
        if (why) {
            return stage_fail(it, first + k, why);
        }
    }
    p->es = (uint8_t)mn_dtype_size(mn_rec(it, (uint32_t)p->x)->dtype);
    if (c->patch_rows == MN_PATCH_STREAM) {
        p->rows = MN_PATCH_STREAM;
        p->bands = 1;
        line_buffers(p);
    } else {
        p->rows = c->patch_rows < p->op[n - 1].h_out ? c->patch_rows : (uint16_t)p->op[n - 1].h_out;
        p->bands = (uint16_t)((p->op[n - 1].h_out + p->rows - 1) / p->rows);
        plan_block(p);
    }
    for (uint32_t k = 0; k < n; k++) {
        mn_node_t *node = &it->nodes[first + k];
        node->kernel = k + 1u < n ? &patch_skip : &patch_driver;
        if (k + 1u < n) {
            mn_rec(it, (uint32_t)node->outputs[0])->flags |= MN_TF_PATCH;
        }
    }
    it->patch = p;
    return MN_OK;
}

/* ---- running ops on band views -------------------------------------------------------------------- */

typedef struct {
    const int32_t *dims;
    void *data;
    uint8_t ndim;
} view_t;

static void view_set(mn_tensor_t *t, const int32_t *dims, void *data, view_t *saved) {
    saved->dims = t->dims;
    saved->data = t->data;
    saved->ndim = t->ndim;
    t->dims = dims;
    t->ndim = 4;
    t->data = data;
}

static void view_restore(mn_tensor_t *t, const view_t *v) {
    t->dims = v->dims;
    t->data = v->data;
    t->ndim = v->ndim;
}

/* Prepare stage op k with its own kernel on band views and VALID options (as op first + k, for
 * messages; its scratch buffers belong to the last op, where the stage runs). */
static mn_status_t prepare_op(mn_ctx_t *ctx, mn_patch_t *p, uint32_t k) {
    patch_op_t *op = &p->op[k];
    mn_node_t *node = &ctx->nodes[p->first + k];
    mn_tensor_t *in = mn_rec(ctx, (uint32_t)node->inputs[0]), *out = mn_rec(ctx, (uint32_t)node->outputs[0]);
    const uint32_t pos = ctx->cur_op;
    mn_scratch_t *list0 = ctx->scratch_req;
    view_t vi, vo;
    mn_status_t s = MN_OK;
    uint8_t *opts = mn_alloc_temp(ctx, OPTS_BYTES);   /* only prepare reads options */
    if (!opts) {
        return MN_ERR_ARENA;
    }
    view_set(in, op->in_dims, NULL, &vi);
    view_set(out, op->out_dims, NULL, &vo);
    node->options = valid_options(op->options, op->fields, opts);
    ctx->cur_op = p->first + k;
    if (op->kernel->init) {
        s = op->kernel->init(ctx, node);
    }
    if (s == MN_OK && op->kernel->prepare) {
        s = op->kernel->prepare(ctx, node);
    }
    node->options = op->options;
    view_restore(out, &vo);
    view_restore(in, &vi);
    ctx->cur_op = pos;
    for (mn_scratch_t *r = ctx->scratch_req; r != list0; r = r->next) {
        r->op = pos;
    }
    mn_arena_temp_reset(ctx);
    return s;
}

static mn_status_t driver_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_patch_t *p = ctx->patch;
    mn_status_t s;
    (void)node;
    for (uint32_t k = 0; k < p->n; k++) {
        if ((s = prepare_op(ctx, p, k)) != MN_OK) {
            return s;
        }
    }
    return mn_request_scratch(ctx, p->block, &p->scratch);
}

static void fill(uint8_t *dst, size_t n, const uint8_t *value, size_t es) {
    if (es == 1) {
        memset(dst, value[0], n);
        return;
    }
    for (size_t i = 0; i < n; i += es) {
        memcpy(dst + i, value, es);
    }
}

/* Padding of a band buffer of op op: `rows` rows from image row row0 (rows outside the image
 * entirely, the columns left and right of the image in the others). If src (image rows from
 * src_row0 on), the image part is copied from it, else the previous op writes it. */
static void pad_band(const patch_op_t *op, size_t es, uint8_t *dst, int32_t row0, int32_t rows,
    const uint8_t *src, int32_t src_row0) {
    const size_t c = (size_t)op->in_dims[3] * es, row = (size_t)op->in_dims[2] * c;
    const size_t left = (size_t)op->pad_left * c, mid = (size_t)op->w_in * c;
    for (int32_t r = 0; r < rows; r++, dst += row) {
        const int32_t y = row0 + r;
        if (y < 0 || y >= op->h_in) {
            fill(dst, row, op->fill, es);
            continue;
        }
        fill(dst, left, op->fill, es);
        if (src) {
            memcpy(dst + left, src + (size_t)(y - src_row0) * mid, mid);
        }
        fill(dst + left + mid, row - left - mid, op->fill, es);
    }
}

/* Run op k for one output row: input rows from in_data, output row to out_data. */
static mn_status_t eval_row(mn_ctx_t *ctx, const mn_patch_t *p, uint32_t k, uint8_t *in_data, uint8_t *out_data) {
    const patch_op_t *op = &p->op[k];
    mn_node_t *node = &ctx->nodes[p->first + k];
    mn_tensor_t *in = mn_rec(ctx, (uint32_t)node->inputs[0]), *out = mn_rec(ctx, (uint32_t)node->outputs[0]);
    view_t vi, vo;
    view_set(in, op->in_dims, in_data, &vi);
    view_set(out, op->out_dims, out_data, &vo);
    const uint32_t pos = ctx->cur_op;
    ctx->cur_op = p->first + k;
    mn_status_t s = op->kernel->eval(ctx, node);
    ctx->cur_op = pos;
    view_restore(out, &vo);
    view_restore(in, &vi);
    return s;
}

/* Run op k for its rows [a, e) of the band: input rows from its band buffer (or X), each output
 * row into the next op's band buffer (or Y). */
static mn_status_t run_op(mn_ctx_t *ctx, mn_patch_t *p, uint32_t k, const int32_t *a, const int32_t *e,
    uint8_t *block) {
    const patch_op_t *op = &p->op[k], *next = k + 1u < p->n ? &p->op[k + 1] : NULL;
    const size_t es = p->es, in_row = row_bytes(op->in_dims, es);
    uint8_t *src = op->buf_rows ? block + op->buf_off
        : (uint8_t *)mn_rec(ctx, (uint32_t)p->x)->data + (size_t)in_row0(op, a[k]) * in_row;
    size_t dst_row = row_bytes(op->out_dims, es);
    uint8_t *dst = (uint8_t *)mn_rec(ctx, (uint32_t)p->y)->data + (size_t)a[k] * dst_row;
    if (next) {   /* rows of the next op's buffer from its first input row, between its padding */
        const int32_t next0 = in_row0(next, a[k + 1]);
        dst_row = row_bytes(next->in_dims, es);
        dst = block + next->buf_off + (size_t)next->pad_left * (size_t)next->in_dims[3] * es
            + (size_t)(a[k] - next0) * dst_row;
        pad_band(next, es, block + next->buf_off, next0, in_rows(next, a[k + 1], e[k + 1]), NULL, 0);
    }
    mn_status_t s = MN_OK;
    for (int32_t y = a[k]; y < e[k] && s == MN_OK; y++) {
        s = eval_row(ctx, p, k, src + (size_t)((y - a[k]) * op->stride) * in_row, dst + (size_t)(y - a[k]) * dst_row);
    }
    return s;
}

/* Streaming state: op k's line buffer holds `have[k]` padded input rows from row lo[k]. */
typedef struct {
    uint8_t *block;
    int32_t lo[MN_PATCH_MAX_OPS], have[MN_PATCH_MAX_OPS];
} stream_t;

static mn_status_t stream_row(mn_ctx_t *ctx, const mn_patch_t *p, stream_t *st, uint32_t k, int32_t y, uint8_t *dst);

/* Append padded input row lo + have to op k's line buffer (computing it with op k - 1). */
static mn_status_t stream_append(mn_ctx_t *ctx, const mn_patch_t *p, stream_t *st, uint32_t k, uint8_t *buf) {
    const patch_op_t *op = &p->op[k];
    const size_t es = p->es, row = row_bytes(op->in_dims, es), c = (size_t)op->in_dims[3] * es;
    const size_t left = (size_t)op->pad_left * c, mid = (size_t)op->w_in * c;
    const int32_t y = st->lo[k] + st->have[k] - op->pad_top;   /* image row */
    uint8_t *dst = buf + (size_t)st->have[k]++ * row;
    if (y < 0 || y >= op->h_in) {
        fill(dst, row, op->fill, es);
        return MN_OK;
    }
    fill(dst, left, op->fill, es);
    fill(dst + left + mid, row - left - mid, op->fill, es);
    if (k == 0) {
        memcpy(dst + left, (const uint8_t *)mn_rec(ctx, (uint32_t)p->x)->data + (size_t)y * mid, mid);
        return MN_OK;
    }
    return stream_row(ctx, p, st, k - 1, y, dst + left);
}

/* Output row y of op k into dst; rows are asked for in increasing order. */
static mn_status_t stream_row(mn_ctx_t *ctx, const mn_patch_t *p, stream_t *st, uint32_t k, int32_t y, uint8_t *dst) {
    const patch_op_t *op = &p->op[k];
    const size_t row = row_bytes(op->in_dims, p->es);
    const int32_t r0 = y * op->stride;   /* its first padded input row */
    if (!op->buf_rows) {   /* op 0 without padding reads X in place */
        return eval_row(ctx, p, k, (uint8_t *)mn_rec(ctx, (uint32_t)p->x)->data + (size_t)r0 * row, dst);
    }
    uint8_t *buf = st->block + op->buf_off;
    const int32_t drop = r0 - st->lo[k];
    if (drop >= st->have[k]) {
        st->have[k] = 0;
    } else if (drop > 0) {
        memmove(buf, buf + (size_t)drop * row, (size_t)(st->have[k] - drop) * row);
        st->have[k] -= drop;
    }
    st->lo[k] = r0;
    while (st->have[k] < op->k_h) {
        mn_status_t s = stream_append(ctx, p, st, k, buf);
        if (s != MN_OK) {
            return s;
        }
    }
    return eval_row(ctx, p, k, buf, dst);
}

static mn_status_t stream_eval(mn_ctx_t *ctx, mn_patch_t *p) {
    stream_t st;
    const patch_op_t *last = &p->op[p->n - 1];
    const size_t out_row = row_bytes(last->out_dims, p->es);
    uint8_t *y = (uint8_t *)mn_rec(ctx, (uint32_t)p->y)->data;
    memset(&st, 0, sizeof st);
    st.block = mn_get_scratch(ctx, p->scratch);
    for (int32_t r = 0; r < last->h_out; r++) {
        if (r && ctx->cfg.should_stop && ctx->cfg.should_stop(ctx->cfg.stop_user)) {
            return mn_fail(ctx, MN_ERR_ABORTED, "invoke stopped in patch row %d (should_stop)", (int)r);
        }
        mn_status_t s = stream_row(ctx, p, &st, p->n - 1u, r, y + (size_t)r * out_row);
        if (s != MN_OK) {
            return s;
        }
    }
    return MN_OK;
}

static mn_status_t driver_eval(mn_ctx_t *ctx, mn_node_t *node) {
    mn_patch_t *p = ctx->patch;
    if (p->rows == MN_PATCH_STREAM) {
        return stream_eval(ctx, p);
    }
    uint8_t *block = mn_get_scratch(ctx, p->scratch);
    const patch_op_t *op = &p->op[0];
    int32_t a[MN_PATCH_MAX_OPS], e[MN_PATCH_MAX_OPS];
    (void)node;
    for (uint32_t b = 0; b < p->bands; b++) {
        if (b && ctx->cfg.should_stop && ctx->cfg.should_stop(ctx->cfg.stop_user)) {
            return mn_fail(ctx, MN_ERR_ABORTED, "invoke stopped in patch band %u (should_stop)", (unsigned)b);
        }
        band_rows(p, b, a, e);
        if (op->buf_rows) {   /* the first op pads: a padded copy of its rows of X */
            pad_band(op, p->es, block + op->buf_off, in_row0(op, a[0]), in_rows(op, a[0], e[0]),
                (const uint8_t *)mn_rec(ctx, (uint32_t)p->x)->data, 0);
        }
        for (uint32_t k = 0; k < p->n; k++) {
            mn_status_t s = run_op(ctx, p, k, a, e, block);
            if (s != MN_OK) {
                return s;
            }
        }
    }
    return MN_OK;
}

static void driver_free(mn_ctx_t *ctx, mn_node_t *node) {
    mn_patch_t *p = ctx->patch;
    (void)node;
    for (uint32_t k = 0; p && k < p->n; k++) {
        if (p->op[k].kernel->free) {
            p->op[k].kernel->free(ctx, &ctx->nodes[p->first + k]);
        }
    }
}

/* The compute variant the op's own kernel chose (reporting). */
static const char *stage_variant(const mn_node_t *node) {
    const mn_kernel_t *k = mn_registry_find(NULL, node->builtin, NULL);
    return k && k->variant ? k->variant(node) : NULL;
}

static mn_status_t skip_eval(mn_ctx_t *ctx, mn_node_t *node) {
    (void)ctx;
    (void)node;
    return MN_OK;   /* runs in bands when the stage's last op runs */
}

static const mn_kernel_t patch_skip = { NULL, NULL, skip_eval, NULL, stage_variant };
static const mn_kernel_t patch_driver = { NULL, driver_prepare, driver_eval, driver_free, stage_variant };

/* ---- reporting and choosing ------------------------------------------------------------------------ */

mn_status_t mn_interp_patch(const mn_interp_t *it, mn_patch_choice_t *out) {
    if (!it || !out) {
        return MN_ERR_ARG;
    }
    memset(out, 0, sizeof *out);
    const mn_patch_t *p = it->patch;
    out->arena = it->stats.needed;
    if (!p) {
        return MN_OK;
    }
    out->first = p->first;
    out->last = (uint16_t)(p->first + p->n - 1u);
    out->rows = p->rows;
    out->bands = p->bands;
    out->height = (uint16_t)p->op[p->n - 1].h_out;
    int32_t a[MN_PATCH_MAX_OPS], e[MN_PATCH_MAX_OPS];
    for (uint32_t b = 0; b < p->bands; b++) {
        band_rows(p, b, a, e);
        if (p->rows == MN_PATCH_STREAM) {   /* every row once */
            for (uint32_t k = 0; k < p->n; k++) {
                a[k] = 0;
                e[k] = p->op[k].h_out;
            }
        }
        for (uint32_t k = 0; k < p->n; k++) {
            const patch_op_t *op = &p->op[k];
            const uint64_t per_row = (uint64_t)op->out_dims[2] * (uint64_t)op->out_dims[3] * op->taps;
            out->macs += b ? 0 : per_row * (uint64_t)op->h_out;
            out->macs_patched += per_row * (uint64_t)(e[k] - a[k]);
        }
    }
    return MN_OK;
}

#else   /* built without patches, or without any of the stage ops */

mn_status_t mn_patch_setup(mn_interp_t *it) {
    if (!it->cfg.patch_rows) {
        return MN_OK;
    }
#if !MICRONN_PATCHES
    return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, MN_PATCH_NOT_BUILT);
#else
    return mn_err_set(&it->err, MN_ERR_UNSUPPORTED, "patch stage: this firmware was built without CONV_2D, "
        "DEPTHWISE_CONV_2D, MAX_POOL_2D and AVERAGE_POOL_2D");
#endif
}

mn_status_t mn_interp_patch(const mn_interp_t *it, mn_patch_choice_t *out) {
    if (!it || !out) {
        return MN_ERR_ARG;
    }
    memset(out, 0, sizeof *out);
    out->arena = it->stats.needed;
    return MN_OK;
}

#endif
