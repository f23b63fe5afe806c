/*
 * Helium int8 DEPTHWISE_CONV_2D, vectorised across channels (lane-wise multiply-accumulate in
 * 32-bit lanes; MVE has no non-reducing vector-by-vector MLA, so VMUL(L) + VADD).
 *
 * The taps of an output pixel that fall inside the input form a rectangle (rows and columns are
 * independent). Interior pixels (the full filter inside) start from the bias with the input offset
 * folded in (bias + off * sum of the channel's taps) and multiply raw input; border pixels start
 * from the plain bias, visit only the rectangle and add the offset to each input value. Both give
 * the reference's sum over valid taps of f * (x + off) + bias, in wrapping 32-bit arithmetic.
 *
 *   m1:   depth multiplier 1: 8 channels per pass, int8 widened to 16 bits, VMULLB/VMULLT split the
 *         products of even and odd channels into two 4 x 32-bit accumulators.
 *   mult: depth multiplier > 1: 4 output channels per pass, their input channels oc / dm gathered.
 */
#include "mve.h"

#if MICRONN_OP_DEPTHWISE_CONV_2D && MICRONN_TYPE_INT8

#define MVE_INLINE static inline __attribute__((always_inline))

/* Persistent data: folded[out_c], plain[out_c] (the bias, or zeros), then for the multiplier
 * variant the input channel of each output channel, idx[out_c]. */
static size_t dw_m1_data_bytes(const mn_conv_geom_t *g) {
    return 2 * sizeof(int32_t) * (size_t)g->out_c;
}

static size_t dw_mult_data_bytes(const mn_conv_geom_t *g) {
    return 3 * sizeof(int32_t) * (size_t)g->out_c;
}

/* folded[oc] = bias + input offset * sum of the channel's taps; plain[oc] = bias (if plain). */
static void dw_fold(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter, const int32_t *bias,
    int32_t *folded, int32_t *plain) {
    const int out_c = g->out_c, taps = g->f_h * g->f_w;
    for (int oc = 0; oc < out_c; ++oc) {
        uint32_t sum = 0;
        for (int t = 0; t < taps; ++t) {
            sum += (uint32_t)filter[(size_t)t * out_c + oc];
        }
        const int32_t b = bias ? bias[oc] : 0;
        if (plain) {
            plain[oc] = b;
        }
        folded[oc] = (int32_t)((uint32_t)b + sum * (uint32_t)q->input_offset);
    }
}

static void dw_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    const int out_c = g->out_c;
    int32_t *folded = (int32_t *)data, *plain = folded + out_c;
    dw_fold(g, q, filter, bias, folded, plain);
    if (g->depth_mult > 1) {
        uint32_t *idx = (uint32_t *)(plain + out_c);
        for (int oc = 0; oc < out_c; ++oc) {
            idx[oc] = (uint32_t)(oc / g->depth_mult);
        }
    }
}

/* Where one output pixel's valid taps are: input and filter at the first valid tap, and the
 * rectangle's extent. */
typedef struct {
    const int8_t *in;
    const int8_t *f;
    int ny, nx;
    bool interior;
} dw_taps_t;

typedef struct {
    size_t in_row, in_col;   /* input step between filter rows / columns (dilated) */
    size_t f_row;            /* filter step between filter rows (f_w * out_c); columns: out_c */
    int in_c, out_c, dm;
    int32_t in_off;
} dw_steps_t;

/* First valid tap index and count along one axis: o0 + dil * k in [0, size) for k < f. */
static void dw_axis(int o0, int dil, int size, int f, int *k0, int *n) {
    int k = 0;
    while (k < f && o0 + dil * k < 0) {
        ++k;
    }
    int e = k;
    while (e < f && o0 + dil * e < size) {
        ++e;
    }
    *k0 = k;
    *n = e - k;
}

/* Requantize and store channels c..c+7 (n valid; all when FULL) from their even/odd accumulators. */
MVE_INLINE void dw_m1_store(int32x4_t acc_e, int32x4_t acc_o, const mn_conv_quant_t *q, int c, int n, int8_t *out,
    bool full) {
    const uint32x4_t offs = vidupq_n_u32(0, 2);   /* even lanes */
    int32x4_t m_e, m_o, s_e, s_o;
    mve_pred16_t p = 0xffff, pe = 0xffff, po = 0xffff;
    if (!full) {
        p = vctp16q((uint32_t)n);
        pe = vctp32q((uint32_t)(n + 1) / 2);
        po = vctp32q((uint32_t)n / 2);
    }
    if (full) {
        m_e = vldrwq_gather_shifted_offset_s32(q->mult + c, offs);
        m_o = vldrwq_gather_shifted_offset_s32(q->mult + c + 1, offs);
        s_e = vldrbq_gather_offset_s32(q->shift + c, offs);
        s_o = vldrbq_gather_offset_s32(q->shift + c + 1, offs);
    } else {
        m_e = vldrwq_gather_shifted_offset_z_s32(q->mult + c, offs, pe);
        m_o = vldrwq_gather_shifted_offset_z_s32(q->mult + c + 1, offs, po);
        s_e = vldrbq_gather_offset_z_s32(q->shift + c, offs, pe);
        s_o = vldrbq_gather_offset_z_s32(q->shift + c + 1, offs, po);
    }
    const int32x4_t r_e = mn_mve_requant(acc_e, m_e, s_e, q->output_offset, q->act_min, q->act_max);
    const int32x4_t r_o = mn_mve_requant(acc_o, m_o, s_o, q->output_offset, q->act_min, q->act_max);
    const int16x8_t r = vmovntq_s32(vmovnbq_s32(vuninitializedq_s16(), r_e), r_o);
    if (full) {
        vstrbq_s16(out + c, r);
    } else {
        vstrbq_p_s16(out + c, r, p);
    }
}

/* 8 channels c..c+7 (n of them valid, all 8 when FULL: no predication) of one pixel; FOLDED:
 * interior (offset in the bias, none per tap). */
MVE_INLINE void dw_m1_channels(const dw_taps_t *t, const dw_steps_t *s, const int32_t *init,
    const mn_conv_quant_t *q, int c, int n, int8_t *out, bool folded, bool full) {
    static const uint32_t even[4] = { 0, 2, 4, 6 };
    const uint32x4_t offs = vldrwq_u32(even);
    const mve_pred16_t p = full ? 0xffff : vctp16q((uint32_t)n);
    const mve_pred16_t pe = full ? 0xffff : vctp32q((uint32_t)(n + 1) / 2);
    const mve_pred16_t po = full ? 0xffff : vctp32q((uint32_t)n / 2);
    int32x4_t acc_e, acc_o;
    if (full) {
        acc_e = vldrwq_gather_shifted_offset_s32(init + c, offs);
        acc_o = vldrwq_gather_shifted_offset_s32(init + c + 1, offs);
    } else {
        acc_e = vldrwq_gather_shifted_offset_z_s32(init + c, offs, pe);
        acc_o = vldrwq_gather_shifted_offset_z_s32(init + c + 1, offs, po);
    }
    const int16_t off = (int16_t)s->in_off;
    const size_t in_col = s->in_col, f_col = (size_t)s->out_c, in_row = s->in_row, f_row = s->f_row;
    const int nx = t->nx;
    const int8_t *ir = t->in + c, *fr = t->f + c;
    for (int y = 0; y < t->ny; ++y) {
        const int8_t *ip = ir, *fp = fr;
        for (int x = 0; x < nx; ++x) {
            int16x8_t xv = full ? vldrbq_s16(ip) : vldrbq_z_s16(ip, p);
            if (!folded) {
                xv = vaddq_n_s16(xv, off);   /* |x + off| <= 255: no int16 overflow */
            }
            const int16x8_t fv = full ? vldrbq_s16(fp) : vldrbq_z_s16(fp, p);
            acc_e = vaddq_s32(acc_e, vmullbq_int_s16(xv, fv));
            acc_o = vaddq_s32(acc_o, vmulltq_int_s16(xv, fv));
            ip += in_col;
            fp += f_col;
        }
        ir += in_row;
        fr += f_row;
    }
    dw_m1_store(acc_e, acc_o, q, c, n, out, full);
}

MVE_INLINE void dw_m1_pixel(const dw_taps_t *t, const dw_steps_t *s, const int32_t *data,
    const mn_conv_quant_t *q, int8_t *out) {
    const int in_c = s->in_c, full_c = in_c & ~7;
    const bool interior = t->interior;
    const int32_t *init = interior ? data : data + s->out_c;
    int c = 0;
    for (; c < full_c; c += 8) {
        if (interior) {
            dw_m1_channels(t, s, init, q, c, 8, out, true, true);
        } else {
            dw_m1_channels(t, s, init, q, c, 8, out, false, true);
        }
    }
    if (c < in_c) {
        dw_m1_channels(t, s, init, q, c, in_c - c, out, interior, false);
    }
}

/* 4 output channels oc..oc+3 (n valid) of one pixel, depth multiplier > 1. When the multiplier is
 * a multiple of 4 the four share one input channel ic: VMLA by that scalar input value. */
MVE_INLINE void dw_mult_channels(const dw_taps_t *t, const dw_steps_t *s, const int32_t *init,
    const uint32_t *idx, const mn_conv_quant_t *q, int oc, int n, int8_t *out, bool folded, int ic) {
    const mve_pred16_t p = vctp32q((uint32_t)n);
    const uint32x4_t iv = vldrwq_z_u32(idx + oc, p);
    int32x4_t acc = vldrwq_z_s32(init + oc, p);
    const int32_t off = folded ? 0 : s->in_off;
    const size_t in_col = s->in_col, f_col = (size_t)s->out_c, in_row = s->in_row, f_row = s->f_row;
    const int nx = t->nx;
    const int8_t *ir = t->in, *fr = t->f + oc;
    for (int y = 0; y < t->ny; ++y) {
        const int8_t *ip = ir, *fp = fr;
        for (int x = 0; x < nx; ++x) {
            if (ic >= 0) {
                acc = vmlaq_n_s32(acc, vldrbq_s32(fp), (int32_t)ip[ic] + off);
            } else {
                int32x4_t xv = vldrbq_gather_offset_z_s32(ip, iv, p);
                if (!folded) {
                    xv = vaddq_n_s32(xv, off);
                }
                acc = vaddq_s32(acc, vmulq_s32(xv, vldrbq_z_s32(fp, p)));
            }
            ip += in_col;
            fp += f_col;
        }
        ir += in_row;
        fr += f_row;
    }
    const int32x4_t r = mn_mve_requant(acc, vldrwq_z_s32(q->mult + oc, p), vldrbq_z_s32(q->shift + oc, p),
        q->output_offset, q->act_min, q->act_max);
    vstrbq_p_s32(out + oc, r, p);
}

MVE_INLINE void dw_mult_pixel(const dw_taps_t *t, const dw_steps_t *s, const int32_t *data,
    const mn_conv_quant_t *q, int8_t *out) {
    const int out_c = s->out_c, dm = s->dm;
    const uint32_t *idx = (const uint32_t *)(data + 2 * out_c);
    const int32_t *init = t->interior ? data : data + out_c;
    if (dm % 4 == 0) {
        for (int oc = 0; oc < out_c; oc += 4) {
            if (t->interior) {
                dw_mult_channels(t, s, init, idx, q, oc, 4, out, true, oc / dm);
            } else {
                dw_mult_channels(t, s, init, idx, q, oc, 4, out, false, oc / dm);
            }
        }
        return;
    }
    for (int oc = 0; oc < out_c; oc += 4) {
        const int n = out_c - oc < 4 ? out_c - oc : 4;
        if (t->interior) {
            dw_mult_channels(t, s, init, idx, q, oc, n, out, true, -1);
        } else {
            dw_mult_channels(t, s, init, idx, q, oc, n, out, false, -1);
        }
    }
}

typedef void (*dw_pixel_fn)(const dw_taps_t *t, const dw_steps_t *s, const int32_t *data,
    const mn_conv_quant_t *q, int8_t *out);

/* Walks the output pixels, finding each one's valid tap rectangle; inlined once per variant. */
MVE_INLINE void dw_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, int8_t *output, const int32_t *data, dw_pixel_fn pixel) {
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c, f_h = g->f_h, f_w = g->f_w, out_c = g->out_c;
    const int dil_h = g->dil_h, dil_w = g->dil_w;
    const dw_steps_t s = {
        (size_t)dil_h * in_w * in_c, (size_t)dil_w * in_c, (size_t)f_w * out_c, in_c, out_c, g->depth_mult,
        q->input_offset,
    };
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_h;
            int fy0, ny;
            dw_axis(iy0, dil_h, in_h, f_h, &fy0, &ny);
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_w;
                dw_taps_t t;
                int fx0;
                if (ix0 >= 0 && ix0 + (f_w - 1) * dil_w < in_w) {
                    fx0 = 0;
                    t.nx = f_w;
                } else {
                    dw_axis(ix0, dil_w, in_w, f_w, &fx0, &t.nx);
                }
                t.interior = ny == f_h && t.nx == f_w;
                if (ny > 0 && t.nx > 0) {
                    t.ny = ny;
                    t.in = in_b + ((size_t)(iy0 + dil_h * fy0) * in_w + (ix0 + dil_w * fx0)) * in_c;
                    t.f = filter + ((size_t)fy0 * f_w + fx0) * out_c;
                } else {   /* no tap inside (possible with dilation): bias only, as the reference */
                    t.ny = 0;
                    t.in = in_b;
                    t.f = filter;
                }
                pixel(&t, &s, data, q, out);
                out += out_c;
            }
        }
    }
}

/* Zero-point-padded input rows: the f_h input rows output row oy reads (dilated), each as `width`
 * pixels of in_c channels starting pad_w pixels left of the input, one after another in rows.
 * Padded taps hold the zero point, so x + off is 0 there and every pixel can use the folded bias
 * without bounds checks. */
static int dw_pad_width(const mn_conv_geom_t *g) {
    return (g->out_w - 1) * g->stride_w + (g->f_w - 1) * g->dil_w + 1;
}

static void dw_pad_rows(const mn_conv_geom_t *g, const int8_t *in_b, int oy, int8_t zp, int8_t *rows) {
    const int in_w = g->in_w, in_c = g->in_c, width = dw_pad_width(g);
    const int lo = g->pad_w < width ? g->pad_w : width;              /* input column 0 lands at lo */
    const int n = in_w < width - lo ? in_w : width - lo;             /* input columns that fit */
    const int pitch = width * in_c;
    for (int fy = 0; fy < g->f_h; ++fy) {
        int8_t *row = rows + (size_t)fy * pitch;
        const int iy = oy * g->stride_h - g->pad_h + fy * g->dil_h;
        if (iy < 0 || iy >= g->in_h) {
            mn_mve_fill(row, zp, pitch);
            continue;
        }
        mn_mve_fill(row, zp, lo * in_c);
        mn_mve_copy(row + lo * in_c, in_b + (size_t)iy * in_w * in_c, n * in_c);
        mn_mve_fill(row + (lo + n) * in_c, zp, (width - lo - n) * in_c);
    }
}

/* Input depth 1 (e.g. a first layer on a grey image): every output channel reads the same input
 * value per tap, so 8 output channels accumulate x * filter[tap][oc..oc+7] with VMLA by that
 * scalar, the filter rows being contiguous already. The f_h input rows an output row needs are
 * copied to scratch with the zero-point padding around them; x + off is then 0 on every padded tap,
 * so all pixels use the folded bias and no bounds checks. Data: folded[out_c]. */
static size_t dw_in1_scratch_bytes(const mn_conv_geom_t *g) {
    return (size_t)g->f_h * (size_t)dw_pad_width(g);
}

static bool dw_in1_is_3x3(const mn_conv_geom_t *g) {
    return g->f_h == 3 && g->f_w == 3 && g->dil_w == 1;
}

/* folded[out_c]; for 3x3 also the filter of each full group of 8 channels tap-major, ft[group][9][8] */
static size_t dw_in1_data_bytes(const mn_conv_geom_t *g) {
    return sizeof(int32_t) * (size_t)g->out_c + (dw_in1_is_3x3(g) ? (size_t)(g->out_c & ~7) * 9 : 0);
}

static void dw_in1_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    dw_fold(g, q, filter, bias, (int32_t *)data, NULL);
    if (dw_in1_is_3x3(g)) {
        const int out_c = g->out_c;
        int8_t *ft = (int8_t *)((int32_t *)data + out_c);
        for (int c = 0; c + 8 <= out_c; c += 8) {
            for (int t = 0; t < 9; ++t) {
                for (int j = 0; j < 8; ++j) {
                    *ft++ = filter[t * out_c + c + j];
                }
            }
        }
    }
}

/* The 3x3 (unit column dilation) case of dw_in1_channels for a full group: taps unrolled, input
 * bytes and filter vectors at fixed offsets from three row pointers and the group's ft. */
MVE_INLINE void dw_in1_3x3(const int8_t *px, int width, const int8_t *f, const int32_t *folded, const int32_t *mult,
    const int8_t *shift, int32_t out_off, int32_t act_min, int32_t act_max, int8_t *out, bool left) {
    int32x4_t acc0 = vldrwq_s32(folded), acc1 = vldrwq_s32(folded + 4);
    /* the barriers pin each tap in place (GCC otherwise hoists all loads and spills) */
#define IN1_TAP(x_, k_) do { \
        const int32_t xv_ = (x_); \
        acc0 = vmlaq_n_s32(acc0, vldrbq_s32(f + 8 * (k_)), xv_); \
        acc1 = vmlaq_n_s32(acc1, vldrbq_s32(f + 8 * (k_) + 4), xv_); \
        __asm__ volatile("" : "+w"(acc0), "+w"(acc1) :: "memory"); \
    } while (0)
    const int8_t *r = px;
    IN1_TAP(r[0], 0);
    IN1_TAP(r[1], 1);
    IN1_TAP(r[2], 2);
    r += width;
    IN1_TAP(r[0], 3);
    IN1_TAP(r[1], 4);
    IN1_TAP(r[2], 5);
    r += width;
    IN1_TAP(r[0], 6);
    IN1_TAP(r[1], 7);
    IN1_TAP(r[2], 8);
#undef IN1_TAP
    vstrbq_s32(out, mn_mve_requant_x(acc0, vldrwq_s32(mult), vldrbq_s32(shift), out_off, act_min, act_max, left));
    vstrbq_s32(out + 4, mn_mve_requant_x(acc1, vldrwq_s32(mult + 4), vldrbq_s32(shift + 4), out_off, act_min, act_max,
        left));
}

/* Channels oc..oc+7 (n valid) of output pixel px (its taps start at px in the padded rows). */
MVE_INLINE void dw_in1_channels(const int8_t *px, const int8_t *filter, const int32_t *folded,
    const mn_conv_quant_t *q, int oc, int n, int f_h, int f_w, int width, int dil_w, int out_c, int8_t *out,
    bool full) {
    const mve_pred16_t p0 = full ? 0xffff : vctp32q((uint32_t)n), p1 = full ? 0xffff : vctp32q((uint32_t)(n > 4 ? n - 4 : 0));
    int32x4_t acc0 = full ? vldrwq_s32(folded + oc) : vldrwq_z_s32(folded + oc, p0);
    int32x4_t acc1 = full ? vldrwq_s32(folded + oc + 4) : vldrwq_z_s32(folded + oc + 4, p1);
    const int8_t *f = filter + oc;
    for (int fy = 0; fy < f_h; ++fy) {
        const int8_t *x = px + fy * width;
        for (int fx = 0; fx < f_w; ++fx) {
            const int32_t xv = *x;
            acc0 = vmlaq_n_s32(acc0, full ? vldrbq_s32(f) : vldrbq_z_s32(f, p0), xv);
            acc1 = vmlaq_n_s32(acc1, full ? vldrbq_s32(f + 4) : vldrbq_z_s32(f + 4, p1), xv);
            x += dil_w;
            f += out_c;
        }
    }
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    if (full) {
        vstrbq_s32(out + oc, mn_mve_requant(acc0, vldrwq_s32(q->mult + oc), vldrbq_s32(q->shift + oc), out_off,
            act_min, act_max));
        vstrbq_s32(out + oc + 4, mn_mve_requant(acc1, vldrwq_s32(q->mult + oc + 4), vldrbq_s32(q->shift + oc + 4),
            out_off, act_min, act_max));
    } else {
        vstrbq_p_s32(out + oc, mn_mve_requant(acc0, vldrwq_z_s32(q->mult + oc, p0), vldrbq_z_s32(q->shift + oc, p0),
            out_off, act_min, act_max), p0);
        vstrbq_p_s32(out + oc + 4, mn_mve_requant(acc1, vldrwq_z_s32(q->mult + oc + 4, p1),
            vldrbq_z_s32(q->shift + oc + 4, p1), out_off, act_min, act_max), p1);
    }
}

static void dw_in1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* folded into buf->data */
    const int32_t *folded = (const int32_t *)buf->data;
    int8_t *rows = (int8_t *)buf->scratch;
    const int in_h = g->in_h, in_w = g->in_w, f_h = g->f_h, f_w = g->f_w, out_c = g->out_c;
    const int width = dw_pad_width(g), stride_w = g->stride_w, dil_w = g->dil_w;
    const int full_c = out_c & ~7;
    const int8_t zp = (int8_t)-q->input_offset;
    const int8_t *ft = dw_in1_is_3x3(g) ? (const int8_t *)(folded + out_c) : NULL;
    const bool left = mn_mve_any_left(q->shift, out_c);
    /* locals: the int8 output stores may alias *q, which would force reloads */
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult;
    const int8_t *const shift = q->shift;
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_h * in_w;
        for (int oy = 0; oy < g->out_h; ++oy) {
            dw_pad_rows(g, in_b, oy, zp, rows);
            int8_t *out = output + (((size_t)b * g->out_h + oy) * g->out_w) * out_c;
            for (int ox = 0; ox < g->out_w; ++ox) {
                const int8_t *px = rows + ox * stride_w;
                int oc = 0;
                if (ft && !left) {
                    for (; oc < full_c; oc += 8) {
                        dw_in1_3x3(px, width, ft + oc * 9, folded + oc, mult + oc, shift + oc, out_off, act_min, act_max,
                            out + oc, false);
                    }
                } else if (ft) {
                    for (; oc < full_c; oc += 8) {
                        dw_in1_3x3(px, width, ft + oc * 9, folded + oc, mult + oc, shift + oc, out_off, act_min, act_max,
                            out + oc, true);
                    }
                }
                for (; oc < full_c; oc += 8) {
                    dw_in1_channels(px, filter, folded, q, oc, 8, f_h, f_w, width, dil_w, out_c, out, true);
                }
                if (oc < out_c) {
                    dw_in1_channels(px, filter, folded, q, oc, out_c - oc, f_h, f_w, width, dil_w, out_c, out, false);
                }
                out += out_c;
            }
        }
    }
}

const mn_conv_s8_variant_t mn_mve_depthwise_s8_in1 = {
    "mve.depthwise_s8_in1", mn_mve_depthwise_s8_in1_fits, dw_in1_scratch_bytes, dw_in1_data_bytes, dw_in1_precompute, dw_in1_run,
};


/* 3x3, multiplier 1, at least 8 channels: each output row runs channel group by channel group over
 * zero-point-padded copies of its three input rows (dw_pad_rows; scratch), with the group's filter
 * copied tap-major (ft[group][tap][8], so its nine vectors are at fixed offsets); channels past the
 * last full group take the predicated general loop. Data: folded[out_c], plain[out_c], ft. */
static size_t dw_3x3_data_bytes(const mn_conv_geom_t *g) {
    return dw_m1_data_bytes(g) + (size_t)(g->out_c & ~7) * 9;
}

static void dw_3x3_precompute(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *filter,
    const int32_t *bias, void *data) {
    dw_precompute(g, q, filter, bias, data);
    const int out_c = g->out_c;
    int8_t *ft = (int8_t *)((int32_t *)data + 2 * out_c);
    for (int c = 0; c + 8 <= out_c; c += 8) {
        for (int t = 0; t < 9; ++t) {
            for (int j = 0; j < 8; ++j) {
                *ft++ = filter[(size_t)t * out_c + c + j];
            }
        }
    }
}

/* n_px pixels of one row, channels c..c+7: ip/op at the first pixel's first tap/output. */
MVE_INLINE void dw_3x3_segment_x(const int8_t *ip, const int8_t *ft, const int32_t *folded,
    const mn_conv_quant_t *q, int c, int8_t *op, int n_px, size_t px_step, size_t out_step, size_t in_col,
    size_t in_row, bool left) {
    /* locals: the int8 output stores may alias *q, which would force reloads */
    const int32_t out_off = q->output_offset, act_min = q->act_min, act_max = q->act_max;
    const int32_t *const mult = q->mult + c, *const init = folded + c;
    const int8_t *const shift = q->shift + c;
    for (int px = 0; px < n_px; ++px) {
        const uint32x4_t offs = vidupq_n_u32(0, 2);
        int32x4_t acc_e = vldrwq_gather_shifted_offset_s32(init, offs);
        int32x4_t acc_o = vldrwq_gather_shifted_offset_s32(init + 1, offs);
        const int8_t *f = ft;
        __asm__("" : "+r"(f));   /* keeps f + 8k as immediate offsets rather than 9 spilled pointers */
        const int8_t *p = ip;
        /* the barriers pin each tap in place: otherwise GCC hoists all loads and products up
         * front and spills them to the stack */
#define DW_TAP(ip_, k_) do { \
            const int16x8_t xv_ = vldrbq_s16(ip_), fv_ = vldrbq_s16(f + 8 * (k_)); \
            acc_e = vaddq_s32(acc_e, vmullbq_int_s16(xv_, fv_)); \
            acc_o = vaddq_s32(acc_o, vmulltq_int_s16(xv_, fv_)); \
            __asm__ volatile("" : "+w"(acc_e), "+w"(acc_o) :: "memory"); \
        } while (0)
        DW_TAP(p, 0);
        DW_TAP(p + in_col, 1);
        DW_TAP(p + 2 * in_col, 2);
        p += in_row;
        DW_TAP(p, 3);
        DW_TAP(p + in_col, 4);
        DW_TAP(p + 2 * in_col, 5);
        p += in_row;
        DW_TAP(p, 6);
        DW_TAP(p + in_col, 7);
        DW_TAP(p + 2 * in_col, 8);
#undef DW_TAP
        const int32x4_t r_e = mn_mve_requant_x(acc_e, vldrwq_gather_shifted_offset_s32(mult, offs),
            vldrbq_gather_offset_s32(shift, offs), out_off, act_min, act_max, left);
        const int16x8_t r = vmovnbq_s32(vuninitializedq_s16(), r_e);
        const int32x4_t r_o = mn_mve_requant_x(acc_o, vldrwq_gather_shifted_offset_s32(mult + 1, offs),
            vldrbq_gather_offset_s32(shift + 1, offs), out_off, act_min, act_max, left);
        vstrbq_s16(op, vmovntq_s32(r, r_o));
        ip += px_step;
        op += out_step;
    }
}

static __attribute__((noinline)) void dw_3x3_segment(const int8_t *ip, const int8_t *ft, const int32_t *folded,
    const mn_conv_quant_t *q, int c, int8_t *op, int n_px, size_t px_step, size_t out_step, size_t in_col,
    size_t in_row) {
    if (mn_mve_any_left(q->shift + c, 8)) {
        dw_3x3_segment_x(ip, ft, folded, q, c, op, n_px, px_step, out_step, in_col, in_row, true);
    } else {
        dw_3x3_segment_x(ip, ft, folded, q, c, op, n_px, px_step, out_step, in_col, in_row, false);
    }
}

static size_t dw_3x3_scratch_bytes(const mn_conv_geom_t *g) {
    return (size_t)3 * dw_pad_width(g) * g->in_c;
}

static void dw_3x3_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* in buf->data */
    const int32_t *data = (const int32_t *)buf->data;
    int8_t *rows = (int8_t *)buf->scratch;
    const int in_h = g->in_h, in_w = g->in_w, in_c = g->in_c, out_c = g->out_c, out_w = g->out_w;
    const int stride_w = g->stride_w, full_c = in_c & ~7;
    const size_t pitch = (size_t)dw_pad_width(g) * in_c;
    const int8_t *ft = (const int8_t *)(data + 2 * out_c);
    const int8_t zp = (int8_t)-q->input_offset;
    const dw_steps_t s = {
        pitch, (size_t)g->dil_w * in_c, (size_t)3 * out_c, in_c, out_c, 1, q->input_offset,
    };
    for (int b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_h * in_w * in_c;
        for (int oy = 0; oy < g->out_h; ++oy) {
            dw_pad_rows(g, in_b, oy, zp, rows);
            int8_t *out = output + (((size_t)b * g->out_h + oy) * out_w) * out_c;
            for (int c = 0; c < full_c; c += 8) {
                dw_3x3_segment(rows + c, ft + (size_t)c * 9, data, q, c, out + c, out_w, (size_t)stride_w * in_c,
                    (size_t)out_c, s.in_col, pitch);
            }
            if (full_c < in_c) {   /* the channels past the last full group */
                for (int ox = 0; ox < out_w; ++ox) {
                    const dw_taps_t t = { rows + (size_t)ox * stride_w * in_c, filter, 3, 3, true };
                    dw_m1_channels(&t, &s, data, q, full_c, in_c - full_c, out + (size_t)ox * out_c, true, false);
                }
            }
        }
    }
}

const mn_conv_s8_variant_t mn_mve_depthwise_s8_3x3 = {
    "mve.depthwise_s8_3x3", mn_mve_depthwise_s8_3x3_fits, dw_3x3_scratch_bytes, dw_3x3_data_bytes, dw_3x3_precompute, dw_3x3_run,
};

/* Multiplier 1 over zero-point-padded rows (dw_pad_rows): every pixel takes the folded bias and its
 * whole window, 8 channels per pass (dw_m1_channels), no border case and no tap rectangle per pixel.
 * A window along H over a width of one (Kx1 on 1xTx1xC, as streaming audio nets run it) is 1xK over
 * 1x1xTxC, the same memory: run so, one padded row per output row instead of K one-pixel rows. */
static void dw_rows_geom(const mn_conv_geom_t *g, mn_conv_geom_t *s) {
    *s = *g;
    if (g->in_w == 1 && g->out_w == 1 && g->f_w == 1 && g->pad_w == 0 && g->f_h > 1) {
        s->in_h = 1;
        s->in_w = g->in_h;
        s->out_h = 1;
        s->out_w = g->out_h;
        s->f_h = 1;
        s->f_w = g->f_h;
        s->stride_h = g->stride_w;
        s->stride_w = g->stride_h;
        s->pad_h = 0;
        s->pad_w = g->pad_h;
        s->dil_h = g->dil_w;
        s->dil_w = g->dil_h;
    }
}

static size_t dw_rows_scratch_bytes(const mn_conv_geom_t *g) {
    mn_conv_geom_t s;
    dw_rows_geom(g, &s);
    return (size_t)s.f_h * (size_t)dw_pad_width(&s) * s.in_c;
}

static void dw_rows_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* in buf->data */
    mn_conv_geom_t sg;
    dw_rows_geom(g, &sg);
    const int32_t *data = (const int32_t *)buf->data;
    int8_t *rows = (int8_t *)buf->scratch;
    const int in_c = sg.in_c, out_c = sg.out_c, out_w = sg.out_w, full_c = in_c & ~7;
    const size_t pitch = (size_t)dw_pad_width(&sg) * in_c, px_step = (size_t)sg.stride_w * in_c;
    const int8_t zp = (int8_t)-q->input_offset;
    const dw_steps_t s = {
        pitch, (size_t)sg.dil_w * in_c, (size_t)sg.f_w * out_c, in_c, out_c, 1, q->input_offset,
    };
    for (int b = 0; b < sg.batches; ++b) {
        const int8_t *in_b = input + (size_t)b * sg.in_h * sg.in_w * in_c;
        for (int oy = 0; oy < sg.out_h; ++oy) {
            dw_pad_rows(&sg, in_b, oy, zp, rows);
            int8_t *out = output + (((size_t)b * sg.out_h + oy) * out_w) * out_c;
            for (int ox = 0; ox < out_w; ++ox, out += out_c) {
                const dw_taps_t t = { rows + (size_t)ox * px_step, filter, sg.f_h, sg.f_w, true };
                int c = 0;
                for (; c < full_c; c += 8) {
                    dw_m1_channels(&t, &s, data, q, c, 8, out, true, true);
                }
                if (c < in_c) {
                    dw_m1_channels(&t, &s, data, q, c, in_c - c, out, true, false);
                }
            }
        }
    }
}

const mn_conv_s8_variant_t mn_mve_depthwise_s8_rows = {
    "mve.depthwise_s8_rows", mn_mve_depthwise_s8_rows_fits, dw_rows_scratch_bytes, dw_m1_data_bytes, dw_precompute,
    dw_rows_run,
};

static void dw_m1_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* in buf->data */
    dw_run(g, q, input, filter, output, (const int32_t *)buf->data, dw_m1_pixel);
}

const mn_conv_s8_variant_t mn_mve_depthwise_s8_m1 = {
    "mve.depthwise_s8_m1", mn_mve_depthwise_s8_m1_fits, NULL, dw_m1_data_bytes, dw_precompute, dw_m1_run,
};

static void dw_mult_run(const mn_conv_geom_t *g, const mn_conv_quant_t *q, const int8_t *input,
    const int8_t *filter, const int32_t *bias, int8_t *output, const mn_vbuf_t *buf) {
    (void)bias;   /* in buf->data */
    dw_run(g, q, input, filter, output, (const int32_t *)buf->data, dw_mult_pixel);
}

const mn_conv_s8_variant_t mn_mve_depthwise_s8_mult = {
    "mve.depthwise_s8_mult", mn_mve_depthwise_s8_mult_fits, NULL, dw_mult_data_bytes, dw_precompute, dw_mult_run,
};

#endif /* MICRONN_OP_DEPTHWISE_CONV_2D */
