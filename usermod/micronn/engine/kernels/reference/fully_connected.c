/* FULLY_CONNECTED reference kernel (bit-exact with LiteRT's BUILTIN_REF kernels: the int8 and
 * int16x8 requantization rounds acc * R to nearest, ties away from zero, R in double precision;
 * see mn_fc_round_fast). */
#include "mn_ref.h"

#if MICRONN_OP_FULLY_CONNECTED

void mn_fully_connected_s8(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output) {
    const int depth = p->depth, units = p->units;
    const int32_t mult = p->mult;
    const int shift = (int)p->shift;
    /* locals: the int8 output stores may alias the struct, which would force reloads */
    const int32_t w_off = p->weights_offset, in_off = p->input_offset, out_off = p->output_offset;
    const int32_t act_min = p->act_min, act_max = p->act_max;
    for (int b = 0; b < p->batches; ++b) {
        const int8_t *in = input + (size_t)b * depth;
        int8_t *out = output + (size_t)b * units;
        for (int u = 0; u < units; ++u) {
            const int8_t *w = weights + (size_t)u * depth;
            uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
            for (int d = 0; d < depth; ++d) {
                acc += (uint32_t)(((int32_t)w[d] + w_off) * ((int32_t)in[d] + in_off));
            }
            if (bias) {
                acc += (uint32_t)bias[u];
            }
            int32_t v = mn_fc_requant(p, (int32_t)acc, u, mult, shift);
            v = mn_add_wrap(v, out_off);
            out[u] = (int8_t)mn_clamp_i32(v, act_min, act_max);
        }
    }
}

void mn_fully_connected_s8_per_channel(const mn_fc_params_t *p,
    const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output) {
    const int depth = p->depth, units = p->units;
    const int32_t *const mult_pc = p->mult_pc;
    const int8_t *const shift_pc = p->shift_pc;
    /* locals: the int8 output stores may alias the struct, which would force reloads */
    const int32_t w_off = p->weights_offset, in_off = p->input_offset, out_off = p->output_offset;
    const int32_t act_min = p->act_min, act_max = p->act_max;
    for (int b = 0; b < p->batches; ++b) {
        const int8_t *in = input + (size_t)b * depth;
        int8_t *out = output + (size_t)b * units;
        for (int u = 0; u < units; ++u) {
            const int8_t *w = weights + (size_t)u * depth;
            uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
            for (int d = 0; d < depth; ++d) {
                acc += (uint32_t)(((int32_t)w[d] + w_off) * ((int32_t)in[d] + in_off));
            }
            if (bias) {
                acc += (uint32_t)bias[u];
            }
            int32_t v = mn_fc_requant(p, (int32_t)acc, u, mult_pc[u], (int)shift_pc[u]);
            v = mn_add_wrap(v, out_off);
            out[u] = (int8_t)mn_clamp_i32(v, act_min, act_max);
        }
    }
}

void mn_fully_connected_s16(const mn_fc_params_t *p,
    const int16_t *input, const int8_t *weights, const mn_bias16_t *bias, int16_t *output) {
    const int depth = p->depth, units = p->units;
    const int32_t w_off = p->weights_offset, act_min = p->act_min, act_max = p->act_max;
    for (int b = 0; b < p->batches; ++b) {
        const int16_t *in = input + (size_t)b * depth;
        int16_t *out = output + (size_t)b * units;
        for (int u = 0; u < units; ++u) {
            const int8_t *w = weights + (size_t)u * depth;
            int64_t acc = 0;
            for (int d = 0; d < depth; ++d) {
                acc += ((int32_t)w[d] + w_off) * (int32_t)in[d];
            }
            if (bias->b64) {
                acc = (int64_t)((uint64_t)acc + (uint64_t)bias->b64[u]);
            } else if (bias->b32) {
                acc += bias->b32[u];
            }
            /* the int64 accumulator as the int8 one, whatever the bias type (unlike CONV_2D,
             * see mn_requant16); past int32, R itself */
            const int32_t v = acc >= -INT32_MAX && acc <= INT32_MAX
                ? mn_fc_requant(p, (int32_t)acc, u, p->mult_pc ? p->mult_pc[u] : p->mult,
                    p->mult_pc ? p->shift_pc[u] : (int)p->shift)
                : mn_round_away_f64(acc, mn_fc_ratio(p, u));
            out[u] = (int16_t)mn_clamp_i32(v, act_min, act_max);
        }
    }
}

void mn_fully_connected_f32(int batches, int depth, int units, float act_min, float act_max,
    const float *input, const float *weights, const float *bias, float *output) {
    for (int b = 0; b < batches; ++b) {
        const float *in = input + (size_t)b * depth;
        float *out = output + (size_t)b * units;
        for (int u = 0; u < units; ++u) {
            const float *w = weights + (size_t)u * depth;
            float total = 0.0f;
            for (int d = 0; d < depth; ++d) {
                total += in[d] * w[d];
            }
            const float bv = bias ? bias[u] : 0.0f;
            out[u] = mn_clamp_f32(total + bv, act_min, act_max);
        }
    }
}

void mn_fully_connected_hybrid(const mn_fc_hybrid_params_t *p, const float *input, const int8_t *weights,
    const float *bias, float *output, int8_t *qbuf) {
    const int depth = p->depth, units = p->units;
    const float act_min = p->act_min, act_max = p->act_max;
    const float *const w_scales = p->w_scales;
    for (int b = 0; b < p->batches; ++b) {
        const float *in = input + (size_t)b * depth;
        float *out = output + (size_t)b * units;
        int32_t zp;
        float row_scale = mn_quantize_dynamic_s8(in, (size_t)depth, qbuf, p->asymmetric, &zp);
        if (!w_scales) {
            row_scale *= p->w_scale;   /* float product first, as TFLite */
        }
        for (int u = 0; u < units; ++u) {
            const int8_t *w = weights + (size_t)u * depth;
            uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
            for (int d = 0; d < depth; ++d) {
                acc += (uint32_t)((int32_t)w[d] * ((int32_t)qbuf[d] - zp));
            }
            const float scale = w_scales ? row_scale * w_scales[u] : row_scale;
            const float v = (bias ? bias[u] : 0.0f) + (float)(int32_t)acc * scale;
            out[u] = mn_clamp_f32(v, act_min, act_max);
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

/* The parameters eval needs, narrowed (zero points and clamps fit int16; the sizes are read from
 * the tensors), unpacked into an mn_fc_params_t on the stack at eval (fc_params); what only one
 * path needs shares a union. Pointer-free, 20 bytes: with per-tensor weights (followed by the
 * variant's data when it keeps any) it is one MN_TABLE_KDATA table, which a model made by
 * `micronn plan --tables` carries; per-channel and hybrid ops keep a larger struct in the arena
 * (fc_pc_data_t, fc_hybrid_data_t). The compute variant is node->variant. */
typedef struct {
    union {
        struct {
            int32_t mult;               /* per-tensor */
            int16_t input_offset, output_offset;
        } q;                            /* int8 / int16 */
        struct {
            float min, max;
        } act;                          /* float32: the activation range */
    } k;
    int16_t act_min, act_max;
    int16_t weights_offset;
    int16_t scratch;            /* the variant's scratch buffer index, or -1; hybrid: the quantized row */
    int8_t shift;
    uint8_t dtype;
    uint8_t form;               /* FC_* */
} fc_data_t;

#define FC_PER_CHANNEL 1        /* an fc_pc_data_t */
#define FC_HYBRID 2             /* an fc_hybrid_data_t */
#define FC_VDATA 4              /* the variant's data follows, FC_HEAD bytes from the start */
#define FC_HEAD ((sizeof(fc_data_t) + 7u) & ~(size_t)7u)

typedef struct {
    fc_data_t d;
    const int32_t *mult_pc;     /* per-channel multipliers, then shifts (ref_shifts) */
    const void *vdata;          /* the variant's persistent data, or NULL */
} fc_pc_data_t;

typedef struct {
    fc_data_t d;
    mn_fc_hybrid_params_t h;    /* float32 input, int8 weights */
} fc_hybrid_data_t;

static const void *fc_vdata(const fc_data_t *d) {
    if (d->form & FC_PER_CHANNEL) {
        return ((const fc_pc_data_t *)d)->vdata;
    }
    return (d->form & FC_VDATA) ? (const uint8_t *)d + FC_HEAD : NULL;
}

/* The scales of R (mn_fc_ratio), read from the tensors (nothing kept in the arena). */
static void fc_scales(const mn_tensor_t *in, const mn_tensor_t *w, const mn_tensor_t *out, mn_fc_params_t *p) {
    p->in_scale = mn_tensor_scale(in, 0);
    p->out_scale = mn_tensor_scale(out, 0);
    p->w_scale = mn_tensor_scale(w, 0);
    p->w_scales = mn_tensor_q_count(w) > 1 ? mn_tensor_scales(w) : NULL;
}

/* The full parameters, for the compute functions. The sizes come from the activations (prepare
 * checked they match the weights), so eval only needs the weights' data. */
static void fc_params(const fc_data_t *d, const mn_tensor_t *in, const mn_tensor_t *w, const mn_tensor_t *out,
    mn_fc_params_t *p) {
    p->units = mn_dim(out, -1);
    p->batches = p->units ? (int)(mn_tensor_count(out) / (size_t)p->units) : 0;
    p->depth = p->batches ? (int)(mn_tensor_count(in) / (size_t)p->batches) : 0;
    p->input_offset = d->k.q.input_offset;
    p->weights_offset = d->weights_offset;
    p->output_offset = d->k.q.output_offset;
    p->act_min = d->act_min;
    p->act_max = d->act_max;
    p->mult = d->k.q.mult;
    p->shift = d->shift;
    p->mult_pc = (d->form & FC_PER_CHANNEL) ? ((const fc_pc_data_t *)d)->mult_pc : NULL;
    p->shift_pc = p->mult_pc ? ref_shifts(p->mult_pc, p->units) : NULL;
    fc_scales(in, w, out, p);
}

static bool fits_i16(int32_t v) {
    return v >= INT16_MIN && v <= INT16_MAX;
}

/* Keep what eval needs of the integer parameters (shifts are within +-31). */
static mn_status_t fc_pack(mn_ctx_t *ctx, fc_data_t *d, const mn_fc_params_t *p) {
    if (!fits_i16(p->input_offset) || !fits_i16(p->weights_offset) || !fits_i16(p->output_offset)) {
        return mn_fail(ctx, MN_ERR_MODEL, "zero points %d/%d/%d out of range",
            (int)-p->input_offset, (int)-p->weights_offset, (int)p->output_offset);
    }
    d->k.q.mult = p->mult;
    d->k.q.input_offset = (int16_t)p->input_offset;
    d->k.q.output_offset = (int16_t)p->output_offset;
    d->weights_offset = (int16_t)p->weights_offset;
    d->act_min = (int16_t)p->act_min;
    d->act_max = (int16_t)p->act_max;
    d->shift = (int8_t)p->shift;
    return MN_OK;
}

static mn_status_t fc_request_scratch(mn_ctx_t *ctx, size_t bytes, fc_data_t *d) {
    int32_t idx;
    REF_TRY(mn_request_scratch(ctx, bytes, &idx));
    if (idx > INT16_MAX) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "more than %d scratch buffers in the model", INT16_MAX);
    }
    d->scratch = (int16_t)idx;
    return MN_OK;
}

/* The int8 variant's data: after the struct (FC_VDATA) or, per-channel, a table of its own. */
static mn_status_t fc_keep(mn_ctx_t *ctx, mn_node_t *node, fc_data_t *d, const mn_fc_s8_variant_t *v,
    const mn_fc_params_t *p, const mn_tensor_t *w, const mn_tensor_t *bias) {
    const size_t data = v && v->data_bytes ? v->data_bytes(p) : 0;
    const int32_t *b = bias ? (const int32_t *)bias->data : NULL;
    void *vd;
    bool fill;
    if (d->form & FC_PER_CHANNEL) {
        fc_pc_data_t *pc = (fc_pc_data_t *)d;
        if (data) {
            if (!mn_table_alloc(ctx, node, MN_TABLE_VARIANT, 0, data, &vd, &fill)) {
                return MN_ERR_ARENA;
            }
            if (fill) {
                v->precompute(p, (const int8_t *)w->data, b, vd);
            }
            if (!(pc->vdata = mn_table_keep(ctx, node, MN_TABLE_VARIANT, vd, data))) {
                return MN_ERR_ARENA;
            }
        }
        node->user_data = pc;
        return MN_OK;
    }
    if (!data) {
        node->user_data = (void *)mn_kernel_data(ctx, node, d, sizeof *d);
        return node->user_data ? MN_OK : MN_ERR_ARENA;
    }
    d->form |= FC_VDATA;
    if (!mn_table_alloc(ctx, node, MN_TABLE_KDATA, 0, FC_HEAD + data, &vd, &fill)) {
        return MN_ERR_ARENA;
    }
    memcpy(vd, d, sizeof *d);
    if (fill) {
        v->precompute(p, (const int8_t *)w->data, b, (uint8_t *)vd + FC_HEAD);
    }
    node->user_data = (void *)mn_table_keep(ctx, node, MN_TABLE_KDATA, vd, FC_HEAD + data);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

/* Last step of prepare: the compute variant, its persistent data and scratch, and where the kernel
 * data is kept. */
static mn_status_t fc_select(mn_ctx_t *ctx, mn_node_t *node, fc_data_t *d, const mn_fc_params_t *p,
    const mn_tensor_t *w, const mn_tensor_t *bias) {
    const mn_fc_s8_variant_t *v = NULL;
    size_t scratch = 0;
    d->scratch = -1;
    if (!ref_weights_constant(w, bias) || d->dtype == MN_INT16) {   /* int16x8: reference only */
        node->variant = 0;
    } else if (MICRONN_TYPE_INT8 && (!MICRONN_TYPE_FLOAT32 || d->dtype == MN_INT8)) {
        /* int8 or float32 here (mn_check_family refused the families not built) */
        v = mn_select_fc_s8(ctx, p);
        node->variant = mn_variant_id_fc_s8(v);
        v = mn_variant_fc_s8(node->variant);
        scratch = v && v->scratch_bytes ? v->scratch_bytes(p) : 0;
    } else if (MICRONN_TYPE_FLOAT32) {
        node->variant = mn_variant_id_fc_f32(mn_select_fc_f32(ctx, p));
    }
    if (scratch) {
        REF_TRY(fc_request_scratch(ctx, scratch, d));
    }
    return fc_keep(ctx, node, d, v, p, w, bias);
}

static const char *fc_variant(const mn_node_t *node) {
    const fc_data_t *d = (const fc_data_t *)node->user_data;
    if (!d || d->dtype == MN_INT16 || (d->form & FC_HYBRID)) {
        return NULL;
    }
    if (d->dtype == MN_INT8) {
        const mn_fc_s8_variant_t *v = mn_variant_fc_s8(node->variant);
        return v ? v->name : NULL;
    }
    const mn_fc_f32_variant_t *v = mn_variant_fc_f32(node->variant);
    return v ? v->name : NULL;
}

/* Hybrid: int8 weights (symmetric, per-tensor or per-unit scales) with float32 activations; *d
 * becomes the arena's fc_hybrid_data_t. */
static mn_status_t fc_prepare_hybrid(mn_ctx_t *ctx, mn_node_t *node, fc_data_t **d, const mn_fc_params_t *p,
    const mn_tensor_t *w) {
    REF_TRY(ref_need_quant(ctx, "weights", w));
    fc_hybrid_data_t *hd = (fc_hybrid_data_t *)mn_alloc_persistent(ctx, sizeof *hd);
    if (!hd) {
        return MN_ERR_ARENA;
    }
    memcpy(&hd->d, *d, sizeof hd->d);
    *d = &hd->d;
    mn_fc_hybrid_params_t *h = &hd->h;
    if (mn_tensor_q_count(w) > 1 && (mn_tensor_q_count(w) != p->units || w->q_dim != 0)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED,
            "weights per-channel quantization (%d scales, dim %d) does not match %d units",
            (int)mn_tensor_q_count(w), (int)w->q_dim, p->units);
    }
    for (int32_t u = 0; u < mn_tensor_q_count(w); ++u) {
        if (mn_tensor_zero_point(w, u) != 0) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "hybrid weights zero point %d not supported (must be 0)",
                (int)mn_tensor_zero_point(w, u));
        }
    }
    hd->d.form = FC_HYBRID;
    h->batches = p->batches;
    h->depth = p->depth;
    h->units = p->units;
    h->asymmetric = mn_opt_i8(node, MN_FC_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
    h->w_scale = mn_tensor_scale(w, 0);
    h->w_scales = NULL;
    if (mn_tensor_q_count(w) > 1) {
        float *s = (float *)mn_alloc_persistent(ctx, (size_t)h->units * sizeof(float));
        if (!s) {
            return MN_ERR_ARENA;
        }
        for (int u = 0; u < h->units && !mn_sizing_only(ctx); ++u) {
            s[u] = mn_tensor_scale(w, u);
        }
        h->w_scales = s;
    }
    return MN_OK;
}

static mn_status_t fc_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    /* as LiteRT: input, weights and an optional bias (-1 when absent), one output */
    if (mn_num_inputs(node) < 2 || mn_num_inputs(node) > 3 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 2 or 3 inputs and 1 output, has %d and %d", mn_num_inputs(node),
            mn_num_outputs(node));
    }
    REF_INPUT(in, ctx, node, 0, "input");
    REF_INPUT(w, ctx, node, 1, "weights");
    mn_tensor_t *bias = mn_input(ctx, node, 2);
    REF_OUTPUT(out, ctx, node, 0);

    const int act = mn_opt_i8(node, MN_FC_ACTIVATION, MN_ACT_NONE);
    const int wfmt = mn_opt_i8(node, MN_FC_WEIGHTS_FORMAT, 0);
    if (wfmt != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "weights_format %d not supported (only DEFAULT)", wfmt);
    }
    if (w->ndim != 2) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "weights must be 2-D (got %d-D)", w->ndim);
    }
    REF_TRY(mn_check_family(ctx, in->dtype, w->dtype));
    int32_t *mult = NULL;
    int8_t *shift = NULL;
    bool fill;
    const int per_channel = in->dtype != MN_FLOAT32 && mn_tensor_q_count(w) > 1;
    const int32_t n_tables = per_channel ? w->dims[0] : 0;
    fc_data_t local, *d = &local;
    memset(d, 0, sizeof *d);   /* padding too: the model's copy is compared byte for byte */
    if (per_channel) {
        fc_pc_data_t *pc = (fc_pc_data_t *)ref_alloc_with_tables(ctx, node, sizeof *pc, n_tables, &mult, &shift, &fill);
        if (!pc) {
            return MN_ERR_ARENA;
        }
        d = &pc->d;
        d->form = FC_PER_CHANNEL;
    }
    mn_fc_params_t params = { 0 }, *p = &params;
    p->units = w->dims[0];
    p->depth = w->dims[1];
    const size_t n_in = mn_tensor_count(in);
    if (p->depth < 1 || n_in % (size_t)p->depth != 0) {
        return mn_fail(ctx, MN_ERR_MODEL, "input size %u is not a multiple of weights depth %d",
            (unsigned)n_in, p->depth);
    }
    p->batches = (int)(n_in / (size_t)p->depth);
    /* (as TFLM, which matches the output's last dimension with the units) */
    if (mn_tensor_count(out) != (size_t)p->batches * (size_t)p->units || mn_dim(out, -1) != p->units) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size %u (last dimension %d), expected %d x %d",
            (unsigned)mn_tensor_count(out), (int)mn_dim(out, -1), p->batches, p->units);
    }
    if (bias && (int32_t)mn_tensor_count(bias) != p->units) {
        return mn_fail(ctx, MN_ERR_MODEL, "bias has %d elements, expected %d",
            (int)mn_tensor_count(bias), p->units);
    }
    d->dtype = in->dtype;
    if (in->dtype == MN_FLOAT32) {
        if (MICRONN_TYPE_HYBRID && w->dtype == MN_INT8) {
            REF_TRY(fc_prepare_hybrid(ctx, node, &d, p, w));
        } else if (w->dtype != MN_FLOAT32) {
            return ref_fail_dtype(ctx, "weights (with float32 input)", w);
        }
        if (bias && bias->dtype != MN_FLOAT32) {
            return ref_fail_dtype(ctx, "bias (with float32 input)", bias);
        }
        if (out->dtype != MN_FLOAT32) {
            return ref_fail_combo(ctx, in, out);
        }
        float lo, hi;
        REF_TRY(ref_act_range_f(ctx, act, &lo, &hi));
        if (d->form & FC_HYBRID) {
            ((fc_hybrid_data_t *)d)->h.act_min = lo;
            ((fc_hybrid_data_t *)d)->h.act_max = hi;
        } else {
            d->k.act.min = lo;
            d->k.act.max = hi;
        }
    } else if (in->dtype == MN_INT8 || in->dtype == MN_INT16) {
        /* int16x8: int8 weights, int64 (or int32) bias, symmetric int16 activations */
        const bool wide = in->dtype == MN_INT16;
        const int max_shift = wide ? 14 : 30;   /* (mn_fc_round_fast takes shifts up to 30) */
        if (w->dtype != MN_INT8) {
            return ref_fail_dtype(ctx, wide ? "weights (with int16 input)" : "weights (with int8 input)", w);
        }
        if (wide) {
            REF_TRY(ref_check_bias16(ctx, bias));
        } else if (bias && bias->dtype != MN_INT32) {
            return ref_fail_dtype(ctx, "bias (with int8 input)", bias);
        }
        if (out->dtype != in->dtype) {
            return ref_fail_combo(ctx, in, out);
        }
        REF_TRY(ref_need_quant(ctx, "input", in));
        REF_TRY(ref_need_quant(ctx, "weights", w));
        REF_TRY(ref_need_quant(ctx, "output", out));
        if (wide && (mn_tensor_zero_point(in, 0) != 0 || mn_tensor_zero_point(out, 0) != 0)) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int16 input/output zero points %d/%d not supported (must be 0)",
                (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
        }
        p->input_offset = -mn_tensor_zero_point(in, 0);
        p->weights_offset = -mn_tensor_zero_point(w, 0);
        p->output_offset = mn_tensor_zero_point(out, 0);
        REF_TRY(ref_act_range_q(ctx, act, out, &p->act_min, &p->act_max));
        if (mn_tensor_q_count(w) > 1) {
            if (mn_tensor_q_count(w) != p->units || w->q_dim != 0) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                    "weights per-channel quantization (%d scales, dim %d) does not match %d units",
                    (int)mn_tensor_q_count(w), (int)w->q_dim, p->units);
            }
            const int32_t asym = ref_asymmetric_channel(w);
            if (asym >= 0) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                    "per-channel weights zero point %d not supported", (int)mn_tensor_zero_point(w, asym));
            }
            const float in_scale = mn_tensor_scale(in, 0), out_scale = mn_tensor_scale(out, 0);
            const uint8_t *scales = mn_tensor_scales(w);
            for (int u = 0; u < p->units; ++u) {
                /* checked in a sizing run too (no table to fill), so that it fails as prepare will */
                const float ws = mn_ld_f32(scales + 4 * (size_t)u);
                int32_t m_u;
                int8_t s_u;
                mn_conv_multipliers(in_scale, &ws, 1, out_scale, 1, &m_u, &s_u);
                if (s_u > max_shift) {
                    return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output multiplier 2^%d too large", (int)s_u);
                }
                if (fill) {
                    mult[u] = m_u;
                    shift[u] = s_u;
                }
            }
            if (!(p->mult_pc = ((fc_pc_data_t *)d)->mult_pc = ref_keep_tables(ctx, node, n_tables, mult))) {
                return MN_ERR_ARENA;
            }
            p->shift_pc = ref_shifts(p->mult_pc, n_tables);
            p->weights_offset = 0;
        } else {
            int s;
            int32_t m;
            int8_t s8;
            const float ws = mn_tensor_scale(w, 0);
            mn_conv_multipliers(mn_tensor_scale(in, 0), &ws, 1, mn_tensor_scale(out, 0), 1, &m, &s8);   /* R exact */
            p->mult = m;
            s = s8;
            if (s > max_shift) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output multiplier 2^%d too large", s);
            }
            p->shift = s;
        }
        fc_scales(in, w, out, p);
        REF_TRY(fc_pack(ctx, d, p));
    } else {
        return ref_fail_dtype(ctx, "input", in);
    }
    if (d->form & FC_HYBRID) {
        node->user_data = d;
        node->variant = 0;
        return fc_request_scratch(ctx, (size_t)p->depth, d);
    }
    return fc_select(ctx, node, d, p, w, bias);
}

static mn_status_t fc_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const fc_data_t *d = (const fc_data_t *)node->user_data;
    mn_tensor_t *in = mn_input(ctx, node, 0);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    const void *w = mn_input_data(ctx, node, 1), *bias = mn_input_data(ctx, node, 2);
    mn_fc_params_t p;
    fc_params(d, in, mn_input(ctx, node, 1), out, &p);
    /* the paths of the families built (mn_check_family refused the others at prepare) */
    if (MICRONN_TYPE_INT8 && d->dtype == MN_INT8) {
        if (node->variant) {
            const mn_vbuf_t buf = { d->scratch >= 0 ? mn_get_scratch(ctx, d->scratch) : NULL, fc_vdata(d) };
            mn_variant_fc_s8(node->variant)->run(&p, (const int8_t *)in->data, (const int8_t *)w, (const int32_t *)bias,
                (int8_t *)out->data, &buf);
        } else if (p.mult_pc) {
            mn_fully_connected_s8_per_channel(&p, (const int8_t *)in->data, (const int8_t *)w,
                (const int32_t *)bias, (int8_t *)out->data);
        } else {
            mn_fully_connected_s8(&p, (const int8_t *)in->data, (const int8_t *)w, (const int32_t *)bias,
                (int8_t *)out->data);
        }
    } else if (MICRONN_TYPE_INT16 && d->dtype == MN_INT16) {
        const mn_bias16_t b = ref_bias16(mn_input(ctx, node, 2), false);   /* one rounding either way */
        mn_fully_connected_s16(&p, (const int16_t *)in->data, (const int8_t *)w, &b, (int16_t *)out->data);
    } else if (MICRONN_TYPE_HYBRID && (d->form & FC_HYBRID)) {
        mn_fully_connected_hybrid(&((const fc_hybrid_data_t *)d)->h, (const float *)in->data, (const int8_t *)w,
            (const float *)bias, (float *)out->data, (int8_t *)mn_get_scratch(ctx, d->scratch));
    } else if (!MICRONN_TYPE_FLOAT32) {
        /* no other family built */
    } else if (node->variant) {
        mn_variant_fc_f32(node->variant)->run(&p, d->k.act.min, d->k.act.max, (const float *)in->data, (const float *)w,
            (const float *)bias, (float *)out->data);
    } else {
        mn_fully_connected_f32(p.batches, p.depth, p.units, d->k.act.min, d->k.act.max,
            (const float *)in->data, (const float *)w, (const float *)bias, (float *)out->data);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_FULLY_CONNECTED = { NULL, fc_prepare, fc_eval, NULL, fc_variant };

#endif /* MICRONN_OP_FULLY_CONNECTED */
