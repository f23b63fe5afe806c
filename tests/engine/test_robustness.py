"""Hostile and damaged models through the ctypes wrapper: every case must end in a clean error
(status + message naming the problem) or a valid run, never a crash. `make -C tests/engine test`
runs this against the ASan+UBSan build of the engine."""
import copy
import random

import numpy as np
import pytest

import oracle

MODELS = ["hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
          "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "simple_add_model.tflite",
          "trained_lstm_int8.tflite"]


def schema():
    from ai_edge_litert import schema_py_generated as s
    return s


def to_obj(model_bytes):
    s = schema()
    return s.ModelT.InitFromObj(s.Model.GetRootAsModel(model_bytes, 0))


def to_bytes(mt):
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def try_run(engine, data):
    """'rejected' / 'prepare' / 'ran'; any MicronnError must carry a message."""
    try:
        m = engine.Model(data)
    except engine.MicronnError as e:
        assert str(e), "empty error message"
        return "rejected"
    try:
        it = engine.Interpreter(m, arena_size=512 * 1024)
    except engine.MicronnError as e:
        assert str(e)
        return "prepare"
    for i in range(m.num_inputs):
        d = it.input_details(i)
        if d["bytes"]:
            it.set_input(i, bytes(d["bytes"]))
    try:
        it.invoke()
    except engine.MicronnError as e:
        assert str(e)
    return "ran"


def expect_error(engine, data, status, *words):
    with pytest.raises(engine.MicronnError) as ei:
        m = engine.Model(data)
        engine.Interpreter(m, arena_size=1 << 20)
    msg = str(ei.value)
    assert ei.value.status == status, msg
    for w in words:
        assert w in msg, msg
    return msg


@pytest.fixture(scope="module")
def hello():
    return oracle.read_model("hello_world_int8.tflite")


def test_absurd_shape(engine, hello):
    mt = to_obj(hello)
    t = mt.subgraphs[0].tensors[mt.subgraphs[0].inputs[0]]
    t.shape = np.array([1 << 30, 1 << 30, 1 << 30, 1 << 30], dtype=np.int32)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "tensor", "shape too large")


def test_shape_vs_buffer_size(engine, hello):
    mt = to_obj(hello)
    sg = mt.subgraphs[0]
    const = next(t for t in sg.tensors if t.buffer and mt.buffers[t.buffer].data is not None
                 and len(mt.buffers[t.buffer].data) > 0)
    const.shape = np.array(list(const.shape) + [2], dtype=np.int32)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "constant data size")


def test_bad_tensor_index(engine, hello):
    mt = to_obj(hello)
    op = mt.subgraphs[0].operators[1]
    op.inputs = np.array(op.inputs, dtype=np.int32)
    op.inputs[0] = 999
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "operator 1", "inputs[0]: tensor index 999 out of range")


def test_bad_buffer_index(engine, hello):
    mt = to_obj(hello)
    mt.subgraphs[0].tensors[0].buffer = 12345
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "tensor 0", "buffer index")


def test_bad_opcode_index(engine, hello):
    mt = to_obj(hello)
    mt.subgraphs[0].operators[0].opcodeIndex = 77
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "operator 0", "opcode index")


def test_bad_io_index(engine, hello):
    mt = to_obj(hello)
    mt.subgraphs[0].outputs = np.array([500], dtype=np.int32)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "outputs")


def test_unsupported_op_named(engine, hello):
    mt = to_obj(hello)
    mt.operatorCodes[0].builtinCode = 27
    mt.operatorCodes[0].deprecatedBuiltinCode = 27
    # SVDF with FC's operands: either the SVDF kernel rejects it in prepare (naming op and
    # parameter) or, in a build without SVDF, the op is reported unsupported.
    with pytest.raises(engine.MicronnError) as ei:
        engine.Interpreter(engine.Model(to_bytes(mt)), arena_size=1 << 20)
    assert "SVDF" in str(ei.value)
    mt.operatorCodes[0].builtinCode = 15   # LSH_PROJECTION: no kernel in any build
    mt.operatorCodes[0].deprecatedBuiltinCode = 15
    expect_error(engine, to_bytes(mt), engine.ERR_UNSUPPORTED, "op 0 LSH_PROJECTION: micronn has no kernel for LSH_PROJECTION yet (builtin 15)")


def test_custom_op_named(engine, hello):
    s = schema()
    mt = to_obj(hello)
    mt.operatorCodes[0].builtinCode = s.BuiltinOperator.CUSTOM
    mt.operatorCodes[0].deprecatedBuiltinCode = s.BuiltinOperator.CUSTOM
    mt.operatorCodes[0].customCode = b"MyFancyOp"
    expect_error(engine, to_bytes(mt), engine.ERR_UNSUPPORTED, 'unsupported custom op "MyFancyOp"')
    assert engine.Model(to_bytes(mt)).ops()[0]["name"] == "MyFancyOp"


def test_wrong_version_and_identifier(engine, hello):
    mt = to_obj(hello)
    mt.version = 2
    expect_error(engine, to_bytes(mt), engine.ERR_UNSUPPORTED, "version 2")
    expect_error(engine, hello[:4] + b"XXXX" + hello[8:], engine.ERR_MODEL, "TFL3")
    expect_error(engine, b"", engine.ERR_MODEL, "too short")


def test_writes_constant(engine, hello):
    mt = to_obj(hello)
    sg = mt.subgraphs[0]
    const = next(i for i, t in enumerate(sg.tensors) if t.buffer and mt.buffers[t.buffer].data is not None
                 and len(mt.buffers[t.buffer].data) > 0)
    sg.operators[0].outputs = np.array([const], dtype=np.int32)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "writes constant tensor")


def test_several_subgraphs(engine, hello):
    """A model with extra subgraphs loads; subgraph 0 runs and matches the original."""
    mt = to_obj(hello)
    extra = copy.deepcopy(mt.subgraphs[0])
    extra.name = b"second"
    mt.subgraphs.append(extra)
    mt.subgraphs.append(copy.deepcopy(extra))
    data = to_bytes(mt)
    m2 = engine.Model(data)
    assert m2.num_subgraphs == 3
    a = engine.Interpreter(m2)
    b = engine.Interpreter(engine.Model(hello))
    for v in (-100, 0, 50, 120):
        x = np.array([[v]], dtype=np.int8)
        a.set_input(0, x)
        b.set_input(0, x)
        a.invoke()
        b.invoke()
        assert a.output(0).tolist() == b.output(0).tolist()


def test_bias_quantized_dimension_accepted(engine):
    """person_detect stores quantized_dimension=3 on 1-D biases: accepted as TFLM does."""
    md = oracle.read_model("person_detect.tflite")
    mt = to_obj(md)
    odd = [t for t in mt.subgraphs[0].tensors if t.quantization is not None
           and t.quantization.quantizedDimension >= len(t.shape)]
    assert odd, "model no longer has the odd field"
    engine.Interpreter(engine.Model(md))


def test_offline_plan(engine):
    """OfflineMemoryAllocation metadata: given offsets are used, others planned around them."""
    s = schema()
    md = oracle.read_model("micro_speech_quantized.tflite")
    mt = to_obj(md)
    nt = len(mt.subgraphs[0].tensors)
    m0 = engine.Model(md)
    plain = engine.Interpreter(m0, planner="no_reuse")
    # Put every non-constant tensor at the no-reuse planner's offset (a valid plan).
    base = None
    offs = []
    for i in range(nt):
        d = plain.tensor_details(i)
        addr = plain.tensor_address(i)
        if d["const"] or not addr:
            offs.append(-1)
            continue
        base = addr if base is None else min(base, addr)
        offs.append(addr)
    offs = [o - base if o != -1 else -1 for o in offs]
    buf = s.BufferT()
    buf.data = np.array([0, 0, nt] + offs, dtype="<i4").view(np.uint8)
    mt.buffers.append(buf)
    meta = s.MetadataT()
    meta.name = b"OfflineMemoryAllocation"
    meta.buffer = len(mt.buffers) - 1
    mt.metadata = (mt.metadata or []) + [meta]
    data = to_bytes(mt)
    m = engine.Model(data)
    it = engine.Interpreter(m, planner="offline")
    assert it.stats()["nonpersistent"] == plain.stats()["nonpersistent"]
    x = np.arange(1960, dtype=np.int32).astype(np.int8).reshape(1, 1960)
    it.set_input(0, x)
    it.invoke()
    ref = engine.Interpreter(m0)
    ref.set_input(0, x)
    ref.invoke()
    assert it.output(0).tolist() == ref.output(0).tolist()


@pytest.mark.parametrize("name", MODELS)
def test_truncations(engine, name):
    data = oracle.read_model(name)
    n = len(data)
    points = sorted(set(list(range(0, min(n, 600))) + [n * k // 97 for k in range(97)] + [n - 1, n - 4, n - 16]))
    seen = {"rejected": 0, "prepare": 0, "ran": 0}
    for p in points:
        seen[try_run(engine, data[:p])] += 1
    assert seen["rejected"] > 0


@pytest.mark.parametrize("name", MODELS)
def test_bit_flips(engine, name):
    data = bytearray(oracle.read_model(name))
    rng = random.Random(hash(name) & 0xffff)
    seen = {"rejected": 0, "prepare": 0, "ran": 0}
    for _ in range(150):
        c = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            # half the flips in the first/last 4 KB where the tables live
            if rng.random() < 0.5:
                pos = rng.randrange(min(len(c), 4096)) if rng.random() < 0.5 else len(c) - 1 - rng.randrange(min(len(c), 4096))
            else:
                pos = rng.randrange(len(c))
            c[pos] ^= 1 << rng.randrange(8)
        seen[try_run(engine, bytes(c))] += 1
    assert sum(seen.values()) == 150


def test_quantization_params_checked(engine, hello):
    mt = to_obj(hello)
    t = next(t for t in mt.subgraphs[0].tensors if t.type == schema().TensorType.INT8 and t.quantization)
    t.quantization.zeroPoint = np.array([300], dtype=np.int64)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "zero point 300 out of range for int8")
    mt = to_obj(hello)
    t = next(t for t in mt.subgraphs[0].tensors if t.type == schema().TensorType.INT8 and t.quantization)
    t.quantization.scale = np.array([float("nan")], dtype=np.float32)
    expect_error(engine, to_bytes(mt), engine.ERR_MODEL, "scale must be positive and finite")


def test_external_buffer_data(engine, hello):
    """Buffer data stored after the flatbuffer (Buffer.offset/size, the >2 GB model layout)."""
    s = schema()
    mt = to_obj(hello)
    tail = bytearray()
    base = None
    moved = 0
    for b in mt.buffers:
        if b.data is not None and len(b.data):
            raw = bytes(np.asarray(b.data, dtype=np.uint8))
            b.data = None
            b.offset = len(tail) + 1   # placeholder, fixed below once the flatbuffer size is known
            b.size = len(raw)
            tail += raw + bytes((-len(raw)) % 16)
            moved += 1
    assert moved
    # Offsets are relative to the start of the file: the flatbuffer comes first, then the data.
    fb_len = len(to_bytes(mt))
    base = (fb_len + 15) // 16 * 16 + 64
    for b in mt.buffers:
        if b.offset:
            b.offset = base + b.offset - 1
    fb = to_bytes(mt)
    assert len(fb) <= base
    data = fb + bytes(base - len(fb)) + bytes(tail)
    a = engine.Interpreter(engine.Model(data))
    ref = engine.Interpreter(engine.Model(hello))
    for v in (-90, 0, 77):
        x = np.array([[v]], dtype=np.int8)
        a.set_input(0, x)
        ref.set_input(0, x)
        a.invoke()
        ref.invoke()
        assert a.output(0).tolist() == ref.output(0).tolist()
    # pointing past the end is rejected
    mt.buffers[next(i for i, b in enumerate(mt.buffers) if b.offset)].size = 1 << 40
    expect_error(engine, to_bytes(mt) + bytes(tail), engine.ERR_MODEL, "outside the model buffer")


def test_inspect(engine):
    info = engine.inspect(oracle.read_model("person_detect.tflite"))
    assert len(info["ops"]) == 31 and all(o["supported"] for o in info["ops"])
    assert info["arena_bytes"] == info["arena"]["needed"]
    info = engine.inspect(oracle.read_model("trained_lstm_int8.tflite"))
    assert all(o["supported"] for o in info["ops"]) and info["arena_error"] is None
