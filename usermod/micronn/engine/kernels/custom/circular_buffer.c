/*
 * Custom op "CIRCULAR_BUFFER" (TFLM's kernels/circular_buffer.cc, the streaming op of TFLM's
 * strided keyword-spotting models): input [1, 1, W, D] int8, output [1, N, W, D] holding the last
 * N inputs, oldest first. Every invoke appends the input (dropping the oldest slot) and counts down
 * a period of `cycles_max` invokes; the optional second output (bool, one element) says whether
 * this invoke completed a period (TFLM's "valid" output).
 *
 * Options (custom_options flexbuffer map): cycles_max (int). Absent, or <= 0, or no options: TFLM's
 * legacy rule for its two streaming models: period 1 when N is 5, 13 or 25, or for the 5th such op
 * (counted from the previous period-1 one) whose output is [1, N, 2, 96]; period 2 otherwise.
 * TFLM counts in a process-wide static; here the count is per interpreter, in execution order (what
 * TFLM does for the first model of a process).
 *
 * Differences from TFLM, on purpose:
 *  - State: TFLM shifts the output tensor in place, so the output's arena memory is the state (and
 *    is whatever the arena held at the start; another tensor planned over it would clobber it).
 *    Here the state is a ring of N slots in the op's persistent memory, set to the input's zero
 *    point at the first invoke and by mn_interp_reset (TFLM's reset leaves it as it was); the
 *    output is rewritten from the ring at every invoke (N*W*D bytes copied, as TFLM's memmove).
 *  - With one output, TFLM's invoke returns kTfLiteAbort on the invokes that do not complete a
 *    period, so the ops after it do not run then. The engine's invoke has no "stop early, no
 *    error" status (adding one belongs to the interpreter core, mn_interp.c): here the later ops
 *    run on every invoke. On the invokes that complete a period every output is TFLM's as long as
 *    the ops after it are stateless (a second CIRCULAR_BUFFER or an SVDF downstream would advance
 *    on the other invokes too). TFLM's current models use the two-output form, which has no abort
 *    and which this kernel matches exactly.
 */
#include <string.h>

#include "mn_flexbuf.h"
#include "mn_kernel.h"

#if MICRONN_OP_CIRCULAR_BUFFER

typedef struct {
    int8_t *ring;               /* slots * depth bytes: slot (head + k) % slots is the k-th oldest */
    uint32_t depth, slots, head;
    int32_t cycles_max, until;  /* period; invokes left until the current one completes */
    uint32_t epoch;             /* 1 + the top interpreter's reset count when the ring was set; 0 never */
    int8_t zero_point;
} cb_data_t;

/* cycles_max from the custom options: 0 when absent (or no options). */
static mn_status_t cb_cycles_max(mn_ctx_t *ctx, const mn_node_t *node, int32_t *out) {
    size_t len;
    const uint8_t *opts = mn_custom_options(ctx, node, &len);
    *out = 0;
    if (!opts || !len) {
        return MN_OK;
    }
    mn_flex_map_t m;
    mn_flex_status_t s = mn_flex_root_map(opts, len, &m);
    if (s == MN_FLEX_OK) {
        s = mn_flex_i32(&m, "cycles_max", out);
    }
    if (s > MN_FLEX_ABSENT) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'cycles_max': %s", mn_flex_status_str(s));
    }
    return MN_OK;
}

/* TFLM's legacy period rule (cycles_max <= 0); *count is the running count of such ops. */
static int32_t cb_legacy_period(const mn_tensor_t *out, uint32_t *count) {
    const int32_t n = mn_dim(out, 1);
    ++*count;
    if (n == 5 || n == 13 || n == 25 || (*count == 5 && mn_dim(out, 2) == 2 && mn_dim(out, 3) == 96)) {
        *count = 0;
        return 1;
    }
    return 2;
}

static mn_status_t cb_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    const int n_out = mn_num_outputs(node);
    if (mn_num_inputs(node) != 1 || (n_out != 1 && n_out != 2)) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 1 input and 1 or 2 outputs, got %d and %d", mn_num_inputs(node),
            n_out);
    }
    const mn_tensor_t *in = mn_input(ctx, node, 0), *out = mn_output(ctx, node, 0);
    if (!in || !out) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing operand");
    }
    if (in->dtype != MN_INT8 || out->dtype != MN_INT8) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s -> %s not supported (int8 only, as TFLM)",
            mn_dtype_name(in->dtype), mn_dtype_name(out->dtype));
    }
    if (in->ndim != 4 || out->ndim != 4 || in->dims[0] != 1 || out->dims[0] != 1 || in->dims[1] != 1
        || in->dims[2] != out->dims[2] || in->dims[3] != out->dims[3] || out->dims[1] < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "input must be [1, 1, W, D] and output [1, N, W, D] (N >= 1)");
    }
    if (n_out == 2) {
        const mn_tensor_t *valid = mn_output(ctx, node, 1);
        if (!valid || valid->dtype != MN_BOOL || mn_tensor_count(valid) != 1) {
            return mn_fail(ctx, MN_ERR_MODEL, "output 1 (valid) must be one bool");
        }
    }
    int32_t cycles;
    mn_status_t s = cb_cycles_max(ctx, node, &cycles);
    if (s != MN_OK) {
        return s;
    }
    if (cycles <= 0) {
        /* the count of the ops before this one, in execution order */
        uint32_t count = 0;
        for (mn_node_t *k = ctx->nodes; k < node; k++) {
            int32_t c;
            if (k->kernel == node->kernel && cb_cycles_max(ctx, k, &c) == MN_OK && c <= 0 && mn_output(ctx, k, 0)) {
                (void)cb_legacy_period(mn_output(ctx, k, 0), &count);
            }
        }
        cycles = cb_legacy_period(out, &count);
    }
    const size_t depth = (size_t)in->dims[2] * (size_t)in->dims[3], slots = (size_t)out->dims[1];
    cb_data_t *d = mn_alloc_persistent(ctx, sizeof *d + slots * depth);
    if (!d) {
        return MN_ERR_ARENA;
    }
    d->ring = (int8_t *)(d + 1);
    d->depth = (uint32_t)depth;
    d->slots = (uint32_t)slots;
    d->cycles_max = cycles;
    d->zero_point = (int8_t)mn_tensor_zero_point(in, 0);
    node->user_data = d;
    return MN_OK;
}

static mn_status_t cb_eval(mn_ctx_t *ctx, mn_node_t *node) {
    cb_data_t *d = node->user_data;
    const uint32_t now = mn_nested_root(ctx)->resets + 1;
    const size_t depth = d->depth;
    if (d->epoch != now) {   /* first invoke, or the interpreter was reset */
        memset(d->ring, d->zero_point, (size_t)d->slots * depth);
        d->head = 0;
        d->until = d->cycles_max;
        d->epoch = now;
    }
    memcpy(d->ring + (size_t)d->head * depth, mn_input(ctx, node, 0)->data, depth);
    d->head = d->head + 1 == d->slots ? 0 : d->head + 1;
    int8_t *out = mn_output(ctx, node, 0)->data;
    const size_t older = (size_t)(d->slots - d->head) * depth;
    memcpy(out, d->ring + (size_t)d->head * depth, older);
    memcpy(out + older, d->ring, (size_t)d->head * depth);
    const bool valid = --d->until == 0;
    if (valid) {
        d->until = d->cycles_max;
    }
    if (mn_num_outputs(node) == 2) {
        *(bool *)mn_output(ctx, node, 1)->data = valid;
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_CIRCULAR_BUFFER = { NULL, cb_prepare, cb_eval, NULL, NULL };

#endif
