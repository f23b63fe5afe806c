/* Strided element copies: the one loop behind the data-movement kernels (TRANSPOSE, SLICE,
 * STRIDED_SLICE, PAD, SPACE_TO_DEPTH, DEPTH_TO_SPACE, BROADCAST_TO, ...). They move elements,
 * never look at them, so one copy per element size serves every dtype. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_TRANSPOSE || MICRONN_OP_SLICE || MICRONN_OP_STRIDED_SLICE || MICRONN_OP_PAD || \
    MICRONN_OP_PADV2 || MICRONN_OP_SPACE_TO_DEPTH || MICRONN_OP_DEPTH_TO_SPACE || \
    MICRONN_OP_BROADCAST_TO || MICRONN_OP_FILL || MICRONN_OP_ZEROS_LIKE || \
    MICRONN_OP_CONCATENATION || MICRONN_OP_PACK || MICRONN_OP_SPLIT || MICRONN_OP_SPLIT_V || \
    MICRONN_OP_UNPACK || MICRONN_OP_SPACE_TO_BATCH_ND || MICRONN_OP_BATCH_TO_SPACE_ND || MICRONN_OP_REVERSE_V2 || \
    MICRONN_OP_DYNAMIC_UPDATE_SLICE

void mn_strides(const int32_t *dims, int n, int32_t *strides) {
    int32_t s = 1;
    for (int d = n - 1; d >= 0; --d) {
        strides[d] = s;
        s *= dims[d];
    }
}

void mn_copy_plan_simplify(mn_copy_plan_t *p) {
    int n = 0;
    for (int d = 0; d < p->ndim; ++d) {
        if (p->dims[d] == 0) {
            /* nothing to copy: one empty dim says so */
            p->ndim = 1;
            p->dims[0] = 0;
            return;
        }
        if (p->dims[d] == 1) {
            continue;
        }
        if (n > 0 && p->in_stride[n - 1] == p->in_stride[d] * p->dims[d] &&
            p->out_stride[n - 1] == p->out_stride[d] * p->dims[d]) {
            /* the previous dim steps over exactly this one: merge */
            p->dims[n - 1] *= p->dims[d];
            p->in_stride[n - 1] = p->in_stride[d];
            p->out_stride[n - 1] = p->out_stride[d];
            continue;
        }
        p->dims[n] = p->dims[d];
        p->in_stride[n] = p->in_stride[d];
        p->out_stride[n] = p->out_stride[d];
        ++n;
    }
    p->ndim = n;
}

#define COPY_ROW(T) \
    do { \
        const T *s_ = (const T *)src; \
        T *d_ = (T *)dst; \
        for (int32_t k = 0; k < n; ++k) { \
            d_[k * os] = s_[k * is]; \
        } \
    } while (0)

static void copy_row(size_t es, int32_t n, const uint8_t *src, int32_t is, uint8_t *dst, int32_t os) {
    if (is == 1 && os == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (es) {
        case 1: COPY_ROW(uint8_t); break;
        case 2: COPY_ROW(uint16_t); break;
        case 4: COPY_ROW(uint32_t); break;
        case 8: COPY_ROW(uint64_t); break;
        default:
            for (int32_t k = 0; k < n; ++k) {
                memcpy(dst + (ptrdiff_t)k * os * (ptrdiff_t)es, src + (ptrdiff_t)k * is * (ptrdiff_t)es, es);
            }
            break;
    }
}

void mn_copy_strided(const mn_copy_plan_t *p, size_t es, const void *in, void *out) {
    const int nd = p->ndim;
    if (nd == 0) {
        memcpy(out, in, es);
        return;
    }
    size_t rows = 1;
    for (int d = 0; d < nd; ++d) {
        rows *= (size_t)p->dims[d];
    }
    if (rows == 0) {
        return;
    }
    rows /= (size_t)p->dims[nd - 1];
    int32_t idx[MN_COPY_MAX_DIMS] = {0};
    ptrdiff_t io = 0, oo = 0;
    const int32_t n = p->dims[nd - 1], is = p->in_stride[nd - 1], os = p->out_stride[nd - 1];
    for (size_t r = 0; r < rows; ++r) {
        copy_row(es, n, (const uint8_t *)in + io * (ptrdiff_t)es, is, (uint8_t *)out + oo * (ptrdiff_t)es, os);
        for (int d = nd - 2; d >= 0; --d) {
            io += p->in_stride[d];
            oo += p->out_stride[d];
            if (++idx[d] < p->dims[d]) {
                break;
            }
            io -= (ptrdiff_t)p->in_stride[d] * p->dims[d];
            oo -= (ptrdiff_t)p->out_stride[d] * p->dims[d];
            idx[d] = 0;
        }
    }
}

void mn_fill_elems(void *out, size_t n, size_t es, const void *value) {
    uint8_t *o = (uint8_t *)out;
    if (n == 0) {
        return;
    }
    memcpy(o, value, es);
    /* doubling copies: log2(n) memcpy calls */
    size_t done = 1;
    while (done < n) {
        size_t k = done < n - done ? done : n - done;
        memcpy(o + done * es, o, k * es);
        done += k;
    }
}

/* ---- interpreter glue shared by the single-copy kernels ---------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_copy_plan_t plan;
    int32_t in_offset;
    uint8_t es;
} ref_copy_data_t;

mn_status_t ref_copy_plan_done(mn_ctx_t *ctx, mn_node_t *node, const mn_copy_plan_t *plan, int32_t in_offset,
    size_t es) {
    REF_ALLOC(d, ref_copy_data_t, ctx, 1);
    d->plan = *plan;
    mn_copy_plan_simplify(&d->plan);
    d->in_offset = in_offset;
    d->es = (uint8_t)es;
    node->user_data = d;
    return MN_OK;
}

mn_status_t ref_copy_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const ref_copy_data_t *d = (const ref_copy_data_t *)node->user_data;
    const uint8_t *in = (const uint8_t *)mn_input(ctx, node, 0)->data;
    mn_copy_strided(&d->plan, d->es, in + (ptrdiff_t)d->in_offset * d->es, mn_output(ctx, node, 0)->data);
    return MN_OK;
}

#endif
