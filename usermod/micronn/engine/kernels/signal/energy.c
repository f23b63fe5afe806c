/*
 * Custom op "SignalEnergy" (TFLM signal/micro/kernels/energy.cc): the power re^2 + im^2 of the
 * complex bins [start_index, end_index) of an int16 spectrum (re, im interleaved, 2 K values)
 * into uint32 [K]. Options: start_index, end_index (0 <= start <= end <= K).
 * TFLM leaves the bins outside the range as the arena held them; here they are 0.
 */
#include <string.h>

#include "mn_signal.h"

#if MICRONN_OP_SignalEnergy

typedef struct {
    int32_t start, end, count;
} energy_data_t;

static mn_status_t energy_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 1 || mn_num_outputs(node) != 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 output");
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT16 || out->dtype != MN_UINT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s not supported (int16 -> uint32 only)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
    }
    if (in->ndim != 1 || out->ndim != 1 || in->dims[0] != 2 * out->dims[0]) {
        return mn_fail(ctx, MN_ERR_MODEL, "input must be int16 [2 K] (complex) and output uint32 [K]");
    }
    mn_flex_map_t m;
    int32_t start, end;
    mn_status_t s = mn_sig_options(ctx, node, &m);
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "end_index", 0, out->dims[0], &end);
    }
    if (s == MN_OK) {
        s = mn_sig_int(ctx, &m, "start_index", 0, end, &start);
    }
    if (s != MN_OK) {
        return s;
    }
    energy_data_t *d = mn_alloc_persistent(ctx, sizeof *d);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->start = start;
    d->end = end;
    d->count = out->dims[0];
    node->user_data = d;
    return MN_OK;
}

static mn_status_t energy_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const energy_data_t *d = node->user_data;
    const int16_t *x = mn_input_data(ctx, node, 0);
    uint32_t *y = mn_output(ctx, node, 0)->data;
    memset(y, 0, (size_t)d->start * sizeof *y);
    for (int32_t i = d->start; i < d->end; i++) {
        const int32_t re = x[2 * i], im = x[2 * i + 1];
        /* as TFLM: the int32 sum, converted (2 * 2^30 wraps to 2^31, still right as uint32) */
        y[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
    }
    memset(y + d->end, 0, (size_t)(d->count - d->end) * sizeof *y);
    return MN_OK;
}

const mn_kernel_t mn_kernel_SignalEnergy = { NULL, energy_prepare, energy_eval, NULL, NULL };

#endif
