"""Single-op models of the custom ops TFLM / LiteRT register by name (engine/kernels/custom/):
CIRCULAR_BUFFER (TFLM's streaming op) and TFLite_Detection_PostProcess (SSD post-processing),
with their custom options as a flexbuffer map, as TFLite's converter writes them.

    m, gen = circular_buffer(rng, slots=4, depth=3, cycles=2)
    m, gen = detection(rng, n_anchors=24, num_classes=3, regular=True, ties=True)

`gen(rng, tensor)` makes the inputs (test_op_kernels.check's `gen`): for the detection op,
encodings that decode near their anchors (anchors in clusters of several sizes around a few
centres, so boxes overlap and NMS suppresses) and scores with a spread over the threshold; with
`ties`, scores on a coarse grid so that equal scores are common.
"""
import flatbuffers.flexbuffers as fx
import numpy as np

import opmodels as M

CUSTOM = M.S.BuiltinOperator.CUSTOM


def flex(options):
    """A dict as a flexbuffer map (what the converter stores in custom_options); floats beyond the
    float32 range are written 8 bytes wide (flexbuffers' Python encoder would refuse them)."""
    if not isinstance(options, dict):
        return bytes(fx.Dumps(options))
    b = fx.Builder()
    with b.Map():
        for k, v in options.items():
            b.Key(k)
            if isinstance(v, float) and 3.4e38 < abs(v) < float("inf"):
                b.Float(v, byte_width=8)
            else:
                b.Add(v)
    return bytes(b.Finish())


# ---- CIRCULAR_BUFFER ----------------------------------------------------------------------------

def circular_buffer(rng, slots=4, width=1, depth=3, cycles=None, valid=False, scale=0.05, zp=0, options=None):
    """input [1, 1, width, depth] int8 -> output [1, slots, width, depth] (+ valid bool [1]).
    cycles: cycles_max (None: no options, TFLM's legacy period rule); options: raw bytes instead."""
    ts = [M.T("input", np.int8, (1, 1, width, depth), scale=[scale], zp=[zp]),
          M.T("output", np.int8, (1, slots, width, depth), scale=[scale], zp=[zp])]
    outs = [1]
    if valid:
        ts.append(M.T("valid", np.bool_, (1,)))
        outs.append(2)
    opts = options if options is not None else (flex({"cycles_max": cycles}) if cycles is not None else b"")
    m = M.OpModel(CUSTOM, ts, [0], outs, custom="CIRCULAR_BUFFER", custom_options=opts,
                  desc=f"circular_buffer s{slots} w{width} d{depth} c{cycles} v{valid} zp{zp}")

    def gen(rng, t):
        return rng.integers(-100, 101, t.shape).astype(np.int8)
    return m, gen


# ---- TFLite_Detection_PostProcess ---------------------------------------------------------------

DEFAULT_OPTIONS = dict(max_detections=5, max_classes_per_detection=1, detections_per_class=100,
                       use_regular_nms=False, nms_score_threshold=0.3, nms_iou_threshold=0.5, num_classes=3,
                       y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)
BOX_Q = (0.04, 128)      # uint8 box encodings: [-5.12, 5.08]
ANCHOR_Q = (1 / 255, 0)  # uint8 anchors: [0, 1]
SCORE_Q = (1 / 256, 0)   # uint8 scores: [0, 1)


def anchors(rng, n):
    """n anchors (y, x, h, w) in clusters: a few centres, each with anchors of several sizes and
    small offsets, so that the boxes of a cluster overlap."""
    centres = rng.uniform(0.2, 0.8, (max(1, n // 4), 2))
    out = np.zeros((n, 4), np.float32)
    for i in range(n):
        c = centres[i % len(centres)]
        out[i, :2] = c + rng.normal(0, 0.03, 2)
        out[i, 2:] = rng.uniform(0.1, 0.35, 2)
    return np.clip(out, 0.02, 0.98)


def _q(x, q, dtype=np.uint8):
    info = np.iinfo(dtype)
    return np.clip(np.round(x / q[0]) + q[1], info.min, info.max).astype(dtype)


def detection(rng, boxes="float32", scores="float32", n_anchors=24, background=True, ties=False,
              box_stride=4, options=None, raw_options=None, anchor_q=ANCHOR_Q, **opts):
    """TFLite_Detection_PostProcess over n_anchors anchors: inputs box encodings [1, N, box_stride],
    class predictions [1, N, num_classes + background], constant anchors [N, 4]; outputs as TFLite's
    (float32). boxes / scores: "float32" or "uint8" (anchors have the boxes' dtype)."""
    o = dict(DEFAULT_OPTIONS)
    o.update(options or {})
    o.update(opts)
    nc = o["num_classes"]
    a = anchors(rng, n_anchors)
    det = o["max_detections"] * o["max_classes_per_detection"]
    bq = dict(scale=[BOX_Q[0]], zp=[BOX_Q[1]]) if boxes == "uint8" else {}
    sq = dict(scale=[SCORE_Q[0]], zp=[SCORE_Q[1]]) if scores == "uint8" else {}
    if boxes == "uint8":
        anc = M.T("anchors", np.uint8, (n_anchors, 4), data=_q(a, anchor_q), scale=[anchor_q[0]], zp=[anchor_q[1]])
    else:
        anc = M.T("anchors", np.float32, (n_anchors, 4), data=a)
    ts = [M.T("box_encodings", np.dtype(boxes), (1, n_anchors, box_stride), **bq),
          M.T("class_predictions", np.dtype(scores), (1, n_anchors, nc + int(background)), **sq),
          anc,
          M.T("detection_boxes", np.float32, (1, det, 4)),
          M.T("detection_classes", np.float32, (1, det)),
          M.T("detection_scores", np.float32, (1, det)),
          M.T("num_detections", np.float32, (1,))]
    m = M.OpModel(CUSTOM, ts, [0, 1, 2], [3, 4, 5, 6], custom="TFLite_Detection_PostProcess",
                  custom_options=raw_options if raw_options is not None else flex(o),
                  desc=f"detection {boxes}/{scores} n{n_anchors} bg{background} ties{ties} stride{box_stride} {o}")
    m.det_options = o

    def gen(rng, t):
        if t.name == "box_encodings":
            e = np.zeros(t.shape, np.float32)
            e[..., 0:2] = rng.normal(0, 0.6, (1, n_anchors, 2))    # centre shift: y / y_scale anchors
            e[..., 2:4] = rng.normal(0, 0.8, (1, n_anchors, 2))    # log size: h / h_scale
            if box_stride > 4:
                e[..., 4:] = rng.normal(0, 1, (1, n_anchors, box_stride - 4))   # keypoints: ignored
            return _q(e, BOX_Q) if t.dtype == np.uint8 else e
        s = rng.beta(0.6, 1.2, t.shape).astype(np.float32)          # many low, some high scores
        if ties:
            s = np.round(s * 12) / 12
        return _q(s, SCORE_Q) if t.dtype == np.uint8 else s.astype(np.float32)
    return m, gen
