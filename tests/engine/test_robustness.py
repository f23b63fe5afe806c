"""Hostile and damaged models through the ctypes wrapper: every case must end in a clean error
(status + message naming the problem) or a valid run, never a crash. `make -C tests/engine test`
runs this against the ASan+UBSan build of the engine."""
import copy
import random
import zlib

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


def test_op_names_all(engine):
    """The names are stored compressed: every builtin code decodes to its schema name, and the
    codes past the last and the negative ones to "?"."""
    s = schema()
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)}
    assert len(names) > 200
    for code in range(max(names) + 1):
        assert engine.op_name(code) == names.get(code, "?"), code
    assert engine.op_name(max(names) + 1) == "?"
    assert engine.op_name(-1) == "?"
    assert engine.op_name(1000) == "?"
    # longest names (MN_OP_NAME_LEN - 1 characters at most) and the op names of a model
    assert max(len(n) for n in names.values()) < engine.OP_NAME_LEN
    data = oracle.read_model("person_detect.tflite")
    mt = to_obj(data)
    want = [names[max(mt.operatorCodes[op.opcodeIndex].builtinCode,
                      mt.operatorCodes[op.opcodeIndex].deprecatedBuiltinCode)] for op in mt.subgraphs[0].operators]
    assert [op["name"] for op in engine.Model(data).ops()] == want
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D"} <= set(want)


def test_options_names_all(engine):
    """Every builtin options table code names its schema table in a build of every op (the host
    library); unknown codes give "?"."""
    s = schema()
    names = {v: k for k, v in vars(s.BuiltinOptions).items() if not k.startswith("_") and isinstance(v, int)}
    f = engine.lib().mn_options_name
    for code in range(-1, max(names) + 3):
        assert f(code).decode() == names.get(code, "?"), code
    assert names[0] == "NONE" and len(names) > 100


def test_dtype_names_all(engine):
    s = schema()
    names = {v: k.lower() for k, v in vars(s.TensorType).items() if not k.startswith("_") and isinstance(v, int)}
    f = engine.lib().mn_dtype_name
    for code in range(-2, max(names) + 3):
        assert f(code).decode() == names.get(code, "?"), code


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


def with_offline_plan(md, offsets, count=None):
    """The model with OfflineMemoryAllocation metadata [version 0, subgraph 0, count, offsets...]."""
    s = schema()
    mt = to_obj(md)
    buf = s.BufferT()
    count = len(offsets) if count is None else count
    buf.data = np.array([0, 0, count] + list(offsets), dtype="<i4").view(np.uint8)
    mt.buffers.append(buf)
    meta = s.MetadataT()
    meta.name = b"OfflineMemoryAllocation"
    meta.buffer = len(mt.buffers) - 1
    mt.metadata = (mt.metadata or []) + [meta]
    return to_bytes(mt)


def test_offline_plan(engine):
    """OfflineMemoryAllocation metadata: given offsets are used, others planned around them."""
    md = oracle.read_model("micro_speech_quantized.tflite")
    nt = len(to_obj(md).subgraphs[0].tensors)
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
    m = engine.Model(with_offline_plan(md, offs))
    it = engine.Interpreter(m, planner="offline")
    # Every planned tensor sits at its offset from the first of them; kernel scratch buffers are
    # planned around them, so the total is at most the no-reuse plan's.
    addrs = {i: it.tensor_address(i) for i, o in enumerate(offs) if o != -1}
    base_it = min(addrs.values())
    assert {i: a - base_it for i, a in addrs.items()} == {i: o for i, o in enumerate(offs) if o != -1}
    assert it.stats()["nonpersistent"] <= plain.stats()["nonpersistent"]
    x = np.arange(1960, dtype=np.int32).astype(np.int8).reshape(1, 1960)
    it.set_input(0, x)
    it.invoke()
    ref = engine.Interpreter(m0)
    ref.set_input(0, x)
    ref.invoke()
    assert it.output(0).tolist() == ref.output(0).tolist()


# hello_world_float: input 0 (alive throughout), 7 = op 0 -> op 1, 8 = op 1 -> op 2, output 9 (op 2),
# all float32; 0 and 9 hold 4 bytes, 7 and 8 64 bytes. Tensors 1-6 are constants.
HW_FLOAT = "hello_world_float.tflite"


def hw_plan(**at):
    offs = [-1] * 10
    for k, v in at.items():
        offs[int(k[1:])] = v
    return offs


def test_offline_plan_shares_memory_of_disjoint_lifetimes(engine):
    """Tensors never alive together may share bytes (7 dies at op 1, output 9 is born at op 2)."""
    md = oracle.read_model(HW_FLOAT)
    it = engine.Interpreter(engine.Model(with_offline_plan(md, hw_plan(t0=0, t7=16, t8=80, t9=16))),
                            planner="offline")
    ref = engine.Interpreter(engine.Model(md))
    assert it.tensor_address(9) - it.tensor_address(0) == 16 == it.tensor_address(7) - it.tensor_address(0)
    for v in (0.0, 1.0, 3.0, 5.5):
        x = np.array([[v]], dtype=np.float32)
        it.set_input(0, x)
        ref.set_input(0, x)
        it.invoke()
        ref.invoke()
        assert it.output(0).tolist() == ref.output(0).tolist()


@pytest.mark.parametrize("plan, words", [
    # 7 [16,80) and 8 [32,96) are both alive at op 1
    (hw_plan(t0=0, t7=16, t8=32, t9=160),
     ["offline memory plan: tensors 7 [16,80) and 8 [32,96) overlap, both alive at op 1", "('sequential/dense/"]),
    # the input stays alive to the end, so the output may not take its bytes
    (hw_plan(t0=0, t7=16, t8=80, t9=0), ["tensors 0 [0,4) and 9 [0,4) overlap, both alive at op 2"]),
    (hw_plan(t0=0, t7=18, t8=96, t9=160), ["tensor 7 'sequential/dense/MatMul", "(float32) at offset 18 is not 4-byte aligned"]),
    (hw_plan(t0=0, t7=-3), ["tensor 7", "has offset -3"]),
])
def test_offline_plan_rejected(engine, plan, words):
    md = with_offline_plan(oracle.read_model(HW_FLOAT), plan)
    m = engine.Model(md)
    for make in (lambda: engine.Interpreter(m, planner="offline"), lambda: m.arena_needed(planner="offline")):
        with pytest.raises(engine.MicronnError) as ei:
            make()
        assert ei.value.status == engine.ERR_MODEL, str(ei.value)
        for w in words:
            assert w in str(ei.value)
    # The other planners ignore the metadata.
    engine.Interpreter(m, planner="greedy").invoke()


def test_offline_plan_wrong_size(engine):
    md = oracle.read_model(HW_FLOAT)
    for data in (with_offline_plan(md, [-1] * 9), with_offline_plan(md, [-1] * 9, count=10)):
        with pytest.raises(engine.MicronnError) as ei:
            engine.Interpreter(engine.Model(data), planner="offline")
        assert ei.value.status == engine.ERR_MODEL
        assert "offline memory plan: " in str(ei.value) and "for 10 tensors" in str(ei.value)


@pytest.mark.parametrize("name", MODELS)
def test_truncations(engine, name):
    data = oracle.read_model(name)
    n = len(data)
    points = sorted(set(list(range(0, min(n, 600))) + [n * k // 97 for k in range(97)] + [n - 1, n - 4, n - 16]))
    seen = {"rejected": 0, "prepare": 0, "ran": 0}
    for p in points:
        seen[try_run(engine, data[:p])] += 1
    # The verifier checks every offset against the length: no truncated copy gets past it.
    assert seen == {"rejected": len(points), "prepare": 0, "ran": 0}


@pytest.mark.parametrize("name", MODELS)
def test_bit_flips(engine, name):
    data = bytearray(oracle.read_model(name))
    rng = random.Random(zlib.crc32(name.encode()))   # not hash(): randomised per process
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
    # Both ends are exercised: damaged tables are rejected, damaged weights still run.
    assert seen["rejected"] > 0 and seen["ran"] > 0, seen


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


def _litert_refuses(data):
    from ai_edge_litert.interpreter import Interpreter
    try:
        it = Interpreter(model_content=data)
        it.allocate_tensors()
        it.invoke()
        it.get_tensor(it.get_output_details()[0]["index"])
    except (ValueError, RuntimeError):
        return True
    return False


@pytest.mark.parametrize("case", ["no_ops", "writes_graph_input", "qdim3", "qdim7", "fc_9_inputs", "fc_1_input"])
def test_graphs_litert_refuses_are_refused(engine, hello, case):
    """What LiteRT refuses (at load, prepare or when the output is read) is refused at load or
    prepare with a message naming the object, never run."""
    mt = to_obj(hello)
    sg = mt.subgraphs[0]
    if case == "no_ops":  # the output is left to whatever the arena held
        sg.operators = []
        words = ("subgraph 0", "output 0 (tensor %d) is written by no operator" % sg.outputs[0])
    elif case == "writes_graph_input":
        sg.operators[0].outputs = np.array([sg.inputs[0]], dtype=np.int32)
        words = ("operator 0 (subgraph 0)", "output 0 is tensor %d, an input of the subgraph" % sg.inputs[0])
    elif case.startswith("qdim"):
        t = next(i for i, t in enumerate(sg.tensors) if t.quantization is not None
                 and t.quantization.scale is not None and len(t.quantization.scale) == 1 and len(t.shape) == 2)
        sg.tensors[t].quantization.quantizedDimension = int(case[4:])
        words = ("tensor %d (subgraph 0)" % t, "quantized_dimension %s out of range for a rank-2 tensor" % case[4:])
    else:
        op = sg.operators[0]
        op.inputs = np.array(list(op.inputs) + [op.inputs[1]] * 6 if case == "fc_9_inputs" else op.inputs[:1],
                             dtype=np.int32)
        words = ("FULLY_CONNECTED", "takes 2 or 3 inputs and 1 output, has %d and 1" % len(op.inputs))
    data = to_bytes(mt)
    assert _litert_refuses(data), "LiteRT runs it"
    expect_error(engine, data, engine.ERR_MODEL, *words)


def test_no_op_subgraph_passing_its_input_through_runs(engine, hello):
    """A subgraph whose output is its input needs no operator (LiteRT runs it too)."""
    mt = to_obj(hello)
    sg = mt.subgraphs[0]
    sg.operators = []
    sg.outputs = np.array(sg.inputs, dtype=np.int32)
    it = engine.Interpreter(engine.Model(to_bytes(mt)))
    it.set_input(0, np.array([[42]], dtype=np.int8))
    it.invoke()
    assert it.output(0).tolist() == [[42]]
