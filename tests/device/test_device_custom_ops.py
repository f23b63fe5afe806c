"""Custom ops on the board: the built-in C kernel "Atan2" (engine/kernels/custom/atan2.c), the
Ethos-U custom op's error, Python functions as custom ops (micronn.register_op), and TFLM's
CIRCULAR_BUFFER / TFLite's TFLite_Detection_PostProcess (a stream against TFLM, an SSD-style
detector against LiteRT, a bad option's error)."""
import os
import sys

import numpy as np
import pytest

import graphmodels

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))


def _put_model(dev, name, data):
    dev.put(data, name)
    return f"import micronn\nm = micronn.load_file({name!r})\n"


def test_c_custom_op_atan2(dev):
    data, ref = graphmodels.atan2_model((2, 8))
    rng = np.random.default_rng(3)
    y = rng.normal(0, 2, (2, 8)).astype(np.float32)
    x = rng.normal(0, 2, (2, 8)).astype(np.float32)
    x[0, :2] = 0
    r = dev.eval_last(_put_model(dev, "atan2.tflite", data) + f"""
it = micronn.Interpreter(m)
it.input(0)[:] = {y.tobytes()!r}
it.input(1)[:] = {x.tobytes()!r}
it.invoke()
print((m.ops(), list(it.output(0))))
""")
    ops, out = r
    assert [o[0] for o in ops] == ["Atan2", "MUL"]
    np.testing.assert_allclose(np.array(out, np.float32).reshape(2, 8), ref(y, x), rtol=1e-5, atol=1e-6)


def test_ethos_u_gives_a_clear_error(dev):
    code = _put_model(dev, "ethos.tflite", graphmodels.custom_model("ethos-u", dtype=np.int8, scale=0.1))
    r = dev.eval_last(code + """
res = []
try:
    micronn.Interpreter(m)
    res.append('no error')
except NotImplementedError as e:
    res.append(str(e))
def npu(inputs, outputs, shapes, dtypes):   # a registered handler takes the op over
    outputs[0][:] = inputs[0]
micronn.register_op('ethos-u', npu)
it = micronn.Interpreter(m)
it.input(0)[:] = bytes([5, 250, 7, 0])
it.invoke()
res.append(list(it.output(0)))
micronn.register_op('ethos-u', None)
print(res)
""")
    assert r[0] == ("unsupported ops: ethos-u (op 1): compiled for an Arm Ethos-U NPU; this board has none; "
                    "convert the model without Vela")
    assert r[1] == [5, 0, 7, 0]   # RELU, the handler's copy, RELU


PY_OP = """
import micronn, micropython
calls = []
def scale_shift(inputs, outputs, shapes, dtypes):
    calls.append((shapes, dtypes, len(inputs[0]), len(outputs[0])))
    x, y = inputs[0], outputs[0]
    for i in range(len(x)):
        y[i] = 3 * x[i] - 1
micronn.register_op("ScaleShift", scale_shift)
"""


def test_python_custom_op(dev):
    load = _put_model(dev, "pyop.tflite", graphmodels.custom_model("ScaleShift", shape=(2, 3)))
    r = dev.eval_last(load + PY_OP + """
it = micronn.Interpreter(m)
it.input(0)[:] = bytes(24)
it.input(0)[1] = 2.0
it.input(0)[4] = 0.25
it.invoke()
print((micronn.registered_ops(), list(it.output(0)), calls))
""")
    names, out, calls = r
    assert names == ("ScaleShift",)
    assert out == [0.0, 5.0, 0.0, 0.0, 0.0, 0.0]  # 3 * 0.25 - 1 < 0: clipped by the RELU after it
    assert calls == [(((2, 3), (2, 3)), ("float32", "float32"), 6, 6)]


def test_python_custom_op_int8_and_errors(dev):
    load = _put_model(dev, "pyop8.tflite", graphmodels.custom_model("Negate", shape=(5,), dtype=np.int8,
                                                                    scale=0.5))
    r = dev.eval_last(load + """
import micronn, micropython
def negate(inputs, outputs, shapes, dtypes):
    x, y = inputs[0], outputs[0]
    for i in range(len(x)):
        y[i] = 10 - x[i]
    try:
        x[0] = 1
    except TypeError:
        pass
    else:
        raise AssertionError('inputs must be read-only')
def broken(inputs, outputs, shapes, dtypes):
    raise ValueError('broken op: %s' % (dtypes,))
res = []
try:
    micronn.Interpreter(m)
except NotImplementedError as e:
    res.append(str(e))
micronn.register_op('Negate', negate)
it = micronn.Interpreter(m)
micronn.register_op('Negate', broken)
it2 = micronn.Interpreter(m)
it.input(0)[:] = bytes([1, 2, 3, 4, 200])
it.invoke()
res.append(list(it.output(0)))
try:
    it2.invoke()
except ValueError as e:
    res.append(str(e))
it2.input(0)[0] = 3
it.invoke()   # the other interpreter (and this one) stay usable
res.append(list(it.output(0)))
err = None
micropython.heap_lock()
try:
    it.invoke()
except RuntimeError as e:
    err = e
micropython.heap_unlock()
res.append(str(err))
micronn.register_op('Negate', None)
res.append(micronn.registered_ops())
try:
    micronn.register_op('X', 3)
except TypeError as e:
    res.append(str(e))
print(res)
""")
    assert r[0] == "unsupported ops: Negate (op 1): micronn has no kernel for these yet"
    assert r[1] == [9, 8, 7, 6, 10]       # RELU(int8 200 = -56) = 0 -> 10 - 0; RELU keeps >= zp
    assert r[2] == "broken op: ('int8', 'int8')"
    assert r[3] == [9, 8, 7, 6, 10]
    assert r[4] == ("op 1 Negate: a Python custom op cannot run under micropython.heap_lock() "
                    "(calling the function allocates)")
    assert r[5] == ()
    assert r[6] == "fn must be callable (or None to unregister)"


# ---- TFLM's CIRCULAR_BUFFER and TFLite_Detection_PostProcess (engine/kernels/custom/) ------------

def _board_run(dev, tmp_path, monkeypatch, name, data, sets, reset_each=True):
    import devhelp
    (tmp_path / f"{name}.tflite").write_bytes(data)
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    return dev.run(name, sets, reset_each=reset_each)


def test_circular_buffer_stream(dev):
    """A stream of 9 invokes through one interpreter, then a reset and 3 more: the filled slots and
    the 'valid' flags are TFLM's (a fresh TFLM interpreter after the reset); slots not filled yet
    hold the zero point. (LiteRT has no CIRCULAR_BUFFER, so the model runs from code here.)"""
    import oracle
    import models_custom
    m, gen = models_custom.circular_buffer(np.random.default_rng(4), slots=4, width=2, depth=6, cycles=3,
                                           valid=True, zp=3)
    rng = np.random.default_rng(5)
    xs = [gen(rng, m.tensors[0]) for _ in range(12)]
    r = dev.eval_last(_put_model(dev, "cbuf.tflite", m.tflite()) + f"""
it = micronn.Interpreter(m)
res = []
for k, x in enumerate({[x.tobytes() for x in xs]!r}):
    if k == 9:
        it.reset()
    it.input(0)[:] = x
    it.invoke()
    res.append((bytes(it.output(0)), bool(it.output(1)[0])))
print(res)
""")
    t = None
    for k, (x, (out, valid)) in enumerate(zip(xs, r)):
        if k in (0, 9):
            t, start = oracle.tflm_interpreter(m.tflite()), k
        t.set_input(x, 0)
        t.invoke()
        filled = min(k - start + 1, 4)
        g = np.frombuffer(out, np.int8).reshape(1, 4, 2, 6)
        np.testing.assert_array_equal(g[0, 4 - filled:], t.get_output(0)[0, 4 - filled:], err_msg=f"invoke {k}")
        assert np.all(g[0, :4 - filled] == 3), k
        assert valid == bool(t.get_output(1)[0]) == ((k - start + 1) % 3 == 0), k


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("regular", [False, True])
def test_ssd_detector(dev, tmp_path, monkeypatch, dtype, regular):
    """The SSD-style detector of the host tests (graphmodels.ssd_model) on the board: counts and
    classes exactly LiteRT's, boxes and scores within the float tolerance (the board's double exp)."""
    import devhelp
    import oracle
    data = graphmodels.ssd_model(dtype, options=dict(use_regular_nms=regular))
    imgs = graphmodels.ssd_images(0, 4)
    sets = [[img if dtype == "float32" else np.clip(np.round(img * 255) - 128, -128, 127).astype(np.int8)]
            for img in imgs]
    got = _board_run(dev, tmp_path, monkeypatch, f"ssd_{dtype}_{int(regular)}", data, sets)
    counts = []
    for k, (x, g) in enumerate(zip(sets, got)):
        want = oracle.run(data, x)
        n = int(want[3][0])
        counts.append(n)
        assert int(g[3][0]) == n, k
        np.testing.assert_array_equal(g[1][0][:n], want[1][0][:n])
        devhelp.assert_matches(g[0][0][:n], want[0][0][:n], f"image {k} boxes")
        devhelp.assert_matches(g[2][0][:n], want[2][0][:n], f"image {k} scores")
        assert not np.any(g[2][0][n:])
    assert max(counts) >= 2


def test_custom_op_errors_on_board(dev):
    """A bad custom option is refused at Interpreter() with the op and the option named."""
    import models_custom
    m, _ = models_custom.detection(np.random.default_rng(1), n_anchors=4, nms_iou_threshold=2.0)
    r = dev.eval_last(_put_model(dev, "bad_dpp.tflite", m.tflite()) + """
try:
    micronn.Interpreter(m)
    print('no error')
except Exception as e:
    print(repr(str(e)))
""")
    assert "TFLite_Detection_PostProcess: custom option 'nms_iou_threshold': must be in (0, 1]" in r
