/* LOG_SOFTMAX reference kernel, along the last dimension.
 * float32: x - max - log(sum exp(x - max)), as TFLite.
 * int8 (TFLite reference_integer_ops::LogSoftmax): differences to the row maximum in Q5.26,
 * exp_on_negative_values summed in Q12.19, gemmlowp's fixed-point log of the sum (Q5.26), result
 * (diff - log_sum) on the fixed output scale 16/256 with zero point 127; differences below a
 * limit derived from the log sum give -128. beta is 1 (TFLite ignores it for int8). */
#include <math.h>

#include "mn_ref.h"

#if MICRONN_OP_LOG_SOFTMAX

static int32_t sat_add(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

static int clz32(uint32_t x) {
    int n = 0;
    while (n < 32 && !(x & (0x80000000u >> n))) {
        ++n;
    }
    return n;
}

/* gemmlowp log_x_for_x_greater_than_or_equal_to_1 with 12 input and 5 output integer bits; the
 * accumulation has 6. x is the raw Q12.19 value (>= 1.0), result raw Q5.26. */
int32_t mn_log_q12_to_q5(int32_t x) {
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
    const int32_t shifted_quarter = 1 << 23;   /* 1/4 in Q6.25 */
    const int in_bits = 12, acc_bits = 6;

    const int za_headroom_plus_1 = clz32((uint32_t)x);
    const int32_t ra_tmp = mn_sat_pot(x, za_headroom_plus_1 - 1);
    const int32_t ra = mn_sat_pot(mn_srdhm(ra_tmp, sqrt_half), 1);
    const int32_t za_pow2 = sat_add(mn_sat_pot(in_bits - za_headroom_plus_1, 31 - acc_bits), shifted_quarter);

    const int32_t zb = mn_srdhm(x, sqrt_half);
    const int zb_headroom = clz32((uint32_t)zb) - 1;
    const int32_t rb = mn_sat_pot(x, zb_headroom);
    const int32_t zb_pow2 = sat_add(mn_sat_pot(in_bits - zb_headroom, 31 - acc_bits), -shifted_quarter);

    const int32_t r = ra < rb ? ra : rb;
    const int32_t z_pow2 = za_pow2 > zb_pow2 ? za_pow2 : zb_pow2;

    const int64_t half_sum = (int64_t)r + sqrt_sqrt_half;
    const int32_t p = (int32_t)((half_sum + (half_sum >= 0 ? 1 : -1)) / 2);
    int32_t q = mn_add_wrap(r, -sqrt_sqrt_half);
    q = mn_add_wrap(q, q);

    const int32_t common_sq = mn_srdhm(q, q);
    const int32_t num = mn_add_wrap(mn_srdhm(q, r), mn_srdhm(mn_srdhm(q, common_sq), alpha_n));
    const int32_t denom_minus_one = mn_add_wrap(
        mn_srdhm(p, mn_add_wrap(mn_add_wrap(alpha_i, q), mn_srdhm(alpha_d, common_sq))), mn_srdhm(alpha_f, q));
    const int32_t recip_denom = mn_one_over_one_plus_x(denom_minus_one);
    const int32_t num_scaled = mn_rdbpot(num, acc_bits);
    return mn_sat_pot(mn_add_wrap(mn_srdhm(z_pow2, log_2), mn_srdhm(num_scaled, recip_denom)), acc_bits - 5);
}

int mn_log_softmax_q_init(mn_log_softmax_q_t *p, float input_scale) {
    int shift;
    mn_softmax_scaling(1.0, (double)input_scale, 5, &p->mult, &shift);
    if (shift < 0 || p->mult == 0) {
        return -1;
    }
    p->left_shift = shift;
    const double reverse = (double)((int64_t)1 << (31 - shift)) / (double)p->mult;
    mn_quantize_multiplier(reverse, &p->reverse_mult, &p->reverse_shift);
    p->diff_min = -mn_input_radius(5, shift);
    return 0;
}

void mn_log_softmax_s8(const mn_log_softmax_q_t *p, int outer, int depth, const int8_t *input, int8_t *output) {
    for (int i = 0; i < outer; ++i) {
        const int8_t *in = input + (size_t)i * depth;
        int8_t *out = output + (size_t)i * depth;
        int32_t mx = INT8_MIN;
        for (int j = 0; j < depth; ++j) {
            mx = in[j] > mx ? in[j] : mx;
        }
        int32_t sum = 0; /* Q12.19 */
        for (int j = 0; j < depth; ++j) {
            const int32_t diff = in[j] - mx;
            if (diff >= p->diff_min) {
                const int32_t d5 = mn_mul_by_qm(diff, p->mult, p->left_shift);
                sum = mn_add_wrap(sum, mn_rdbpot(mn_exp_on_negative_values_q5(d5), 12));
            }
        }
        const int32_t log_sum = mn_log_q12_to_q5(sum);
        const int32_t limit = mn_mul_by_qm(mn_add_wrap(log_sum, INT32_MIN), p->reverse_mult, p->reverse_shift);
        const int32_t adjusted_diff_min = p->diff_min - 1 > limit ? p->diff_min - 1 : limit;
        for (int j = 0; j < depth; ++j) {
            const int32_t diff = in[j] - mx;
            if (diff > adjusted_diff_min) {
                const int32_t d5 = mn_mul_by_qm(diff, p->mult, p->left_shift);
                const int32_t v = mn_rdbpot(mn_add_wrap(d5, -log_sum), 31 - 5 - 4) + 127;
                out[j] = (int8_t)mn_clamp_i32(v, INT8_MIN, INT8_MAX);
            } else {
                out[j] = INT8_MIN;
            }
        }
    }
}

void mn_log_softmax_f32(int outer, int depth, const float *input, float *output) {
    for (int i = 0; i < outer; ++i) {
        const float *in = input + (size_t)i * depth;
        float *out = output + (size_t)i * depth;
        float mx = -INFINITY;
        for (int j = 0; j < depth; ++j) {
            mx = in[j] > mx ? in[j] : mx;
        }
        float sum = 0.0f;
        for (int j = 0; j < depth; ++j) {
            sum += expf(in[j] - mx);
        }
        const float log_sum = logf(sum);
        for (int j = 0; j < depth; ++j) {
            out[j] = in[j] - mx - log_sum;
        }
    }
}

/* ---- interpreter glue ---------------------------------------------------- */

#include "ref_glue.h"

typedef struct {
    int outer, depth;
    uint8_t dtype;
    mn_log_softmax_q_t q;
} log_softmax_data_t;

static mn_status_t log_softmax_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    mn_tensor_t *in, *out;
    size_t n;
    REF_TRY(ref_unary_io(ctx, node, &in, &out, &n));
    const int dt = in->dtype;
    if (dt != MN_FLOAT32 && dt != MN_INT8) {
        return ref_fail_dtype(ctx, "input", in);
    }
    if (in->ndim < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input must have at least 1 dimension");
    }
    const int32_t depth = mn_dim(in, -1);
    if (depth < 1) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "empty last dimension");
    }
    REF_ALLOC(d, log_softmax_data_t, ctx, 1);
    d->depth = depth;
    d->outer = (int)(n / (size_t)depth);
    d->dtype = (uint8_t)dt;
    if (dt == MN_INT8) {
        REF_TRY(ref_unary_quant(ctx, in, out));
        if (mn_tensor_scale(out, 0) != 16.0f / 256 || mn_tensor_zero_point(out, 0) != 127) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "int8 output must have scale 16/256 and zero point 127");
        }
        if (mn_log_softmax_q_init(&d->q, mn_tensor_scale(in, 0))) {
            return mn_fail(ctx, MN_ERR_UNSUPPORTED, "input scale too small for int8 input");
        }
    }
    node->user_data = d;
    return MN_OK;
}

static mn_status_t log_softmax_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const log_softmax_data_t *d = (const log_softmax_data_t *)node->user_data;
    const void *in = mn_input(ctx, node, 0)->data;
    void *out = mn_output(ctx, node, 0)->data;
    if (d->dtype == MN_INT8) {
        mn_log_softmax_s8(&d->q, d->outer, d->depth, (const int8_t *)in, (int8_t *)out);
    } else {
        mn_log_softmax_f32(d->outer, d->depth, (const float *)in, (float *)out);
    }
    return MN_OK;
}

const mn_kernel_t mn_kernel_LOG_SOFTMAX = { NULL, log_softmax_prepare, log_softmax_eval, NULL, NULL };

#endif /* MICRONN_OP_LOG_SOFTMAX */
