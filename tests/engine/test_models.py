"""The engine (through ctypes) against LiteRT's reference kernels on every model in ../shared/models:
int8/int16/int32 outputs bit-exact, float32 within 1e-5 relative; intermediates too (no-reuse
planner vs experimental_preserve_all_tensors)."""
import re
import struct

import numpy as np
import pytest

import oracle

MODELS = ["hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
          "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "simple_add_model.tflite",
          "trained_lstm_int8.tflite"]


def bmp_input(name):
    """96x96 8-bit BMP -> int8 [1,96,96,1]: pixel bytes, rows top-down, copied unchanged."""
    with open(oracle.model_path(name), "rb") as f:
        b = f.read()
    off = struct.unpack("<I", b[10:14])[0]
    w, h = struct.unpack("<ii", b[18:26])
    rows = np.frombuffer(b[off:off + 96 * 96], dtype=np.uint8).reshape(96, 96)
    if h > 0:  # positive height: stored bottom-up
        rows = rows[::-1]
    return rows.copy().view(np.int8).reshape(1, 96, 96, 1)


def quantize(x, d):
    """Real values -> the input's integer type using its scale/zero point."""
    info = np.iinfo(d["dtype"])
    q = np.round(np.asarray(x) / d["quantization"][0]) + d["quantization"][1]
    return np.clip(q, info.min, info.max).astype(d["dtype"])


def sample_inputs(name, model_bytes):
    """A few meaningful input sets per model (lists of arrays, one per model input)."""
    dets = oracle.input_details(model_bytes)
    rng = np.random.default_rng(1234)
    sets = []
    if name == "person_detect.tflite":
        return [[bmp_input("person.bmp")], [bmp_input("no_person.bmp")],
                [rng.integers(-128, 128, size=(1, 96, 96, 1), dtype=np.int8)]]
    if name.startswith("hello_world"):
        for x in (0.0, 0.5, 1.57, 3.14, 4.7, 6.2):
            d = dets[0]
            v = np.full(d["shape"], x, dtype=np.float32)
            sets.append([v if d["dtype"] == np.float32 else quantize(v, d)])
        return sets
    for k in range(3):
        one = []
        for d in dets:
            shape = d["shape"]
            if d["dtype"] == np.float32:
                one.append(rng.normal(0, 1, size=shape).astype(np.float32))
            elif d["dtype"] == np.int16:
                # audio-feature-like values well inside the int16 range
                one.append(rng.integers(-3000, 3000, size=shape).astype(np.int16))
            else:
                # int8: smooth pattern plus noise, no saturation at the ends
                base = np.linspace(-90, 90, int(np.prod(shape))).reshape(shape)
                one.append(np.clip(base * (k - 1) + rng.normal(0, 25, size=shape), -120, 120).astype(d["dtype"]))
        sets.append(one)
    return sets


def assert_same(a, b, what):
    assert a.shape == b.shape, "%s: shape %s, expected %s" % (what, a.shape, b.shape)
    if np.issubdtype(b.dtype, np.floating):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        if not np.array_equal(a, b):
            diff = np.argwhere(a != b)
            raise AssertionError("%s: %d of %d elements differ, first at %s: %s vs %s" % (
                what, len(diff), b.size, diff[0], a[tuple(diff[0])], b[tuple(diff[0])]))


def make_interp(engine, model_bytes, **kw):
    return engine.Interpreter(engine.Model(model_bytes), **kw)


@pytest.mark.parametrize("name", MODELS)
def test_outputs_match_oracle(engine, name):
    md = oracle.read_model(name)
    it = make_interp(engine, md)
    for inputs in sample_inputs(name, md):
        for i, x in enumerate(inputs):
            it.set_input(i, x)
        it.reset()
        it.invoke()
        expect = oracle.run(md, inputs)
        for k, e in enumerate(expect):
            assert_same(it.output(k), e, "%s output %d" % (name, k))


@pytest.mark.parametrize("name", MODELS)
def test_intermediates_match_oracle(engine, name):
    """No-reuse planner keeps every tensor; each one must equal LiteRT's preserved tensor."""
    md = oracle.read_model(name)
    it = make_interp(engine, md, planner="no_reuse")
    inputs = sample_inputs(name, md)[0]
    for i, x in enumerate(inputs):
        it.set_input(i, x)
    it.invoke()
    _, tensors = oracle.run(md, inputs, all_tensors=True)
    compared = 0
    for idx in range(it.model.num_tensors):
        mine = it.tensor(idx)
        if mine is None or idx not in tensors or it.tensor_details(idx)["variable"]:
            continue
        assert_same(mine, tensors[idx], "%s tensor %d (%s)" % (name, idx, it.tensor_details(idx)["name"]))
        compared += 1
    assert compared >= it.model.num_inputs + it.model.num_outputs


def test_person_detect_images(engine):
    md = oracle.read_model("person_detect.tflite")
    it = make_interp(engine, md)
    for img, expect in (("person.bmp", [-113, 113]), ("no_person.bmp", [57, -57])):
        it.set_input(0, bmp_input(img))
        it.invoke()
        assert it.output(0).reshape(-1).tolist() == expect, img


def test_stateful_sequence(engine):
    """SVDF state carries across invokes exactly as in LiteRT; reset() clears it."""
    md = oracle.read_model("keyword_scrambled.tflite")
    it = make_interp(engine, md)
    ref = oracle.interpreter(md)
    ref.reset_all_variables()
    d = ref.get_input_details()[0]
    rng = np.random.default_rng(7)
    for step in range(4):
        x = rng.integers(-3000, 3000, size=d["shape"]).astype(np.int16)
        it.set_input(0, x)
        it.invoke()
        ref.set_tensor(d["index"], x)
        ref.invoke()
        assert_same(it.output(0), ref.get_tensor(ref.get_output_details()[0]["index"]), "step %d" % step)


@pytest.mark.parametrize("name", ["person_detect.tflite", "hello_world_float.tflite", "keyword_scrambled.tflite"])
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_unaligned_model_and_arena(engine, name, offset):
    """Model at an odd address: constants the kernels read as words are copied; same results."""
    md = oracle.read_model(name)
    ref_it = make_interp(engine, md)
    m = engine.Model(md, offset=offset)
    it = engine.Interpreter(m, arena_offset=offset + 4)
    inputs = sample_inputs(name, md)[0]
    for i, x in enumerate(inputs):
        it.set_input(i, x)
        ref_it.set_input(i, x)
    it.invoke()
    ref_it.invoke()
    for k in range(m.num_outputs):
        assert_same(it.output(k), ref_it.output(k), "output %d" % k)
    assert it.stats()["copied_bytes"] > 0   # int32 biases / float weights were copied


@pytest.mark.parametrize("name", MODELS)
def test_arena_exact(engine, name):
    """The dry-run size works at any alignment; a smaller arena fails naming the same size."""
    md = oracle.read_model(name)
    m = engine.Model(md)
    need = m.arena_needed()
    for off in (0, 1, 7, 15):
        it = engine.Interpreter(m, arena_size=need, arena_offset=off)
        assert it.stats()["needed"] == need
    with pytest.raises(engine.MicronnError) as ei:
        engine.Interpreter(m, arena_size=need - 16)
    assert ei.value.status == engine.ERR_ARENA
    assert ("need %d bytes, have %d" % (need, need - 16)) in str(ei.value)
    # Smaller arenas: the engine sizes the need with a dry run inside the arena it was given, so
    # the figure is exact whenever that dry run fits (and then at every larger size); below that
    # it is a lower bound, said as such, above what was given and never above the real need.
    exact_from = None
    for size in sorted({200, need // 2, need - 16} | {need * k // 20 for k in range(1, 20)}):
        if size < 64:
            continue
        with pytest.raises(engine.MicronnError) as ei:
            engine.Interpreter(m, arena_size=size)
        msg = str(ei.value)
        assert ei.value.status == engine.ERR_ARENA, msg
        if ("arena too small: need %d bytes, have %d" % (need, size)) in msg:
            exact_from = size if exact_from is None else exact_from
            continue
        found = re.search(r"arena too small: need at least (\d+) bytes, have %d\b" % size, msg)
        assert found, msg
        assert size < int(found.group(1)) <= need, msg
        assert exact_from is None, "exact need at %d bytes, only a lower bound at %d: %s" % (exact_from, size, msg)
    assert exact_from is not None


def test_arena_report(engine, capsys):
    """Arena figures (persistent / non-persistent / total) for the report, and their consistency:
    the parts add up to the total (up to the alignment slack), the dry run predicts the total,
    and letting the planner reuse input memory never costs more."""
    rows = []
    for name in MODELS:
        m = engine.Model(oracle.read_model(name))
        needed = {}
        for reuse in (False, True):
            it = engine.Interpreter(m, reuse_inputs=reuse)
            s = it.stats()
            assert s["persistent"] > 0 and s["nonpersistent"] > 0, (name, s)
            assert 0 <= s["needed"] - (s["persistent"] + s["nonpersistent"]) < 16, (name, s)
            assert s["needed"] == m.arena_needed(reuse_inputs=reuse), (name, reuse)
            needed[reuse] = s["needed"]
            rows.append("%-30s reuse_inputs=%d persistent %6d nonpersistent %6d needed %6d" % (
                name, reuse, s["persistent"], s["nonpersistent"], s["needed"]))
        assert needed[True] <= needed[False], name
    with capsys.disabled():
        print("\n" + "\n".join(rows))


def test_profile(engine):
    md = oracle.read_model("person_detect.tflite")
    it = engine.Interpreter(engine.Model(md), profile=True)
    it.set_input(0, bmp_input("person.bmp"))
    it.invoke()
    it.invoke()
    prof = it.profile()
    assert len(prof) == 31
    assert all(p["calls"] == 2 for p in prof)
    conv = sum(p["ticks"] for p in prof if p["name"] in ("CONV_2D", "DEPTHWISE_CONV_2D"))
    assert conv > 0.5 * sum(p["ticks"] for p in prof)


def test_op_list(engine):
    """The engine's op list of person_detect equals the flatbuffer's, read with the TFLite schema."""
    from ai_edge_litert import schema_py_generated as S
    md = oracle.read_model("person_detect.tflite")
    m = engine.Model(md)
    ops = m.ops()
    mt = S.ModelT.InitFromObj(S.Model.GetRootAsModel(md, 0))
    code_names = {v: k for k, v in vars(S.BuiltinOperator).items() if not k.startswith("_")}
    want = []
    for op in mt.subgraphs[0].operators:
        oc = mt.operatorCodes[op.opcodeIndex]
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        want.append((code_names[code], code, oc.version, len(op.inputs), len(op.outputs)))
    got = [(o["name"], o["builtin"], o["version"], o["n_inputs"], o["n_outputs"]) for o in ops]
    assert got == want
    names = [o["name"] for o in ops]
    assert names.count("CONV_2D") == 14 and names.count("DEPTHWISE_CONV_2D") == 14
    assert names[-4:] == ["AVERAGE_POOL_2D", "CONV_2D", "RESHAPE", "SOFTMAX"]
    assert all(o["supported"] for o in ops)
    t = m.tensor(m.input_indices()[0])
    assert t["dtype"] == "int8" and t["shape"] == (1, 96, 96, 1)


def test_hello_world_int8_every_input(engine):
    """All 256 inputs of hello_world_int8: its 16x16 layer has small requantization shifts, so
    rounding ties are frequent and any difference in rounding from the oracle shows up."""
    md = oracle.read_model("hello_world_int8.tflite")
    it = make_interp(engine, md)
    xs = np.arange(-128, 128, dtype=np.int8).reshape(256, 1, 1)
    got = []
    for x in xs:
        it.set_input(0, x)
        it.invoke()
        got.append(int(it.output(0).item()))
    want = [int(oracle.run(md, [x])[0].item()) for x in xs]
    assert got == want
