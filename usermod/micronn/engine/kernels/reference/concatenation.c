/* CONCATENATION and PACK reference kernels (TFLite reference_ops::Concatenation / Pack): each input
 * is a run of `outer` equal slabs copied side by side into the output. uint8 inputs whose
 * quantization differs from the output's are rescaled as TFLite's ConcatenationWithScaling does
 * (float scale and bias, round half away from zero); int8/int16 must match the output (TFLite
 * rejects int8 that does not). */
#include "mn_ref.h"

#if MICRONN_OP_CONCATENATION || MICRONN_OP_PACK

#include "ref_glue.h"

typedef struct {
    int32_t bytes;      /* slab size of this input */
    float scale, bias;  /* uint8 rescaling (requant != 0) */
    int32_t requant;
} concat_input_t;

typedef struct {
    int32_t outer, out_pitch, out_zp;
    uint8_t es;
    concat_input_t in[];   /* one per input */
} concat_data_t;

void mn_concat_requant_u8(size_t n, float scale, float bias, int32_t out_zp, const uint8_t *in, uint8_t *out) {
    for (size_t k = 0; k < n; ++k) {
        const int32_t v = (int32_t)mn_roundf((float)in[k] * scale + bias) + out_zp;
        out[k] = (uint8_t)mn_clamp_i32(v, 0, 255);
    }
}

static int same_quant(const mn_tensor_t *a, const mn_tensor_t *b) {
    return mn_tensor_scale(a, 0) == mn_tensor_scale(b, 0) && mn_tensor_zero_point(a, 0) == mn_tensor_zero_point(b, 0);
}

/* axis: concatenation axis in the output; pack: the inputs lack that axis. */
static mn_status_t concat_prepare_common(mn_ctx_t *ctx, mn_node_t *node, int pack) {
    REF_OUTPUT(out, ctx, node, 0);
    const int n_in = mn_num_inputs(node);
    if (n_in < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "no inputs");
    }
    REF_INPUT(in0, ctx, node, 0, "input");
    int axis = pack ? mn_opt_i32(node, MN_PACK_AXIS, 0) : mn_opt_i32(node, MN_CONCAT_AXIS, 0);
    if (!pack && mn_opt_i8(node, MN_CONCAT_ACTIVATION, MN_ACT_NONE) != MN_ACT_NONE) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported",
            mn_fused_act_name(mn_opt_i8(node, MN_CONCAT_ACTIVATION, MN_ACT_NONE)));
    }
    const int rank = out->ndim;
    if (axis < 0) {
        axis += rank;
    }
    if (axis < 0 || axis >= rank || in0->ndim != rank - (pack ? 1 : 0)) {
        return mn_fail(ctx, MN_ERR_MODEL, "axis %d does not fit %d-D inputs / %d-D output", axis,
            in0->ndim, rank);
    }
    if (pack && mn_opt_i32(node, MN_PACK_VALUES_COUNT, n_in) != n_in) {
        return mn_fail(ctx, MN_ERR_MODEL, "values_count %d but %d inputs",
            (int)mn_opt_i32(node, MN_PACK_VALUES_COUNT, n_in), n_in);
    }
    concat_data_t *d = (concat_data_t *)mn_alloc_persistent(ctx,
        sizeof(concat_data_t) + sizeof(concat_input_t) * (size_t)n_in);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->es = (uint8_t)mn_dtype_size(out->dtype);
    d->out_zp = mn_tensor_zero_point(out, 0);
    int32_t outer = 1, inner = 1, total = 0;
    for (int k = 0; k < axis; ++k) {
        outer *= out->dims[k];
    }
    for (int k = axis + 1; k < rank; ++k) {
        inner *= out->dims[k];
    }
    const int quant = out->dtype == MN_INT8 || out->dtype == MN_INT16 || out->dtype == MN_UINT8;
    for (int i = 0; i < n_in; ++i) {
        REF_INPUT(in, ctx, node, i, "input");
        REF_TRY(ref_same_dtype(ctx, in, out));
        if (in->ndim != in0->ndim) {
            return mn_fail(ctx, MN_ERR_MODEL, "input %d is %d-D, input 0 %d-D", i, in->ndim, in0->ndim);
        }
        int32_t along = 1;
        for (int k = 0, ko = 0; ko < rank; ++ko) {
            if (ko == axis) {
                if (!pack) {
                    along = in->dims[k++];
                }
                continue;
            }
            if (in->dims[k++] != out->dims[ko]) {
                return mn_fail(ctx, MN_ERR_MODEL, "input %d dim %d is %d, output has %d", i, k - 1,
                    (int)in->dims[k - 1], (int)out->dims[ko]);
            }
        }
        total += along;
        d->in[i].bytes = along * inner * d->es;
        if (quant && !same_quant(in, out)) {
            if (out->dtype != MN_UINT8 || pack) {
                return mn_fail(ctx, MN_ERR_UNSUPPORTED,
                    "%s input %d quantization (zero point %d) differs from the output's (%d)",
                    mn_dtype_name(in->dtype), i, (int)mn_tensor_zero_point(in, 0), (int)mn_tensor_zero_point(out, 0));
            }
            REF_TRY(ref_need_quant(ctx, "input", in));
            REF_TRY(ref_need_quant(ctx, "output", out));
            d->in[i].requant = 1;
            d->in[i].scale = mn_tensor_scale(in, 0) * (1.0f / mn_tensor_scale(out, 0));
            d->in[i].bias = -(float)mn_tensor_zero_point(in, 0) * d->in[i].scale;
        }
    }
    if (total != out->dims[axis]) {
        return mn_fail(ctx, MN_ERR_MODEL, "inputs give %d along axis %d, output has %d", (int)total, axis,
            (int)out->dims[axis]);
    }
    d->outer = outer;
    d->out_pitch = total * inner * d->es;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t concat_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const concat_data_t *d = (const concat_data_t *)node->user_data;
    uint8_t *out = (uint8_t *)mn_output(ctx, node, 0)->data;
    mn_copy_plan_t p = { 2, { d->outer, 0 }, { 0, 1 }, { d->out_pitch, 1 } };
    int32_t offset = 0;
    for (int i = 0; i < mn_num_inputs(node); ++i) {
        const concat_input_t *ci = &d->in[i];
        const uint8_t *in = (const uint8_t *)mn_input(ctx, node, i)->data;
        if (ci->requant) {
            for (int32_t k = 0; k < d->outer; ++k) {
                mn_concat_requant_u8((size_t)ci->bytes, ci->scale, ci->bias, d->out_zp,
                    in + (size_t)k * ci->bytes, out + (size_t)k * d->out_pitch + offset);
            }
        } else {
            p.dims[1] = ci->bytes;
            p.in_stride[0] = ci->bytes;
            mn_copy_strided(&p, 1, in, out + offset);
        }
        offset += ci->bytes;
    }
    return MN_OK;
}

#if MICRONN_OP_CONCATENATION
static mn_status_t concatenation_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return concat_prepare_common(ctx, node, 0);
}
const mn_kernel_t mn_kernel_CONCATENATION = { NULL, concatenation_prepare, concat_eval, NULL, NULL };
#endif

#if MICRONN_OP_PACK
static mn_status_t pack_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    return concat_prepare_common(ctx, node, 1);
}
const mn_kernel_t mn_kernel_PACK = { NULL, pack_prepare, concat_eval, NULL, NULL };
#endif

#endif /* MICRONN_OP_CONCATENATION || MICRONN_OP_PACK */
