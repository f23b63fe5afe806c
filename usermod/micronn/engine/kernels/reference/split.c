/* SPLIT, SPLIT_V and UNPACK reference kernels (TFLite reference_ops::Split / Unpack): the input is
 * `outer` rows; each output takes its own run of bytes from every row. The outputs' shapes come
 * from the model and are checked against the (constant) axis and size_splits. */
#include "mn_ref.h"

#if MICRONN_OP_SPLIT || MICRONN_OP_SPLIT_V || MICRONN_OP_UNPACK

#include "ref_glue.h"

typedef struct {
    int32_t outer, in_pitch;
    int32_t bytes[];    /* per output */
} split_data_t;

/* in: the data input; axis may be negative; unpack: outputs lack the axis. sizes: SPLIT_V's
 * size_splits (n entries, at most one -1) or NULL. */
static mn_status_t split_prepare_common(mn_ctx_t *ctx, mn_node_t *node, const mn_tensor_t *in, int axis,
    int unpack, const int32_t *sizes, int32_t n_sizes) {
    const int n_out = mn_num_outputs(node);
    const int rank = in->ndim;
    if (axis < 0) {
        axis += rank;
    }
    if (axis < 0 || axis >= rank) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis %d out of range for a %d-D input", axis, rank);
    }
    if (sizes && n_sizes != n_out) {
        return mn_fail(ctx, MN_ERR_MODEL, "size_splits has %d entries for %d outputs", (int)n_sizes, n_out);
    }
    split_data_t *d = (split_data_t *)mn_alloc_persistent(ctx,
        sizeof(split_data_t) + sizeof(int32_t) * (size_t)n_out);
    if (!d) {
        return MN_ERR_ARENA;
    }
    const size_t es = mn_dtype_size(in->dtype);
    int32_t outer = 1, inner = 1, total = 0, known = 0, unknown = -1;
    for (int k = 0; k < axis; ++k) {
        outer *= in->dims[k];
    }
    for (int k = axis + 1; k < rank; ++k) {
        inner *= in->dims[k];
    }
    for (int i = 0; sizes && i < n_sizes; ++i) {
        if (sizes[i] == -1 && unknown < 0) {
            unknown = i;
        } else if (sizes[i] < 0) {
            return mn_fail(ctx, MN_ERR_MODEL, "size_splits[%d] = %d", i, (int)sizes[i]);
        } else {
            known += sizes[i];
        }
    }
    for (int i = 0; i < n_out; ++i) {
        REF_OUTPUT(out, ctx, node, i);
        REF_TRY(ref_same_dtype(ctx, in, out));
        if (out->ndim != rank - (unpack ? 1 : 0)) {
            return mn_fail(ctx, MN_ERR_MODEL, "output %d is %d-D for a %d-D input", i, out->ndim, rank);
        }
        int32_t along = 1;
        for (int k = 0, ko = 0; k < rank; ++k) {
            if (k == axis) {
                if (!unpack) {
                    along = out->dims[ko++];
                }
                continue;
            }
            if (out->dims[ko++] != in->dims[k]) {
                return mn_fail(ctx, MN_ERR_MODEL, "output %d dim %d is %d, input has %d", i, ko - 1,
                    (int)out->dims[ko - 1], (int)in->dims[k]);
            }
        }
        const int32_t want = !sizes ? (unpack ? 1 : in->dims[axis] / (n_out ? n_out : 1))
                                    : (i == unknown ? in->dims[axis] - known : sizes[i]);
        if (along != want) {
            return mn_fail(ctx, MN_ERR_MODEL, "output %d has %d along axis %d, expected %d", i, (int)along,
                axis, (int)want);
        }
        d->bytes[i] = along * inner * (int32_t)es;
        total += along;
    }
    if (total != in->dims[axis]) {
        return mn_fail(ctx, MN_ERR_MODEL, "outputs cover %d of %d along axis %d", (int)total,
            (int)in->dims[axis], axis);
    }
    d->outer = outer;
    d->in_pitch = total * inner * (int32_t)es;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t split_eval_common(mn_ctx_t *ctx, mn_node_t *node, int data_input) {
    const split_data_t *d = (const split_data_t *)node->user_data;
    const uint8_t *in = (const uint8_t *)mn_input(ctx, node, data_input)->data;
    mn_copy_plan_t p = { 2, { d->outer, 0 }, { d->in_pitch, 1 }, { 0, 1 } };
    int32_t offset = 0;
    for (int i = 0; i < mn_num_outputs(node); ++i) {
        p.dims[1] = d->bytes[i];
        p.out_stride[0] = d->bytes[i];
        mn_copy_strided(&p, 1, in + offset, mn_output(ctx, node, i)->data);
        offset += d->bytes[i];
    }
    return MN_OK;
}

#if MICRONN_OP_SPLIT
/* inputs: axis, input */
static mn_status_t split_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 1, "input");
    int32_t axis = 0, n = 0;
    REF_TRY(ref_const_ints(ctx, node, 0, "axis", &axis, 1, &n));
    if (n != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis must be a single value");
    }
    if (mn_opt_i32(node, MN_SPLIT_NUM_SPLITS, mn_num_outputs(node)) != mn_num_outputs(node)) {
        return mn_fail(ctx, MN_ERR_MODEL, "num_splits differs from the %d outputs", mn_num_outputs(node));
    }
    const int a = axis < 0 ? axis + in->ndim : axis;
    if (a >= 0 && a < in->ndim && in->dims[a] % mn_num_outputs(node)) {
        return mn_fail(ctx, MN_ERR_MODEL, "dim %d (%d) does not split into %d", a, (int)in->dims[a],
            mn_num_outputs(node));
    }
    return split_prepare_common(ctx, node, in, axis, 0, NULL, 0);
}
static mn_status_t split_eval(mn_ctx_t *ctx, mn_node_t *node) {
    return split_eval_common(ctx, node, 1);
}
const mn_kernel_t mn_kernel_SPLIT = { NULL, split_prepare, split_eval, NULL, NULL };
#endif

#if MICRONN_OP_SPLIT_V || MICRONN_OP_UNPACK
static mn_status_t split_eval0(mn_ctx_t *ctx, mn_node_t *node) {
    return split_eval_common(ctx, node, 0);
}
#endif

#if MICRONN_OP_SPLIT_V
/* inputs: input, size_splits, axis */
static mn_status_t split_v_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    int32_t axis = 0, n = 0, sizes[64], n_sizes = 0;
    REF_TRY(ref_const_ints(ctx, node, 2, "axis", &axis, 1, &n));
    if (n != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis must be a single value");
    }
    REF_TRY(ref_const_ints(ctx, node, 1, "size_splits", sizes, 64, &n_sizes));
    return split_prepare_common(ctx, node, in, axis, 0, sizes, n_sizes);
}
const mn_kernel_t mn_kernel_SPLIT_V = { NULL, split_v_prepare, split_eval0, NULL, NULL };
#endif

#if MICRONN_OP_UNPACK
static mn_status_t unpack_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    const int axis = mn_opt_i32(node, MN_PACK_AXIS, 0);
    const int a = axis < 0 ? axis + in->ndim : axis;
    if (mn_opt_i32(node, MN_PACK_VALUES_COUNT, mn_num_outputs(node)) != mn_num_outputs(node) ||
        (a >= 0 && a < in->ndim && in->dims[a] != mn_num_outputs(node))) {
        return mn_fail(ctx, MN_ERR_MODEL, "num %d / %d outputs do not match the input along axis %d",
            (int)mn_opt_i32(node, MN_PACK_VALUES_COUNT, 0), mn_num_outputs(node), axis);
    }
    return split_prepare_common(ctx, node, in, axis, 1, NULL, 0);
}
const mn_kernel_t mn_kernel_UNPACK = { NULL, unpack_prepare, split_eval0, NULL, NULL };
#endif

#endif /* MICRONN_OP_SPLIT || MICRONN_OP_SPLIT_V || MICRONN_OP_UNPACK */
