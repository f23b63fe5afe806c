/* Eval of the CONV_2D and DEPTHWISE_CONV_2D reference kernels (ref_glue.h): the chosen variant or
 * the reference compute function, per inference (their prepare steps: ref_conv_prepare.c). */
#include "mn_ref.h"

#if MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D

#include "ref_glue.h"

mn_status_t ref_conv_eval(mn_ctx_t *ctx, mn_node_t *node, ref_conv_s8_fn ref_s8, ref_conv_s16_fn ref_s16,
    ref_conv_f32_fn ref_f32, ref_conv_hybrid_fn ref_hybrid) {
    const ref_conv_data_t *d = (const ref_conv_data_t *)node->user_data;
    mn_conv_geom_t geom;
    const mn_conv_geom_t *g = ref_geom_load(&d->g, &geom);
    const mn_tensor_t *in = mn_input(ctx, node, 0);
    const mn_tensor_t *filter = mn_input(ctx, node, 1);
    const mn_tensor_t *bias = mn_input(ctx, node, 2);
    mn_tensor_t *out = mn_output(ctx, node, 0);
    mn_vbuf_t buf = { d->scratch >= 0 ? mn_get_scratch(ctx, d->scratch) : NULL, d->vdata };
    /* the paths of the families built (mn_check_family refused the others at prepare) */
    if (MICRONN_TYPE_INT8 && d->g.dtype == MN_INT8) {
        mn_conv_quant_t q;
        ref_conv_quant(d, g->out_c, &q);
        const int32_t *b = bias ? (const int32_t *)bias->data : NULL;
        if (d->variant.s8) {
            d->variant.s8->run(g, &q, (const int8_t *)in->data, (const int8_t *)filter->data, b,
                (int8_t *)out->data, &buf);
        } else {
            ref_s8(g, &q, (const int8_t *)in->data, (const int8_t *)filter->data, b, (int8_t *)out->data);
        }
    } else if (MICRONN_TYPE_INT16 && d->g.dtype == MN_INT16) {
        mn_conv_quant_t q;
        ref_conv_quant(d, g->out_c, &q);
        const mn_bias16_t b = ref_bias16(bias, d->g.mode);
        ref_s16(g, &q, (const int16_t *)in->data, (const int8_t *)filter->data, &b, (int16_t *)out->data);
    } else if (MICRONN_TYPE_HYBRID && d->g.dtype == MN_FLOAT32 && d->g.mode) {
        mn_conv_quant_t q;
        ref_conv_quant(d, g->out_c, &q);   /* the mult table holds the float filter scales */
        const mn_conv_hybrid_t h = { d->u.f.min, d->u.f.max, (const float *)(const void *)q.mult,
                                     (uint8_t)(d->g.mode == REF_HYBRID_CHANNEL) };
        ref_hybrid(g, &h, (const float *)in->data, (const int8_t *)filter->data,
            bias ? (const float *)bias->data : NULL, (float *)out->data, (int8_t *)buf.scratch);
    } else if (MICRONN_TYPE_FLOAT32 && d->g.dtype == MN_FLOAT32) {
        const float *b = bias ? (const float *)bias->data : NULL;
        if (d->variant.f32) {
            d->variant.f32->run(g, d->u.f.min, d->u.f.max, (const float *)in->data,
                (const float *)filter->data, b, (float *)out->data, &buf);
        } else {
            ref_f32(g, d->u.f.min, d->u.f.max, (const float *)in->data, (const float *)filter->data, b,
                (float *)out->data);
        }
    }
    return MN_OK;
}

#endif /* MICRONN_OP_CONV_2D || MICRONN_OP_DEPTHWISE_CONV_2D */
