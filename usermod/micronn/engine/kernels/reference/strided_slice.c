/* STRIDED_SLICE and SLICE reference kernels (TFLite reference_ops::StridedSlice / Slice). The
 * masks are resolved in prepare the way TFLite's BuildStridedSliceParams and
 * strided_slice::StartForAxis / StopForAxis do (ellipsis expanded, new axes as size-1 dims,
 * begin/end masks, negative indices and strides, clamping, shrink axes, `offset` without masks), which leaves one
 * strided copy for eval. A shrunk axis takes the one element at its index, which must exist (TFLite
 * would read outside the input, or write nothing for a negative stride). begin/end/strides (SLICE: begin/size) must be constant. */
#include "mn_ref.h"

#if MICRONN_OP_STRIDED_SLICE || MICRONN_OP_SLICE

#include "ref_glue.h"

#define SS_MAX_DIMS MN_COPY_MAX_DIMS

/* Shared tail: the effective input dims (eff_dims, n), per dim start/count/stride and which dims
 * the output keeps (shrunk ones are dropped); checks the output shape and stores the plan. */
static mn_status_t slice_finish(mn_ctx_t *ctx, mn_node_t *node, const mn_tensor_t *in, const mn_tensor_t *out,
    int n, const int32_t *eff_dims, const int32_t *start, const int32_t *count, const int32_t *stride,
    unsigned shrink) {
    mn_copy_plan_t plan;
    int32_t eff_strides[SS_MAX_DIMS], in_offset = 0;
    mn_strides(eff_dims, n, eff_strides);
    int o = 0;
    for (int i = 0; i < n; ++i) {
        if (count[i] > 0) {
            in_offset += start[i] * eff_strides[i];
        }
        plan.dims[i] = count[i];
        plan.in_stride[i] = stride[i] * eff_strides[i];
        if (shrink & (1u << i)) {
            continue;
        }
        if (o >= out->ndim || out->dims[o] != count[i]) {
            return mn_fail(ctx, MN_ERR_MODEL, "output dim %d is %d, the slice gives %d", o,
                (int)mn_dim(out, o), (int)count[i]);
        }
        ++o;
    }
    if (o != out->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "output is %d-D, the slice gives %d-D", out->ndim, o);
    }
    plan.ndim = n;
    mn_strides(plan.dims, n, plan.out_stride);
    return ref_copy_plan_done(ctx, node, &plan, in_offset, mn_dtype_size(in->dtype));
}

#if MICRONN_OP_STRIDED_SLICE
/* Number of steps from start towards stop (TFLite: ceil((stop - start) / stride), at least 0). */
static int32_t steps(int32_t start, int32_t stop, int32_t stride) {
    if (stride > 0) {
        return stop > start ? (int32_t)mn_udivmod64((uint64_t)((int64_t)stop - start + stride - 1), (uint32_t)stride, NULL) : 0;
    }
    return start > stop ? (int32_t)mn_udivmod64((uint64_t)((int64_t)start - stop - stride - 1), (uint32_t)0 - (uint32_t)stride, NULL) : 0;
}

static mn_status_t strided_slice_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t begin[SS_MAX_DIMS], end[SS_MAX_DIMS], strides[SS_MAX_DIMS], nb, ne, ns;
    REF_TRY(ref_const_ints(ctx, node, 1, "begin", begin, SS_MAX_DIMS, &nb));
    REF_TRY(ref_const_ints(ctx, node, 2, "end", end, SS_MAX_DIMS, &ne));
    REF_TRY(ref_const_ints(ctx, node, 3, "strides", strides, SS_MAX_DIMS, &ns));
    if (nb != ne || nb != ns) {
        return mn_fail(ctx, MN_ERR_MODEL, "begin/end/strides have %d/%d/%d values", (int)nb, (int)ne, (int)ns);
    }
    const unsigned begin_mask = (unsigned)mn_opt_i32(node, MN_SSLICE_BEGIN_MASK, 0);
    const unsigned end_mask = (unsigned)mn_opt_i32(node, MN_SSLICE_END_MASK, 0);
    const unsigned ellipsis_mask = (unsigned)mn_opt_i32(node, MN_SSLICE_ELLIPSIS_MASK, 0);
    const unsigned new_axis_mask = (unsigned)mn_opt_i32(node, MN_SSLICE_NEW_AXIS_MASK, 0);
    const unsigned shrink_mask = (unsigned)mn_opt_i32(node, MN_SSLICE_SHRINK_AXIS_MASK, 0);
    const int offset = mn_opt_bool(node, MN_SSLICE_OFFSET, false);
    if (offset && ((begin_mask | end_mask | ellipsis_mask | new_axis_mask | shrink_mask) || nb != in->ndim)) {
        /* LiteRT sizes such slices inconsistently (end_mask ignored, ellipsis dims cut, garbage
         * sizes for partial specs) */
        return mn_fail(ctx, MN_ERR_UNSUPPORTED,
            "offset needs begin/end/strides for every dim and no begin/end/ellipsis/new-axis/shrink masks");
    }

    /* new axes not under the ellipsis add dims */
    int num_add = 0;
    for (int i = 0; i < nb; ++i) {
        if (!(ellipsis_mask & (1u << i)) && (new_axis_mask & (1u << i))) {
            ++num_add;
        }
    }
    const int n = in->ndim + num_add;
    if (n > SS_MAX_DIMS) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%d-D slice (with new axes) not supported (at most %d-D)", n,
            SS_MAX_DIMS);
    }
    /* expand the ellipsis into the dims begin/end/strides do not name */
    unsigned eff_ellipsis = 0, eff_new = 0;
    int ellipsis_start = n, expanded = 0;
    for (int i = 0; i < n;) {
        if (ellipsis_mask & (1u << i)) {
            ellipsis_start = i;
            int stop = i + 1 + num_add + in->ndim - nb;
            stop = stop < n ? stop : n;
            const int ellipsis_end = stop > i + 1 ? stop : i + 1;
            expanded = ellipsis_end - ellipsis_start - 1;
            for (; i < ellipsis_end; ++i) {
                eff_ellipsis |= 1u << i;
            }
            continue;
        }
        if (new_axis_mask & (1u << (i - expanded))) {
            eff_new |= 1u << i;
        }
        ++i;
    }
    int32_t dims[SS_MAX_DIMS], start[SS_MAX_DIMS], count[SS_MAX_DIMS], stride[SS_MAX_DIMS];
    unsigned shrink = 0;
    int added_ellipsis = 0, added_axes = 0;
    for (int i = 0; i < n; ++i) {
        int32_t b = 0, e = 0, s = 1;
        int bm = 0, em = 0, sh = 0;
        if (eff_ellipsis & (1u << i)) {
            added_ellipsis = i - ellipsis_start > 0 ? i - ellipsis_start : 0;
            bm = em = 1;
            dims[i] = in->dims[i - added_axes];
        } else if (eff_new & (1u << i)) {
            e = 1;
            dims[i] = 1;
            ++added_axes;
        } else if (i >= nb + expanded) {
            bm = em = 1;
            dims[i] = in->dims[i - added_axes];
        } else {
            const int k = i - added_ellipsis;
            b = begin[k];
            e = end[k];
            s = strides[k];
            bm = (begin_mask >> k) & 1;
            em = (end_mask >> k) & 1;
            sh = (shrink_mask >> k) & 1;
            dims[i] = in->dims[i - added_axes];
        }
        if (s == 0) {
            return mn_fail(ctx, MN_ERR_MODEL, "stride of dim %d is 0", i);
        }
        const int32_t size = dims[i];
        int32_t st = 0, sp = 0;
        if (sh) {
            /* one element, which must exist (TFLite reads outside the input otherwise) */
            st = bm ? (s > 0 ? 0 : size - 1) : (b < 0 ? b + size : b);
            if (st < 0 || st >= size) {
                return mn_fail(ctx, MN_ERR_MODEL, "shrink axis %d: index %d out of range for size %d", i, (int)b,
                    (int)size);
            }
            shrink |= 1u << i;
            start[i] = st;
            stride[i] = 1;
            count[i] = 1;
            continue;
        }
        if (size > 0) {
            st = bm ? (s > 0 ? INT32_MIN : INT32_MAX) : b;
            if (st < 0) {
                st += size;
            }
            st = s > 0 ? mn_clamp_i32(st, 0, size) : mn_clamp_i32(st, -1, size - 1);
            sp = offset ? mn_add_wrap(st, e) : e;
            if (em) {
                sp = s > 0 ? INT32_MAX : INT32_MIN;
            }
            if (sp < 0) {
                sp += size;
            }
            sp = s > 0 ? mn_clamp_i32(sp, 0, size) : mn_clamp_i32(sp, -1, size - 1);
        }
        start[i] = st;
        stride[i] = s;
        count[i] = steps(st, sp, s);
    }
    return slice_finish(ctx, node, in, out, n, dims, start, count, stride, shrink);
}
const mn_kernel_t mn_kernel_STRIDED_SLICE = { NULL, strided_slice_prepare, ref_copy_eval, NULL, NULL };
#endif

#if MICRONN_OP_SLICE
/* inputs: input, begin, size (-1: to the end) */
static mn_status_t slice_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    int32_t begin[MN_MAX_DIMS], size[MN_MAX_DIMS], nb, ns, count[MN_MAX_DIMS], stride[MN_MAX_DIMS];
    REF_TRY(ref_const_ints(ctx, node, 1, "begin", begin, MN_MAX_DIMS, &nb));
    REF_TRY(ref_const_ints(ctx, node, 2, "size", size, MN_MAX_DIMS, &ns));
    if (nb != in->ndim || ns != in->ndim) {
        return mn_fail(ctx, MN_ERR_MODEL, "begin/size have %d/%d values for a %d-D input", (int)nb, (int)ns,
            in->ndim);
    }
    for (int i = 0; i < nb; ++i) {
        count[i] = size[i] == -1 ? in->dims[i] - begin[i] : size[i];
        stride[i] = 1;
        if (begin[i] < 0 || count[i] < 0 || (int64_t)begin[i] + count[i] > in->dims[i]) {
            return mn_fail(ctx, MN_ERR_MODEL, "slice [%d, +%d) outside dim %d of size %d", (int)begin[i],
                (int)size[i], i, (int)in->dims[i]);
        }
    }
    return slice_finish(ctx, node, in, out, nb, in->dims, begin, count, stride, 0);
}
const mn_kernel_t mn_kernel_SLICE = { NULL, slice_prepare, ref_copy_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_STRIDED_SLICE || MICRONN_OP_SLICE */
