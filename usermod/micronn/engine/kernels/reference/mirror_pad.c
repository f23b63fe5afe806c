/* MIRROR_PAD reference kernel (TFLite mirror_pad.cc): padding mirrors the input, REFLECT without
 * repeating the edge element, SYMMETRIC with it. Each output row maps its coordinates to an input
 * row once, then copies element by element along the innermost dim (any element size). */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_MIRROR_PAD

#include "ref_glue.h"

typedef struct {
    int32_t ndim, in_dims[MN_MAX_DIMS], out_dims[MN_MAX_DIMS], before[MN_MAX_DIMS], in_strides[MN_MAX_DIMS];
    uint8_t es, offset;     /* offset 1: REFLECT, 0: SYMMETRIC */
} mirror_pad_data_t;

static inline int32_t mirror(int32_t i, int32_t before, int32_t n, int32_t offset) {
    int32_t j = i - before;
    if (j < 0) {
        j = -j - 1 + offset;
    } else if (j >= n) {
        j = 2 * n - 1 - j - offset;
    }
    return j;
}

#define MIRROR_ROW(T) \
    do { \
        const T *s_ = (const T *)(const void *)src; \
        T *o_ = (T *)(void *)dst; \
        for (int32_t x = 0; x < w; ++x) { \
            o_[x] = s_[mirror(x, before, n, d->offset)]; \
        } \
    } while (0)

static mn_status_t mirror_pad_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t pads[2 * MN_MAX_DIMS] = { 0 }, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 1, "paddings", pads, 2 * MN_MAX_DIMS, &n));
    const int mode = mn_opt_i8(node, MN_MIRROR_PAD_MODE, 0);
    if (mode != 0 && mode != 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "mode %d not supported", mode);
    }
    if (n != 2 * in->ndim || out->ndim != in->ndim || in->ndim < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "paddings has %d values for a %d-D input", (int)n, in->ndim);
    }
    const size_t es = mn_dtype_size(in->dtype);
    if (es != 1 && es != 2 && es != 4 && es != 8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    REF_ALLOC(d, mirror_pad_data_t, ctx, 1);
    d->offset = mode == 0;
    d->ndim = in->ndim;
    for (int k = 0; k < in->ndim; ++k) {
        const int32_t lim = in->dims[k] - d->offset;
        if (pads[2 * k] < 0 || pads[2 * k + 1] < 0 || pads[2 * k] > lim || pads[2 * k + 1] > lim ||
            out->dims[k] != in->dims[k] + pads[2 * k] + pads[2 * k + 1]) {
            return mn_fail(ctx, MN_ERR_MODEL, "paddings [%d, %d] invalid for dim %d of size %d", (int)pads[2 * k],
                (int)pads[2 * k + 1], k, (int)in->dims[k]);
        }
        d->in_dims[k] = in->dims[k];
        d->out_dims[k] = out->dims[k];
        d->before[k] = pads[2 * k];
    }
    mn_strides(d->in_dims, d->ndim, d->in_strides);
    d->es = (uint8_t)es;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t mirror_pad_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mirror_pad_data_t *d = (const mirror_pad_data_t *)node->user_data;
    const uint8_t *in = (const uint8_t *)mn_input(ctx, node, 0)->data;
    mn_tensor_t *out_t = mn_output(ctx, node, 0);
    uint8_t *dst = (uint8_t *)out_t->data;
    const int last = d->ndim - 1;
    const int32_t w = d->out_dims[last], n = d->in_dims[last], before = d->before[last];
    const size_t es = d->es, rows = mn_tensor_count(out_t) / (size_t)(w ? w : 1);
    int32_t idx[MN_MAX_DIMS] = {0};
    for (size_t r = 0; r < rows && w; ++r) {
        size_t from = 0;
        for (int k = 0; k < last; ++k) {
            from += (size_t)mirror(idx[k], d->before[k], d->in_dims[k], d->offset) * d->in_strides[k];
        }
        const uint8_t *src = in + from * es;
        switch (es) {
            case 1: MIRROR_ROW(uint8_t); break;
            case 2: MIRROR_ROW(uint16_t); break;
            case 4: MIRROR_ROW(uint32_t); break;
            default: MIRROR_ROW(uint64_t); break;
        }
        dst += (size_t)w * es;
        for (int k = last - 1; k >= 0; --k) {
            if (++idx[k] < d->out_dims[k]) {
                break;
            }
            idx[k] = 0;
        }
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_MIRROR_PAD = { NULL, mirror_pad_prepare, mirror_pad_eval, NULL, NULL };

#endif /* MICRONN_OP_MIRROR_PAD */
