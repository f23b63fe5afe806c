"""int16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (int16 activations, int8 weights, int64 or
int32 bias), TRANSPOSE_CONV and BATCH_MATMUL against LiteRT's reference kernels: bit-exact for
integers, 1e-5 relative for float32; outputs checked not to be mostly saturated."""
import numpy as np
import pytest

import models_conv as MC
import opmodels as M
from runners import run_oracle, run_tflm
from test_op_kernels import check

PAD = (M.SAME, M.VALID)
BIAS = (np.int64, np.int32)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((1, 3), (2, 1)), ((2, 1), (2, 3))])
@pytest.mark.parametrize("act", M.ACTS)
def test_conv2d_16x8(runner, rng, bias, padding, stride, dil, act):
    m = MC.conv2d_16x8(rng, bias, n=2, h=int(rng.integers(6, 10)), w=int(rng.integers(6, 10)),
                       cin=int(rng.integers(1, 5)), cout=int(rng.integers(1, 6)), fh=int(rng.integers(1, 4)),
                       fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding, act=act,
                       per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
def test_conv2d_16x8_groups(runner, rng, bias):
    m = MC.conv2d_16x8(rng, bias, n=1, h=6, w=7, cin=8, cout=6, groups=2, per_channel=True)
    check(runner, rng, m)


@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (2, 2))])
@pytest.mark.parametrize("act", M.ACTS)
def test_depthwise_16x8(runner, rng, padding, stride, dil, act):
    m = MC.depthwise_16x8(rng, n=2, h=int(rng.integers(6, 10)), w=int(rng.integers(6, 10)),
                          cin=int(rng.integers(1, 5)), mult=int(rng.integers(1, 4)), fh=int(rng.integers(1, 4)),
                          fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding, act=act,
                          per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS + (None,), ids=lambda b: np.dtype(b).name if b else "nobias")
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", M.ACTS)
def test_fully_connected_16x8(runner, rng, bias, per_channel, act):
    m = MC.fully_connected_16x8(rng, bias or np.int64, in_shape=(2, 3, 24), units=7, act=act,
                                per_channel=per_channel, bias=bias is not None, keep_num_dims=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
def test_fully_connected_16x8_weights_zero_point(runner, rng, bias):
    m = MC.fully_connected_16x8(rng, bias, weights_zp=-5, in_shape=(4, 40), units=9)
    check(runner, rng, m)


def test_fully_connected_16x8_large_bias(runner, rng):
    """Accumulators beyond int32 (an int64 bias of +-2^35): the int64 requantization is exact."""
    m = MC.fully_connected_16x8(rng, np.int64, in_shape=(3, 16), units=6)
    m.tensors[2].data = rng.integers(-2 ** 35, 2 ** 35, 6).astype(np.int64)
    m.tensors[3].scale = [float(2 ** 35 * m.tensors[0].scale[0] * m.tensors[1].scale[0] / 20000)]
    check(runner, rng, m)


def _refused(runner, m, words):
    ins = [M.random_input(np.random.default_rng(0), m.tensors[i]) for i in m.graph_inputs]
    with pytest.raises(Exception) as e:
        runner(m, ins)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_depthwise_16x8_int32_bias_refused(runner, rng):
    """TFLite's DEPTHWISE_CONV_2D takes only an int64 bias with int16 input."""
    m = MC.depthwise_16x8(rng, np.int32, n=1, h=5, w=5, cin=2, mult=1)
    with pytest.raises(Exception):
        run_oracle(m, [M.random_input(rng, m.tensors[0])])
    _refused(runner, m, ["bias", "int32"])


@pytest.mark.parametrize("which", [0, 3])
def test_16x8_nonzero_zero_point_refused(runner, rng, which):
    m = MC.conv2d_16x8(rng, n=1, h=5, w=5, cin=2, cout=2)
    m.tensors[which].zp = [3]
    _refused(runner, m, ["zero point"])


# ---- TRANSPOSE_CONV -----------------------------------------------------------------------------

TCONV_DTYPES = ("int8", "float32", "int16x8-int64", "int16x8-int32")


def _tconv(rng, dtype, **kw):
    if dtype.startswith("int16x8"):
        return MC.transpose_conv_16x8(rng, np.int64 if dtype.endswith("int64") else np.int32, **kw)
    return MC.transpose_conv(rng, dtype, **kw)


@pytest.mark.parametrize("dtype", TCONV_DTYPES)
@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (3, 2)])
@pytest.mark.parametrize("act", M.ACTS)
def test_transpose_conv(runner, rng, dtype, padding, stride, act):
    m = _tconv(rng, dtype, n=2, h=int(rng.integers(2, 6)), w=int(rng.integers(2, 6)), cin=int(rng.integers(1, 4)),
               cout=int(rng.integers(1, 5)), fh=int(rng.integers(1, 5)), fw=int(rng.integers(1, 5)), stride=stride,
               padding=padding, act=act, per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("dtype", TCONV_DTYPES)
def test_transpose_conv_no_bias(runner, rng, dtype):
    m = _tconv(rng, dtype, n=1, h=4, w=3, cin=2, cout=3, fh=3, fw=2, stride=(2, 1), bias=False)
    check(runner, rng, m)


@pytest.mark.parametrize("dtype", ("int8", "float32"))
@pytest.mark.parametrize("out_hw", [(9, 8), (10, 7)])
def test_transpose_conv_output_sizes(runner, rng, dtype, out_hw):
    """Output sizes other than in * stride (the extra rows get no or partial taps)."""
    m = _tconv(rng, dtype, n=1, h=4, w=3, cin=3, cout=2, fh=3, fw=3, stride=(2, 2), padding=M.VALID, out_hw=out_hw)
    check(runner, rng, m)


def test_transpose_conv_shape_mismatch_refused(runner, rng):
    m = MC.transpose_conv(rng, "int8", n=1, h=4, w=3, cin=2, cout=2)
    m.tensors[0].data = np.array([1, 9, 6, 2], np.int32)
    _refused(runner, m, ["output shape"])


# ---- BATCH_MATMUL -------------------------------------------------------------------------------

BMM_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 7), (7, 5)), ((3, 4), (2, 2, 4, 5)),
              ((2, 1, 3, 4), (1, 3, 4, 2)), ((1, 2, 2, 3, 6), (2, 1, 6, 3))]


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("shapes", BMM_SHAPES, ids=str)
@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True), (True, True)], ids=str)
def test_batch_matmul(runner, rng, dtype, shapes, adj):
    lhs, rhs = list(shapes[0]), list(shapes[1])
    if adj[0]:
        lhs[-1], lhs[-2] = lhs[-2], lhs[-1]
    if adj[1]:
        rhs[-1], rhs[-2] = rhs[-2], rhs[-1]
    m = MC.batch_matmul(rng, dtype, tuple(lhs), tuple(rhs), *adj, rhs_const=bool(rng.integers(0, 2)))
    check(runner, rng, m)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_batch_matmul_constant_rhs(runner, rng, dtype):
    m = MC.batch_matmul(rng, dtype, (4, 3, 16), (16, 8), rhs_const=True)
    check(runner, rng, m)


def test_batch_matmul_mismatched_depth_refused(runner, rng):
    m = MC.batch_matmul(rng, "float32", (2, 3, 4), (2, 4, 5))
    m.tensors[1].shape = (2, 5, 5)
    _refused(runner, m, ["do not multiply"])


def test_batch_matmul_hybrid_refused(runner, rng):
    """Hybrid BATCH_MATMUL runs (test_op_hybrid.py), but only with a per-tensor symmetric rhs."""
    m = MC.batch_matmul(rng, "float32", (3, 4), (4, 5))
    m.tensors[1] = M.T("rhs", np.int8, (4, 5), data=np.ones((4, 5), np.int8), scale=[0.1], zp=[3])
    _refused(runner, m, ["hybrid", "zero point"])


# ---- the int16x8 model class of issue 8 ---------------------------------------------------------

# Ops of a public set of single-op int16x8 models (16-bit activations, 8-bit weights) and the
# opcode version TFLite's converter gives each in that form (op_version.cc).
INT16X8_CLASS = {("STRIDED_SLICE", "int16"): 1, ("LEAKY_RELU", "int16"): 2, ("PAD", "int16"): 3,
                 ("SUB", "int16"): 5, ("ADD", "int16"): 3, ("TRANSPOSE_CONV", "int16x8"): 3,
                 ("CONV_2D", "int16x8"): 4, ("DEPTHWISE_CONV_2D", "int16x8"): 5,
                 ("FULLY_CONNECTED", "int16x8"): 6, ("QUANTIZE", "int32->int16"): 2,
                 ("BATCH_MATMUL", "int16"): 3}


def test_int16x8_class_is_supported(tmp_path):
    """tools/gen_op_models.py writes the int16x8 form of each op of the class; `micronn inspect`
    (cmd_inspect.collect, the --json report) finds every operator supported at its converter version."""
    import json
    import sys
    from pathlib import Path
    E = pytest.importorskip("micronn_tools.engine")
    from micronn_tools import cmd_inspect
    try:
        E.kernels()
    except OSError as e:
        pytest.fail(f"no engine library: {e}")
    from ai_edge_litert import schema_py_generated as S
    import flatbuffers
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    import gen_op_models as G
    ops = sorted({op for op, _ in INT16X8_CLASS})
    assert G.main([str(tmp_path), "--seed", "3"] + [a for op in ops for a in ("--op", op)]) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    seen = set()
    for name, e in index.items():
        key = (e["op"], e["dtypes"])
        if key not in INT16X8_CLASS:
            continue
        seen.add(key)
        mt = S.ModelT.InitFromObj(S.Model.GetRootAsModel((tmp_path / name).read_bytes(), 0))
        mt.operatorCodes[0].version = INT16X8_CLASS[key]
        b = flatbuffers.Builder(1024)
        b.Finish(mt.Pack(b), file_identifier=b"TFL3")
        (tmp_path / name).write_bytes(bytes(b.Output()))
        r = cmd_inspect.collect(str(tmp_path / name))
        assert r["supported"], (name, r["unsupported"])
        assert r["operators"][0]["version"] == INT16X8_CLASS[key]
    assert seen == set(INT16X8_CLASS)


@pytest.mark.parametrize("dims", [dict(), dict(batches=1, input_size=40, units=16, rank=1, memory=8),
                                  dict(batches=3, input_size=7, units=3, rank=3, memory=1),
                                  dict(act=M.ACT_NONE, memory=10)])
def test_svdf_int8_weights_time_bit_exact_with_tflm(runner, rng, dims):
    """int8 SVDF with int8 weights_time and state (TFLM's EvalIntegerSvdfReference<int8_t>, what a
    converted int8 hotword model holds): LiteRT's reference reads both as int16, so TFLM is the
    oracle. Several invokes: the int8 state carries each filter's memory from one to the next."""
    m = M.svdf(rng, "int8", time_dtype=np.int8, **dims)
    check(runner, rng, m, invokes=4, oracle=run_tflm)


def test_svdf_int8_weights_time_without_bias(runner, rng):
    """No bias: TFLM's int8 prepare reads the bias's scale unconditionally (it crashes without one),
    so the oracle runs the same model with an all-zero bias, which is what no bias means."""
    m = M.svdf(rng, "int8", time_dtype=np.int8, memory=6)
    m.tensors[3].data = np.zeros_like(m.tensors[3].data)
    ins = [[M.random_input(rng, m.tensors[0])] for _ in range(4)]
    want = run_tflm(m, ins, 4)
    m.inputs[3] = -1
    got = runner(m, ins, 4)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g[0]).reshape(w[0].shape), w[0])
    assert len(np.unique(want[-1][0])) > 2


def test_svdf_int16_weights_time_tflm_agrees_with_litert(rng):
    """The two oracles agree on TFLite's int16 path (the test above relies on TFLM's SVDF)."""
    m = M.svdf(rng, "int8")
    ins = [[M.random_input(rng, m.tensors[0])] for _ in range(3)]
    for w, t in zip(run_oracle(m, ins, 3), run_tflm(m, ins, 3)):
        np.testing.assert_array_equal(w[0], t[0])


def test_svdf_int8_mixed_state_refused(runner, rng):
    """An int16 state with int8 weights_time: TFLM would read the state as int8 whatever its type."""
    m = M.svdf(rng, "int8", time_dtype=np.int8)
    m.tensors[4].dtype = np.dtype(np.int16)
    _refused(runner, m, ["activation_state", "int16", "weights_time", "int8"])


def test_svdf_int16_weights_time_act_none_bit_exact_with_tflm(runner, rng):
    """LiteRT refuses an integer SVDF whose activation is not RELU; TFLM runs NONE (no activation,
    what the kernel computes anyway)."""
    check(runner, rng, M.svdf(rng, "int8", act=M.ACT_NONE), invokes=3, oracle=run_tflm)




def _runtime_shape(m):
    """The output shape as a graph input (what a converter's SHAPE -> PACK chain amounts to)."""
    shape = np.asarray(m.tensors[0].data, np.int32)
    m.tensors[0].data = None

    def gen(rng, t):
        return shape.copy() if t.name == "output_shape" else M.random_input(rng, t)
    return m, gen, shape


@pytest.mark.parametrize("dtype", TCONV_DTYPES)
def test_transpose_conv_runtime_output_shape(runner, rng, dtype):
    """An output shape computed at run time (public int16x8 models carry one): taken from the output
    tensor as TFLM does, bit-exact with LiteRT (which resizes the output to it)."""
    m, gen, _ = _runtime_shape(_tconv(rng, dtype, n=1, h=4, w=5, cin=3, cout=4, fh=3, fw=3, stride=(2, 2)))
    assert m.graph_inputs[0] == 0
    check(runner, rng, m, gen=gen)


def test_transpose_conv_runtime_output_shape_must_match(runner, rng):
    """A run-time shape that differs from the output tensor (the arena holds that one) fails the
    invoke with both shapes named, rather than writing a wrongly shaped output."""
    m, _, shape = _runtime_shape(MC.transpose_conv(rng, "int8", n=1, h=4, w=3, cin=2, cout=2))
    bad = shape.copy()
    bad[1] += 1
    with pytest.raises(Exception) as e:
        runner(m, [bad] + [M.random_input(rng, m.tensors[i]) for i in m.graph_inputs[1:]])
    assert "at run time" in str(e.value) and str(bad.tolist()).replace(" ", "") in str(e.value).replace(" ", ""), \
        str(e.value)
