/* SOFTMAX reference kernel: prepare (softmax.c: compute and eval). Prepare-time only: built with the
 * port's optimisation setting, not the kernels' MICRONN_COPT (micropython.mk). */
#include "mn_ref.h"

#if MICRONN_OP_SOFTMAX

#include "ref_glue.h"

int mn_softmax_q_init(mn_softmax_q_t *p, float input_scale, float beta) {
    int shift;
    mn_softmax_scaling((double)beta, (double)input_scale, 5, &p->input_mult, &shift);
    if (shift < 0) {
        return -1; /* beta * input_scale < 2^-26: TFLite rejects it too */
    }
    p->input_left_shift = shift;
    p->diff_min = (int32_t)(-1.0 * mn_input_radius(5, shift));
    return 0;
}

static double exp_f64(double x) {
    return MN_EXP_F64(x);
}

static double one_over_one_plus_f64(double x) {
    return 1.0 / (1.0 + x);
}

/* int16 -> int16: TFLite's tables (built in double, after the struct) and input rescaling so that
 * [-65535, 0] covers [-10, 0]. */
static mn_status_t softmax_prepare_s16(mn_ctx_t *ctx, mn_node_t *node, const mn_tensor_t *in,
    const mn_tensor_t *out, float beta, ref_softmax_data_t *head) {
    if (out->dtype != MN_INT16) {
        return ref_fail_combo(ctx, in, out);
    }
    REF_TRY(ref_unary_quant(ctx, in, out));
    if (mn_absf(mn_tensor_scale(out, 0) - 1.0f / 32768) > 0.001f / 32768) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 output must have scale 1/32768");
    }
    if (in->ndim > 4) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 input of rank %d (at most 4)", (int)in->ndim);
    }
    int shift;
    mn_quantize_multiplier((double)(mn_tensor_scale(in, 0) * beta) / (10.0 / 65535.0), &head->u.q16.mult, &shift);
    head->u.q16.shift = shift;
    const size_t bytes = REF_SOFTMAX_HEAD + 2u * MN_LUT_S16_SIZE * sizeof(int16_t);
    void *block;
    bool fill;
    if (!mn_table_alloc(ctx, node, MN_TABLE_KDATA, 0, bytes, &block, &fill)) {
        return MN_ERR_ARENA;
    }
    memcpy(block, head, sizeof *head);
    if (fill) {
        int16_t *luts = (int16_t *)((uint8_t *)block + REF_SOFTMAX_HEAD);
        const int32_t range = INT16_MAX - INT16_MIN;
        mn_lut_s16_init_f64(luts, 10.0 / range, INT16_MAX, 2.0 / range, 0, exp_f64);
        mn_lut_s16_init_f64(luts + MN_LUT_S16_SIZE, 1.0 / range, INT16_MIN, 2.0 / range, 0, one_over_one_plus_f64);
    }
    node->user_data = (void *)mn_table_keep(ctx, node, MN_TABLE_KDATA, block, bytes);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

mn_status_t ref_softmax_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_OUTPUT(out, ctx, node, 0);
    const float beta = mn_opt_f32(node, MN_SOFTMAX_BETA, 0.0f);
    if (in->ndim < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input must have at least 1 dimension");
    }
    const size_t n = mn_tensor_count(in);
    if (mn_tensor_count(out) != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size differs from input size");
    }
    const int32_t depth = mn_dim(in, -1);
    if (depth < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty last dimension");
    }
    REF_TRY(mn_check_family(ctx, in->dtype, -1));
    if (in->dtype == MN_INT8 && out->dtype == MN_INT16) {
        REF_TRY(mn_check_family(ctx, MN_INT16, -1));   /* int16 output: int16 family as well */
    }
    ref_softmax_data_t data, *d = &data;
    memset(d, 0, sizeof *d);   /* padding too: the model's copy is compared byte for byte */
    d->depth = depth;
    d->outer = (int32_t)(n / (size_t)depth);
    d->u.beta = beta;
    d->in_dtype = in->dtype;
    d->out_dtype = out->dtype;
    if (in->dtype == MN_FLOAT32) {
        if (out->dtype != MN_FLOAT32) {
            return ref_fail_combo(ctx, in, out);
        }
    } else if (in->dtype == MN_INT8) {
        if (out->dtype != MN_INT8 && !(MICRONN_TYPE_INT16 && out->dtype == MN_INT16)) {
            return ref_fail_combo(ctx, in, out);
        }
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "output", out));
        /* The fixed-point kernel produces probabilities in the type's full
         * range: the output must be quantized accordingly. */
        const int is8 = out->dtype == MN_INT8;
        const float want_scale = is8 ? 1.0f / 256 : 1.0f / 65536;
        const int32_t want_zp = is8 ? -128 : -32768;
        if (mn_tensor_zero_point(out, 0) != want_zp || mn_absf(mn_tensor_scale(out, 0) - want_scale) > 0.001f * want_scale) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "%s output must have scale 1/%d and zero point %d (has zero point %d)",
                mn_dtype_name(out->dtype), is8 ? 256 : 65536, (int)want_zp, (int)mn_tensor_zero_point(out, 0));
        }
        if (!(beta >= 0.0f)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "negative beta not supported for int8 input");
        }
        if (mn_softmax_q_init(&d->u.q, mn_tensor_scale(in, 0), beta)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input scale * beta too small for int8 input");
        }
    } else if (MICRONN_TYPE_INT16 && in->dtype == MN_INT16) {
        return softmax_prepare_s16(ctx, node, in, out, beta, d);
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    node->user_data = (void *)mn_kernel_data(ctx, node, d, sizeof *d);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

#endif /* MICRONN_OP_SOFTMAX */
