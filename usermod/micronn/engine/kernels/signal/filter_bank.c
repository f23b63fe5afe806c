/*
 * Custom op "SignalFilterBank" (TFLM signal/micro/kernels/filter_bank.cc): mel filter bank over a
 * uint32 power spectrum. Inputs: spectrum uint32 [K], weights int16 [W], unweights int16 [W],
 * channel frequency starts, channel weight starts, channel widths (int16 [C + 1] each: channel 0
 * is a scratch channel whose sum is discarded). Output uint64 [C]. Each bin's energy, times its
 * weight, goes to its channel; times its unweight, to the next channel (uint64 sums, weights
 * sign-extended then taken modulo 2^64 as TFLM's int16 * uint64 does).
 * Options: num_channels (C, the output's length). The five configuration tensors must be
 * constants: prepare checks every channel's ranges against the spectrum and weight lengths.
 */
#include "mn_signal.h"

#if MICRONN_OP_SignalFilterBank

typedef struct {
    int32_t channels;
} fb_data_t;

static mn_status_t fb_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 6 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 6 inputs and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_UINT32 || out->dtype != MN_UINT64 || in->ndim != 1 || out->ndim != 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input must be uint32 [K] and output uint64 [C] (got %s -> %s)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
    }
    mn_flex_map_t m;
    int32_t ch;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "num_channels", 1, 32767, &ch);
    }
    if (s != MN_OK) {
        return s;
    }
    if (out->dims[0] != ch) {
        return mn_fail(ctx, MN_ERR_MODEL, "output has %d channels, num_channels says %d", (int)out->dims[0], (int)ch);
    }
    int32_t nw = 0;
    for (int i = 1; i < 6; i++) {
        const mn_tensor_t *t = mn_input(ctx, node, i);
        if (!t || t->dtype != MN_INT16 || t->ndim != 1 || !(t->flags & MN_TF_CONST) || !t->data) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input %d must be a constant int16 1-D tensor", i);
        }
        if (i == 1) {
            nw = t->dims[0];
        } else if ((i == 2 && t->dims[0] != nw) || (i > 2 && t->dims[0] < ch + 1)) {
            return mn_fail(ctx, MN_ERR_MODEL, "input %d: %d elements (weights and unweights: one length; "
                "channel tables: num_channels + 1)", i, (int)t->dims[0]);
        }
    }
    if (!mn_sizing_only(ctx)) {
        const int16_t *fs = mn_input(ctx, node, 3)->data;
        const int16_t *ws = mn_input(ctx, node, 4)->data;
        const int16_t *wd = mn_input(ctx, node, 5)->data;
        for (int32_t c = 0; c <= ch; c++) {
            if (fs[c] < 0 || ws[c] < 0 || wd[c] < 0 || fs[c] + wd[c] > in->dims[0] || ws[c] + wd[c] > nw) {
                return mn_fail(ctx, MN_ERR_MODEL, "channel %d: bins [%d, +%d) or weights [%d, +%d) out of range", (int)c,
                    (int)fs[c], (int)wd[c], (int)ws[c], (int)wd[c]);
            }
        }
    }
    fb_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->channels = ch;
    node->user_data = d;
    return MN_OK;
}

static mn_status_t fb_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const fb_data_t *d = node->user_data;
    const uint32_t *x = mn_input_data(ctx, node, 0);
    const int16_t *w = mn_input_data(ctx, node, 1), *uw = mn_input_data(ctx, node, 2);
    const int16_t *fs = mn_input_data(ctx, node, 3), *ws = mn_input_data(ctx, node, 4);
    const int16_t *wd = mn_input_data(ctx, node, 5);
    uint64_t *y = mn_output(ctx, node, 0)->data;
    uint64_t acc = 0;
    for (int32_t c = 0; c <= d->channels; c++) {
        const uint32_t *e = x + fs[c];
        const int16_t *wc = w + ws[c], *uc = uw + ws[c];
        uint64_t next = 0;
        for (int32_t j = 0; j < wd[c]; j++) {
            acc += (uint64_t)(int64_t)wc[j] * e[j];
            next += (uint64_t)(int64_t)uc[j] * e[j];
        }
        if (c > 0) {
            y[c - 1] = acc;
        }
        acc = next;
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalFilterBank = { NULL, fb_prepare, fb_eval, NULL, NULL };

#endif
