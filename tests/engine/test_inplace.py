"""In-place ops (engine/mn_inplace.c): RESHAPE and element-wise ops whose input dies there write
into their input's memory. Outputs stay bit-exact (LiteRT reference kernels, and the no-reuse
planner where nothing is shared) and the arena shrinks by exactly the buffers saved."""
import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import oracle

N = 1000                      # elements of every activation (a 1008-byte arena block)
BLOCK = (N + 15) // 16 * 16
Q_IN, Q_RELU, Q_TANH, Q_OUT = (0.05, 3), (0.03, -128), (1 / 128, 0), (0.01, 5)


def _model(ops, tensors, inputs, outputs):
    """Multi-op model. ops: (builtin, [inputs], [outputs], options type, options);
    tensors: (name, shape, (scale, zero point)), all int8."""
    m = S.ModelT()
    m.version = 3
    codes = sorted({op[0] for op in ops})
    m.operatorCodes = []
    for c in codes:
        oc = S.OperatorCodeT()
        oc.builtinCode = c
        oc.deprecatedBuiltinCode = min(c, 127)
        oc.version = 1
        m.operatorCodes.append(oc)
    sg = S.SubGraphT()
    sg.tensors = []
    for name, shape, (scale, zp) in tensors:
        t = S.TensorT()
        t.name = name.encode()
        t.shape = np.array(shape, dtype=np.int32)
        t.type = S.TensorType.INT8
        t.buffer = 0
        t.quantization = S.QuantizationParametersT()
        t.quantization.scale = np.array([scale], dtype=np.float32)
        t.quantization.zeroPoint = np.array([zp], dtype=np.int64)
        sg.tensors.append(t)
    sg.operators = []
    for code, ins, outs, otype, opts in ops:
        op = S.OperatorT()
        op.opcodeIndex = codes.index(code)
        op.inputs = np.array(ins, dtype=np.int32)
        op.outputs = np.array(outs, dtype=np.int32)
        op.builtinOptionsType = otype
        op.builtinOptions = opts
        sg.operators.append(op)
    sg.inputs = np.array(inputs, dtype=np.int32)
    sg.outputs = np.array(outputs, dtype=np.int32)
    m.subgraphs = [sg]
    m.buffers = [S.BufferT()]
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _reshape_opts(shape):
    o = S.ReshapeOptionsT()
    o.newShape = np.array(shape, dtype=np.int32)
    return S.BuiltinOptions.ReshapeOptions, o


BO = S.BuiltinOperator


def chain_model():
    """x -> RELU -> RESHAPE -> TANH -> QUANTIZE (requantize) -> y: every op can work in place."""
    tensors = [("x", (1, N), Q_IN), ("relu", (1, N), Q_RELU), ("reshaped", (10, N // 10), Q_RELU),
               ("tanh", (10, N // 10), Q_TANH), ("y", (10, N // 10), Q_OUT)]
    ops = [(BO.RELU, [0], [1], 0, None), (BO.RESHAPE, [1], [2], *_reshape_opts((10, N // 10))),
           (BO.TANH, [2], [3], 0, None),
           (BO.QUANTIZE, [3], [4], S.BuiltinOptions.QuantizeOptions, S.QuantizeOptionsT())]
    return _model(ops, tensors, [0], [4])


def branch_model():
    """x -> RELU -> a; LOGISTIC(a) -> b; ADD(a, b) -> y: a is read after LOGISTIC, so LOGISTIC
    must not overwrite it (nor may the model input be overwritten by RELU)."""
    tensors = [("x", (1, N), Q_IN), ("a", (1, N), Q_RELU), ("b", (1, N), (1 / 256, -128)),
               ("y", (1, N), (0.04, -20))]
    ops = [(BO.RELU, [0], [1], 0, None), (BO.LOGISTIC, [1], [2], 0, None),
           (BO.ADD, [1, 2], [3], S.BuiltinOptions.AddOptions, S.AddOptionsT())]
    return _model(ops, tensors, [0], [3])


def _inputs(seed=7):
    return [np.random.default_rng(seed).integers(-128, 128, size=(1, N), dtype=np.int8)]


def _run(engine, data, **kw):
    it = engine.Interpreter(engine.Model(data), **kw)
    it.set_input(0, _inputs()[0])
    it.invoke()
    return it, it.output(0)


@pytest.mark.parametrize("reuse_inputs", [False, True])
def test_chain_in_place_bit_exact_and_smaller(engine, reuse_inputs):
    data = chain_model()
    want = oracle.run(data, _inputs())[0]
    it, got = _run(engine, data, reuse_inputs=reuse_inputs)
    np.testing.assert_array_equal(got, want)
    _, got_nr = _run(engine, data, planner="no_reuse")
    np.testing.assert_array_equal(got_nr, want)
    addr = [it.tensor_address(k) for k in range(5)]
    # relu, reshaped, tanh and y share one buffer; x too once the caller lets its memory go
    assert len(set(addr[1:])) == 1
    assert (addr[0] == addr[1]) == reuse_inputs
    st = it.stats()
    # Without in-place ops two activations (x + one, or the pair an op reads and writes) are
    # alive at once; in place, x plus one buffer, or just one with reuse_inputs.
    assert st["nonpersistent"] == (1 if reuse_inputs else 2) * BLOCK


def test_branch_keeps_live_input(engine):
    data = branch_model()
    want = oracle.run(data, _inputs())[0]
    for reuse in (False, True):
        it, got = _run(engine, data, reuse_inputs=reuse)
        np.testing.assert_array_equal(got, want)
        a, b = it.tensor_address(1), it.tensor_address(2)
        assert a != b, "LOGISTIC overwrote a tensor ADD still reads"


def test_model_input_not_overwritten(engine):
    """Without reuse_inputs the caller's input survives invoke, so RELU may not write into it."""
    data = chain_model()
    x = _inputs()[0]
    it, _ = _run(engine, data)
    np.testing.assert_array_equal(it.input(0), x)


def test_shared_models_unchanged_with_no_reuse(engine):
    """RESHAPE in micro_speech aliases the model input; outputs match the no-reuse planner."""
    data = oracle.read_model("micro_speech_quantized.tflite")
    x = np.random.default_rng(3).integers(-128, 128, size=(1, 1960), dtype=np.int8)
    outs = []
    for planner in ("greedy", "no_reuse"):
        it = engine.Interpreter(engine.Model(data), planner=planner)
        it.set_input(0, x)
        it.invoke()
        outs.append(it.output(0))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], oracle.run(data, [x])[0])
    it = engine.Interpreter(engine.Model(data))
    ops = engine.Model(data).ops()
    k = [i for i, op in enumerate(ops) if op["name"] == "RESHAPE"][0]
    m = engine.Model(data)
    src, dst = m.op_tensors(k)[0], m.op_tensors(k, engine.OP_OUTPUTS)[0]
    assert it.tensor_address(src) == it.tensor_address(dst)


def residual_model():
    """x -> RELU -> a; TANH(a) -> b; ADD(a, b) -> c (residual); MUL(c, k) -> d (k broadcast);
    SUB(d, b2) -> y with b2 = TANH(a) kept alive past ADD by being read here: a dies at ADD, so c
    takes a's memory; d takes c's (the constant k is the broadcast input 1); y takes d's."""
    import graphmodels
    g = graphmodels.Graph()
    x = g.input("x", np.int8, (1, N), scale=Q_IN[0], zp=Q_IN[1])
    a = g.op(BO.RELU, [x], np.int8, (1, N), name="a", scale=Q_RELU[0], zp=Q_RELU[1])
    b = g.op(BO.TANH, [a], np.int8, (1, N), name="b", scale=Q_TANH[0], zp=Q_TANH[1])
    c = g.op(BO.ADD, [a, b], np.int8, (1, N), S.BuiltinOptions.AddOptions, S.AddOptionsT(), name="c",
             scale=0.04, zp=-20)
    k = g.const("k", np.array([77], np.int8), scale=0.02, zp=1)
    d = g.op(BO.MUL, [c, k], np.int8, (1, N), S.BuiltinOptions.MulOptions, S.MulOptionsT(), name="d",
             scale=0.05, zp=4)
    y = g.op(BO.SUB, [d, b], np.int8, (1, N), S.BuiltinOptions.SubOptions, S.SubOptionsT(), name="y",
             scale=0.06, zp=-3)
    g.output(y)
    return g.tflite(), dict(x=x, a=a, b=b, c=c, d=d, y=y)


def test_binary_ops_in_place(engine):
    data, t = residual_model()
    want = oracle.run(data, _inputs())[0]
    _, got_nr = _run(engine, data, planner="no_reuse")
    np.testing.assert_array_equal(got_nr, want)
    for reuse in (False, True):
        it, got = _run(engine, data, reuse_inputs=reuse)
        np.testing.assert_array_equal(got, want)
        addr = {name: it.tensor_address(k) for name, k in t.items()}
        assert addr["c"] == addr["a"] and addr["d"] == addr["c"] and addr["y"] == addr["d"]
        assert addr["b"] != addr["a"], "b is read by SUB after ADD"
        assert (addr["x"] == addr["a"]) == reuse
        # x (unless reused) and the two chains a/c/d/y and b
        assert it.stats()["nonpersistent"] == (2 if reuse else 3) * BLOCK


def test_binary_op_keeps_input_read_later(engine):
    """ADD(a, b) with a read again later: the output must not take a's memory (nor b's: only
    input 0 is ever shared)."""
    import graphmodels
    g = graphmodels.Graph()
    x = g.input("x", np.int8, (1, N), scale=Q_IN[0], zp=Q_IN[1])
    a = g.op(BO.RELU, [x], np.int8, (1, N), scale=Q_RELU[0], zp=Q_RELU[1])
    b = g.op(BO.TANH, [a], np.int8, (1, N), scale=Q_TANH[0], zp=Q_TANH[1])
    c = g.op(BO.ADD, [a, b], np.int8, (1, N), S.BuiltinOptions.AddOptions, S.AddOptionsT(), scale=0.04, zp=-20)
    y = g.op(BO.MUL, [c, a], np.int8, (1, N), S.BuiltinOptions.MulOptions, S.MulOptionsT(), scale=0.05, zp=4)
    g.output(y)
    data = g.tflite()
    want = oracle.run(data, _inputs())[0]
    it, got = _run(engine, data)
    np.testing.assert_array_equal(got, want)
    assert it.tensor_address(c) not in (it.tensor_address(a), it.tensor_address(b))
    assert it.tensor_address(y) == it.tensor_address(c)   # MUL: c dies there, a is input 1
