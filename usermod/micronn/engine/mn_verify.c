/*
 * Flatbuffer verifier for TFLite models (schema v3).
 *
 * Runs once in mn_model_init, before anything else reads the buffer. It checks every table,
 * vtable, offset, vector and string the engine will later read, every tensor/buffer/opcode index,
 * and that constant data matches its tensor's shape. After it succeeds, mn_model.c and the
 * interpreter use unchecked accessors (mn_fb.h). All arithmetic on untrusted values is done
 * in 64 bits so that hostile offsets and lengths cannot wrap around.
 * Fields the engine never reads (min/max, signature defs, ...) are not verified.
 */
#include "mn_modelview.h"
#include "mn_util.h"

/* Largest tensor the engine accepts (bytes); also keeps size arithmetic far from overflow. */
#define MN_MAX_TENSOR_BYTES 0x7fffffffu

typedef struct {
    const uint8_t *b;
    uint64_t len;
    mn_model_t *m;
    const char *where;   /* object being checked, for messages */
    uint32_t sg, idx;    /* subgraph / element index for messages */
    int in_sg;           /* where is an object of subgraph sg (a tensor or an operator) */
} vctx_t;

/* "invalid model: <object>: <what><tail>". Objects: "<where> <idx>", "subgraph <sg>" (idx = sg)
 * and inside one "<where> <idx> (subgraph <sg>)". */
static mn_status_t vfail_tail(vctx_t *v, const char *what, const char *tail) {
    if (v->in_sg) {
        return mn_err_set(&v->m->err, MN_ERR_MODEL, "invalid model: %s %u (subgraph %u): %s%s",
            v->where, (unsigned)v->idx, (unsigned)v->sg, what, tail);
    }
    return mn_err_set(&v->m->err, MN_ERR_MODEL, "invalid model: %s %u: %s%s", v->where, (unsigned)v->idx, what, tail);
}

static mn_status_t vfail(vctx_t *v, const char *what) {
    return vfail_tail(v, what, "");
}

/* "<what> out of bounds", the verifier's commonest message. */
static mn_status_t vfail_oob(vctx_t *v, const char *what) {
    return vfail_tail(v, what, " out of bounds");
}

/* The same for the model table's own fields. */
static mn_status_t model_oob(mn_model_t *m, const char *what) {
    return mn_err_set(&m->err, MN_ERR_MODEL, "invalid model: %s out of bounds", what);
}

/* Table at t: soffset to vtable, vtable and object inside the buffer. Returns object size or 0. */
static uint32_t v_table(const vctx_t *v, uint64_t t) {
    if (t + 4 > v->len) {
        return 0;
    }
    int64_t vt = (int64_t)t - (int64_t)mn_ld_i32(v->b + t);
    if (vt < 0 || (uint64_t)vt + 4 > v->len) {
        return 0;
    }
    uint32_t vtsize = mn_ld_u16(v->b + vt);
    uint32_t objsize = mn_ld_u16(v->b + vt + 2);
    if (vtsize < 4 || (vtsize & 1) || (uint64_t)vt + vtsize > v->len || objsize < 4 || t + objsize > v->len) {
        return 0;
    }
    return objsize;
}

/* Field of `size` bytes: 1 = ok (present or absent; *pos = 0 if absent), 0 = out of bounds. */
static int v_field(const vctx_t *v, uint32_t t, int field, uint32_t size, uint32_t *pos) {
    uint32_t objsize = v_table(v, t);
    *pos = 0;
    if (!objsize) {
        return 0;
    }
    uint32_t vt = (uint32_t)((int64_t)t - (int64_t)mn_ld_i32(v->b + t));
    uint32_t vtsize = mn_ld_u16(v->b + vt);
    uint32_t vo = 4u + 2u * (uint32_t)field;
    if (vo + 2 > vtsize) {
        return 1;
    }
    uint32_t fo = mn_ld_u16(v->b + vt + vo);
    if (!fo) {
        return 1;
    }
    if ((uint64_t)fo + size > objsize) {
        return 0;
    }
    *pos = t + fo;
    return 1;
}

/* Offset field: *target = absolute position (0 if absent), checked to leave 4 readable bytes. */
static int v_ref(const vctx_t *v, uint32_t t, int field, uint32_t *target) {
    uint32_t p;
    *target = 0;
    if (!v_field(v, t, field, 4, &p)) {
        return 0;
    }
    if (!p) {
        return 1;
    }
    uint64_t tg = (uint64_t)p + mn_ld_u32(v->b + p);
    if (tg + 4 > v->len) {
        return 0;
    }
    *target = (uint32_t)tg;
    return 1;
}

/* Vector field of elements of `esize` bytes: *first = first element (0 if absent), *n = count. */
static int v_vec(const vctx_t *v, uint32_t t, int field, uint32_t esize, uint32_t *first, uint32_t *n) {
    uint32_t tg;
    *first = 0;
    *n = 0;
    if (!v_ref(v, t, field, &tg)) {
        return 0;
    }
    if (!tg) {
        return 1;
    }
    uint32_t cnt = mn_ld_u32(v->b + tg);
    if ((uint64_t)tg + 4 + (uint64_t)cnt * esize > v->len) {
        return 0;
    }
    *first = tg + 4;
    *n = cnt;
    return 1;
}

/* String field: vector of bytes followed by a NUL inside the buffer. */
static int v_str(const vctx_t *v, uint32_t t, int field) {
    uint32_t first, n;
    if (!v_vec(v, t, field, 1, &first, &n)) {
        return 0;
    }
    if (!first) {
        return 1;
    }
    return (uint64_t)first + n < v->len && v->b[first + n] == 0;
}

/* Vector of tables: every element's offset leads to a valid table. */
static int v_tables(const vctx_t *v, uint32_t first, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        uint64_t p = (uint64_t)first + 4u * i;
        uint64_t tg = p + mn_ld_u32(v->b + p);
        if (tg > 0xffffffffu || !v_table(v, tg)) {
            return 0;
        }
    }
    return 1;
}

static mn_status_t v_opcodes(vctx_t *v, uint32_t first, uint32_t n) {
    v->where = "operator code";
    for (uint32_t i = 0; i < n; i++) {
        uint32_t oc = fb_vec_table(v->b, first, i), p;
        v->idx = i;
        if (!v_field(v, oc, F_OC_DEPRECATED_CODE, 1, &p) || !v_field(v, oc, F_OC_VERSION, 4, &p)
            || !v_field(v, oc, F_OC_BUILTIN_CODE, 4, &p)) {
            return vfail_oob(v, "field");
        }
        if (!v_str(v, oc, F_OC_CUSTOM_CODE)) {
            return vfail_oob(v, "custom code string");
        }
        if (mn_opcode_builtin(v->b, oc) < 0) {
            return vfail(v, "negative builtin code");
        }
    }
    return MN_OK;
}

static mn_status_t v_buffers(vctx_t *v, uint32_t first, uint32_t n) {
    v->where = "buffer";
    for (uint32_t i = 0; i < n; i++) {
        uint32_t bt = fb_vec_table(v->b, first, i), d, dn, po, ps;
        v->idx = i;
        if (!v_vec(v, bt, F_BUF_DATA, 1, &d, &dn)) {
            return vfail_oob(v, "data vector");
        }
        if (!v_field(v, bt, F_BUF_OFFSET, 8, &po) || !v_field(v, bt, F_BUF_SIZE, 8, &ps)) {
            return vfail_oob(v, "offset/size field");
        }
        uint64_t off = po ? mn_ld_u64(v->b + po) : 0, size = ps ? mn_ld_u64(v->b + ps) : 0;
        /* offset > 1 means the data lives after the flatbuffer, relative to the model start. */
        if (off > 1 && (off > v->len || size > v->len - off)) {
            return vfail(v, "external data (offset/size) outside the model buffer");
        }
    }
    return MN_OK;
}

/* Element count * element size with overflow guard; returns 0 on success. */
static int tensor_bytes(const uint8_t *b, uint32_t shape, uint32_t ndim, int32_t dtype, uint64_t *bytes) {
    uint64_t count = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        int32_t dim = mn_ld_i32(b + shape + 4 * d);
        if (dim < 0) {
            return -1;
        }
        count *= (uint64_t)dim;
        if (count > MN_MAX_TENSOR_BYTES) {
            return -2;
        }
    }
    uint64_t es = mn_dtype_size(dtype);
    *bytes = dtype == MN_INT4 ? (count + 1) / 2 : count * es;
    return *bytes > MN_MAX_TENSOR_BYTES ? -2 : 0;
}

static mn_status_t v_tensor(vctx_t *v, uint32_t t) {
    uint32_t shape, ndim, p, q;
    if (!v_vec(v, t, F_T_SHAPE, 4, &shape, &ndim)) {
        return vfail_oob(v, "shape vector");
    }
    if (ndim > MN_MAX_DIMS) {
        return mn_err_set(&v->m->err, MN_ERR_UNSUPPORTED, "tensor %u (subgraph %u): rank %u > %u not supported",
            (unsigned)v->idx, (unsigned)v->sg, (unsigned)ndim, (unsigned)MN_MAX_DIMS);
    }
    if (!v_field(v, t, F_T_TYPE, 1, &p) || !v_field(v, t, F_T_BUFFER, 4, &p)
        || !v_field(v, t, F_T_IS_VARIABLE, 1, &p) || !v_field(v, t, F_T_SPARSITY, 4, &p)) {
        return vfail_oob(v, "field");
    }
    if (!v_str(v, t, F_T_NAME)) {
        return vfail_oob(v, "name string");
    }
    int32_t dtype = fb_i8(v->b, t, F_T_TYPE, 0);
    if (dtype < 0 || dtype > MN_INT4) {
        return mn_err_set(&v->m->err, MN_ERR_UNSUPPORTED, "tensor %u (subgraph %u): unknown type %d",
            (unsigned)v->idx, (unsigned)v->sg, (int)dtype);
    }
    uint32_t buf = fb_u32(v->b, t, F_T_BUFFER, 0);
    if (buf >= v->m->n_buffers && !(buf == 0 && v->m->n_buffers == 0)) {
        return vfail(v, "buffer index out of range");
    }
    uint64_t bytes = 0;
    int r = tensor_bytes(v->b, shape, ndim, dtype, &bytes);
    if (r == -1) {
        return vfail(v, "negative dimension in shape");
    }
    if (r == -2) {
        return vfail(v, "shape too large (size overflow)");
    }
    if (v->m->n_buffers) {
        size_t dlen;
        const uint8_t *data = mn_model_buffer(v->m, buf, &dlen);
        if (data && mn_dtype_size(dtype) && dlen != bytes) {
            return vfail(v, "constant data size does not match shape and type");
        }
    }
    if (!v_ref(v, t, F_T_QUANT, &q)) {
        return vfail_oob(v, "quantization offset");
    }
    if (q) {
        uint32_t sc, nsc, zp, nzp;
        if (!v_table(v, q) || !v_vec(v, q, F_Q_SCALE, 4, &sc, &nsc) || !v_vec(v, q, F_Q_ZERO_POINT, 8, &zp, &nzp)
            || !v_field(v, q, F_Q_QDIM, 4, &p)) {
            return vfail_oob(v, "quantization parameters");
        }
        int32_t qdim = fb_i32(v->b, q, F_Q_QDIM, 0);
        if (nzp && nzp != nsc) {
            return vfail(v, "zero_point count differs from scale count");
        }
        /* Kernels derive fixed-point multipliers from scales and offset data by zero points:
         * reject values no converter produces (they would only lead to overflowing arithmetic). */
        int64_t zlo = INT32_MIN, zhi = INT32_MAX;
        if (dtype == MN_INT8) {
            zlo = -128, zhi = 127;
        } else if (dtype == MN_UINT8) {
            zlo = 0, zhi = 255;
        } else if (dtype == MN_INT16) {
            zlo = -32768, zhi = 32767;
        }
        for (uint32_t i = 0; i < nsc; i++) {
            /* positive and finite, tested on the bits (no soft-float calls on FPU-less cores) */
            uint32_t f = mn_ld_u32(v->b + sc + 4 * i);
            if (f == 0 || f >= 0x7f800000u) {
                return vfail(v, "quantization scale must be positive and finite");
            }
            int64_t z = nzp ? (int64_t)mn_ld_u64(v->b + zp + 8 * i) : 0;
            if (z < zlo || z > zhi) {
                char msg[80];
                mn_fmt(msg, sizeof msg, "zero point %lld out of range for %s", (long long)z, mn_dtype_name(dtype));
                return vfail(v, msg);
            }
        }
        if (qdim < 0) {
            return vfail(v, "negative quantized_dimension");
        }
        /* LiteRT refuses a quantized_dimension beyond the rank (per-tensor params too); TFLM runs
         * person_detect, whose 1-D per-channel biases store 3: that case alone is let through. */
        if (nsc && ndim && (uint32_t)qdim >= ndim
            && !(ndim == 1 && nsc > 1 && (uint32_t)mn_ld_i32(v->b + shape) == nsc)) {
            char msg[80];
            mn_fmt(msg, sizeof msg, "quantized_dimension %d out of range for a rank-%u tensor", (int)qdim, (unsigned)ndim);
            return vfail(v, msg);
        }
        /* Per-tensor params may carry any quantized_dimension (person_detect stores 3 on 1-D
         * biases); TFLM ignores it and so do we. Per-channel params must match the shape. */
        if (nsc > 1 && ((uint32_t)qdim >= ndim || (uint32_t)mn_ld_i32(v->b + shape + 4 * (uint32_t)qdim) != nsc)) {
            if (ndim == 1 && (uint32_t)mn_ld_i32(v->b + shape) == nsc) {
                return MN_OK;  /* 1-D per-channel bias with a stray quantized_dimension */
            }
            return vfail(v, "per-channel scale count does not match the quantized dimension");
        }
    }
    return MN_OK;
}

/* Vector of tensor indices (`what` names it: "inputs", "outputs", ...). */
static mn_status_t v_index_vec(vctx_t *v, uint32_t t, int field, uint32_t n_tensors, int allow_neg, const char *what) {
    uint32_t first, n;
    char msg[80];
    if (!v_vec(v, t, field, 4, &first, &n)) {
        return vfail_tail(v, what, " vector out of bounds");
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = mn_ld_i32(v->b + first + 4 * i);
        if (x >= (int64_t)n_tensors || x < (allow_neg ? -1 : 0)) {
            mn_fmt(msg, sizeof msg, "%s[%u]: tensor index %d out of range (%u tensors)", what, (unsigned)i, (int)x,
                (unsigned)n_tensors);
            return vfail(v, msg);
        }
    }
    return MN_OK;
}

static mn_status_t v_operator(vctx_t *v, uint32_t op, uint32_t n_tensors) {
    uint32_t p, q, first, n;
    mn_status_t s;
    if (!v_field(v, op, F_OP_OPCODE_INDEX, 4, &p) || !v_field(v, op, F_OP_OPTIONS_TYPE, 1, &q)) {
        return vfail_oob(v, "field");
    }
    if (fb_u32(v->b, op, F_OP_OPCODE_INDEX, 0) >= v->m->n_opcodes) {
        return vfail(v, "opcode index out of range");
    }
    if ((s = v_index_vec(v, op, F_OP_INPUTS, n_tensors, 1, "inputs"))
        || (s = v_index_vec(v, op, F_OP_OUTPUTS, n_tensors, 1, "outputs"))
        || (s = v_index_vec(v, op, F_OP_INTERMEDIATES, n_tensors, 1, "intermediates"))) {
        return s;
    }
    if (!v_ref(v, op, F_OP_OPTIONS, &q) || (q && !v_table(v, q))) {
        return vfail_oob(v, "builtin options");
    }
    if (!v_vec(v, op, F_OP_CUSTOM_OPTIONS, 1, &first, &n)) {
        return vfail_oob(v, "custom options");
    }
    if (!v_field(v, op, F_OP_LARGE_CUSTOM_OFFSET, 8, &p) || !v_field(v, op, F_OP_LARGE_CUSTOM_SIZE, 8, &q)) {
        return vfail_oob(v, "large custom options field");
    }
    uint64_t lo = p ? mn_ld_u64(v->b + p) : 0, ls = q ? mn_ld_u64(v->b + q) : 0;
    if (ls && (lo > v->len || ls > v->len - lo)) {
        return vfail(v, "large custom options outside the model buffer");
    }
    return MN_OK;
}

/* Is tensor x in the index vector (first, n)? */
static int v_in(const vctx_t *v, uint32_t first, uint32_t n, int32_t x) {
    for (uint32_t i = 0; i < n; i++) {
        if (mn_ld_i32(v->b + first + 4 * i) == x) {
            return 1;
        }
    }
    return 0;
}

/* The dataflow checks LiteRT makes on a graph whose indices are valid: no operator writes a
 * subgraph input ("Tensor is both input and output"), and every subgraph output has a value: it
 * is a subgraph input, a constant, a variable, or some operator's output (LiteRT lets an
 * unwritten output through to a read of null data; we refuse the model). */
static mn_status_t v_dataflow(vctx_t *v, uint32_t sgt, uint32_t tf, uint32_t of, uint32_t no) {
    uint32_t inf, nin, outf, nout;
    char msg[96];
    inf = fb_vec(v->b, sgt, F_SG_INPUTS, &nin);
    outf = fb_vec(v->b, sgt, F_SG_OUTPUTS, &nout);
    v->where = "operator";
    for (uint32_t i = 0; i < no; i++) {
        uint32_t f, n;
        f = fb_vec(v->b, fb_vec_table(v->b, of, i), F_OP_OUTPUTS, &n);
        for (uint32_t k = 0; k < n; k++) {
            int32_t x = mn_ld_i32(v->b + f + 4 * k);
            if (x >= 0 && v_in(v, inf, nin, x)) {
                v->idx = i;
                mn_fmt(msg, sizeof msg, "output %u is tensor %d, an input of the subgraph", (unsigned)k, (int)x);
                return vfail(v, msg);
            }
        }
    }
    v->where = "subgraph";
    v->idx = v->sg;
    v->in_sg = 0;
    for (uint32_t j = 0; j < nout; j++) {
        int32_t x = mn_ld_i32(v->b + outf + 4 * j);
        uint32_t t = fb_vec_table(v->b, tf, (uint32_t)x);
        size_t dlen;
        if (v_in(v, inf, nin, x) || fb_i8(v->b, t, F_T_IS_VARIABLE, 0)
            || (v->m->n_buffers && mn_model_buffer(v->m, fb_u32(v->b, t, F_T_BUFFER, 0), &dlen))) {
            continue;
        }
        int written = 0;
        for (uint32_t i = 0; i < no && !written; i++) {
            uint32_t f, n;
            f = fb_vec(v->b, fb_vec_table(v->b, of, i), F_OP_OUTPUTS, &n);
            written = v_in(v, f, n, x);
        }
        if (!written) {
            mn_fmt(msg, sizeof msg, "output %u (tensor %d) is written by no operator", (unsigned)j, (int)x);
            return vfail(v, msg);
        }
    }
    return MN_OK;
}

static mn_status_t v_subgraph(vctx_t *v, uint32_t sgt, uint32_t sgi) {
    uint32_t tf, nt, of, no;
    mn_status_t s;
    v->sg = sgi;
    v->idx = sgi;
    v->where = "subgraph";
    v->in_sg = 0;
    if (!v_vec(v, sgt, F_SG_TENSORS, 4, &tf, &nt) || !v_tables(v, tf, nt)) {
        return vfail_oob(v, "tensors vector");
    }
    if (!v_vec(v, sgt, F_SG_OPERATORS, 4, &of, &no) || !v_tables(v, of, no)) {
        return vfail_oob(v, "operators vector");
    }
    if (!v_str(v, sgt, F_SG_NAME)) {
        return vfail_oob(v, "name");
    }
    if ((s = v_index_vec(v, sgt, F_SG_INPUTS, nt, 0, "inputs"))
        || (s = v_index_vec(v, sgt, F_SG_OUTPUTS, nt, 0, "outputs"))) {
        return s;
    }
    v->where = "tensor";
    v->in_sg = 1;
    for (uint32_t i = 0; i < nt; i++) {
        v->idx = i;
        if ((s = v_tensor(v, fb_vec_table(v->b, tf, i)))) {
            return s;
        }
    }
    v->where = "operator";
    for (uint32_t i = 0; i < no; i++) {
        v->idx = i;
        if ((s = v_operator(v, fb_vec_table(v->b, of, i), nt))) {
            return s;
        }
    }
    return v_dataflow(v, sgt, tf, of, no);
}

static mn_status_t v_metadata(vctx_t *v, uint32_t first, uint32_t n) {
    v->where = "metadata";
    for (uint32_t i = 0; i < n; i++) {
        uint32_t md = fb_vec_table(v->b, first, i), p;
        v->idx = i;
        if (!v_str(v, md, F_MD_NAME) || !v_field(v, md, F_MD_BUFFER, 4, &p)) {
            return vfail_oob(v, "field");
        }
        if (fb_u32(v->b, md, F_MD_BUFFER, 0) >= v->m->n_buffers) {
            return vfail(v, "buffer index out of range");
        }
    }
    return MN_OK;
}

static mn_status_t verify(mn_model_t *m) {
    vctx_t v = { m->buf, m->len, m, "model", 0, 0, 0 };
    const uint8_t *b = m->buf;
    uint32_t p, first, n;
    mn_status_t s;
    if (m->len < 8) {
        return mn_err_set(&m->err, MN_ERR_MODEL, "invalid model: %u bytes is too short", (unsigned)m->len);
    }
    if (m->len > 0x7fffffffu) {
        return mn_err_set(&m->err, MN_ERR_MODEL, "invalid model: larger than 2 GB");
    }
    if (memcmp(b + 4, "TFL3", 4) != 0) {
        return mn_err_set(&m->err, MN_ERR_MODEL, "not a TFLite model: file identifier is not \"TFL3\"");
    }
    uint32_t root = mn_ld_u32(b);
    if ((uint64_t)root + 4 > m->len || !v_table(&v, root)) {
        return mn_err_set(&m->err, MN_ERR_MODEL, "invalid model: root table out of bounds (truncated?)");
    }
    if (!v_field(&v, root, F_MODEL_VERSION, 4, &p)) {
        return model_oob(m, "version field");
    }
    m->version = p ? mn_ld_u32(b + p) : 0;
    if (m->version != 3) {
        return mn_err_set(&m->err, MN_ERR_UNSUPPORTED, "model schema version %u, expected 3", (unsigned)m->version);
    }
    if (!v_vec(&v, root, F_MODEL_OPCODES, 4, &first, &n) || !v_tables(&v, first, n)) {
        return model_oob(m, "operator_codes");
    }
    m->opcodes = first;
    m->n_opcodes = n;
    if ((s = v_opcodes(&v, first, n))) {
        return s;
    }
    if (!v_vec(&v, root, F_MODEL_BUFFERS, 4, &first, &n) || !v_tables(&v, first, n)) {
        return model_oob(m, "buffers");
    }
    m->buffers = first;
    m->n_buffers = n;
    if ((s = v_buffers(&v, first, n))) {
        return s;
    }
    if (!v_vec(&v, root, F_MODEL_METADATA, 4, &first, &n) || !v_tables(&v, first, n)) {
        return model_oob(m, "metadata");
    }
    m->metadata = first;
    m->n_metadata = n;
    if ((s = v_metadata(&v, first, n))) {
        return s;
    }
    if (!v_str(&v, root, F_MODEL_DESCRIPTION)) {
        return model_oob(m, "description");
    }
    m->description = fb_ref(b, root, F_MODEL_DESCRIPTION);
    if (!v_vec(&v, root, F_MODEL_SUBGRAPHS, 4, &first, &n) || !v_tables(&v, first, n)) {
        return model_oob(m, "subgraphs");
    }
    if (n == 0) {
        return mn_err_set(&m->err, MN_ERR_MODEL, "invalid model: no subgraphs");
    }
    m->n_subgraphs = n;
    for (uint32_t i = 0; i < n; i++) {
        if ((s = v_subgraph(&v, fb_vec_table(b, first, i), i))) {
            return s;
        }
    }
    uint32_t sg = fb_vec_table(b, first, 0);
    m->subgraph = sg;
    m->tensors = fb_vec(b, sg, F_SG_TENSORS, &m->n_tensors);
    m->ops = fb_vec(b, sg, F_SG_OPERATORS, &m->n_ops);
    m->inputs = fb_vec(b, sg, F_SG_INPUTS, &m->n_inputs);
    m->outputs = fb_vec(b, sg, F_SG_OUTPUTS, &m->n_outputs);
    return MN_OK;
}

/* The loader: a model view exists only for a buffer the verifier accepted. */
mn_status_t mn_model_init(mn_model_t *m, const void *buf, size_t len) {
    if (!m) {
        return MN_ERR_ARG;
    }
    memset(m, 0, sizeof *m);
    if (!buf) {
        return mn_err_set(&m->err, MN_ERR_ARG, "model buffer is NULL");
    }
    m->buf = (const uint8_t *)buf;
    m->len = len;
    mn_status_t s = verify(m);
    if (s != MN_OK) {
        /* Leave no half-initialised view behind: accessors see an empty model. */
        mn_error_t e = m->err;
        memset(m, 0, sizeof *m);
        m->err = e;
    }
    return s;
}
