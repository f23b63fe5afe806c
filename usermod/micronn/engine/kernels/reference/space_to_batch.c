/* SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND reference kernels (TFLite reference_ops, 3-D [N, H, C]
 * or 4-D [N, H, W, C] inputs). Output batch (i * bw + j) * N + n holds the block offset (i, j) of
 * input batch n; SPACE_TO_BATCH_ND pads first (pad value: output zero point for quantized types,
 * 0 otherwise), BATCH_TO_SPACE_ND crops after. block_shape, paddings and crops must be constant. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_SPACE_TO_BATCH_ND || MICRONN_OP_BATCH_TO_SPACE_ND

#include "ref_glue.h"

typedef struct {
    int32_t in_b, in_h, in_w, out_b, out_h, out_w, depth;
    int32_t bh, bw, off_h, off_w;   /* off: leading padding (s2b) or crop (b2s) */
    uint8_t es;
    uint8_t pad[8];
} s2b_data_t;

/* 3-D tensors are 4-D with W = 1. */
static void dims4(const mn_tensor_t *t, int32_t *n, int32_t *h, int32_t *w, int32_t *c) {
    *n = t->dims[0];
    *h = t->dims[1];
    *w = t->ndim == 4 ? t->dims[2] : 1;
    *c = t->dims[t->ndim - 1];
}

static mn_status_t s2b_prepare_common(mn_ctx_t *ctx, mn_node_t *node, int to_batch) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    if ((in->ndim != 3 && in->ndim != 4) || out->ndim != in->ndim) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "only 3-D and 4-D inputs are supported (got %d-D)", in->ndim);
    }
    const int spatial = in->ndim - 2;
    int32_t block[2] = { 1, 1 }, pads[4] = { 0, 0, 0, 0 }, nb, np;
    REF_TRY(ref_const_ints(ctx, node, 1, "block_shape", block, 2, &nb));
    REF_TRY(ref_const_ints(ctx, node, 2, to_batch ? "paddings" : "crops", pads, 4, &np));
    if (nb != spatial || np != 2 * spatial) {
        return mn_fail(ctx, MN_ERR_MODEL, "block_shape/%s sizes do not match a %d-D input",
            to_batch ? "paddings" : "crops", in->ndim);
    }
    REF_ALLOC(d, s2b_data_t, ctx, 1);
    int32_t c;
    dims4(in, &d->in_b, &d->in_h, &d->in_w, &d->depth);
    dims4(out, &d->out_b, &d->out_h, &d->out_w, &c);
    d->bh = block[0];
    d->bw = spatial == 2 ? block[1] : 1;
    d->off_h = pads[0];
    d->off_w = spatial == 2 ? pads[2] : 0;
    const int32_t end_h = pads[1], end_w = spatial == 2 ? pads[3] : 0;
    int ok = d->bh >= 1 && d->bw >= 1 && pads[0] >= 0 && pads[1] >= 0 && pads[2] >= 0 && pads[3] >= 0 &&
        c == d->depth;
    if (to_batch) {
        ok = ok && (d->in_h + d->off_h + end_h) % d->bh == 0 && (d->in_w + d->off_w + end_w) % d->bw == 0 &&
            d->out_b == d->in_b * d->bh * d->bw && d->out_h == (d->in_h + d->off_h + end_h) / d->bh &&
            d->out_w == (d->in_w + d->off_w + end_w) / d->bw;
    } else {
        ok = ok && d->in_b % (d->bh * d->bw) == 0 && d->out_b == d->in_b / (d->bh * d->bw) &&
            d->out_h == d->in_h * d->bh - d->off_h - end_h && d->out_w == d->in_w * d->bw - d->off_w - end_w;
    }
    if (!ok) {
        return mn_fail(ctx, MN_ERR_MODEL, "output shape does not match block_shape and %s",
            to_batch ? "paddings" : "crops");
    }
    d->es = (uint8_t)mn_dtype_size(in->dtype);
    ref_pad_value(out, d->pad);
    node->user_data = d;
    return MN_OK;
}


static mn_status_t s2b_eval_common(mn_ctx_t *ctx, mn_node_t *node, int to_batch) {
    const s2b_data_t *d = (const s2b_data_t *)node->user_data;
    const uint8_t *in = (const uint8_t *)mn_input(ctx, node, 0)->data;
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    const size_t px = (size_t)d->depth * d->es;
    /* walk the batched side; n = batch of the spatial side, (i, j) = block offset */
    const int32_t nb = to_batch ? d->out_b : d->in_b, n_sp = to_batch ? d->in_b : d->out_b;
    const int32_t bh_ = to_batch ? d->out_h : d->in_h, bw_ = to_batch ? d->out_w : d->in_w;
    const int32_t sh = to_batch ? d->in_h : d->out_h, sw = to_batch ? d->in_w : d->out_w;
    for (int32_t ob = 0; ob < nb; ++ob) {
        const int32_t n = ob % n_sp, ij = ob / n_sp, i = ij / d->bw, j = ij % d->bw;
        for (int32_t y = 0; y < bh_; ++y) {
            const int32_t sy = y * d->bh + i - d->off_h;
            for (int32_t x = 0; x < bw_; ++x) {
                const int32_t sx = x * d->bw + j - d->off_w;
                const int inside = sy >= 0 && sy < sh && sx >= 0 && sx < sw;
                const size_t batched = (((size_t)ob * bh_ + y) * bw_ + x) * px;
                const size_t space = inside ? (((size_t)n * sh + sy) * sw + sx) * px : 0;
                if (to_batch) {
                    if (inside) {
                        memcpy(out + batched, in + space, px);
                    } else {
                        mn_fill_elems(out + batched, (size_t)d->depth, d->es, d->pad);
                    }
                } else if (inside) {
                    memcpy(out + space, in + batched, px);
                }
            }
        }
    }
    return MN_OK;
}

#if MICRONN_OP_SPACE_TO_BATCH_ND
static mn_status_t s2b_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return s2b_prepare_common(ctx, node, 1);
}
static mn_status_t s2b_eval(mn_ctx_t *ctx, mn_node_t *node) {
    return s2b_eval_common(ctx, node, 1);
}
const mn_kernel_t mn_kernel_SPACE_TO_BATCH_ND = { NULL, s2b_prepare, s2b_eval, NULL, NULL };
#endif
#if MICRONN_OP_BATCH_TO_SPACE_ND
static mn_status_t b2s_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return s2b_prepare_common(ctx, node, 0);
}
static mn_status_t b2s_eval(mn_ctx_t *ctx, mn_node_t *node) {
    return s2b_eval_common(ctx, node, 0);
}
const mn_kernel_t mn_kernel_BATCH_TO_SPACE_ND = { NULL, b2s_prepare, b2s_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_SPACE_TO_BATCH_ND || MICRONN_OP_BATCH_TO_SPACE_ND */
