/* BATCH_MATMUL reference kernel (bit-exact with TFLite's reference_ops::BatchMatMul for float32, int8
 * and int16): out[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n] (adj_x / adj_y: the operand is
 * stored transposed), batch dimensions broadcast; k ascending, as TFLite sums. */
#include "mn_ref.h"

#if MICRONN_OP_BATCH_MATMUL

/* Start of batch `i` of an operand: its offset through the (broadcast) batch strides. */
static size_t bmm_offset(const mn_bmm_params_t *p, int i, const int32_t *stride) {
    size_t off = 0;
    for (int d = MN_BMM_MAX_BATCH_DIMS - 1; d >= 0; --d) {
        const int32_t n = p->batch[d];
        off += (size_t)(i % n) * (size_t)stride[d];
        i /= n;
    }
    return off;
}

/* The loop shared by the three dtypes: acc (ACC_T) sums TERM(l, r) over k, the element is FINISH. */
#define BMM_LOOP(T_IN, T_OUT, ACC_T, TERM, FINISH) \
    const int M = p->rows, N = p->cols, K = p->depth; \
    const int ls_m = p->adj_x ? 1 : K, ls_k = p->adj_x ? M : 1; \
    const int rs_k = p->adj_y ? 1 : N, rs_n = p->adj_y ? K : 1; \
    for (int b = 0; b < p->batches; ++b) { \
        const T_IN *lb = lhs + bmm_offset(p, b, p->lhs_stride); \
        const T_IN *rb = rhs + bmm_offset(p, b, p->rhs_stride); \
        T_OUT *ob = out + (size_t)b * M * N; \
        for (int m = 0; m < M; ++m) { \
            for (int n = 0; n < N; ++n) { \
                ACC_T acc = 0; \
                for (int k = 0; k < K; ++k) { \
                    const T_IN l = lb[(size_t)m * ls_m + (size_t)k * ls_k]; \
                    const T_IN r = rb[(size_t)k * rs_k + (size_t)n * rs_n]; \
                    TERM; \
                } \
                ob[(size_t)m * N + n] = FINISH; \
            } \
        } \
    }

void mn_batch_matmul_f32(const mn_bmm_params_t *p, const float *lhs, const float *rhs, float *out) {
    BMM_LOOP(float, float, float, acc += l * r, acc)
}

void mn_batch_matmul_s8(const mn_bmm_params_t *p, const int8_t *lhs, const int8_t *rhs, int8_t *out) {
    const int32_t lo = p->lhs_offset, ro = p->rhs_offset, oo = p->output_offset;
    BMM_LOOP(int8_t, int8_t, uint32_t, acc += (uint32_t)(((int32_t)l + lo) * ((int32_t)r + ro)),
        (int8_t)mn_clamp_i32(mn_add_wrap(mn_mul_by_qm((int32_t)acc, p->mult, p->shift), oo), p->act_min, p->act_max))
}

void mn_batch_matmul_s16(const mn_bmm_params_t *p, const int16_t *lhs, const int16_t *rhs, int16_t *out) {
    BMM_LOOP(int16_t, int16_t, int64_t, acc += (int32_t)l * (int32_t)r,
        (int16_t)mn_clamp_i32(mn_mul_by_qm64(acc, p->mult, p->shift), p->act_min, p->act_max))
}

/* The quantized row, then (adj_x) the row gathered from its strided storage. */
size_t mn_bmm_hybrid_scratch(const mn_bmm_params_t *p) {
    const size_t q = ((size_t)p->depth + 3u) & ~(size_t)3u;
    return q + (p->adj_x ? (size_t)p->depth * sizeof(float) : 0u);
}

void mn_batch_matmul_hybrid(const mn_bmm_params_t *p, const float *lhs, const int8_t *rhs, float *out,
    void *scratch) {
    const int M = p->rows, N = p->cols, K = p->depth;
    const int ls_m = p->adj_x ? 1 : K, ls_k = p->adj_x ? M : 1;
    const int rs_k = p->adj_y ? 1 : N, rs_n = p->adj_y ? K : 1;
    int8_t *q = (int8_t *)scratch;
    float *row = (float *)(void *)((uint8_t *)scratch + (((size_t)K + 3u) & ~(size_t)3u));
    for (int b = 0; b < p->batches; ++b) {
        const float *lb = lhs + bmm_offset(p, b, p->lhs_stride);
        const int8_t *rb = rhs + bmm_offset(p, b, p->rhs_stride);
        float *ob = out + (size_t)b * M * N;
        for (int m = 0; m < M; ++m) {
            const float *x = lb + (size_t)m * ls_m;
            if (p->adj_x) {
                for (int k = 0; k < K; ++k) {
                    row[k] = x[(size_t)k * ls_k];
                }
                x = row;
            }
            int32_t zp;
            const float sf = mn_quantize_dynamic_s8(x, (size_t)K, q, p->asymmetric, &zp) * p->rhs_scale;
            for (int n = 0; n < N; ++n) {
                uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
                for (int k = 0; k < K; ++k) {
                    acc += (uint32_t)(((int32_t)q[k] - zp) * (int32_t)rb[(size_t)k * rs_k + (size_t)n * rs_n]);
                }
                ob[(size_t)m * N + n] = (float)(int32_t)acc * sf;
            }
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

static mn_status_t bmm_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(lhs, ctx, node, 0, "lhs");
    REF_INPUT(rhs, ctx, node, 1, "rhs");
    REF_OUTPUT(out, ctx, node, 0);
    REF_ALLOC(p, mn_bmm_params_t, ctx, 1);
    p->adj_x = mn_opt_bool(node, MN_BMM_ADJ_X, false);
    p->adj_y = mn_opt_bool(node, MN_BMM_ADJ_Y, false);
    const int rank = lhs->ndim > rhs->ndim ? lhs->ndim : rhs->ndim;
    if (lhs->ndim < 2 || rhs->ndim < 2 || rank > MN_BMM_MAX_BATCH_DIMS + 2 || out->ndim != rank) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "lhs/rhs/output ranks %d/%d/%d not supported (2 to %d, output the larger)",
            lhs->ndim, rhs->ndim, out->ndim, MN_BMM_MAX_BATCH_DIMS + 2);
    }
    const int32_t *ld = lhs->dims + lhs->ndim - 2, *rd = rhs->dims + rhs->ndim - 2;
    p->rows = p->adj_x ? ld[1] : ld[0];
    p->depth = p->adj_x ? ld[0] : ld[1];
    const int32_t rk = p->adj_y ? rd[1] : rd[0];
    p->cols = p->adj_y ? rd[0] : rd[1];
    if (rk != p->depth || out->dims[rank - 2] != p->rows || out->dims[rank - 1] != p->cols) {
        return mn_fail(ctx, MN_ERR_MODEL, "shapes do not multiply: lhs %dx%d, rhs %dx%d, output %dx%d (adj_x %d, adj_y %d)",
            (int)p->rows, (int)p->depth, (int)rk, (int)p->cols, (int)out->dims[rank - 2], (int)out->dims[rank - 1],
            p->adj_x, p->adj_y);
    }
    /* Batch dimensions right-aligned into MN_BMM_MAX_BATCH_DIMS, broadcast ones get stride 0. */
    int32_t ls = p->rows * p->depth, rs = p->depth * p->cols;
    p->batches = 1;
    for (int d = MN_BMM_MAX_BATCH_DIMS - 1; d >= 0; --d) {
        const int k = d - MN_BMM_MAX_BATCH_DIMS + rank - 2;   /* output batch dim index, < 0: none */
        const int kl = k - (rank - lhs->ndim), kr = k - (rank - rhs->ndim);
        const int32_t nl = kl >= 0 ? lhs->dims[kl] : 1, nr = kr >= 0 ? rhs->dims[kr] : 1;
        const int32_t n = nl > nr ? nl : nr;
        if ((nl != n && nl != 1) || (nr != n && nr != 1) || (k >= 0 && out->dims[k] != n)) {
            return mn_fail(ctx, MN_ERR_MODEL, "batch dimensions %d and %d do not broadcast to the output", (int)nl, (int)nr);
        }
        p->batch[d] = n;
        p->lhs_stride[d] = nl == 1 ? 0 : ls;
        p->rhs_stride[d] = nr == 1 ? 0 : rs;
        ls *= nl;
        rs *= nr;
        p->batches *= n;
    }
    if (p->rows < 1 || p->cols < 1 || p->depth < 1 || p->batches < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty operands");
    }
    p->dtype = lhs->dtype;
    p->hybrid = 0;
    if (lhs->dtype == MN_FLOAT32 && rhs->dtype == MN_INT8) {
        if (out->dtype != MN_FLOAT32) {
            return ref_fail_combo(ctx, lhs, out);
        }
        REF_TRY(ref_need_quant(ctx, "rhs", rhs));
        if (mn_tensor_q_count(rhs) != 1 || mn_tensor_zero_point(rhs, 0) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid rhs must be per-tensor with zero point 0 (%d scales, zero point %d)",
                (int)mn_tensor_q_count(rhs), (int)mn_tensor_zero_point(rhs, 0));
        }
        p->hybrid = 1;
        p->asymmetric = mn_opt_bool(node, MN_BMM_ASYMMETRIC_QUANTIZE_INPUTS, false);
        p->rhs_scale = mn_tensor_scale(rhs, 0);
        node->user_data = p;
        return mn_request_scratch(ctx, mn_bmm_hybrid_scratch(p), &p->scratch);
    }
    if (rhs->dtype != lhs->dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "lhs dtype %s with rhs dtype %s not supported (hybrid)",
            mn_dtype_name(lhs->dtype), mn_dtype_name(rhs->dtype));
    }
    if (out->dtype != lhs->dtype) {
        return ref_fail_combo(ctx, lhs, out);
    }
    if (lhs->dtype == MN_INT8 || lhs->dtype == MN_INT16) {
        REF_TRY(ref_need_quant(ctx, "lhs", lhs));
        REF_TRY(ref_need_quant(ctx, "rhs", rhs));
        REF_TRY(ref_need_quant(ctx, "output", out));
        if (lhs->dtype == MN_INT16 && (mn_tensor_zero_point(lhs, 0) || mn_tensor_zero_point(rhs, 0) || mn_tensor_zero_point(out, 0))) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 zero points must be 0 (got %d/%d/%d)",
                (int)mn_tensor_zero_point(lhs, 0), (int)mn_tensor_zero_point(rhs, 0), (int)mn_tensor_zero_point(out, 0));
        }
        p->lhs_offset = -mn_tensor_zero_point(lhs, 0);
        p->rhs_offset = -mn_tensor_zero_point(rhs, 0);
        p->output_offset = mn_tensor_zero_point(out, 0);
        int s;
        mn_quantize_multiplier((double)(mn_tensor_scale(lhs, 0) * mn_tensor_scale(rhs, 0)) / (double)mn_tensor_scale(out, 0), &p->mult, &s);
        if (s > (lhs->dtype == MN_INT16 ? 14 : 30)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output multiplier 2^%d too large", s);
        }
        p->shift = s;
        REF_TRY(ref_act_range_q(ctx, MN_ACT_NONE, out, &p->act_min, &p->act_max));
    } else if (lhs->dtype != MN_FLOAT32) {
        return ref_fail_dtype(ctx, "lhs", lhs);
    }
    node->user_data = p;
    return MN_OK;
}

static mn_status_t bmm_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const mn_bmm_params_t *p = (const mn_bmm_params_t *)node->user_data;
    const mn_tensor_t *lhs = mn_input(ctx, node, 0), *rhs = mn_input(ctx, node, 1);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    if (p->hybrid) {
        mn_batch_matmul_hybrid(p, (const float *)lhs->data, (const int8_t *)rhs->data, (float *)out->data,
            mn_get_scratch(ctx, p->scratch));
    } else if (p->dtype == MN_FLOAT32) {
        mn_batch_matmul_f32(p, (const float *)lhs->data, (const float *)rhs->data, (float *)out->data);
    } else if (p->dtype == MN_INT8) {
        mn_batch_matmul_s8(p, (const int8_t *)lhs->data, (const int8_t *)rhs->data, (int8_t *)out->data);
    } else {
        mn_batch_matmul_s16(p, (const int16_t *)lhs->data, (const int16_t *)rhs->data, (int16_t *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_BATCH_MATMUL = { NULL, bmm_prepare, bmm_eval, NULL, NULL };

#endif /* MICRONN_OP_BATCH_MATMUL */
