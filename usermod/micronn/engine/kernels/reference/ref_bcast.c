/* Numpy-style broadcasting shared by the elementwise kernels (ADD, SUB, MUL, comparisons, ...). */
#include "mn_ref.h"

int mn_bcast_init3(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2,
    const int32_t *d3, int n3) {
    const int m = d3 ? 3 : 2;   /* inputs taking part */
    const int32_t *d[3] = { d1, d2, d3 };
    const int nd[3] = { n1, n2, d3 ? n3 : 0 };
    int32_t *stride[3] = { b->stride1, b->stride2, b->stride3 };
    /* Counts in 64 bits: partial products of a verified shape with a zero dimension ([0, 45,
     * 134217732]) may exceed int32, and the output count may exceed it when every input fits. */
    int64_t s[3] = { 1, 1, 1 };
    int n = 0;
    for (int j = 0; j < m; ++j) {
        if (nd[j] < 0) {
            return -1;
        }
        n = nd[j] > n ? nd[j] : n;
    }
    if (n > MN_ADD_MAX_DIMS) {
        return -1;
    }
    b->ndims = n;
    b->broadcast = 0;
    int64_t size = 1;
    for (int i = n - 1; i >= 0; --i) {
        int32_t dim[3] = { 1, 1, 1 }, o = 1;
        for (int j = 0; j < m; ++j) {
            const int kk = i - (n - nd[j]);
            dim[j] = kk >= 0 ? d[j][kk] : 1;
            if (kk < 0) {
                b->broadcast = 1;   /* fewer dims: not a flat loop */
            }
            if (dim[j] != 1) {
                if (o != 1 && o != dim[j]) {
                    return -1;
                }
                o = dim[j];
            }
        }
        for (int j = 0; j < 3; ++j) {
            if (j < m && dim[j] != o) {
                b->broadcast = 1;
            }
            stride[j][i] = dim[j] == 1 ? 0 : (int32_t)s[j];
            s[j] *= dim[j];
            if (s[j] > INT32_MAX) {
                return -2;
            }
        }
        b->out_dims[i] = o;
        size *= o;
        if (size > INT32_MAX) {
            return -2;
        }
    }
    b->size = (int32_t)size;
    return 0;
}

int mn_bcast_init(mn_bcast_t *b, const int32_t *d1, int n1, const int32_t *d2, int n2) {
    return mn_bcast_init3(b, d1, n1, d2, n2, NULL, 0);
}

/* ---- interpreter glue shared by the elementwise kernels ------------------------------------ */

#include "ref_glue.h"

mn_status_t ref_bcast_status(mn_ctx_t *ctx, int r, int n1, int n2, int n3) {
    if (r == -2) {
        return mn_fail(ctx, MN_ERR_MODEL, "an input or the broadcast output has more than %d elements",
            (int)INT32_MAX);
    }
    if (r && n3 >= 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input shapes (%d-D, %d-D, %d-D) cannot be broadcast", n1, n2, n3);
    }
    if (r) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input shapes (%d-D, %d-D) cannot be broadcast", n1, n2);
    }
    return MN_OK;
}

mn_status_t ref_binary_shapes(mn_ctx_t *ctx, const mn_node_t *node, mn_bcast_t *b, mn_tensor_t **in1,
    mn_tensor_t **in2, mn_tensor_t **out) {
    REF_INPUT(a, ctx, node, 0, "input1");
    REF_INPUT(c, ctx, node, 1, "input2");
    REF_OUTPUT(o, ctx, node, 0);
    if (a->dtype != c->dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "mixed input dtypes %s and %s not supported",
            mn_dtype_name(a->dtype), mn_dtype_name(c->dtype));
    }
    REF_TRY(ref_bcast_status(ctx, mn_bcast_init(b, a->dims, a->ndim, c->dims, c->ndim), a->ndim, c->ndim, -1));
    if (mn_tensor_count(o) != (size_t)b->size) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u elements, broadcast gives %d",
            (unsigned)mn_tensor_count(o), (int)b->size);
    }
    *in1 = a;
    *in2 = c;
    *out = o;
    return MN_OK;
}

mn_status_t ref_act_range_i32(mn_ctx_t *ctx, int act, int32_t *lo, int32_t *hi) {
    float fl, fh;
    REF_TRY(ref_act_range_f(ctx, act, &fl, &fh));
    *lo = isinf(fl) ? INT32_MIN : (int32_t)fl;
    *hi = isinf(fh) ? INT32_MAX : (int32_t)fh;
    return MN_OK;
}
