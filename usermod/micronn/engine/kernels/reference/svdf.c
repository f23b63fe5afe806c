/* SVDF reference kernel (bit-exact with TFLite's reference EvalIntegerSVDF
 * for int8 input / int16 state; TFLM's EvalIntegerSvdfReference for int8 weights_time and state;
 * float as EvalFloatSVDF).
 *
 * State layout: [batch][filter][memory], newest activation in the last
 * memory slot.  Each invoke first shifts every filter's memory left by one,
 * then writes the new feature activation into the last slot. */
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_SVDF

void mn_svdf_shift_state_s16(int16_t *state, size_t total) {
    if (total > 1) {
        memmove(state, state + 1, (total - 1) * sizeof(int16_t));
    }
}

/* The state-typed steps of the integer SVDF, for an int16 state (int16 weights_time) and an int8
 * state (int8 weights_time, as TFLM's EvalIntegerSvdfReference<int8_t>): shift every filter's
 * memory left by one (shifting the whole buffer is the same: the element crossing a boundary lands
 * in the slot overwritten next), the feature matmul into the newest slot, saturated to the state's
 * type, then per filter dot(weights_time[f], state[f]) into scratch. int32 sums wrap as the C++
 * reference does, without signed-overflow UB. */
#define SVDF_S8_STAGES(NAME, ST, SMIN, SMAX) \
    static void NAME(const mn_svdf_params_t *p, const int8_t *input, const int8_t *w_feature, \
        const ST *w_time, ST *state, int32_t *scratch) { \
        const int nb = p->batches, ni = p->input_size, nf = p->filters, nm = p->memory; \
        const size_t total = (size_t)nb * nf * nm; \
        if (total > 1) { \
            memmove(state, state + 1, (total - 1) * sizeof(ST)); \
        } \
        for (int b = 0; b < nb; ++b) { \
            const int8_t *in = input + (size_t)b * ni; \
            ST *dst = state + (size_t)b * nf * nm + (nm - 1); \
            const int8_t *w = w_feature; \
            for (int f = 0; f < nf; ++f) { \
                uint32_t acc = 0; \
                for (int c = 0; c < ni; ++c) { \
                    acc += (uint32_t)((int32_t)w[c] * ((int32_t)in[c] - p->input_zp)); \
                } \
                w += ni; \
                *dst = (ST)mn_clamp_i32(mn_mul_by_qm((int32_t)acc, p->mult1, p->shift1), SMIN, SMAX); \
                dst += nm; \
            } \
        } \
        for (int b = 0; b < nb; ++b) { \
            const ST *s = state + (size_t)b * nf * nm; \
            const ST *wt = w_time; \
            int32_t *sc = scratch + (size_t)b * nf; \
            for (int f = 0; f < nf; ++f) { \
                uint32_t acc = 0; \
                for (int m = 0; m < nm; ++m) { \
                    acc += (uint32_t)((int32_t)wt[m] * (int32_t)s[m]); \
                } \
                sc[f] = (int32_t)acc; \
                wt += nm; \
                s += nm; \
            } \
        } \
    }

SVDF_S8_STAGES(svdf_stages_s16, int16_t, INT16_MIN, INT16_MAX)
SVDF_S8_STAGES(svdf_stages_s8, int8_t, INT8_MIN, INT8_MAX)

void mn_svdf_s8(const mn_svdf_params_t *p, const int8_t *input,
    const int8_t *w_feature, const int16_t *w_time, const int32_t *bias,
    int16_t *state, int32_t *scratch, int32_t *scratch_out, int8_t *output) {
    svdf_stages_s16(p, input, w_feature, w_time, state, scratch);
    mn_svdf_s8_output(p, bias, scratch, scratch_out, output);
}

void mn_svdf_s8_state8(const mn_svdf_params_t *p, const int8_t *input,
    const int8_t *w_feature, const int8_t *w_time, const int32_t *bias,
    int8_t *state, int32_t *scratch, int32_t *scratch_out, int8_t *output) {
    svdf_stages_s8(p, input, w_feature, w_time, state, scratch);
    mn_svdf_s8_output(p, bias, scratch, scratch_out, output);
}

void mn_svdf_s8_output(const mn_svdf_params_t *p, const int32_t *bias, const int32_t *scratch,
    int32_t *scratch_out, int8_t *output) {
    const int nb = p->batches, nf = p->filters, nu = p->units, nr = p->rank;
    /* Bias, rank reduction, rescale.  TFLite ignores the fused activation
     * on this path (the output range of int8 already bounds it). */
    for (int b = 0; b < nb; ++b) {
        int32_t *o = scratch_out + (size_t)b * nu;
        const int32_t *sc = scratch + (size_t)b * nf;
        for (int u = 0; u < nu; ++u) {
            uint32_t acc = bias ? (uint32_t)bias[u] : 0u;
            for (int r = 0; r < nr; ++r) {
                acc += (uint32_t)*sc++;
            }
            o[u] = (int32_t)acc;
        }
    }
    const int32_t mult2 = p->mult2, out_zp = p->output_zp;
    const int shift2 = p->shift2;
    for (int i = 0; i < nb * nu; ++i) {
        const int32_t y = mn_add_wrap(mn_mul_by_qm(scratch_out[i], mult2, shift2), out_zp);
        output[i] = (int8_t)mn_clamp_i32(y, INT8_MIN, INT8_MAX);
    }
}

void mn_svdf_s8_units(const mn_svdf_params_t *p, const int32_t *bias, const int32_t *t, int n, int8_t *out,
    mn_svdf_units_t *us) {
    for (int k = 0; k < n; ++k) {
        if (us->filters == 0) {
            us->sum = bias ? (uint32_t)bias[us->unit] : 0u;
        }
        us->sum += (uint32_t)t[k];
        if (++us->filters == p->rank) {
            const int32_t y = mn_add_wrap(mn_mul_by_qm((int32_t)us->sum, p->mult2, p->shift2), p->output_zp);
            out[us->unit++] = (int8_t)mn_clamp_i32(y, INT8_MIN, INT8_MAX);
            us->filters = 0;
        }
    }
}

static void svdf_shift_state_f32(const mn_svdf_params_t *p, float *state) {
    const size_t total = (size_t)p->batches * p->filters * p->memory;
    if (total > 1) {
        memmove(state, state + 1, (total - 1) * sizeof(float));
    }
}

/* The float steps after the feature stage: time weights over each filter's memory, rank
 * reduction, bias and activation (TFLite's ApplyTimeWeightsBiasAndActivation). */
static void svdf_time_f32(const mn_svdf_params_t *p, int act, const float *w_time, const float *bias,
    const float *state, float *scratch, float *output) {
    const int nb = p->batches, nf = p->filters;
    const int nu = p->units, nr = p->rank, nm = p->memory;
    float amin = -3.402823466e38f, amax = 3.402823466e38f;
    mn_act_range_f32(act, &amin, &amax);
    for (int b = 0; b < nb; ++b) {
        const float *s = state + (size_t)b * nf * nm;
        const float *wt = w_time;
        float *sc = scratch + (size_t)b * nf;
        for (int f = 0; f < nf; ++f) {
            float acc = 0.0f;
            for (int m = 0; m < nm; ++m) {
                acc += wt[m] * s[m];
            }
            sc[f] = acc;
            wt += nm;
            s += nm;
        }
    }
    for (int b = 0; b < nb; ++b) {
        float *o = output + (size_t)b * nu;
        const float *sc = scratch + (size_t)b * nf;
        for (int u = 0; u < nu; ++u) {
            float acc = 0.0f;
            for (int r = 0; r < nr; ++r) {
                acc += *sc++;
            }
            const float bv = bias ? bias[u] : 0.0f;
            o[u] = mn_clamp_f32(bv + acc, amin, amax);
        }
    }
}

void mn_svdf_f32(const mn_svdf_params_t *p, int act, const float *input,
    const float *w_feature, const float *w_time, const float *bias,
    float *state, float *scratch, float *output) {
    const int nb = p->batches, ni = p->input_size, nf = p->filters;
    const int nm = p->memory;
    svdf_shift_state_f32(p, state);
    for (int b = 0; b < nb; ++b) {
        const float *in = input + (size_t)b * ni;
        float *dst = state + (size_t)b * nf * nm + (nm - 1);
        const float *w = w_feature;
        for (int f = 0; f < nf; ++f) {
            float acc = 0.0f;
            for (int c = 0; c < ni; ++c) {
                acc += w[c] * in[c];
            }
            w += ni;
            *dst = acc;
            dst += nm;
        }
    }
    svdf_time_f32(p, act, w_time, bias, state, scratch, output);
}

void mn_svdf_hybrid(const mn_svdf_params_t *p, int act, int asymmetric, const float *input,
    const int8_t *w_feature, float wf_scale, const float *w_time, const float *bias,
    float *state, float *scratch, int8_t *qbuf, float *output) {
    const int nb = p->batches, ni = p->input_size, nf = p->filters;
    const int nm = p->memory;
    svdf_shift_state_f32(p, state);
    for (int b = 0; b < nb; ++b) {
        int32_t zp;
        const float row_scale = mn_quantize_dynamic_s8(input + (size_t)b * ni, (size_t)ni, qbuf, asymmetric, &zp)
            * wf_scale;
        float *dst = state + (size_t)b * nf * nm + (nm - 1);
        const int8_t *w = w_feature;
        for (int f = 0; f < nf; ++f) {
            uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
            for (int c = 0; c < ni; ++c) {
                acc += (uint32_t)((int32_t)w[c] * ((int32_t)qbuf[c] - zp));
            }
            w += ni;
            *dst = (float)(int32_t)acc * row_scale;
            dst += nm;
        }
    }
    svdf_time_f32(p, act, w_time, bias, state, scratch, output);
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

/* 24 bytes, pointer-free (the other sizes are read from the input at eval, svdf_params): int8 and
 * float32 ops keep it, followed by the variant's data when it keeps any (SVDF_VDATA), as one
 * MN_TABLE_KDATA table, which a model made by `micronn plan --tables` carries; hybrid ops keep an
 * svdf_hybrid_data_t in the arena. The compute variant is node->variant. */
typedef struct {
    int32_t mult1, mult2;
    int16_t input_zp, output_zp;
    int16_t scratch;                       /* index: the reference's (int8: filter then unit sums) and
                                            * the float paths' scratch; -1 with a variant */
    int16_t rank, units, memory;           /* (eval needs no weights' descriptor) */
    int8_t shift1, shift2;                 /* within +-31 (mn_quantize_multiplier) */
    uint8_t act;                           /* fused activation, and SVDF_STATE8 / SVDF_HYBRID / SVDF_VDATA */
    uint8_t dtype;
} svdf_data_t;

#define SVDF_ACT 0x1f
#define SVDF_STATE8 0x20                   /* int8: int8 weights_time and state (TFLM) */
#define SVDF_HYBRID 0x40                   /* an svdf_hybrid_data_t */
#define SVDF_VDATA 0x80                    /* the variant's data follows, SVDF_HEAD bytes from the start */
#define SVDF_HEAD ((sizeof(svdf_data_t) + 7u) & ~(size_t)7u)

/* The full parameters, for the compute functions. */
static void svdf_params(const svdf_data_t *d, const mn_tensor_t *in, mn_svdf_params_t *p) {
    p->batches = in->dims[0];
    p->input_size = in->dims[1];
    p->rank = d->rank;
    p->units = d->units;
    p->filters = d->units * d->rank;
    p->memory = d->memory;
    p->input_zp = d->input_zp;
    p->output_zp = d->output_zp;
    p->mult1 = d->mult1;
    p->mult2 = d->mult2;
    p->shift1 = d->shift1;
    p->shift2 = d->shift2;
}

typedef struct {
    svdf_data_t d;
    uint8_t asymmetric;
    float wf_scale;
    float *wt_f;                           /* weights_time dequantized in prepare, as TFLite on first use */
    int32_t qbuf_idx;                      /* scratch: one quantized input row */
} svdf_hybrid_data_t;

/* Hybrid: int8 weights_feature and weights_time with float32 input, state, bias and output; the
 * kernel data is the arena's svdf_hybrid_data_t (d is copied into it at the end of prepare). */
static mn_status_t svdf_prepare_hybrid(mn_ctx_t *ctx, mn_node_t *node, svdf_hybrid_data_t **out_hy,
    const mn_svdf_params_t *p, const mn_tensor_t *wf, const mn_tensor_t *wt, const mn_tensor_t *bias, const mn_tensor_t *state, const mn_tensor_t *out) {
    if (wt->dtype != MN_INT8) {
        return ref_fail_dtype(ctx, "weights_time (hybrid, with int8 weights_feature)", wt);
    }
    if (state->dtype != MN_FLOAT32 || out->dtype != MN_FLOAT32 || (bias && bias->dtype != MN_FLOAT32)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid SVDF needs float32 state, bias and output");
    }
    REF_TRY(ref_need_quant(ctx, "weights_feature", wf));
    REF_TRY(ref_need_quant(ctx, "weights_time", wt));
    if (mn_tensor_q_count(wf) != 1 || mn_tensor_q_count(wt) != 1 || mn_tensor_zero_point(wf, 0) != 0 || mn_tensor_zero_point(wt, 0) != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid SVDF weights must be per-tensor with zero point 0");
    }
    if (!(wt->flags & MN_TF_CONST)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid SVDF weights_time must be a constant");
    }
    const size_t n = (size_t)p->filters * p->memory;
    svdf_hybrid_data_t *hy = (svdf_hybrid_data_t *)mn_alloc_persistent(ctx, sizeof *hy);
    if (!hy || !(hy->wt_f = (float *)mn_alloc_persistent(ctx, n * sizeof(float)))) {
        return MN_ERR_ARENA;
    }
    for (size_t i = 0; i < n && !mn_sizing_only(ctx); ++i) {
        hy->wt_f[i] = (float)((const int8_t *)wt->data)[i] * mn_tensor_scale(wt, 0);
    }
    *out_hy = hy;
    hy->asymmetric = mn_opt_i8(node, MN_SVDF_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
    hy->wf_scale = mn_tensor_scale(wf, 0);
    return mn_request_scratch(ctx, (size_t)p->input_size, &hy->qbuf_idx);
}

/* Last step of int8 prepare: the compute variant (its data after the kernel data, SVDF_VDATA). */
static const mn_svdf_s8_variant_t *svdf_select(mn_ctx_t *ctx, mn_node_t *node, const mn_svdf_params_t *p,
    const mn_tensor_t *wf) {
    node->variant = ref_weights_constant(wf, NULL) ? mn_variant_id_svdf_s8(mn_select_svdf_s8(ctx, p)) : 0;
    return mn_variant_svdf_s8(node->variant);
}

/* Where eval reads the kernel data: the model's copy or the arena's (MN_TABLE_KDATA). */
static mn_status_t svdf_keep(mn_ctx_t *ctx, mn_node_t *node, svdf_data_t *d, const mn_svdf_s8_variant_t *v,
    const mn_svdf_params_t *p, const mn_tensor_t *wf) {
    const size_t data = v && v->data_bytes ? v->data_bytes(p) : 0;
    if (!data) {
        node->user_data = (void *)mn_kernel_data(ctx, node, d, sizeof *d);
        return node->user_data ? MN_OK : MN_ERR_ARENA;
    }
    void *block;
    bool fill;
    d->act |= SVDF_VDATA;
    if (!mn_table_alloc(ctx, node, MN_TABLE_KDATA, 0, SVDF_HEAD + data, &block, &fill)) {
        return MN_ERR_ARENA;
    }
    memcpy(block, d, sizeof *d);
    if (fill) {
        v->precompute(p, (const int8_t *)wf->data, (uint8_t *)block + SVDF_HEAD);
    }
    node->user_data = (void *)mn_table_keep(ctx, node, MN_TABLE_KDATA, block, SVDF_HEAD + data);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

static const char *svdf_variant(const mn_node_t *node) {
    const mn_svdf_s8_variant_t *v = mn_variant_svdf_s8(node->variant);
    return v ? v->name : NULL;
}

static mn_status_t svdf_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(wf, ctx, node, 1, "weights_feature");
    REF_INPUT(wt, ctx, node, 2, "weights_time");
    mn_tensor_t *bias = mn_input(ctx, node, 3);
    REF_INPUT(state, ctx, node, 4, "activation_state");
    REF_OUTPUT(out, ctx, node, 0);
    const int rank = mn_opt_i32(node, MN_SVDF_RANK, 0);
    const int act = mn_opt_i8(node, MN_SVDF_ACTIVATION, MN_ACT_NONE);

    if (in->ndim != 2 || wf->ndim != 2 || wt->ndim != 2) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input/weights_feature/weights_time must be 2-D (got %d/%d/%d)",
            in->ndim, wf->ndim, wt->ndim);
    }
    svdf_data_t data, *d = &data;
    memset(d, 0, sizeof *d);   /* padding too: the model's copy is compared byte for byte */
    svdf_hybrid_data_t *hy = NULL;
    const mn_svdf_s8_variant_t *v = NULL;
    mn_svdf_params_t params = { 0 }, *p = &params;
    p->batches = in->dims[0];
    p->input_size = in->dims[1];
    p->filters = wf->dims[0];
    p->memory = wt->dims[1];
    p->rank = rank;
    if (p->memory < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "weights_time memory size %d not supported", p->memory);
    }
    if (rank < 1 || rank > INT16_MAX || p->filters % rank != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "rank %d does not divide %d filters", rank, p->filters);
    }
    d->rank = (int16_t)rank;
    p->units = p->filters / rank;
    if (p->units > INT16_MAX || p->memory > INT16_MAX) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%d units or memory size %d not supported (at most %d)",
            p->units, p->memory, INT16_MAX);
    }
    d->units = (int16_t)p->units;
    d->memory = (int16_t)p->memory;
    if (wf->dims[1] != p->input_size || wt->dims[0] != p->filters) {
        return mn_fail(ctx, MN_ERR_MODEL, "weights shapes do not match input size %d / %d filters",
            p->input_size, p->filters);
    }
    if (mn_tensor_count(state) != (size_t)p->batches * p->filters * p->memory) {
        return mn_fail(ctx, MN_ERR_MODEL, "activation_state has %zu elements, expected %zu",
            mn_tensor_count(state), (size_t)p->batches * p->filters * p->memory);
    }
    if (mn_tensor_count(out) != (size_t)p->batches * p->units) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %zu elements, expected %zu",
            mn_tensor_count(out), (size_t)p->batches * p->units);
    }
    if (bias && (int32_t)mn_tensor_count(bias) != p->units) {
        return mn_fail(ctx, MN_ERR_MODEL, "bias has %d elements, expected %d",
            (int)mn_tensor_count(bias), p->units);
    }
    if (act < 0 || act > SVDF_ACT) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %d not supported", act);
    }
    d->act = (uint8_t)act;
    d->dtype = in->dtype;
    node->variant = 0;
    size_t scratch;   /* bytes per batch row */
    if (in->dtype == MN_FLOAT32 && wf->dtype == MN_INT8) {
        float lo, hi;
        REF_TRY(ref_act_range_f(ctx, act, &lo, &hi));
        REF_TRY(svdf_prepare_hybrid(ctx, node, &hy, p, wf, wt, bias, state, out));
        scratch = (size_t)p->filters * sizeof(float);
    } else if (in->dtype == MN_FLOAT32) {
        if (wf->dtype != MN_FLOAT32 || wt->dtype != MN_FLOAT32 || state->dtype != MN_FLOAT32 ||
            out->dtype != MN_FLOAT32 || (bias && bias->dtype != MN_FLOAT32)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "float32 input needs float32 weights/state/output, or int8 weights (hybrid); weights_feature is %s",
                mn_dtype_name(wf->dtype));
        }
        float lo, hi;
        REF_TRY(ref_act_range_f(ctx, act, &lo, &hi));
        scratch = (size_t)p->filters * sizeof(float);
    } else if (in->dtype == MN_INT8) {
        if (wf->dtype != MN_INT8) {
            return ref_fail_dtype(ctx, "weights_feature (with int8 input)", wf);
        }
        /* weights_time int16 (TFLite) or int8 (TFLM), the state of the same type: TFLM reads
         * the state as weights_time's type whatever its declared type, so a mix is refused. */
        if (wt->dtype != MN_INT16 && wt->dtype != MN_INT8) {
            return ref_fail_dtype(ctx, "weights_time (with int8 input)", wt);
        }
        if (state->dtype != wt->dtype) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "activation_state is %s, weights_time %s: they must be of one type",
                mn_dtype_name(state->dtype), mn_dtype_name(wt->dtype));
        }
        if (bias && bias->dtype != MN_INT32) {
            return ref_fail_dtype(ctx, "bias (with int8 input)", bias);
        }
        if (out->dtype != MN_INT8) {
            return ref_fail_combo(ctx, in, out);
        }
        /* The integer SVDF applies no activation: TFLite requires RELU and relies on the int8
         * output range instead of clamping at the zero point; TFLM ignores the field. NONE is
         * then exact too; any other activation would be silently dropped, so it is refused. */
        if (act != MN_ACT_RELU && act != MN_ACT_NONE) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                "fused activation %s not supported with int8 input (only NONE or RELU)", mn_fused_act_name(act));
        }
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "weights_feature", wf));
        REF_TRY(ref_need_quant(ctx, "weights_time", wt));
        REF_TRY(ref_need_quant(ctx, "activation_state", state));
        REF_TRY(ref_need_quant(ctx, "output", out));
        if (mn_tensor_zero_point(state, 0) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "activation_state zero point %d not supported (must be 0)",
                (int)mn_tensor_zero_point(state, 0));
        }
        /* As TFLite: scale products/quotients in float, then widened. */
        const float s1 = mn_tensor_scale(in, 0) * mn_tensor_scale(wf, 0) / mn_tensor_scale(state, 0);
        const float s2 = mn_tensor_scale(state, 0) * mn_tensor_scale(wt, 0) / mn_tensor_scale(out, 0);
        mn_quantize_multiplier((double)s1, &p->mult1, &p->shift1);
        mn_quantize_multiplier((double)s2, &p->mult2, &p->shift2);
        p->input_zp = mn_tensor_zero_point(in, 0);
        p->output_zp = mn_tensor_zero_point(out, 0);
        if (p->input_zp < -128 || p->input_zp > 127 || p->output_zp < -128 || p->output_zp > 127) {
            return mn_fail(ctx, MN_ERR_MODEL, "int8 zero points %d/%d out of range", (int)p->input_zp,
                (int)p->output_zp);
        }
        d->mult1 = p->mult1;
        d->mult2 = p->mult2;
        d->shift1 = (int8_t)p->shift1;
        d->shift2 = (int8_t)p->shift2;
        d->input_zp = (int16_t)p->input_zp;
        d->output_zp = (int16_t)p->output_zp;
        if (wt->dtype == MN_INT8) {
            d->act |= SVDF_STATE8;   /* the reference kernel: the variants take an int16 state */
        } else {
            v = svdf_select(ctx, node, p, wf);
        }
        scratch = ((size_t)p->filters + p->units) * sizeof(int32_t);   /* filter sums, then unit sums */
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    d->scratch = -1;
    if (!v) {   /* the variants keep nothing per filter or unit */
        int32_t idx;
        REF_TRY(mn_request_scratch(ctx, (size_t)p->batches * scratch, &idx));
        if (idx > INT16_MAX) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "more than %d scratch buffers in the model", INT16_MAX);
        }
        d->scratch = (int16_t)idx;
    }
    if (hy) {
        d->act |= SVDF_HYBRID;
        memcpy(&hy->d, d, sizeof *d);
        node->user_data = hy;
        return MN_OK;
    }
    return svdf_keep(ctx, node, d, v, p, wf);
}

static mn_status_t svdf_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const svdf_data_t *d = (const svdf_data_t *)node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *state = mn_input(ctx, node, 4);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    const void *wf = mn_input_data(ctx, node, 1), *wt = mn_input_data(ctx, node, 2);
    const void *bias = mn_input_data(ctx, node, 3);
    void *scratch = mn_get_scratch(ctx, d->scratch);
    mn_svdf_params_t p;
    svdf_params(d, in, &p);
    const int act = d->act & SVDF_ACT;
    if (node->variant) {
        const mn_vbuf_t buf = { NULL, (d->act & SVDF_VDATA) ? (const uint8_t *)d + SVDF_HEAD : NULL };
        mn_variant_svdf_s8(node->variant)->run(&p, (const int8_t *)in->data, (const int8_t *)wf, (const int16_t *)wt,
            (const int32_t *)bias, (int16_t *)state->data, (int8_t *)out->data, &buf);
    } else if (d->act & SVDF_STATE8) {
        mn_svdf_s8_state8(&p, (const int8_t *)in->data, (const int8_t *)wf, (const int8_t *)wt, (const int32_t *)bias,
            (int8_t *)state->data, (int32_t *)scratch, (int32_t *)scratch + (size_t)p.batches * p.filters,
            (int8_t *)out->data);
    } else if (d->dtype == MN_INT8) {
        mn_svdf_s8(&p, (const int8_t *)in->data, (const int8_t *)wf, (const int16_t *)wt, (const int32_t *)bias,
            (int16_t *)state->data, (int32_t *)scratch, (int32_t *)scratch + (size_t)p.batches * p.filters,
            (int8_t *)out->data);
    } else if (d->act & SVDF_HYBRID) {
        const svdf_hybrid_data_t *hy = (const svdf_hybrid_data_t *)d;
        mn_svdf_hybrid(&p, act, hy->asymmetric, (const float *)in->data, (const int8_t *)wf, hy->wf_scale,
            hy->wt_f, (const float *)bias, (float *)state->data, (float *)scratch,
            (int8_t *)mn_get_scratch(ctx, hy->qbuf_idx), (float *)out->data);
    } else {
        mn_svdf_f32(&p, act, (const float *)in->data, (const float *)wf, (const float *)wt,
            (const float *)bias, (float *)state->data, (float *)scratch, (float *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SVDF = { NULL, svdf_prepare, svdf_eval, NULL, svdf_variant };

#endif /* MICRONN_OP_SVDF */
