/* UNIDIRECTIONAL_SEQUENCE_LSTM reference kernel.
 *
 * int8: bit-exact with TFLite's integer "8x8_16" LSTM (lstm_eval.cc
 * EvalInteger8x8_16 with the portable tensor utils): int8 input, weights,
 * output and hidden state, int16 cell state with a power-of-two scale, int32
 * biases, optional CIFG / peephole (int16) / projection.  Gate pre-activations
 * are int16 Q3.12, gates Q0.15 (gemmlowp int16 logistic / tanh).  As in
 * TFLite the fused activation option is not used on this path: the cell gate
 * and the output use tanh.
 *
 * float32: TFLite's EvalFloat (same formulas, ~1e-6 relative), with optional
 * CIFG, peephole, projection, layer normalization and cell/projection clips.
 *
 * hybrid (float32 activations, int8 weights, "dynamic range" quantization): TFLite's
 * EvalHybrid.  Each input row, the previous output_state row and the hidden row
 * before the projection are quantized on the fly (mn_quantize_dynamic_s8,
 * symmetric or asymmetric_quantize_inputs), multiplied with the int8 weights in
 * int32 and scaled back by row scale * weight scale; the rest is the float step.
 *
 * Inputs are TFLite's 24 (lstm_shared.h order); output_state (18) and
 * cell_state (19) are variable tensors carrying the state across invokes.
 * Batches are independent, so each (time step, batch) row is one LSTM step. */
#include <math.h>
#include <string.h>

#include "mn_ref.h"

#if MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM

/* Input tensor indices (TFLite lstm_shared.h). */
enum {
    LSTM_IN = 0,
    LSTM_W_X = 1,        /* 1..4: input-to-{input, forget, cell, output} weights */
    LSTM_W_H = 5,        /* 5..8: recurrent-to-{input, forget, cell, output} weights */
    LSTM_W_C = 9,        /* 9..11: cell-to-{input, forget, output} (peephole) weights */
    LSTM_BIAS = 12,      /* 12..15: {input, forget, cell, output} gate biases */
    LSTM_PROJ_W = 16,
    LSTM_PROJ_B = 17,
    LSTM_OUTPUT_STATE = 18,
    LSTM_CELL_STATE = 19,
    LSTM_LN = 20,        /* 20..23: {input, forget, cell, output} layer norm coefficients */
    LSTM_N_INPUTS = 24,
};

/* Gates, in TFLite's order. */
enum { G_IN = 0, G_FORGET = 1, G_CELL = 2, G_OUT = 3 };

/* Peephole input index of a gate (the cell gate has none). */
static int peephole_index(int g) {
    return g == G_IN ? LSTM_W_C : (g == G_FORGET ? LSTM_W_C + 1 : (g == G_OUT ? LSTM_W_C + 2 : -1));
}

/* ---- int8 (8x8_16) ------------------------------------------------------ */

typedef struct {
    int n_batch, n_time, n_input, n_cell, n_output;
    int time_major, use_cifg;
    /* per gate: input and recurrent matmul rescale, peephole rescale */
    int32_t mult_x[4], mult_h[4], mult_c[4];
    int shift_x[4], shift_h[4], shift_c[4];
    /* effective biases: bias - input_zp * rowsum(W_x), -output_state_zp * rowsum(W_h) */
    const int32_t *bias_x[4];
    const int32_t *bias_h[4];
    int32_t hidden_mult;        /* output_gate * tanh(cell) -> hidden (int8) */
    int hidden_shift;
    int32_t hidden_zp;
    int32_t proj_mult;          /* hidden -> output_state (projection) */
    int proj_shift;
    const int32_t *proj_bias;   /* effective: bias + hidden_zp * rowsum(W_proj) */
    int32_t output_state_zp;
    int cell_scale;             /* cell state scale = 2^cell_scale, -15..-9 */
    int32_t cell_clip;          /* quantized, 0 = none */
    int32_t proj_clip;          /* quantized, 0 = none */
} mn_lstm_s8_params_t;

typedef struct {
    const int8_t *w_x[4];       /* [n_cell][n_input]; w_x[G_IN] NULL with CIFG */
    const int8_t *w_h[4];       /* [n_cell][n_output] */
    const int16_t *w_c[4];      /* peephole [n_cell] (G_CELL always NULL), or NULL */
    const int8_t *proj_w;       /* [n_output][n_cell] or NULL */
} mn_lstm_s8_weights_t;

/* Pure compute functions.  Declared here rather than in mn_ref.h (not this kernel's file); they
 * can move there together with their parameter structs. */
void mn_lstm_s8(const mn_lstm_s8_params_t *p, const mn_lstm_s8_weights_t *w,
    const int8_t *input, int8_t *output_state, int16_t *cell_state, int8_t *output,
    int16_t *scratch16, int8_t *scratch8);

static inline int32_t sat16(int32_t v) {
    return mn_clamp_i32(v, INT16_MIN, INT16_MAX);
}

/* One gate for one batch row: TFLite's CalculateLstmGateInteger8x8_16.  The
 * input and recurrent products are each rescaled and accumulated into the
 * int16 gate with saturation, then the peephole term, then the activation. */
static void lstm_gate_s8(const mn_lstm_s8_params_t *p, const mn_lstm_s8_weights_t *w, int g,
    const int8_t *x, const int8_t *h, const int16_t *c, int16_t *gate) {
    const int ni = p->n_input, no = p->n_output;
    const int8_t *wx = w->w_x[g];
    const int8_t *wh = w->w_h[g];
    const int16_t *wc = w->w_c[g];
    const int32_t *bx = p->bias_x[g], *bh = p->bias_h[g];
    for (int r = 0; r < p->n_cell; ++r) {
        uint32_t acc = (uint32_t)bx[r]; /* int32 accumulator, wrap-around defined */
        for (int k = 0; k < ni; ++k) {
            acc += (uint32_t)((int32_t)wx[k] * (int32_t)x[k]);
        }
        wx += ni;
        int32_t v = sat16(mn_mul_by_qm((int32_t)acc, p->mult_x[g], p->shift_x[g]));
        acc = (uint32_t)bh[r];
        for (int k = 0; k < no; ++k) {
            acc += (uint32_t)((int32_t)wh[k] * (int32_t)h[k]);
        }
        wh += no;
        v = sat16(mn_add_wrap(mn_mul_by_qm((int32_t)acc, p->mult_h[g], p->shift_h[g]), v));
        if (wc) {
            const int32_t prod = (int32_t)wc[r] * (int32_t)c[r];
            v = sat16(mn_add_wrap(mn_mul_by_qm(prod, p->mult_c[g], p->shift_c[g]), v));
        }
        gate[r] = g == G_CELL ? mn_tanh_s16((int16_t)v, 3) : mn_logistic_s16_q3((int16_t)v);
    }
}

/* One LSTM step for one batch row (TFLite LstmStepInteger8x8_16, n_batch 1).
 * scratch16: 5 * n_cell, scratch8: n_cell. */
static void lstm_step_s8(const mn_lstm_s8_params_t *p, const mn_lstm_s8_weights_t *w,
    const int8_t *x, int8_t *h, int16_t *c, int8_t *out, int16_t *scratch16, int8_t *scratch8) {
    const int nc = p->n_cell, no = p->n_output;
    int16_t *gi = scratch16, *gf = scratch16 + nc, *gc = scratch16 + 2 * nc;
    int16_t *go = scratch16 + 3 * nc, *tc = scratch16 + 4 * nc;

    if (!p->use_cifg) {
        lstm_gate_s8(p, w, G_IN, x, h, c, gi);
    }
    lstm_gate_s8(p, w, G_FORGET, x, h, c, gf);
    lstm_gate_s8(p, w, G_CELL, x, h, c, gc);

    /* c = f * c + i * g (i = 1 - f with CIFG), saturated to int16, clipped */
    const int ig_shift = 30 + p->cell_scale;
    for (int r = 0; r < nc; ++r) {
        const int32_t fc = mn_rdbpot((int32_t)gf[r] * (int32_t)c[r], 15);
        const int32_t in_gate = p->use_cifg ? INT16_MAX - gf[r] : gi[r];
        const int32_t ig = mn_rdbpot(in_gate * (int32_t)gc[r], ig_shift);
        /* each product is narrowed to int16 as TFLite stores it (never out of range) */
        int32_t v = sat16((int32_t)(int16_t)fc + (int32_t)(int16_t)ig);
        if (p->cell_clip > 0) {
            v = mn_clamp_i32(v, -p->cell_clip, p->cell_clip);
        }
        c[r] = (int16_t)v;
    }

    lstm_gate_s8(p, w, G_OUT, x, h, c, go);

    /* hidden = o * tanh(c), requantized to int8 */
    const int tanh_bits = 15 + p->cell_scale;
    /* As TFLite: + hidden_zp without projection, - hidden_zp before the projection (whose
     * effective bias adds hidden_zp * rowsum back). */
    const int32_t hidden_offset = w->proj_w ? -p->hidden_zp : p->hidden_zp;
    for (int r = 0; r < nc; ++r) {
        tc[r] = mn_tanh_s16(c[r], tanh_bits);
    }
    for (int r = 0; r < nc; ++r) {
        const int32_t v = mn_mul_by_qm((int32_t)go[r] * (int32_t)tc[r], p->hidden_mult, p->hidden_shift) +
            hidden_offset;
        scratch8[r] = (int8_t)mn_clamp_i32(v, INT8_MIN, INT8_MAX);
    }

    if (w->proj_w) {
        const int8_t *pw = w->proj_w;
        for (int j = 0; j < no; ++j) {
            uint32_t acc = (uint32_t)p->proj_bias[j];
            for (int r = 0; r < nc; ++r) {
                acc += (uint32_t)((int32_t)pw[r] * (int32_t)scratch8[r]);
            }
            pw += nc;
            int32_t v = mn_add_wrap(mn_mul_by_qm((int32_t)acc, p->proj_mult, p->proj_shift), p->output_state_zp);
            v = mn_clamp_i32(v, INT8_MIN, INT8_MAX);
            if (p->proj_clip > 0) {
                v = mn_clamp_i32(v, -p->proj_clip, p->proj_clip);
            }
            h[j] = (int8_t)v;
        }
    } else {
        memcpy(h, scratch8, (size_t)no);
    }
    memcpy(out, h, (size_t)no);
}

void mn_lstm_s8(const mn_lstm_s8_params_t *p, const mn_lstm_s8_weights_t *w,
    const int8_t *input, int8_t *output_state, int16_t *cell_state, int8_t *output,
    int16_t *scratch16, int8_t *scratch8) {
    const int nb = p->n_batch, nt = p->n_time;
    for (int t = 0; t < nt; ++t) {
        for (int b = 0; b < nb; ++b) {
            const size_t row = p->time_major ? (size_t)t * nb + b : (size_t)b * nt + t;
            lstm_step_s8(p, w, input + row * p->n_input, output_state + (size_t)b * p->n_output,
                cell_state + (size_t)b * p->n_cell, output + row * p->n_output, scratch16, scratch8);
        }
    }
}

/* ---- float32 ------------------------------------------------------------ */

typedef struct {
    int n_batch, n_time, n_input, n_cell, n_output;
    int time_major, use_cifg, use_layer_norm;
    int act;                    /* cell gate / output activation (fused activation code) */
    float cell_clip, proj_clip; /* 0 = none */
} mn_lstm_f32_params_t;

typedef struct {
    const float *w_x[4], *w_h[4], *w_c[4];   /* as mn_lstm_s8_weights_t */
    const float *bias[4];
    const float *ln[4];                      /* layer norm coefficients or NULL */
    const float *proj_w, *proj_b;
} mn_lstm_f32_weights_t;

/* scratch: 5 * n_cell floats (see mn_lstm_s8 for the rest). */
void mn_lstm_f32(const mn_lstm_f32_params_t *p, const mn_lstm_f32_weights_t *w,
    const float *input, float *output_state, float *cell_state, float *output, float *scratch);

static void act_f32(int act, float *v, int n) {
    for (int i = 0; i < n; ++i) {
        const float x = v[i];
        switch (act) {
            case MN_FUSED_ACT_RELU: v[i] = x < 0.0f ? 0.0f : x; break;
            case MN_FUSED_ACT_RELU_N1_TO_1: v[i] = mn_clamp_f32(x, -1.0f, 1.0f); break;
            case MN_FUSED_ACT_RELU6: v[i] = mn_clamp_f32(x, 0.0f, 6.0f); break;
            case MN_FUSED_ACT_TANH: v[i] = tanhf(x); break;
            default: break; /* NONE */
        }
    }
}

static void sigmoid_f32(float *v, int n) {
    for (int i = 0; i < n; ++i) {
        v[i] = 1.0f / (1.0f + expf(-v[i]));
    }
}

static void gate_finish_f32(const mn_lstm_f32_params_t *p, int g, const float *ln, const float *bias,
    float *gate);

/* TFLite CalculateLstmGateFloat for one batch row. */
static void lstm_gate_f32(const mn_lstm_f32_params_t *p, const mn_lstm_f32_weights_t *w, int g,
    const float *x, const float *h, const float *c, float *gate) {
    const int ni = p->n_input, no = p->n_output, nc = p->n_cell;
    const float *wx = w->w_x[g], *wh = w->w_h[g], *wc = w->w_c[g];
    for (int r = 0; r < nc; ++r) {
        float acc = p->use_layer_norm ? 0.0f : w->bias[g][r];
        float dot = 0.0f;
        for (int k = 0; k < ni; ++k) {
            dot += wx[k] * x[k];
        }
        acc += dot;
        dot = 0.0f;
        for (int k = 0; k < no; ++k) {
            dot += wh[k] * h[k];
        }
        acc += dot;
        if (wc) {
            acc += wc[r] * c[r];
        }
        gate[r] = acc;
        wx += ni;
        wh += no;
    }
    gate_finish_f32(p, g, w->ln[g], w->bias[g], gate);
}

/* Layer normalization (if any) and the gate's activation, as CalculateLstmGateFloat ends. */
static void gate_finish_f32(const mn_lstm_f32_params_t *p, int g, const float *ln, const float *bias,
    float *gate) {
    const int nc = p->n_cell;
    if (p->use_layer_norm) {
        float sum = 0.0f;
        for (int r = 0; r < nc; ++r) {
            sum += gate[r];
        }
        const float mean = sum / (float)nc;
        float sq = 0.0f;
        for (int r = 0; r < nc; ++r) {
            const float d = gate[r] - mean;
            sq += d * d;
        }
        const float inv = 1.0f / sqrtf(sq / (float)nc + 1e-8f);
        for (int r = 0; r < nc; ++r) {
            gate[r] = (gate[r] - mean) * inv * ln[r] + bias[r];
        }
    }
    if (g == G_CELL) {
        act_f32(p->act, gate, nc);
    } else {
        sigmoid_f32(gate, nc);
    }
}

/* c = f * c + i * g (i = 1 - f with CIFG), clipped: UpdateLstmCellFloat. */
static void cell_update_f32(const mn_lstm_f32_params_t *p, const float *gi, const float *gf, const float *gc,
    float *c) {
    for (int r = 0; r < p->n_cell; ++r) {
        float v = gf[r] * c[r];
        v += gc[r] * (p->use_cifg ? 1.0f - gf[r] : gi[r]);
        if (p->cell_clip > 0.0f) {
            v = mn_clamp_f32(v, -p->cell_clip, p->cell_clip);
        }
        c[r] = v;
    }
}

/* hid = o * act(c), before the projection. */
static void hidden_f32(const mn_lstm_f32_params_t *p, const float *c, const float *go, float *hid) {
    const int nc = p->n_cell;
    memcpy(hid, c, sizeof(float) * (size_t)nc);
    act_f32(p->act, hid, nc);
    for (int r = 0; r < nc; ++r) {
        hid[r] *= go[r];
    }
}

/* scratch: 5 * n_cell floats. */
static void lstm_step_f32(const mn_lstm_f32_params_t *p, const mn_lstm_f32_weights_t *w,
    const float *x, float *h, float *c, float *out, float *scratch) {
    const int nc = p->n_cell, no = p->n_output;
    float *gi = scratch, *gf = scratch + nc, *gc = scratch + 2 * nc, *go = scratch + 3 * nc;
    float *hid = scratch + 4 * nc;
    if (!p->use_cifg) {
        lstm_gate_f32(p, w, G_IN, x, h, c, gi);
    }
    lstm_gate_f32(p, w, G_FORGET, x, h, c, gf);
    lstm_gate_f32(p, w, G_CELL, x, h, c, gc);
    cell_update_f32(p, gi, gf, gc, c);
    lstm_gate_f32(p, w, G_OUT, x, h, c, go);
    hidden_f32(p, c, go, hid);
    if (w->proj_w) {
        const float *pw = w->proj_w;
        for (int j = 0; j < no; ++j) {
            float dot = 0.0f;
            for (int r = 0; r < nc; ++r) {
                dot += pw[r] * hid[r];
            }
            pw += nc;
            float v = (w->proj_b ? w->proj_b[j] : 0.0f) + dot;
            if (p->proj_clip > 0.0f) {
                v = mn_clamp_f32(v, -p->proj_clip, p->proj_clip);
            }
            h[j] = v;
        }
    } else {
        memcpy(h, hid, sizeof(float) * (size_t)no);
    }
    memcpy(out, h, sizeof(float) * (size_t)no);
}

void mn_lstm_f32(const mn_lstm_f32_params_t *p, const mn_lstm_f32_weights_t *w,
    const float *input, float *output_state, float *cell_state, float *output, float *scratch) {
    const int nb = p->n_batch, nt = p->n_time;
    for (int t = 0; t < nt; ++t) {
        for (int b = 0; b < nb; ++b) {
            const size_t row = p->time_major ? (size_t)t * nb + b : (size_t)b * nt + t;
            lstm_step_f32(p, w, input + row * p->n_input, output_state + (size_t)b * p->n_output,
                cell_state + (size_t)b * p->n_cell, output + row * p->n_output, scratch);
        }
    }
}

/* ---- hybrid: float32 activations, int8 weights ---------------------------- */

typedef struct {
    float s_x[4], s_h[4], s_c[4];   /* per-tensor weight scales (TFLite uses params.scale only) */
    float s_proj;
    int asymmetric;                 /* asymmetric_quantize_inputs */
} mn_lstm_hybrid_scales_t;

typedef struct {
    const int8_t *w_x[4], *w_h[4], *w_c[4];  /* as mn_lstm_s8_weights_t, peepholes int8 too */
    const float *bias[4];
    const float *ln[4];
    const int8_t *proj_w;
    const float *proj_b;
} mn_lstm_hybrid_weights_t;

/* A row quantized on the fly; an all-zero row is skipped, as TFLite skips it (IsZeroVector). */
typedef struct {
    const int8_t *q;
    float scale;
    int32_t zp;
    int zero;
} qrow_t;

static void quantize_row(const float *x, int n, int asymmetric, int8_t *q, qrow_t *r) {
    r->q = q;
    r->zero = 1;
    for (int i = 0; i < n; ++i) {
        if (x[i] != 0.0f) {
            r->zero = 0;
            break;
        }
    }
    if (!r->zero) {
        r->scale = mn_quantize_dynamic_s8(x, (size_t)n, q, asymmetric, &r->zp);
    }
}

/* One output of TFLite's hybrid MatrixBatchVectorMultiplyAccumulate: the int32 dot product of an
 * int8 weight row with the zero-point-corrected quantized row, times (row scale * weight scale). */
static float hybrid_dot(const int8_t *w, const qrow_t *r, int n, float w_scale) {
    uint32_t acc = 0; /* int32 accumulator, wrap-around defined */
    for (int k = 0; k < n; ++k) {
        acc += (uint32_t)((int32_t)w[k] * ((int32_t)r->q[k] - r->zp));
    }
    return (float)(int32_t)acc * (r->scale * w_scale);
}

/* CalculateLstmGateHybrid for one batch row. */
static void lstm_gate_hybrid(const mn_lstm_f32_params_t *p, const mn_lstm_hybrid_scales_t *s,
    const mn_lstm_hybrid_weights_t *w, int g, const qrow_t *x, const qrow_t *h, const float *c, float *gate) {
    const int ni = p->n_input, no = p->n_output;
    const int8_t *wx = w->w_x[g], *wh = w->w_h[g], *wc = w->w_c[g];
    for (int r = 0; r < p->n_cell; ++r) {
        float acc = p->use_layer_norm ? 0.0f : w->bias[g][r];
        if (!x->zero) {
            acc += hybrid_dot(wx + (size_t)r * ni, x, ni, s->s_x[g]);
        }
        if (!h->zero) {
            acc += hybrid_dot(wh + (size_t)r * no, h, no, s->s_h[g]);
        }
        if (wc) {
            acc += (s->s_c[g] * (float)wc[r]) * c[r];   /* the recovered float peephole weight */
        }
        gate[r] = acc;
    }
    gate_finish_f32(p, g, w->ln[g], w->bias[g], gate);
}

/* One LstmStepHybrid for one batch row.  scratch: 5 * n_cell floats; qbuf: n_input + n_output +
 * n_cell bytes. */
static void lstm_step_hybrid(const mn_lstm_f32_params_t *p, const mn_lstm_hybrid_scales_t *s,
    const mn_lstm_hybrid_weights_t *w, const float *x, float *h, float *c, float *out, float *scratch,
    int8_t *qbuf) {
    const int nc = p->n_cell, no = p->n_output;
    float *gi = scratch, *gf = scratch + nc, *gc = scratch + 2 * nc, *go = scratch + 3 * nc;
    float *hid = scratch + 4 * nc;
    qrow_t xq, hq;
    quantize_row(x, p->n_input, s->asymmetric, qbuf, &xq);
    quantize_row(h, no, s->asymmetric, qbuf + p->n_input, &hq);
    if (!p->use_cifg) {
        lstm_gate_hybrid(p, s, w, G_IN, &xq, &hq, c, gi);
    }
    lstm_gate_hybrid(p, s, w, G_FORGET, &xq, &hq, c, gf);
    lstm_gate_hybrid(p, s, w, G_CELL, &xq, &hq, c, gc);
    cell_update_f32(p, gi, gf, gc, c);
    lstm_gate_hybrid(p, s, w, G_OUT, &xq, &hq, c, go);
    hidden_f32(p, c, go, hid);
    if (w->proj_w) {
        qrow_t pq;
        quantize_row(hid, nc, s->asymmetric, qbuf + p->n_input + no, &pq);
        for (int j = 0; j < no; ++j) {
            float v = w->proj_b ? w->proj_b[j] : 0.0f;
            if (!pq.zero) {
                v += hybrid_dot(w->proj_w + (size_t)j * nc, &pq, nc, s->s_proj);
            }
            if (p->proj_clip > 0.0f) {
                v = mn_clamp_f32(v, -p->proj_clip, p->proj_clip);
            }
            h[j] = v;
        }
    } else {
        memcpy(h, hid, sizeof(float) * (size_t)no);
    }
    memcpy(out, h, sizeof(float) * (size_t)no);
}

static size_t hybrid_qbuf_bytes(const mn_lstm_f32_params_t *p) {
    return (size_t)p->n_input + (size_t)p->n_output + (size_t)p->n_cell;
}

void mn_lstm_hybrid(const mn_lstm_f32_params_t *p, const mn_lstm_hybrid_scales_t *s,
    const mn_lstm_hybrid_weights_t *w, const float *input, float *output_state, float *cell_state,
    float *output, float *scratch, int8_t *qbuf);

void mn_lstm_hybrid(const mn_lstm_f32_params_t *p, const mn_lstm_hybrid_scales_t *s,
    const mn_lstm_hybrid_weights_t *w, const float *input, float *output_state, float *cell_state,
    float *output, float *scratch, int8_t *qbuf) {
    const int nb = p->n_batch, nt = p->n_time;
    for (int t = 0; t < nt; ++t) {
        for (int b = 0; b < nb; ++b) {
            const size_t row = p->time_major ? (size_t)t * nb + b : (size_t)b * nt + t;
            lstm_step_hybrid(p, s, w, input + row * p->n_input, output_state + (size_t)b * p->n_output,
                cell_state + (size_t)b * p->n_cell, output + row * p->n_output, scratch, qbuf);
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    mn_lstm_s8_params_t q;
    mn_lstm_f32_params_t f;
    mn_lstm_hybrid_scales_t h;  /* hybrid only */
    int32_t scratch_idx;
    uint8_t dtype;
    uint8_t hybrid;             /* float32 input, int8 weights */
} lstm_data_t;

static const char *const gate_names[4] = { "input", "forget", "cell", "output" };

/* Checks a weight matrix [rows, cols] of dtype `dtype`. */
static mn_status_t check_matrix(mn_ctx_t *ctx, const mn_tensor_t *t, int idx, int rows, int cols, int dtype) {
    if (t->ndim != 2 || t->dims[0] != rows || t->dims[1] != cols) {
        return mn_fail(ctx, MN_ERR_MODEL, "weights (input %d) must be [%d, %d]", idx, rows, cols);
    }
    if (t->dtype != dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "weights (input %d) dtype %s not supported (expected %s)",
            idx, mn_dtype_name(t->dtype), mn_dtype_name(dtype));
    }
    return MN_OK;
}

static mn_status_t check_vector(mn_ctx_t *ctx, const mn_tensor_t *t, int idx, int n, int dtype, const char *what) {
    if (t->ndim != 1 || t->dims[0] != n) {
        return mn_fail(ctx, MN_ERR_MODEL, "%s (input %d) must be [%d]", what, idx, n);
    }
    if (t->dtype != dtype) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s (input %d) dtype %s not supported (expected %s)",
            what, idx, mn_dtype_name(t->dtype), mn_dtype_name(dtype));
    }
    return MN_OK;
}

/* out[r] = (bias ? bias[r] : 0) + zp * sum(w[r][:]), int32 wrap-around as TFLite
 * (PrecomputeZeroPointTimesWeightWithBias). */
static int32_t *effective_bias(mn_ctx_t *ctx, const mn_tensor_t *w, const mn_tensor_t *bias, int32_t zp) {
    const int rows = w->dims[0], cols = w->dims[1];
    int32_t *out = (int32_t *)mn_alloc_persistent(ctx, sizeof(int32_t) * (size_t)rows);
    if (!out) {
        return NULL;
    }
    const int8_t *wd = (const int8_t *)w->data;
    const int32_t *bd = bias ? (const int32_t *)bias->data : NULL;
    for (int r = 0; r < rows; ++r) {
        uint32_t row_sum = 0;
        for (int k = 0; k < cols; ++k) {
            row_sum += (uint32_t)(int32_t)wd[(size_t)r * cols + k];
        }
        out[r] = (int32_t)((bd ? (uint32_t)bd[r] : 0u) + row_sum * (uint32_t)zp);
    }
    return out;
}

/* int8/int16 weights: constant, per-tensor, symmetric (TFLite's integer and hybrid LSTMs use only
 * the per-tensor scale and never a weights zero point). */
static mn_status_t check_weights_q(mn_ctx_t *ctx, const mn_tensor_t *t, const char *what) {
    REF_TRY(ref_need_quant(ctx, what, t));
    if (!t->data || !(t->flags & MN_TF_CONST)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s must be constant (%s weights)", what, mn_dtype_name(t->dtype));
    }
    if (mn_tensor_q_count(t) > 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "per-channel quantized %s (%d scales) not supported",
            what, (int)mn_tensor_q_count(t));
    }
    if (mn_tensor_zero_point(t, 0) != 0) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%s zero point %d not supported (must be 0)",
            what, (int)mn_tensor_zero_point(t, 0));
    }
    return MN_OK;
}

/* TFLite CheckedLog2: log2 of a positive scale, accepted when within 1e-3 of an integer. */
static int checked_log2(float x, int *out) {
    const float l = logf(x) * (1.0f / logf(2.0f));
    const float r = roundf(l);
    *out = (int)r;
    return fabsf(l - r) < 1e-3f;
}

static mn_status_t prepare_s8(mn_ctx_t *ctx, mn_node_t *node, lstm_data_t *d, mn_tensor_t *in,
    mn_tensor_t *const *wx, mn_tensor_t *const *wh, mn_tensor_t *const *wc, mn_tensor_t *const *bias,
    mn_tensor_t *proj_w, mn_tensor_t *proj_b, mn_tensor_t *hs, mn_tensor_t *cs, mn_tensor_t *out,
    float cell_clip, float proj_clip) {
    mn_lstm_s8_params_t *q = &d->q;
    if (cs->dtype != MN_INT16) {
        return ref_fail_dtype(ctx, "cell_state (with int8 input)", cs);
    }
    if (hs->dtype != MN_INT8) {
        return ref_fail_dtype(ctx, "output_state (with int8 input)", hs);
    }
    if (out->dtype != MN_INT8) {
        return ref_fail_combo(ctx, in, out);
    }
    for (int g = 0; g < 4; ++g) {
        if (wc[g] && wc[g]->dtype != MN_INT16) {
            return ref_fail_dtype(ctx, "peephole weights (with int8 input)", wc[g]);
        }
        if (bias[g] && bias[g]->dtype != MN_INT32) {
            return ref_fail_dtype(ctx, "gate bias (with int8 input)", bias[g]);
        }
    }
    if (proj_b && proj_b->dtype != MN_INT32) {
        return ref_fail_dtype(ctx, "projection_bias (with int8 input)", proj_b);
    }
    if (mn_num_intermediates(ctx, node) != 5) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED,
            "int8 LSTM with %d intermediates not supported (only the 8x8_16 variant with 5)",
            (int)mn_num_intermediates(ctx, node));
    }
    mn_tensor_t *hidden = mn_intermediate(ctx, node, 4);
    if (!hidden) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing hidden-state intermediate (intermediate 4)");
    }
    REF_TRY(ref_need_quant(ctx, "input", in));
    REF_TRY(ref_need_quant(ctx, "output_state", hs));
    REF_TRY(ref_need_quant(ctx, "cell_state", cs));
    REF_TRY(ref_need_quant(ctx, "hidden intermediate", hidden));
    for (int g = 0; g < 4; ++g) {
        if (wx[g]) {
            REF_TRY(check_weights_q(ctx, wx[g], "input weights"));
            REF_TRY(check_weights_q(ctx, wh[g], "recurrent weights"));
        }
        if (wc[g]) {
            REF_TRY(check_weights_q(ctx, wc[g], "peephole weights"));
        }
    }
    if (proj_w) {
        REF_TRY(check_weights_q(ctx, proj_w, "projection_weights"));
    }
    if (wc[G_OUT] && q->n_output != q->n_cell) {
        /* TFLite's integer peephole term runs over n_output elements (a bug): with a projection
         * to another size it misses cells or reads past the cell state. */
        return mn_fail(ctx, MN_ERR_UNSUPPORTED,
            "peephole weights with a projection to %d outputs (!= %d cells) not supported (int8 input)",
            q->n_output, q->n_cell);
    }
    if (!checked_log2(mn_tensor_scale(cs, 0), &q->cell_scale) || q->cell_scale > -9 || q->cell_scale < -15) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED,
            "cell_state scale must be a power of two between 2^-15 and 2^-9 (int8 input)");
    }

    /* Effective scales exactly as TFLite's PopulateQuantizedLstmParams8x8_16
     * (no layer norm: every gate pre-activation is Q3.12). */
    const float gate_scale = 1.0f / 4096.0f;
    for (int g = 0; g < 4; ++g) {
        if (!wx[g]) {
            continue;
        }
        const float sx = mn_tensor_scale(wx[g], 0) * mn_tensor_scale(in, 0) / gate_scale;
        const float sh = mn_tensor_scale(wh[g], 0) * mn_tensor_scale(hs, 0) / gate_scale;
        mn_quantize_multiplier((double)sx, &q->mult_x[g], &q->shift_x[g]);
        mn_quantize_multiplier((double)sh, &q->mult_h[g], &q->shift_h[g]);
        if (wc[g]) {
            /* std::pow(2, cell_scale) is a double: this one is formed in double */
            const float sc = (float)(1.0 / (double)(1 << -q->cell_scale) * (double)mn_tensor_scale(wc[g], 0) / (double)gate_scale);
            mn_quantize_multiplier((double)sc, &q->mult_c[g], &q->shift_c[g]);
        }
    }
    const float s_hidden = (float)(1.0 / 32768.0 / (double)mn_tensor_scale(hidden, 0) * (1.0 / 32768.0));
    mn_quantize_multiplier((double)s_hidden, &q->hidden_mult, &q->hidden_shift);
    q->hidden_zp = mn_tensor_zero_point(hidden, 0);
    q->output_state_zp = mn_tensor_zero_point(hs, 0);
    if (proj_w) {
        const float s_proj = mn_tensor_scale(proj_w, 0) * mn_tensor_scale(hidden, 0) / mn_tensor_scale(hs, 0);
        mn_quantize_multiplier((double)s_proj, &q->proj_mult, &q->proj_shift);
    }
    q->cell_clip = cell_clip > 0.0f ? (int16_t)mn_clamp_f32(cell_clip / mn_tensor_scale(cs, 0), -32768.0f, 32767.0f) : 0;
    q->proj_clip = proj_clip > 0.0f ? (int8_t)mn_clamp_f32(proj_clip / mn_tensor_scale(out, 0), -128.0f, 127.0f) : 0;

    /* Zero-point terms folded into the biases once. */
    for (int g = 0; g < 4; ++g) {
        if (!wx[g]) {
            continue;
        }
        if (!(q->bias_x[g] = effective_bias(ctx, wx[g], bias[g], -mn_tensor_zero_point(in, 0))) ||
            !(q->bias_h[g] = effective_bias(ctx, wh[g], NULL, -mn_tensor_zero_point(hs, 0)))) {
            return MN_ERR_ARENA;
        }
    }
    if (proj_w && !(q->proj_bias = effective_bias(ctx, proj_w, proj_b, q->hidden_zp))) {
        return MN_ERR_ARENA;
    }
    return mn_request_scratch(ctx, (size_t)q->n_cell * (5 * sizeof(int16_t) + 1), &d->scratch_idx);
}

/* Hybrid: the weight scales; every int8 weight tensor per-tensor and symmetric. */
static mn_status_t prepare_hybrid(mn_ctx_t *ctx, mn_node_t *node, lstm_data_t *d, mn_tensor_t *const *wx,
    mn_tensor_t *const *wh, mn_tensor_t *const *wc, mn_tensor_t *proj_w) {
    mn_lstm_hybrid_scales_t *h = &d->h;
    for (int g = 0; g < 4; ++g) {
        if (wx[g]) {
            REF_TRY(check_weights_q(ctx, wx[g], "input weights"));
            REF_TRY(check_weights_q(ctx, wh[g], "recurrent weights"));
            h->s_x[g] = mn_tensor_scale(wx[g], 0);
            h->s_h[g] = mn_tensor_scale(wh[g], 0);
        }
        if (wc[g]) {
            REF_TRY(check_weights_q(ctx, wc[g], "peephole weights"));
            h->s_c[g] = mn_tensor_scale(wc[g], 0);
        }
    }
    if (proj_w) {
        REF_TRY(check_weights_q(ctx, proj_w, "projection_weights"));
        h->s_proj = mn_tensor_scale(proj_w, 0);
    }
    h->asymmetric = mn_opt_bool(node, MN_LSTM_ASYMMETRIC_QUANTIZE_INPUTS, false);
    d->hybrid = 1;
    return MN_OK;
}

static mn_status_t lstm_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != LSTM_N_INPUTS) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%d inputs not supported (expected 24)", mn_num_inputs(node));
    }
    REF_INPUT(in, ctx, node, LSTM_IN, "input");
    REF_OUTPUT(out, ctx, node, 0);
    REF_INPUT(hs, ctx, node, LSTM_OUTPUT_STATE, "output_state");
    REF_INPUT(cs, ctx, node, LSTM_CELL_STATE, "cell_state");
    mn_tensor_t *wx[4], *wh[4], *wc[4], *bias[4], *ln[4];
    for (int g = 0; g < 4; ++g) {
        wx[g] = mn_input(ctx, node, LSTM_W_X + g);
        wh[g] = mn_input(ctx, node, LSTM_W_H + g);
        wc[g] = g == G_CELL ? NULL : mn_input(ctx, node, peephole_index(g));
        bias[g] = mn_input(ctx, node, LSTM_BIAS + g);
        ln[g] = mn_input(ctx, node, LSTM_LN + g);
    }
    mn_tensor_t *proj_w = mn_input(ctx, node, LSTM_PROJ_W);
    mn_tensor_t *proj_b = mn_input(ctx, node, LSTM_PROJ_B);
    for (int g = G_FORGET; g <= G_OUT; ++g) {
        if (!wx[g] || !wh[g] || !bias[g]) {
            return mn_fail(ctx, MN_ERR_MODEL, "missing %s gate weights or bias", gate_names[g]);
        }
    }

    const int act = mn_opt_i8(node, MN_LSTM_ACTIVATION, MN_ACT_NONE);
    const float cell_clip = mn_opt_f32(node, MN_LSTM_CELL_CLIP, 0.0f);
    const float proj_clip = mn_opt_f32(node, MN_LSTM_PROJ_CLIP, 0.0f);
    const int time_major = mn_opt_bool(node, MN_LSTM_TIME_MAJOR, false);
    if (!(cell_clip >= 0.0f) || !(proj_clip >= 0.0f)) {
        return mn_fail(ctx, MN_ERR_MODEL, "negative cell_clip / proj_clip");
    }
    if (mn_opt_bool(node, MN_LSTM_DIAGONAL_RECURRENT_TENSORS, false)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "diagonal_recurrent_tensors not supported");
    }

    if (in->ndim != 3) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input must be 3-D (got %d-D)", in->ndim);
    }
    REF_ALLOC(d, lstm_data_t, ctx, 1);
    const int nb = time_major ? in->dims[1] : in->dims[0];
    const int nt = time_major ? in->dims[0] : in->dims[1];
    const int ni = in->dims[2];
    if (wx[G_OUT]->ndim != 2 || wh[G_OUT]->ndim != 2) {
        return mn_fail(ctx, MN_ERR_MODEL, "output gate weights must be 2-D");
    }
    const int nc = wx[G_OUT]->dims[0];
    const int no = wh[G_OUT]->dims[1];
    if (nc < 1 || no < 1 || ni < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "empty LSTM (cells %d, outputs %d, inputs %d)", nc, no, ni);
    }
    if (in->dtype != MN_FLOAT32 && in->dtype != MN_INT8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    /* float32 input with int8 weights: hybrid (TFLite decides on the input-to-output weights) */
    const int hybrid = in->dtype == MN_FLOAT32 && wx[G_OUT]->dtype == MN_INT8;
    if (in->dtype == MN_FLOAT32 && !hybrid && wx[G_OUT]->dtype != MN_FLOAT32) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "float32 input with %s weights not supported",
            mn_dtype_name(wx[G_OUT]->dtype));
    }
    const int wdtype = in->dtype == MN_FLOAT32 && !hybrid ? MN_FLOAT32 : MN_INT8;
    const int bdtype = in->dtype == MN_FLOAT32 ? MN_FLOAT32 : MN_INT32;
    const int cdtype = in->dtype == MN_FLOAT32 ? (hybrid ? MN_INT8 : MN_FLOAT32) : MN_INT16;

    const int use_cifg = wx[G_IN] == NULL;
    if ((wh[G_IN] == NULL) != use_cifg || (bias[G_IN] == NULL) != use_cifg) {
        return mn_fail(ctx, MN_ERR_MODEL, "input gate weights/bias must be all present or all absent (CIFG)");
    }
    const int use_peephole = wc[G_OUT] != NULL;
    if ((wc[G_FORGET] != NULL) != use_peephole || (!use_cifg && (wc[G_IN] != NULL) != use_peephole) ||
        (use_cifg && wc[G_IN])) {
        return mn_fail(ctx, MN_ERR_MODEL, "peephole weights must be all present or all absent");
    }
    const int use_ln = ln[G_FORGET] != NULL;
    if (use_ln && (!ln[G_CELL] || !ln[G_OUT] || (ln[G_IN] != NULL) == use_cifg)) {
        return mn_fail(ctx, MN_ERR_MODEL, "layer norm coefficients incomplete");
    }
    if (!use_ln && (ln[G_IN] || ln[G_CELL] || ln[G_OUT])) {
        return mn_fail(ctx, MN_ERR_MODEL, "layer norm coefficients without forget gate coefficients");
    }
    if (proj_b && !proj_w) {
        return mn_fail(ctx, MN_ERR_MODEL, "projection_bias without projection_weights");
    }
    for (int g = 0; g < 4; ++g) {
        if (!wx[g]) {
            continue;
        }
        REF_TRY(check_matrix(ctx, wx[g], LSTM_W_X + g, nc, ni, wdtype));
        REF_TRY(check_matrix(ctx, wh[g], LSTM_W_H + g, nc, no, wdtype));
        REF_TRY(check_vector(ctx, bias[g], LSTM_BIAS + g, nc, bdtype, "gate bias"));
        if (wc[g]) {
            REF_TRY(check_vector(ctx, wc[g], peephole_index(g), nc, cdtype, "peephole weights"));
        }
        if (ln[g]) {
            REF_TRY(check_vector(ctx, ln[g], LSTM_LN + g, nc, in->dtype == MN_FLOAT32 ? MN_FLOAT32 : MN_INT16,
                "layer norm coefficients"));
        }
    }
    if (proj_w) {
        REF_TRY(check_matrix(ctx, proj_w, LSTM_PROJ_W, no, nc, wdtype));
        if (proj_b) {
            REF_TRY(check_vector(ctx, proj_b, LSTM_PROJ_B, no, bdtype, "projection_bias"));
        }
    } else if (no != nc) {
        return mn_fail(ctx, MN_ERR_MODEL, "output size %d differs from cell size %d without projection", no, nc);
    }
    if (!(hs->flags & MN_TF_VARIABLE) || !(cs->flags & MN_TF_VARIABLE)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "output_state and cell_state must be variable tensors");
    }
    if (mn_tensor_count(hs) != (size_t)nb * no || mn_tensor_count(cs) != (size_t)nb * nc) {
        return mn_fail(ctx, MN_ERR_MODEL, "state sizes %u/%u do not match batch %d x outputs %d / cells %d",
            (unsigned)mn_tensor_count(hs), (unsigned)mn_tensor_count(cs), nb, no, nc);
    }
    if (mn_tensor_count(out) != (size_t)nb * nt * no) {
        /* the factors, not their product: a malformed model's sizes can overflow int */
        return mn_fail(ctx, MN_ERR_MODEL, "output has %u elements, expected batch %d x time %d x outputs %d",
            (unsigned)mn_tensor_count(out), nb, nt, no);
    }
    d->dtype = in->dtype;
    d->hybrid = 0;

    if (in->dtype == MN_FLOAT32) {
        if (hs->dtype != MN_FLOAT32 || cs->dtype != MN_FLOAT32 || out->dtype != MN_FLOAT32) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "float32 input needs float32 states and output (got %s/%s/%s)",
                mn_dtype_name(hs->dtype), mn_dtype_name(cs->dtype), mn_dtype_name(out->dtype));
        }
        /* NONE is rejected: TFLite then multiplies the output gate with a stale scratch buffer. */
        if (act != MN_ACT_TANH && act != MN_ACT_RELU && act != MN_ACT_RELU_N1_TO_1 && act != MN_ACT_RELU6) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "fused activation %s not supported", mn_fused_act_name(act));
        }
        mn_lstm_f32_params_t *f = &d->f;
        f->n_batch = nb;
        f->n_time = nt;
        f->n_input = ni;
        f->n_cell = nc;
        f->n_output = no;
        f->time_major = time_major;
        f->use_cifg = use_cifg;
        f->use_layer_norm = use_ln;
        f->act = act;
        f->cell_clip = cell_clip;
        f->proj_clip = proj_clip;
        size_t scratch = (size_t)nc * 5 * sizeof(float);
        if (hybrid) {
            REF_TRY(prepare_hybrid(ctx, node, d, wx, wh, wc, proj_w));
            scratch += hybrid_qbuf_bytes(f);
        }
        REF_TRY(mn_request_scratch(ctx, scratch, &d->scratch_idx));
    } else {
        if (use_ln) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "layer normalization not supported with int8 input");
        }
        mn_lstm_s8_params_t *q = &d->q;
        q->n_batch = nb;
        q->n_time = nt;
        q->n_input = ni;
        q->n_cell = nc;
        q->n_output = no;
        q->time_major = time_major;
        q->use_cifg = use_cifg;
        REF_TRY(prepare_s8(ctx, node, d, in, wx, wh, wc, bias, proj_w, proj_b, hs, cs, out, cell_clip, proj_clip));
    }
    node->user_data = d;
    return MN_OK;
}

static const void *in_data(mn_ctx_t *ctx, const mn_node_t *node, int i) {
    const mn_tensor_t *t = mn_input(ctx, node, i);
    return t ? t->data : NULL;
}

static mn_status_t lstm_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const lstm_data_t *d = (const lstm_data_t *)node->user_data;
    const void *in = in_data(ctx, node, LSTM_IN);
    void *hs = mn_input(ctx, node, LSTM_OUTPUT_STATE)->data;
    void *cs = mn_input(ctx, node, LSTM_CELL_STATE)->data;
    void *out = mn_output(ctx, node, 0)->data;
    void *scratch = mn_get_scratch(ctx, d->scratch_idx);
    if (d->dtype == MN_INT8) {
        mn_lstm_s8_weights_t w;
        for (int g = 0; g < 4; ++g) {
            w.w_x[g] = (const int8_t *)in_data(ctx, node, LSTM_W_X + g);
            w.w_h[g] = (const int8_t *)in_data(ctx, node, LSTM_W_H + g);
            w.w_c[g] = g == G_CELL ? NULL : (const int16_t *)in_data(ctx, node, peephole_index(g));
        }
        w.proj_w = (const int8_t *)in_data(ctx, node, LSTM_PROJ_W);
        mn_lstm_s8(&d->q, &w, (const int8_t *)in, (int8_t *)hs, (int16_t *)cs, (int8_t *)out,
            (int16_t *)scratch, (int8_t *)scratch + (size_t)d->q.n_cell * 5 * sizeof(int16_t));
    } else if (d->hybrid) {
        mn_lstm_hybrid_weights_t w;
        for (int g = 0; g < 4; ++g) {
            w.w_x[g] = (const int8_t *)in_data(ctx, node, LSTM_W_X + g);
            w.w_h[g] = (const int8_t *)in_data(ctx, node, LSTM_W_H + g);
            w.w_c[g] = g == G_CELL ? NULL : (const int8_t *)in_data(ctx, node, peephole_index(g));
            w.bias[g] = (const float *)in_data(ctx, node, LSTM_BIAS + g);
            w.ln[g] = (const float *)in_data(ctx, node, LSTM_LN + g);
        }
        w.proj_w = (const int8_t *)in_data(ctx, node, LSTM_PROJ_W);
        w.proj_b = (const float *)in_data(ctx, node, LSTM_PROJ_B);
        mn_lstm_hybrid(&d->f, &d->h, &w, (const float *)in, (float *)hs, (float *)cs, (float *)out,
            (float *)scratch, (int8_t *)scratch + (size_t)d->f.n_cell * 5 * sizeof(float));
    } else {
        mn_lstm_f32_weights_t w;
        for (int g = 0; g < 4; ++g) {
            w.w_x[g] = (const float *)in_data(ctx, node, LSTM_W_X + g);
            w.w_h[g] = (const float *)in_data(ctx, node, LSTM_W_H + g);
            w.w_c[g] = g == G_CELL ? NULL : (const float *)in_data(ctx, node, peephole_index(g));
            w.bias[g] = (const float *)in_data(ctx, node, LSTM_BIAS + g);
            w.ln[g] = (const float *)in_data(ctx, node, LSTM_LN + g);
        }
        w.proj_w = (const float *)in_data(ctx, node, LSTM_PROJ_W);
        w.proj_b = (const float *)in_data(ctx, node, LSTM_PROJ_B);
        mn_lstm_f32(&d->f, &w, (const float *)in, (float *)hs, (float *)cs, (float *)out, (float *)scratch);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_UNIDIRECTIONAL_SEQUENCE_LSTM = { NULL, lstm_prepare, lstm_eval, NULL, NULL };

#endif /* MICRONN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM */
