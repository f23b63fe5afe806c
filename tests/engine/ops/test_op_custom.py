"""The custom ops TFLM and LiteRT register by name, through the whole engine (models_custom.py):

* CIRCULAR_BUFFER against TFLM (tflite-micro, which has the op; LiteRT has not), over sequences of
  invokes: the filled slots and the 'valid' flags exactly; the slots not filled yet hold the zero
  point here (TFLM: whatever its arena held); state reset by Interpreter.reset().
* TFLite_Detection_PostProcess against LiteRT (float32 and uint8 inputs) and TFLM (float32): boxes,
  classes, scores and counts exactly equal (the decoding is computed in double as TFLite's, so the
  float boxes are bit-exact too), over fast / regular NMS, with and without background class,
  several classes per detection, score ties, box encodings with keypoint columns.
* Bad options, dtypes and shapes: clear errors at Interpreter() time; the arena is sized exactly.
"""
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import models_custom as C
import runners

E = pytest.importorskip("micronn_tools.engine")


@pytest.fixture(scope="module")
def engine_run():
    run = runners.engine_runner()
    if not run:
        pytest.fail("engine ctypes wrapper / libmicronn.so not available: make -C tests/engine lib", pytrace=False)
    return run


def _inputs(rng, m, gen, invokes=1):
    ins = [[gen(rng, m.tensors[i]) for i in m.graph_inputs] for _ in range(invokes)]
    return ins if invokes > 1 else ins[0]


def _check_arena(m):
    """The dry run's size is what a prepared interpreter needs, and enough: one byte less fails."""
    model = E.Model(m.tflite())
    need = model.arena_needed()
    it = E.Interpreter(model, arena_size=need)
    assert it.stats()["needed"] == need
    with pytest.raises(E.MicronnError, match="arena too small"):
        E.Interpreter(model, arena_size=need - 16)


def _error(m):
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(E.Model(m.tflite()))
    return str(e.value)


# ---- CIRCULAR_BUFFER ----------------------------------------------------------------------------

def _cb_compare(m, want, got, slots, zp):
    for k, (w, g) in enumerate(zip(want, got)):
        filled = min(k + 1, slots)
        np.testing.assert_array_equal(g[0][0, slots - filled:], w[0][0, slots - filled:], err_msg=f"{m.desc} invoke {k}")
        assert np.all(g[0][0, :slots - filled] == zp), (m.desc, k)
        if len(w) > 1:
            assert bool(g[1][0]) == bool(w[1][0]), (m.desc, k)


@pytest.mark.parametrize("slots,width,depth", [(1, 1, 5), (3, 1, 8), (4, 1, 3), (5, 2, 4), (6, 3, 2), (13, 1, 16)])
@pytest.mark.parametrize("cycles", [None, 1, 2, 3])
@pytest.mark.parametrize("valid", [True, False])
def test_circular_buffer(engine_run, rng, slots, width, depth, cycles, valid):
    zp = int(rng.integers(-20, 21))
    m, gen = C.circular_buffer(rng, slots=slots, width=width, depth=depth, cycles=cycles, valid=valid, zp=zp)
    n = 3 * slots + 4
    ins = _inputs(rng, m, gen, n)
    want, got = runners.run_tflm(m, ins, invokes=n), engine_run(m, ins, invokes=n)
    _cb_compare(m, want, got, slots, zp)
    if valid:   # the period: cycles_max, or TFLM's legacy rule (1 for 5, 13 or 25 slots, else 2)
        period = cycles or (1 if slots in (5, 13, 25) else 2)
        assert [bool(g[1][0]) for g in got] == [(k + 1) % period == 0 for k in range(n)]


def test_circular_buffer_reset(rng):
    """Interpreter.reset() restarts the ring (zero point) and the period: the invokes after it are
    those of a fresh TFLM interpreter (TFLM's reset leaves its buffer, the output tensor, as it was)."""
    m, gen = C.circular_buffer(rng, slots=4, depth=3, cycles=3, valid=True, zp=5)
    it = E.Interpreter(E.Model(m.tflite()))
    seq = _inputs(rng, m, gen, 12)

    def run(xs):
        out = []
        for x in xs:
            it.set_input(0, x[0])
            it.invoke()
            out.append([it.get_output(0).copy(), it.get_output(1).copy()])
        return out
    run(seq[:5])          # mid-period, ring full
    it.reset()
    got = run(seq[5:])
    _cb_compare(m, runners.run_tflm(m, seq[5:], invokes=7), got, 4, 5)


def test_circular_buffer_legacy_count(rng):
    """Without cycles_max, TFLM gives period 1 to the 5th such op with output [1, N, 2, 96] (a
    process-wide count in TFLM: TFLM runs in a fresh process here; per interpreter in the engine)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import graphmodels
    g = graphmodels.Graph()
    x = g.input("x", np.int8, (1, 1, 2, 96), scale=0.1, zp=0)
    outs = []
    for k in range(6):
        o = g.tensor(f"buf{k}", np.int8, (1, 3, 2, 96), scale=0.1, zp=0)
        v = g.tensor(f"valid{k}", np.int8, (1,))
        g.tensors[v].type = C.M.S.TensorType.BOOL
        op = C.M.S.OperatorT()
        op.opcodeIndex = g._code(C.CUSTOM, "CIRCULAR_BUFFER")
        op.inputs, op.outputs = np.array([x], np.int32), np.array([o, v], np.int32)
        g.ops.append(op)
        outs.append(g.output(v))
    data = g.tflite()
    path = Path(__file__).resolve().parents[2]
    code = textwrap.dedent(f"""
        import sys, numpy as np; sys.path.insert(0, {str(path)!r})
        import oracle
        it = oracle.tflm_interpreter(open(sys.argv[1], 'rb').read())
        for k in range(2):
            it.set_input(np.zeros((1, 1, 2, 96), np.int8), 0); it.invoke()
            print([bool(it.get_output(i)[0]) for i in range(6)])
    """)
    tmp = Path(runners.BUILD) / "cb_legacy.tflite"
    tmp.write_bytes(data)
    want = subprocess.run([sys.executable, "-c", code, str(tmp)], capture_output=True, text=True, check=True).stdout
    it = E.Interpreter(E.Model(data))
    got = ""
    for k in range(2):
        it.set_input(0, np.zeros((1, 1, 2, 96), np.int8))
        it.invoke()
        got += str([bool(it.get_output(i)[0]) for i in range(6)]) + "\n"
    assert got == want
    assert got.splitlines()[0] == str([False] * 4 + [True, False])


def test_circular_buffer_arena(rng):
    _check_arena(C.circular_buffer(rng, slots=7, depth=10, cycles=2, valid=True)[0])


@pytest.mark.parametrize("kw,msg", [
    (dict(options=b"\x01\x02"), "custom option 'cycles_max': malformed flexbuffer"),
    (dict(options=C.flex({"cycles_max": "two"})), "custom option 'cycles_max': wrong type"),
    (dict(options=C.flex({"cycles_max": 2.0})), "custom option 'cycles_max': wrong type"),
    (dict(options=C.flex({"cycles_max": 1 << 40})), "custom option 'cycles_max': out of range"),
    (dict(options=C.flex([1])), "custom option 'cycles_max': wrong type"),
])
def test_circular_buffer_bad_options(rng, kw, msg):
    m, _ = C.circular_buffer(rng, **kw)
    assert f"op 0 CIRCULAR_BUFFER: {msg}" in _error(m)


def test_circular_buffer_bad_operands(rng):
    m, _ = C.circular_buffer(rng, slots=3, width=2, depth=4)
    m.tensors[0].shape = (1, 2, 2, 4)
    assert "input must be [1, 1, W, D] and output [1, N, W, D]" in _error(m)
    m, _ = C.circular_buffer(rng, slots=3, depth=4)
    m.tensors[1].shape = (1, 3, 1, 5)
    assert "input must be [1, 1, W, D]" in _error(m)
    m, _ = C.circular_buffer(rng)
    for t in m.tensors:
        t.dtype, t.scale, t.zp = np.dtype(np.float32), None, None
    assert "CIRCULAR_BUFFER: dtypes float32 -> float32 not supported (int8 only, as TFLM)" in _error(m)
    m, _ = C.circular_buffer(rng, valid=True)
    m.tensors[2].dtype = np.dtype(np.int8)
    assert "output 1 (valid) must be one bool" in _error(m)


# ---- TFLite_Detection_PostProcess ---------------------------------------------------------------

def _written(o, n):
    """Indices of the entries TFLite writes for n detections (fast NMS with several classes per
    detection leaves 'dummy' entries past the classes there are)."""
    mc = o["max_classes_per_detection"]
    if o["use_regular_nms"]:
        return np.arange(n)
    per = min(mc, o["num_classes"])
    return np.array([k * mc + j for k in range(n) for j in range(per)], dtype=int)


def _dpp_check(engine_run, rng, m, gen, tflm=None):
    o = m.det_options
    ins = _inputs(rng, m, gen)
    got = [np.asarray(g).reshape(m.tensors[m.outputs[i]].shape) for i, g in enumerate(engine_run(m, ins))]
    want = runners.run_oracle(m, ins)
    n = int(want[3][0])
    assert int(got[3][0]) == n, m.desc
    idx = _written(o, n)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g[0][idx], w[0][idx], err_msg=m.desc)   # bit-exact, boxes too
    rest = np.setdiff1d(np.arange(got[1].shape[1]), idx)
    assert not np.any(got[0][0][rest]) and not np.any(got[1][0][rest]) and not np.any(got[2][0][rest]), m.desc
    if tflm is None:
        tflm = m.tensors[0].dtype == np.float32 and m.tensors[1].dtype == np.float32 \
            and o["max_classes_per_detection"] == 1
    if tflm:   # TFLM runs float32 only; with one class per detection its layout is TFLite's
        t = [np.asarray(w).reshape(g.shape) for g, w in zip(got, runners.run_tflm(m, ins))]
        assert int(t[3][0]) == n, m.desc
        for g, w in zip(got[:3], t[:3]):   # (regular NMS: the zero padding too)
            sel = slice(None) if o["use_regular_nms"] else idx
            np.testing.assert_array_equal(g[0][sel], w[0][sel], err_msg=f"TFLM {m.desc}")
    return got, n


@pytest.mark.parametrize("boxes,scores", [("float32", "float32"), ("uint8", "uint8"), ("float32", "uint8"),
                                          ("uint8", "float32")])
@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("background", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_detection_grid(engine_run, rng, boxes, scores, regular, background, ties):
    counts = []
    for trial in range(6):
        m, gen = C.detection(rng, boxes, scores, n_anchors=int(rng.integers(6, 40)), background=background,
                             ties=ties, use_regular_nms=regular, num_classes=int(rng.integers(1, 6)),
                             max_detections=int(rng.integers(2, 9)),
                             max_classes_per_detection=1 if regular else int(rng.choice([1, 2, 3])),
                             detections_per_class=int(rng.integers(1, 6)),
                             nms_iou_threshold=float(rng.choice([0.3, 0.5, 0.7, 1.0])),
                             nms_score_threshold=float(rng.choice([0.0, 0.25, 0.5])),
                             box_stride=int(rng.choice([4, 6])))
        counts.append(_dpp_check(engine_run, rng, m, gen)[1])
    assert max(counts) >= 2, "detections must be found for the comparison to mean something"


def test_detection_nms_suppresses(engine_run, rng):
    """Two boxes of one cluster overlapping at IoU ~0.8: at threshold 0.5 NMS keeps one, at 0.9 both
    (and the results equal the oracle's in both cases)."""
    found = {}
    for iou in (0.5, 0.9):
        r = np.random.default_rng(5)
        m, gen = C.detection(r, n_anchors=2, num_classes=1, max_detections=2, nms_iou_threshold=iou,
                             nms_score_threshold=0.1)
        a = m.tensors[2].data
        a[1] = a[0] * np.array([1, 1, 1.1, 1.1], np.float32)      # same centre, 10% larger
        zero = lambda rng, t: np.zeros(t.shape, np.float32) if t.name == "box_encodings" else \
            np.array([[[0.1, 0.9], [0.2, 0.8]]], np.float32)
        found[iou] = _dpp_check(engine_run, r, m, zero)[1]
    assert found == {0.5: 1, 0.9: 2}


@pytest.mark.parametrize("regular", [False, True])
def test_detection_ties(engine_run, rng, regular):
    """Every score equal: detections come in anchor order (regular: class 0's first), as TFLite's
    stable sorts and TFLM give; far-apart boxes so that NMS suppresses nothing."""
    m, gen = C.detection(rng, n_anchors=6, num_classes=2, max_detections=5, use_regular_nms=regular,
                         nms_iou_threshold=0.5, nms_score_threshold=0.1)
    m.tensors[2].data[:] = [[0.1 + 0.15 * i, 0.5, 0.05, 0.05] for i in range(6)]
    flat = lambda rng, t: np.zeros(t.shape, np.float32) if t.name == "box_encodings" else \
        np.full(t.shape, 0.5, np.float32)
    got, n = _dpp_check(engine_run, rng, m, flat, tflm=True)
    assert n == 5
    if regular:
        assert got[1][0].tolist() == [0] * 5
    assert np.all(np.diff(got[0][0][:, 0]) > 0)   # anchors 0, 1, 2, ...


def test_detection_arena(rng):
    for regular in (False, True):
        _check_arena(C.detection(rng, n_anchors=30, use_regular_nms=regular, max_detections=7)[0])


def test_detection_negative_anchor_fails_invoke(rng):
    m, gen = C.detection(rng, n_anchors=4)
    m.tensors[2].data[2, 2] = -0.1
    it = E.Interpreter(E.Model(m.tflite()))
    for i, x in enumerate(_inputs(rng, m, gen)):
        it.set_input(i, x)
    with pytest.raises(E.MicronnError, match="decoded box 2 has ymin > ymax"):
        it.invoke()


OPT_ERRORS = [
    (dict(raw_options=b""), "custom options: missing"),
    (dict(raw_options=b"\x05\x24\x01"), "custom options: malformed flexbuffer"),   # map offset before the blob
    (dict(raw_options=C.flex([1, 2, 3])), "custom options: wrong type"),
    (dict(raw_options=C.flex({"max_detections": 3})), "custom option 'max_classes_per_detection': missing"),
    (dict(max_detections=2.5), "custom option 'max_detections': wrong type"),
    (dict(max_detections="3"), "custom option 'max_detections': wrong type"),
    (dict(max_detections=0), "custom option 'max_detections': 0 (must be 1 to 65535)"),
    (dict(raw_options=C.flex(dict(C.DEFAULT_OPTIONS, max_classes_per_detection=-1))),
     "custom option 'max_classes_per_detection': -1"),
    (dict(num_classes=0), "custom option 'num_classes': 0 (must be 1 to 1048576)"),
    (dict(raw_options=C.flex(dict(C.DEFAULT_OPTIONS, num_classes=1 << 33))), "custom option 'num_classes': out of range"),
    (dict(y_scale=0.0), "custom option 'y_scale': must be positive and finite"),
    (dict(w_scale=-1.0), "custom option 'w_scale': must be positive and finite"),
    (dict(w_scale=float("inf")), "custom option 'w_scale': out of range"),
    (dict(h_scale=1e300), "custom option 'h_scale': out of range"),
    (dict(nms_iou_threshold=0.0), "custom option 'nms_iou_threshold': must be in (0, 1]"),
    (dict(nms_iou_threshold=1.5), "custom option 'nms_iou_threshold': must be in (0, 1]"),
    (dict(nms_score_threshold="high"), "custom option 'nms_score_threshold': wrong type"),
    (dict(use_regular_nms=True, detections_per_class=0), "custom option 'detections_per_class': 0"),
    (dict(raw_options=C.flex(dict(C.DEFAULT_OPTIONS, max_detections=60000, max_classes_per_detection=60000))),
     "max_detections x max_classes_per_detection above 16777216"),
    (dict(use_regular_nms=2.0), "custom option 'use_regular_nms': wrong type"),
]


@pytest.mark.parametrize("kw,msg", OPT_ERRORS, ids=[m for _, m in OPT_ERRORS])
def test_detection_bad_options(rng, kw, msg):
    m, _ = C.detection(rng, **kw)
    assert f"op 0 TFLite_Detection_PostProcess: {msg}" in _error(m)


def test_detection_bad_operands(rng):
    m, _ = C.detection(rng, n_anchors=8, num_classes=3)
    m.tensors[1].shape = (1, 8, 5)
    assert "class predictions must be [1, 8, num_classes (+1 for a background class)] with num_classes 3" in _error(m)
    m, _ = C.detection(rng, n_anchors=8)
    m.tensors[2].shape, m.tensors[2].data = (7, 4), m.tensors[2].data[:7]
    assert "anchors must be [8, 4]" in _error(m)
    m, _ = C.detection(rng, n_anchors=8, box_stride=4)
    m.tensors[0].shape = (1, 8, 3)
    assert "box encodings must be [1, N, >= 4]" in _error(m)
    m, _ = C.detection(rng, max_detections=4)
    m.tensors[4].shape = (1, 3)
    assert "output 1 (detection classes) must be float32 with 4 elements" in _error(m)
    m, _ = C.detection(rng, boxes="uint8")
    m.tensors[0].dtype, m.tensors[0].scale, m.tensors[0].zp = np.dtype(np.int8), [0.04], [0]
    assert "dtypes int8, float32, uint8 not supported (box encodings and anchors both float32 or both" in _error(m)
    m, _ = C.detection(rng, boxes="uint8")
    m.tensors[2].scale, m.tensors[2].zp, m.tensors[2].qdim = [0.004] * 4, [0] * 4, 1
    assert "uint8 anchors need one positive scale" in _error(m)
