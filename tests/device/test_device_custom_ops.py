"""Custom ops on the board: the built-in C kernel "Atan2" (engine/kernels/custom/atan2.c), the
Ethos-U custom op's error, and Python functions as custom ops (micronn.register_op)."""
import numpy as np

import graphmodels


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
