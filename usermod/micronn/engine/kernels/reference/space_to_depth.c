/* SPACE_TO_DEPTH and DEPTH_TO_SPACE reference kernels (TFLite reference_ops::SpaceToDepth /
 * DepthToSpace, NHWC). Both are a 6-D transpose of a reshaped view, so prepare plans one strided
 * copy (any element size):
 *   space to depth: out[n][y][x][i][j][c] = in[n][y*b+i][x*b+j][c]
 *   depth to space: out[n][y][i][x][j][c] = in[n][y][x][(i*b+j)*C'+c] */
#include "mn_ref.h"

#if MICRONN_OP_SPACE_TO_DEPTH || MICRONN_OP_DEPTH_TO_SPACE

#include "ref_glue.h"

static mn_status_t s2d_prepare_common(mn_ctx_t *ctx, mn_node_t *node, int to_depth) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_TRY(ref_same_dtype(ctx, in, out));
    const int32_t b = mn_opt_i32(node, MN_BLOCK_SIZE, 0);
    if (in->ndim != 4 || out->ndim != 4 || b < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "needs 4-D input/output and block_size >= 1 (got %d)", (int)b);
    }
    const int32_t N = in->dims[0], H = in->dims[1], W = in->dims[2], C = in->dims[3];
    mn_copy_plan_t plan, *p = &plan;
    p->ndim = 6;
    if (to_depth) {
        if (H % b || W % b || out->dims[0] != N || out->dims[1] != H / b || out->dims[2] != W / b ||
            out->dims[3] != C * b * b) {
            return mn_fail(ctx, MN_ERR_MODEL, "shapes do not match block_size %d", (int)b);
        }
        const int32_t dims[6] = { N, H / b, W / b, b, b, C };
        const int32_t st[6] = { H * W * C, b * W * C, b * C, W * C, C, 1 };
        for (int k = 0; k < 6; ++k) {
            p->dims[k] = dims[k];
            p->in_stride[k] = st[k];
        }
    } else {
        const int32_t Co = C / (b * b);
        if (C % (b * b) || out->dims[0] != N || out->dims[1] != H * b || out->dims[2] != W * b ||
            out->dims[3] != Co) {
            return mn_fail(ctx, MN_ERR_MODEL, "shapes do not match block_size %d", (int)b);
        }
        const int32_t dims[6] = { N, H, b, W, b, Co };
        const int32_t st[6] = { H * W * C, W * C, b * Co, C, Co, 1 };
        for (int k = 0; k < 6; ++k) {
            p->dims[k] = dims[k];
            p->in_stride[k] = st[k];
        }
    }
    mn_strides(p->dims, 6, p->out_stride);
    return ref_copy_plan_done(ctx, node, p, 0, mn_dtype_size(in->dtype));
}

#if MICRONN_OP_SPACE_TO_DEPTH
static mn_status_t space_to_depth_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return s2d_prepare_common(ctx, node, 1);
}
const mn_kernel_t mn_kernel_SPACE_TO_DEPTH = { NULL, space_to_depth_prepare, ref_copy_eval, NULL, NULL };
#endif
#if MICRONN_OP_DEPTH_TO_SPACE
static mn_status_t depth_to_space_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return s2d_prepare_common(ctx, node, 0);
}
const mn_kernel_t mn_kernel_DEPTH_TO_SPACE = { NULL, depth_to_space_prepare, ref_copy_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_SPACE_TO_DEPTH || MICRONN_OP_DEPTH_TO_SPACE */
