"""Patch-based execution (engine/mn_patch.c, Interpreter(patches=...)): a chain of early conv /
depthwise / pool ops runs in bands of output rows, so its inner activations never exist in full.
Outputs are bit-exact with the unbanded run and LiteRT's reference kernels (float32 within
1e-5), for every planner, with reference and optimized kernels; the arena is sized exactly by the
dry run; a model with no helpful stage is unchanged."""
import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import oracle

BO = S.BuiltinOperator
SAME, VALID = 0, 1
MODELS = ["hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
          "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "simple_add_model.tflite",
          "trained_lstm_int8.tflite"]
PLANNERS = ("greedy", "no_reuse", "offline")


def inputs_for(engine, data, n=2, seed=5):
    m = engine.Model(data)
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(n):
        one = []
        for i in m.input_indices():
            d = m.tensor(i)
            if np.dtype(d["dtype"]).kind == "f":
                one.append(rng.normal(0, 1, size=d["shape"]).astype(np.float32))
            else:
                info = np.iinfo(d["dtype"])
                one.append(rng.integers(max(info.min, -3000), min(info.max, 3000) + 1,
                                        size=d["shape"]).astype(d["dtype"]))
        sets.append(one)
    return sets


def run(engine, data, inputs, **kw):
    it = engine.Interpreter(engine.Model(data), **kw)
    outs = []
    for one in inputs:
        for i, x in enumerate(one):
            it.set_input(i, x)
        it.reset()   # (stateful models: each input set from the start, as the oracle runs it)
        it.invoke()
        outs.append([it.output(k).copy() for k in range(it.num_outputs)])
    return it, outs


def same(a, b, what):
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert u.shape == v.shape, what
            if v.dtype.kind == "f":
                np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6, err_msg=what)
            else:
                assert np.array_equal(u, v), what


# ---- chains of conv-like ops ----------------------------------------------------------------------

class Chain:
    """A chain of CONV_2D / DEPTHWISE_CONV_2D / pooling ops on one NHWC input (batch 1), int8 with
    per-channel (or per-tensor) weights, or float32; optionally a tail op reading the last output."""

    def __init__(self, rng, dtype="int8", h=11, w=9, c=3):
        self.rng, self.dtype = rng, np.dtype(dtype)
        self.tensors, self.buffers, self.ops, self.codes = [], [S.BufferT()], [], []
        self.shape = (1, h, w, c)
        self.wide = self.dtype == np.int16   # int16x8: int16 activations (zero point 0), int64 bias
        self.q = None
        if self.quant:
            self.q = (float(rng.uniform(1e-4, 8e-4)), 0) if self.wide else \
                (float(rng.uniform(0.02, 0.08)), int(rng.integers(-40, 41)))
        self.x = self._tensor("x", self.shape, self.dtype, q=self.q)
        self.cur = self.x
        self.desc = []

    @property
    def quant(self):
        return self.dtype != np.float32

    def _tensor(self, name, shape, dtype, data=None, q=None, scales=None, qdim=0):
        t = S.TensorT()
        t.name = name.encode()
        t.shape = np.array(shape, dtype=np.int32)
        t.type = {np.dtype(np.int8): S.TensorType.INT8, np.dtype(np.int32): S.TensorType.INT32,
                  np.dtype(np.int16): S.TensorType.INT16, np.dtype(np.int64): S.TensorType.INT64,
                  np.dtype(np.float32): S.TensorType.FLOAT32}[np.dtype(dtype)]
        t.buffer = 0
        if data is not None:
            b = S.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(data, dtype=dtype).tobytes(), dtype=np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if q is not None or scales is not None:
            qp = S.QuantizationParametersT()
            sc = [q[0]] if q is not None else list(scales)
            qp.scale = np.array(sc, dtype=np.float32)
            qp.zeroPoint = np.array([q[1]] if q is not None else [0] * len(sc), dtype=np.int64)
            qp.quantizedDimension = qdim
            t.quantization = qp
        self.tensors.append(t)
        return len(self.tensors) - 1

    def _op(self, code, inputs, out_shape, opt_type, opts, q):
        if code not in self.codes:
            self.codes.append(code)
        out = self._tensor(f"t{len(self.tensors)}", out_shape, self.dtype, q=q)
        o = S.OperatorT()
        o.opcodeIndex = self.codes.index(code)
        o.inputs = np.array(inputs, dtype=np.int32)
        o.outputs = np.array([out], dtype=np.int32)
        o.builtinOptionsType, o.builtinOptions = opt_type, opts
        self.ops.append(o)
        self.cur, self.shape = out, out_shape
        return out

    @staticmethod
    def out_size(padding, n, k, s, d=1):
        eff = (k - 1) * d + 1
        return (n + s - 1) // s if padding == SAME else (n - eff + s) // s

    def _weights(self, cout, taps, wshape, qdim, per_channel):
        rng = self.rng
        if not self.quant:
            return (self._tensor(f"w{len(self.tensors)}", wshape, np.float32, data=rng.normal(0, 0.4, wshape)),
                    self._tensor(f"b{len(self.tensors)}", (cout,), np.float32, data=rng.normal(0, 0.3, cout)), None)
        nsc = cout if per_channel else 1
        ws = rng.uniform(0.003, 0.02, nsc)
        w = self._tensor(f"w{len(self.tensors)}", wshape, np.int8, data=rng.integers(-127, 128, wshape),
                         scales=ws, qdim=qdim)
        in_scale = self.q[0]
        bsc = [in_scale * float(np.float32(s)) for s in (ws if per_channel else [ws[0]] * cout)]
        acc = np.sqrt(taps) * (8000 if self.wide else 60) * 60 * in_scale * float(np.mean(ws))
        bdt = np.int64 if self.wide else np.int32
        bq = np.round(rng.normal(0, acc, cout) / np.array(bsc)).astype(bdt)
        b = self._tensor(f"b{len(self.tensors)}", (cout,), bdt, data=bq, scales=bsc)
        out_q = (float(acc * 1.4 * 8 / 65535), 0) if self.wide else (float(acc * 1.4 * 8 / 255), int(rng.integers(-20, 21)))
        return w, b, out_q

    def conv(self, cout, k=3, s=1, padding=SAME, act=0, per_channel=True, kw=None, dil=1):
        _, h, w, c = self.shape
        kw = kw or k
        wt, b, q = self._weights(cout, k * kw * c, (cout, k, kw, c), 0, per_channel)
        o = S.Conv2DOptionsT()
        o.padding, o.strideW, o.strideH, o.fusedActivationFunction = padding, s, s, act
        o.dilationWFactor = o.dilationHFactor = dil
        shape = (1, self.out_size(padding, h, k, s, dil), self.out_size(padding, w, kw, s, dil), cout)
        self.desc.append(f"conv{k}x{kw}s{s}d{dil}{'SV'[padding]}->{cout}")
        self._op(BO.CONV_2D, [self.cur, wt, b], shape, S.BuiltinOptions.Conv2DOptions, o, q)
        self.q = q
        return self

    def dw(self, mult=1, k=3, s=1, padding=SAME, act=0, per_channel=True, dil=1):
        _, h, w, c = self.shape
        cout = c * mult
        wt, b, q = self._weights(cout, k * k, (1, k, k, cout), 3, per_channel)
        o = S.DepthwiseConv2DOptionsT()
        o.padding, o.strideW, o.strideH, o.depthMultiplier, o.fusedActivationFunction = padding, s, s, mult, act
        o.dilationWFactor = o.dilationHFactor = dil
        shape = (1, self.out_size(padding, h, k, s, dil), self.out_size(padding, w, k, s, dil), cout)
        self.desc.append(f"dw{k}s{s}d{dil}{'SV'[padding]}x{mult}")
        self._op(BO.DEPTHWISE_CONV_2D, [self.cur, wt, b], shape, S.BuiltinOptions.DepthwiseConv2DOptions, o, q)
        self.q = q
        return self

    def pool(self, kind, k=2, s=2, padding=VALID):
        _, h, w, c = self.shape
        o = S.Pool2DOptionsT()
        o.padding, o.strideW, o.strideH, o.filterWidth, o.filterHeight = padding, s, s, k, k
        shape = (1, self.out_size(padding, h, k, s), self.out_size(padding, w, k, s), c)
        self.desc.append(f"{kind}{k}s{s}{'SV'[padding]}")
        self._op(BO.MAX_POOL_2D if kind == "max" else BO.AVERAGE_POOL_2D, [self.cur], shape,
                 S.BuiltinOptions.Pool2DOptions, o, self.q)
        return self

    def tflite(self, outputs=None):
        m = S.ModelT()
        m.version = 3
        m.operatorCodes = []
        for c in self.codes:
            oc = S.OperatorCodeT()
            oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = c, min(c, 127), 1
            m.operatorCodes.append(oc)
        sg = S.SubGraphT()
        sg.tensors, sg.operators = self.tensors, self.ops
        sg.inputs = np.array([self.x], dtype=np.int32)
        sg.outputs = np.array(outputs or [self.cur], dtype=np.int32)
        sg.name = b"main"
        m.subgraphs, m.buffers = [sg], self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def random_chain(seed, dtype="int8"):
    rng = np.random.default_rng(seed)
    ch = Chain(rng, dtype, h=int(rng.integers(7, 20)), w=int(rng.integers(5, 14)), c=int(rng.integers(1, 5)))
    for _ in range(int(rng.integers(2, 6))):
        kind = rng.choice(["conv", "dw", "pool"], p=[0.45, 0.4, 0.15])
        pad = int(rng.integers(0, 2))
        s = int(rng.choice([1, 2]))
        k = int(rng.choice([1, 3, 5]))
        _, h, w, _ = ch.shape
        dil = 2 if k > 1 and s == 1 and rng.integers(0, 4) == 0 else 1   # (TFLite: dilation with stride 1)
        if (k - 1) * dil + 1 > min(h, w):
            pad = SAME   # VALID would leave nothing
        if kind == "pool" and 3 > min(h, w):
            kind = "dw"
        if kind == "conv":
            ch.conv(int(rng.integers(1, 7)), k=k, s=s, padding=pad, act=int(rng.integers(0, 4)),
                    per_channel=bool(rng.integers(0, 2)), kw=int(rng.choice([1, 3])) if k != 1 else 1, dil=dil)
        elif kind == "dw":
            ch.dw(int(rng.choice([1, 2])), k=k, s=s, padding=pad, act=int(rng.integers(0, 4)),
                  per_channel=bool(rng.integers(0, 2)), dil=dil)
        else:
            pk = int(rng.choice([2, 3]))
            if rng.integers(0, 2):
                ch.pool("max", k=pk, s=s, padding=pad)
            else:
                ch.pool("avg", k=pk, s=pk, padding=VALID)   # no padding: AVG is bandable
        if min(ch.shape[1], ch.shape[2]) < 2:
            break
    return ch


def stages(n_ops, height, rng):
    """(first, last, rows) samples: whole chain, rows 1, a middle value, H not a multiple of rows."""
    out = {(0, n_ops - 1, 1), (0, n_ops - 1, height), (0, n_ops - 1, max(1, height // 2 + 1))}
    for _ in range(3):
        first = int(rng.integers(0, n_ops))
        last = int(rng.integers(first, n_ops))
        out.add((first, last, int(rng.integers(1, height + 1))))
    return sorted(out)


def stage_height(engine, data, last):
    m = engine.Model(data)
    return m.tensor(m.op_tensors(last, engine.OP_OUTPUTS)[0])["shape"][1]


@pytest.mark.parametrize("seed", range(32))
def test_random_chains_bit_exact(engine, seed):
    ch = random_chain(seed, ("float32", "int16", "int8", "int8")[seed % 4])
    data = ch.tflite()
    n = len(ch.ops)
    inputs = inputs_for(engine, data, 2, seed)
    want = [oracle.run(data, one) for one in inputs]
    rng = np.random.default_rng(seed)
    for first, last, rows in stages(n, 1, rng):
        h = stage_height(engine, data, last)
        for r in sorted({1, rows if rows <= h else h, h, max(1, (h + 1) // 2), engine.PATCH_STREAM}):
            st = (first, last, r)
            for planner in PLANNERS:
                for reference in (False, True):
                    kw = dict(planner=planner, reference=reference)
                    it, got = run(engine, data, inputs, patches=st, **kw)
                    same(got, want, f"{ch.desc} stage {st} {kw}")
                    assert it.patch()["rows"] == r
            need = engine.Model(data).arena_needed(patches=st)
            engine.Interpreter(engine.Model(data), arena_size=need, patches=st)
            with pytest.raises(engine.MicronnError) as ei:
                engine.Interpreter(engine.Model(data), arena_size=need - 16, patches=st)
            assert ei.value.status == engine.ERR_ARENA


def mobilenet_like(seed=3, h=48, w=48):
    rng = np.random.default_rng(seed)
    ch = Chain(rng, "int8", h=h, w=w, c=1)
    ch.dw(8, k=3, s=2).dw(1).conv(16, k=1).dw(1, s=2).conv(32, k=1).dw(1).conv(32, k=1)
    ch.pool("avg", k=2, s=2)
    ch.conv(4, k=1)
    return ch


def test_choice_on_a_mobilenet_like_chain(engine):
    data = mobilenet_like().tflite()
    m = engine.Model(data)
    for reuse in (False, True):
        c = m.patch_choice(reuse_inputs=reuse)
        assert c is not None and c["first"] == 0 and c["arena"] < c["arena_without"]
        assert c["arena_without"] == m.arena_needed(reuse_inputs=reuse)
        assert c["arena"] == m.arena_needed(reuse_inputs=reuse, patches=c)
        if c["stream"]:
            assert c["bands"] == 1 and c["macs_patched"] == c["macs"] > 0
        else:
            assert 1 <= c["rows"] <= c["height"] and c["bands"] == -(-c["height"] // c["rows"])
            assert c["macs_patched"] >= c["macs"] > 0
        inputs = inputs_for(engine, data, 2)
        want = [oracle.run(data, one) for one in inputs]
        it, got = run(engine, data, inputs, reuse_inputs=reuse, patches=True)
        same(got, want, "mobilenet-like")
        assert it.stats()["needed"] == c["arena"]
        assert it.patch()["first"] == c["first"] and it.patch()["last"] == c["last"]


@pytest.mark.parametrize("name", MODELS)
def test_shared_models(engine, name):
    data = oracle.read_model(name)
    m = engine.Model(data)
    choice = m.patch_choice()
    inputs = inputs_for(engine, data, 2)
    want = [oracle.run(data, one) for one in inputs]
    for planner in PLANNERS:
        for reference in (False, True):
            kw = dict(planner=planner, reference=reference)
            it0, base = run(engine, data, inputs, **kw)
            it1, got = run(engine, data, inputs, patches=True, **kw)
            same(got, want, f"{name} patches {kw}")
            same(base, want, f"{name} {kw}")
            if choice is None:
                assert it1.patch() is None
                assert it1.stats() == it0.stats(), name   # no stage: exactly as without
    if name == "person_detect.tflite":
        assert choice is not None and choice["arena"] < choice["arena_without"]
    else:
        assert choice is None, (name, choice)


def person_numbers(engine):
    m = engine.Model(oracle.read_model("person_detect.tflite"))
    return {reuse: (m.arena_needed(reuse_inputs=reuse), m.patch_choice(reuse_inputs=reuse)) for reuse in (False, True)}


def test_person_detect_arena(engine):
    """The early 48x48 activations of person_detect (48x48x8 + 48x48x16 alive = 55,296 bytes) go:
    the stage reaches the first 12x12 layer, and the arena shrinks by more than a fifth."""
    for reuse, (without, c) in person_numbers(engine).items():
        assert c["arena_without"] == without
        assert c["arena"] < 0.8 * without, (reuse, c)
        it = engine.Interpreter(engine.Model(oracle.read_model("person_detect.tflite")), reuse_inputs=reuse,
                                patches=True)
        st = it.stats()
        assert st["needed"] == c["arena"]
        # nothing of the 48x48 activations is planned: the peak is far below one of them plus the input
        assert st["nonpersistent"] < 96 * 96 + 48 * 48 * 16, st
        x = np.frombuffer(open(oracle.model_path("person.bmp"), "rb").read()[-96 * 96:], np.int8)
        it.set_input(0, x.reshape(1, 96, 96, 1))
        it.invoke()
        want = oracle.run(oracle.read_model("person_detect.tflite"), [x.reshape(1, 96, 96, 1)])[0]
        assert np.array_equal(it.output(0), want)


def test_halo_rows_matter(engine):
    """Each band needs its halo: the same chain with a band one row taller or shorter than the
    receptive field gives the same output (the engine computes the halo, it is not a guess), and
    every stage of a deep chain stays bit-exact at every band height."""
    data = mobilenet_like(7, 23, 17).tflite()
    inputs = inputs_for(engine, data, 1)
    want = [oracle.run(data, one) for one in inputs]
    h = stage_height(engine, data, 6)
    for last in range(1, 9):
        for r in list(range(1, h + 1)) + [engine.PATCH_STREAM]:
            _, got = run(engine, data, inputs, patches=(0, last, r))
            same(got, want, f"stage 0..{last} rows {r}")


def test_streaming_has_no_recompute_and_bands_do(engine):
    m = engine.Model(mobilenet_like().tflite())
    it = engine.Interpreter(m, patches=(0, 6, engine.PATCH_STREAM))
    c = it.patch()
    assert c["stream"] and c["macs_patched"] == c["macs"] and c["recompute"] == 0
    it = engine.Interpreter(m, patches=(0, 6, 1))
    c = it.patch()
    assert not c["stream"] and c["bands"] == c["height"] and c["macs_patched"] > c["macs"]


def test_bad_stages_are_refused(engine):
    ch = mobilenet_like()
    data = ch.tflite(outputs=[ch.cur, ch.ops[2].outputs[0]])   # op 2's output is a model output
    m = engine.Model(data)
    with pytest.raises(engine.MicronnError, match=r"patch stage \(ops 0\.\.4\): op 2 CONV_2D: its output is read"):
        engine.Interpreter(m, patches=(0, 4, 1))
    engine.Interpreter(m, patches=(3, 6, 2))   # a stage after it is fine
    with pytest.raises(engine.MicronnError, match="the model has 9 ops"):
        engine.Interpreter(engine.Model(ch.tflite()), patches=(5, 9, 1))
    rng = np.random.default_rng(1)
    pad_avg = Chain(rng, "int8", 9, 9, 2).dw(1).pool("avg", k=3, s=2, padding=SAME)
    with pytest.raises(engine.MicronnError, match="AVERAGE_POOL_2D that pads"):
        engine.Interpreter(engine.Model(pad_avg.tflite()), patches=(0, 1, 1))


def test_plan_cli_patches(engine, tmp_path):
    """`micronn plan --patches` reports the stage; --write stores it with the plan (and the
    tables): the written model then runs its stage with patches=True, bit-exact, in the arena
    the plan predicts."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(engine.__file__), ".."))
    src = oracle.model_path("person_detect.tflite")
    out = tmp_path / "pd.tflite"
    cli = [sys.executable, "-m", "micronn_tools.cli", "plan", src, "--patches", "--reuse-inputs",
           "--max-seconds", "2"]
    r = subprocess.run(cli + ["--write", str(out), "--tables"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    c = engine.Model(oracle.read_model("person_detect.tflite")).patch_choice(reuse_inputs=True)
    assert f"patch stage: ops 0 DEPTHWISE_CONV_2D .. {c['last']} " in r.stdout
    assert f"{c['arena']:,} / {c['arena_without']:,}" in r.stdout
    assert "recomputed MACs" in r.stdout and "micronn_patch_v1" in r.stdout + r.stderr
    data = out.read_bytes()
    m = engine.Model(data)
    stored = m.patch_choice(planner="offline", reuse_inputs=True)
    assert (stored["first"], stored["last"], stored["rows"]) == (c["first"], c["last"], c["rows"])
    x = [np.frombuffer(open(oracle.model_path("person.bmp"), "rb").read()[-96 * 96:], np.int8).reshape(1, 96, 96, 1)]
    it, got = run(engine, data, [x], planner="offline", reuse_inputs=True, patches=True)
    same(got, [oracle.run(oracle.read_model("person_detect.tflite"), x)], "written model")
    assert it.stats()["nonpersistent"] == engine.Interpreter(
        engine.Model(oracle.read_model("person_detect.tflite")), reuse_inputs=True, patches=c).stats()["nonpersistent"]
    r = subprocess.run(cli[:-4] + ["--json", "--patches"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    import json
    rep = json.loads(r.stdout)["patch"]
    assert rep["arena_without"] > rep["arena"] and rep["stage"]["ops"][0] == "0 DEPTHWISE_CONV_2D"
    r = subprocess.run(cli[:4] + [oracle.model_path("hello_world_int8.tflite"), "--patches"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0 and "patch stage: none needs less arena" in r.stdout, r.stdout + r.stderr
