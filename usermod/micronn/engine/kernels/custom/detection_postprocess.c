/*
 * Custom op "TFLite_Detection_PostProcess" (TFLite's / TFLM's kernels/detection_postprocess.cc:
 * the SSD post-processing of TensorFlow's object detection API).
 *
 * Inputs: box encodings [1, N, >= 4] (y, x, h, w relative to the anchor, first four of each row),
 * class predictions [1, N, C + b] (b = 1: column 0 is a background class, skipped; b = 0: none),
 * anchors [N, 4] (y center, x center, h, w). float32, or uint8 (dequantized as (q - zp) * scale;
 * the anchors then uint8 as well; the scores may be uint8 with float boxes), as LiteRT accepts
 * (TFLM: float32 only; neither runs int8).
 * Outputs (float32): boxes [1, D, 4] (ymin, xmin, ymax, xmax), classes [1, D], scores [1, D],
 * number of detections [1], D = max_detections * max_classes_per_detection.
 *
 * Options (custom_options flexbuffer map): max_detections, max_classes_per_detection, num_classes,
 * nms_score_threshold, nms_iou_threshold, y_scale, x_scale, h_scale, w_scale (required);
 * detections_per_class (default 100), use_regular_nms (default false).
 *
 * 1. Decoding, in double as TFLite (exp: MN_EXP_F64, mn_config.h): yc = y / y_scale * ah + ay, half_h = 0.5 * exp(h / h_scale) * ah
 *    (x, w alike), each rounded to float; ymin = yc - half_h, ymax = yc + half_h (float).
 * 2. Single-class NMS over a score per anchor: the anchors whose score >= nms_score_threshold,
 *    sorted by score, descending, ties by anchor index (a stable sort, as TFLite and TFLM); each in
 *    turn is selected unless an earlier selected box overlaps it with IoU > nms_iou_threshold,
 *    until `cap` are selected.
 * 3. Fast NMS (use_regular_nms false): each anchor's score is its best class (ties: the lower class
 *    index); NMS with cap max_detections; selected box k fills entries k * max_classes_per_detection
 *    + j with its j-th best classes (j < min(max_classes_per_detection, C); equal scores in LiteRT's
 *    std::partial_sort order, dpp_partial_sort); count = selected boxes. (TFLM's fast NMS writes
 *    outside its outputs when max_classes_per_detection > 1; LiteRT is the reference there.)
 * 4. Regular NMS: NMS per class (cap detections_per_class), merged over the classes by score,
 *    descending, ties to the earlier class (then NMS order), the best max_detections kept.
 * Entries after the detections are zero (TFLite writes zeros in regular mode and leaves them in
 * fast mode). A decoded box with ymin > ymax or xmin > xmax fails the invoke (as LiteRT).
 *
 * Memory: one scratch buffer (planned with the activations) sized in prepare: 32 bytes per anchor,
 * plus 24 per max_detections in regular mode, 8 per class in fast mode. Float arithmetic is not contracted (no fused
 * multiply-add), so the IoU tests round as TFLite's.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>

#include "mn_flexbuf.h"
#include "mn_kernel.h"

#if MICRONN_OP_TFLite_Detection_PostProcess

/* Kernel data: fixed-width fields only (mn_kernel_data). */
typedef struct {
    float scale_yxhw[4];
    float score_threshold, iou_threshold;
    float box_scale, anchor_scale, score_scale;     /* uint8 inputs */
    int32_t box_zp, anchor_zp, score_zp;
    int32_t max_detections, classes_per_detection, detections_per_class, num_classes;
    int32_t n_boxes, box_stride, n_scores;          /* anchors, box encoding row, score row */
    int32_t scratch;
    uint8_t regular, quant_boxes, quant_scores;
} dpp_data_t;

/* One detection of the regular NMS merge. */
typedef struct {
    int32_t anchor, cls;
    float score;
} dpp_det_t;

static mn_status_t dpp_option(mn_ctx_t *ctx, mn_flex_status_t s, const char *key, bool required) {
    if (s == MN_FLEX_OK || (s == MN_FLEX_ABSENT && !required)) {
        return MN_OK;
    }
    return mn_fail(ctx, MN_ERR_MODEL, "custom option '%s': %s", key,
        s == MN_FLEX_ABSENT ? "missing" : mn_flex_status_str(s));
}

static mn_status_t dpp_options(mn_ctx_t *ctx, const mn_node_t *node, dpp_data_t *d) {
    size_t len;
    const uint8_t *opts = mn_custom_options(ctx, node, &len);
    mn_flex_map_t m;
    mn_flex_status_t s = mn_flex_root_map(opts, len, &m);
    if (s != MN_FLEX_OK) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom options: %s", opts && len ? mn_flex_status_str(s) : "missing");
    }
    static const char *const ints[] = { "max_detections", "max_classes_per_detection", "num_classes" };
    int32_t *const iout[] = { &d->max_detections, &d->classes_per_detection, &d->num_classes };
    static const char *const floats[] = { "y_scale", "x_scale", "h_scale", "w_scale", "nms_score_threshold",
        "nms_iou_threshold" };
    float *const fout[] = { &d->scale_yxhw[0], &d->scale_yxhw[1], &d->scale_yxhw[2], &d->scale_yxhw[3],
        &d->score_threshold, &d->iou_threshold };
    mn_status_t st = MN_OK;
    for (int i = 0; i < 3 && st == MN_OK; i++) {
        st = dpp_option(ctx, mn_flex_i32(&m, ints[i], iout[i]), ints[i], true);
    }
    for (int i = 0; i < 6 && st == MN_OK; i++) {
        st = dpp_option(ctx, mn_flex_f32(&m, floats[i], fout[i]), floats[i], true);
    }
    d->detections_per_class = 100;
    bool regular = false;
    if (st == MN_OK) {
        st = dpp_option(ctx, mn_flex_i32(&m, "detections_per_class", &d->detections_per_class),
            "detections_per_class", false);
    }
    if (st == MN_OK) {
        st = dpp_option(ctx, mn_flex_bool(&m, "use_regular_nms", &regular), "use_regular_nms", false);
    }
    d->regular = regular;
    if (st != MN_OK) {
        return st;
    }
    if (d->max_detections < 1 || d->max_detections > 0xffff) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'max_detections': %d (must be 1 to 65535)",
            (int)d->max_detections);
    }
    if (d->classes_per_detection < 1 || d->classes_per_detection > 0xffff) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'max_classes_per_detection': %d (must be 1 to 65535)",
            (int)d->classes_per_detection);
    }
    if (d->num_classes < 1 || d->num_classes > 0x100000) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'num_classes': %d (must be 1 to 1048576)", (int)d->num_classes);
    }
    if ((uint32_t)d->max_detections * (uint32_t)d->classes_per_detection > 0x1000000u) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "max_detections x max_classes_per_detection above 16777216");
    }
    if (regular && d->detections_per_class < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'detections_per_class': %d (must be positive)",
            (int)d->detections_per_class);
    }
    for (int i = 0; i < 4; i++) {
        if (!(d->scale_yxhw[i] > 0.0f) || isinf(d->scale_yxhw[i])) {
            return mn_fail(ctx, MN_ERR_MODEL, "custom option '%s': must be positive and finite", floats[i]);
        }
    }
    if (!(d->iou_threshold > 0.0f && d->iou_threshold <= 1.0f)) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'nms_iou_threshold': must be in (0, 1]");
    }
    if (isnan(d->score_threshold)) {
        return mn_fail(ctx, MN_ERR_MODEL, "custom option 'nms_score_threshold': NaN");
    }
    return MN_OK;
}

/* uint8 inputs: quantization parameters (per tensor, positive finite scale). */
static mn_status_t dpp_quant(mn_ctx_t *ctx, const mn_tensor_t *t, const char *what, float *scale, int32_t *zp) {
    *scale = mn_tensor_scale(t, 0);
    *zp = mn_tensor_zero_point(t, 0);
    if (mn_tensor_q_count(t) != 1 || !(*scale > 0.0f) || isinf(*scale)) {
        return mn_fail(ctx, MN_ERR_MODEL, "uint8 %s need one positive scale", what);
    }
    return MN_OK;
}

static size_t dpp_scratch_bytes(const dpp_data_t *d) {
    /* decoded boxes 16, a score 4, kept / sort scratch / selected anchors 3 x 4 bytes per anchor;
     * regular NMS: the merged detections and their merge buffer */
    return (size_t)d->n_boxes * 32 + (d->regular ? 2 * (size_t)d->max_detections * sizeof(dpp_det_t)
                                                 : 8 * (size_t)d->num_classes);
}

static mn_status_t dpp_prepare(mn_ctx_t *ctx, mn_node_t *node) {
    if (mn_num_inputs(node) != 3 || mn_num_outputs(node) != 4) {
        return mn_fail(ctx, MN_ERR_MODEL, "takes 3 inputs (box encodings, class predictions, anchors) and 4 "
            "outputs, got %d and %d", mn_num_inputs(node), mn_num_outputs(node));
    }
    dpp_data_t d;
    memset(&d, 0, sizeof d);
    mn_status_t s = dpp_options(ctx, node, &d);
    if (s != MN_OK) {
        return s;
    }
    const mn_tensor_t *boxes = mn_input(ctx, node, 0);
    const mn_tensor_t *scores = mn_input(ctx, node, 1);
    const mn_tensor_t *anchors = mn_input(ctx, node, 2);
    if (!boxes || !scores || !anchors) {
        return mn_fail(ctx, MN_ERR_MODEL, "missing input");
    }
    if ((boxes->dtype != MN_FLOAT32 && boxes->dtype != MN_UINT8) || anchors->dtype != boxes->dtype
        || (scores->dtype != MN_FLOAT32 && scores->dtype != MN_UINT8)) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "dtypes %s, %s, %s not supported (box encodings and anchors both "
            "float32 or both uint8; class predictions float32 or uint8)", mn_dtype_name(boxes->dtype),
            mn_dtype_name(scores->dtype), mn_dtype_name(anchors->dtype));
    }
    const int32_t n = mn_dim(boxes, 1);
    if (boxes->ndim != 3 || boxes->dims[0] != 1 || boxes->dims[2] < 4 || n < 1) {
        return mn_fail(ctx, MN_ERR_MODEL, "box encodings must be [1, N, >= 4]");
    }
    if (scores->ndim != 3 || scores->dims[0] != 1 || scores->dims[1] != n
        || (scores->dims[2] != d.num_classes && scores->dims[2] != d.num_classes + 1)) {
        return mn_fail(ctx, MN_ERR_MODEL, "class predictions must be [1, %d, num_classes (+1 for a background "
            "class)] with num_classes %d", (int)n, (int)d.num_classes);
    }
    if (anchors->ndim != 2 || anchors->dims[0] != n || anchors->dims[1] != 4) {
        return mn_fail(ctx, MN_ERR_MODEL, "anchors must be [%d, 4]", (int)n);
    }
    if (n > 0x1000000) {
        return mn_fail(ctx, MN_ERR_UNSUPPORTED, "%d anchors (at most 16777216)", (int)n);
    }
    const size_t det = (size_t)d.max_detections * (size_t)d.classes_per_detection;
    static const size_t per[4] = { 4, 1, 1, 0 };
    static const char *const names[4] = { "detection boxes", "detection classes", "detection scores",
        "number of detections" };
    for (int i = 0; i < 4; i++) {
        const mn_tensor_t *o = mn_output(ctx, node, i);
        const size_t want = i == 3 ? 1 : per[i] * det;
        if (!o || o->dtype != MN_FLOAT32 || mn_tensor_count(o) != want) {
            return mn_fail(ctx, MN_ERR_MODEL, "output %d (%s) must be float32 with %zu elements", i, names[i], want);
        }
    }
    d.n_boxes = n;
    d.box_stride = boxes->dims[2];
    d.n_scores = scores->dims[2];
    d.quant_boxes = boxes->dtype == MN_UINT8;
    d.quant_scores = scores->dtype == MN_UINT8;
    if (d.quant_boxes) {
        if ((s = dpp_quant(ctx, boxes, "box encodings", &d.box_scale, &d.box_zp)) != MN_OK
            || (s = dpp_quant(ctx, anchors, "anchors", &d.anchor_scale, &d.anchor_zp)) != MN_OK) {
            return s;
        }
    }
    if (d.quant_scores && (s = dpp_quant(ctx, scores, "class predictions", &d.score_scale, &d.score_zp)) != MN_OK) {
        return s;
    }
    s = mn_request_scratch(ctx, dpp_scratch_bytes(&d), &d.scratch);
    if (s != MN_OK) {
        return s;
    }
    node->user_data = (void *)mn_kernel_data(ctx, node, &d, sizeof d);
    return node->user_data ? MN_OK : MN_ERR_ARENA;
}

/* ---- eval ------------------------------------------------------------------------------------- */

typedef struct {
    const dpp_data_t *d;
    const void *scores;         /* [N, n_scores], float or uint8 */
    int32_t label_offset;       /* 1 with a background column */
    float *dec;                 /* [N, 4] ymin, xmin, ymax, xmax */
    float *score;               /* [N] the score NMS runs on */
    int32_t *keep, *tmp, *sel;  /* [N] each */
} dpp_run_t;

static inline float dpp_deq(int32_t q, int32_t zp, float scale) {
    return (float)(q - zp) * scale;
}

static inline float dpp_class_score(const dpp_run_t *r, int32_t anchor, int32_t cls) {
    const size_t at = (size_t)anchor * (size_t)r->d->n_scores + (size_t)(cls + r->label_offset);
    return r->d->quant_scores ? dpp_deq(((const uint8_t *)r->scores)[at], r->d->score_zp, r->d->score_scale)
                              : ((const float *)r->scores)[at];
}

static mn_status_t dpp_decode(mn_ctx_t *ctx, const dpp_run_t *r, const void *boxes, const void *anchors) {
    const dpp_data_t *d = r->d;
    const double sy = (double)d->scale_yxhw[0], sx = (double)d->scale_yxhw[1];
    const double sh = (double)d->scale_yxhw[2], sw = (double)d->scale_yxhw[3];
    for (int32_t i = 0; i < d->n_boxes; i++) {
        float e[4], a[4];
        const size_t be = (size_t)i * (size_t)d->box_stride, ae = (size_t)i * 4;
        for (int k = 0; k < 4; k++) {
            if (d->quant_boxes) {
                e[k] = dpp_deq(((const uint8_t *)boxes)[be + k], d->box_zp, d->box_scale);
                a[k] = dpp_deq(((const uint8_t *)anchors)[ae + k], d->anchor_zp, d->anchor_scale);
            } else {
                e[k] = ((const float *)boxes)[be + k];
                a[k] = ((const float *)anchors)[ae + k];
            }
        }
        const float yc = (float)((double)e[0] / sy * (double)a[2] + (double)a[0]);
        const float xc = (float)((double)e[1] / sx * (double)a[3] + (double)a[1]);
        const float hh = (float)(0.5 * MN_EXP_F64((double)e[2] / sh) * (double)a[2]);
        const float hw = (float)(0.5 * MN_EXP_F64((double)e[3] / sw) * (double)a[3]);
        float *b = r->dec + 4 * (size_t)i;
        b[0] = yc - hh;
        b[1] = xc - hw;
        b[2] = yc + hh;
        b[3] = xc + hw;
        if (b[0] > b[2] || b[1] > b[3]) {
            return mn_fail(ctx, MN_ERR_KERNEL, "decoded box %d has ymin > ymax or xmin > xmax (anchor %d has a "
                "negative size?)", (int)i, (int)i);
        }
    }
    return MN_OK;
}

static float dpp_iou(const float *a, const float *b) {
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0.0f || area_b <= 0.0f) {
        return 0.0f;
    }
    /* std::min / std::max as TFLite's: min(x, y) = y < x ? y : x, max(x, y) = x < y ? y : x */
    const float ih = (b[2] < a[2] ? b[2] : a[2]) - (a[0] < b[0] ? b[0] : a[0]);
    const float iw = (b[3] < a[3] ? b[3] : a[3]) - (a[1] < b[1] ? b[1] : a[1]);
    const float inter = (ih > 0.0f ? ih : 0.0f) * (iw > 0.0f ? iw : 0.0f);
    return inter / (area_a + area_b - inter);
}

/* Stable sort of idx[0..n) by score[idx] descending (bottom-up merge sort through tmp). */
static void dpp_sort(int32_t *idx, int32_t *tmp, int32_t n, const float *score) {
    int32_t *src = idx, *dst = tmp;
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            const int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                dst[k++] = score[src[j]] > score[src[i]] ? src[j++] : src[i++];
            }
            while (i < mid) {
                dst[k++] = src[i++];
            }
            while (j < hi) {
                dst[k++] = src[j++];
            }
        }
        int32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) {
        memcpy(idx, src, (size_t)n * sizeof *idx);
    }
}

/* Single-class NMS over r->score: the selected anchors into r->sel, in order; returns how many. */
static int32_t dpp_nms(const dpp_run_t *r, int32_t cap) {
    const dpp_data_t *d = r->d;
    int32_t kept = 0;
    for (int32_t i = 0; i < d->n_boxes; i++) {
        if (r->score[i] >= d->score_threshold) {
            r->keep[kept++] = i;
        }
    }
    dpp_sort(r->keep, r->tmp, kept, r->score);
    const int32_t limit = kept < cap ? kept : cap;
    int32_t n = 0;
    for (int32_t i = 0; i < kept && n < limit; i++) {
        const int32_t a = r->keep[i];
        if (a < 0) {
            continue;   /* suppressed */
        }
        r->sel[n++] = a;
        const float *box = r->dec + 4 * (size_t)a;
        for (int32_t j = i + 1; j < kept; j++) {
            if (r->keep[j] >= 0 && dpp_iou(box, r->dec + 4 * (size_t)r->keep[j]) > d->iou_threshold) {
                r->keep[j] = -1;
            }
        }
    }
    return n;
}

/*
 * The best k of n class indices by score, descending, into idx[0..k): LiteRT sorts them with
 * std::partial_sort, whose order of equal scores is its algorithm's; this is that algorithm
 * (libstdc++'s heap select then heap sort, the C++ library LiteRT's Linux builds use), so ties
 * come out as LiteRT's. before(i, j): score i ranks before score j.
 */
#define DPP_BEFORE(i, j) (v[i] > v[j])
static void dpp_heap_adjust(int32_t *h, int32_t hole, int32_t len, int32_t value, const float *v) {
    const int32_t top = hole;
    int32_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (DPP_BEFORE(h[child], h[child - 1])) {
            child--;
        }
        h[hole] = h[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    for (int32_t parent = (hole - 1) / 2; hole > top && DPP_BEFORE(h[parent], value); parent = (hole - 1) / 2) {
        h[hole] = h[parent];
        hole = parent;
    }
    h[hole] = value;
}

static void dpp_partial_sort(int32_t *idx, int32_t n, int32_t k, const float *v) {
    for (int32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    for (int32_t parent = (k - 2) / 2; k >= 2 && parent >= 0; parent--) {   /* make_heap(idx, idx + k) */
        dpp_heap_adjust(idx, parent, k, idx[parent], v);
    }
    for (int32_t i = k; i < n; i++) {   /* heap select: what ranks before the heap's top replaces it */
        if (DPP_BEFORE(idx[i], idx[0])) {
            const int32_t value = idx[i];
            idx[i] = idx[0];
            dpp_heap_adjust(idx, 0, k, value, v);
        }
    }
    for (int32_t last = k - 1; last > 0; last--) {   /* sort_heap */
        const int32_t value = idx[last];
        idx[last] = idx[0];
        dpp_heap_adjust(idx, 0, last, value, v);
    }
}
#undef DPP_BEFORE

static void dpp_put(float *boxes, float *classes, float *scores, size_t k, const float *box, int32_t cls,
    float score) {
    memcpy(boxes + 4 * k, box, 4 * sizeof *box);
    classes[k] = (float)cls;
    scores[k] = score;
}

static mn_status_t dpp_eval(mn_ctx_t *ctx, mn_node_t *node) {
    const dpp_data_t *d = node->user_data;
    uint8_t *scratch = mn_get_scratch(ctx, d->scratch);
    const size_t nb = (size_t)d->n_boxes;
    dpp_run_t r;
    r.d = d;
    r.scores = mn_input_data(ctx, node, 1);
    r.label_offset = d->n_scores - d->num_classes;
    r.dec = (float *)scratch;
    r.score = r.dec + 4 * nb;
    r.keep = (int32_t *)(r.score + nb);
    r.tmp = r.keep + nb;
    r.sel = r.tmp + nb;
    mn_status_t s = dpp_decode(ctx, &r, mn_input_data(ctx, node, 0), mn_input_data(ctx, node, 2));
    if (s != MN_OK) {
        return s;
    }
    float *ob = mn_output(ctx, node, 0)->data, *oc = mn_output(ctx, node, 1)->data;
    float *os = mn_output(ctx, node, 2)->data, *on = mn_output(ctx, node, 3)->data;
    const size_t total = (size_t)d->max_detections * (size_t)d->classes_per_detection;
    memset(ob, 0, 4 * total * sizeof *ob);
    memset(oc, 0, total * sizeof *oc);
    memset(os, 0, total * sizeof *os);
    int32_t count = 0;
    if (d->regular) {
        dpp_det_t *merged = (dpp_det_t *)(r.sel + nb), *next = merged + d->max_detections;
        for (int32_t c = 0; c < d->num_classes; c++) {
            for (int32_t i = 0; i < d->n_boxes; i++) {
                r.score[i] = dpp_class_score(&r, i, c);
            }
            const int32_t b = dpp_nms(&r, d->detections_per_class);
            /* merge: the earlier classes first on ties; keep the best max_detections */
            int32_t i = 0, j = 0, k = 0;
            while (k < d->max_detections && (i < count || j < b)) {
                if (j < b && (i >= count || r.score[r.sel[j]] > merged[i].score)) {
                    next[k].anchor = r.sel[j];
                    next[k].cls = c;
                    next[k++].score = r.score[r.sel[j++]];
                } else {
                    next[k++] = merged[i++];
                }
            }
            count = k;
            memcpy(merged, next, (size_t)count * sizeof *merged);
        }
        for (int32_t k = 0; k < count; k++) {
            dpp_put(ob, oc, os, (size_t)k, r.dec + 4 * (size_t)merged[k].anchor, merged[k].cls, merged[k].score);
        }
    } else {
        const int32_t per = d->classes_per_detection < d->num_classes ? d->classes_per_detection : d->num_classes;
        for (int32_t i = 0; i < d->n_boxes; i++) {
            float best = dpp_class_score(&r, i, 0);
            for (int32_t c = 1; c < d->num_classes; c++) {
                const float v = dpp_class_score(&r, i, c);
                best = v > best ? v : best;
            }
            r.score[i] = best;
        }
        count = dpp_nms(&r, d->max_detections);
        float *cs = (float *)(r.sel + nb);              /* one anchor's class scores */
        int32_t *order = (int32_t *)(cs + d->num_classes);
        for (int32_t k = 0; k < count; k++) {
            const int32_t a = r.sel[k];
            if (per == 1) {   /* its best class, ties to the lower index (LiteRT's ArgMaxVector) */
                int32_t bc = 0;
                for (int32_t c = 1; c < d->num_classes; c++) {
                    bc = dpp_class_score(&r, a, c) > dpp_class_score(&r, a, bc) ? c : bc;
                }
                order[0] = bc;
                cs[bc] = dpp_class_score(&r, a, bc);
            } else {
                for (int32_t c = 0; c < d->num_classes; c++) {
                    cs[c] = dpp_class_score(&r, a, c);
                }
                dpp_partial_sort(order, d->num_classes, per, cs);
            }
            for (int32_t j = 0; j < per; j++) {
                dpp_put(ob, oc, os, (size_t)k * (size_t)d->classes_per_detection + (size_t)j,
                    r.dec + 4 * (size_t)a, order[j], cs[order[j]]);
            }
        }
    }
    on[0] = (float)count;
    return MN_OK;
}

const mn_kernel_t mn_kernel_TFLite_Detection_PostProcess = { NULL, dpp_prepare, dpp_eval, NULL, NULL };

#endif
