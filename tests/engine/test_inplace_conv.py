"""Convolutions over their own input (engine/mn_inplace.c, mn_inplace_slide): a CONV_2D,
DEPTHWISE_CONV_2D or pool whose input dies there may write its output over it, starting at most
mn_conv_slide() bytes above it. Random chains of convolutions and pools (int8, int16x8, float32;
strides, dilations, SAME/VALID padding, depth multipliers, batch 2) stay bit-exact against the LiteRT
reference kernels with the engine's planner, with reused inputs and with a stored plan from the
host's search; the plans really overlap and never need more than without overlapping."""
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import graphmodels
import oracle

BO = S.BuiltinOperator
PAD = {"SAME": S.Padding.SAME, "VALID": S.Padding.VALID}


def _out_size(n, f, s, d, padding):
    eff = (f - 1) * d + 1
    return -(-n // s) if padding == "SAME" else (n - eff) // s + 1


def _layer(rng, dtype):
    pools = ["avg", "max"] + (["l2"] if dtype == np.float32 else [])
    return dict(kind=rng.choice(["conv", "dw", "conv", "dw"] + pools), f=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                s=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                d=(1, 1) if rng.random() < 0.8 else (int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                padding=rng.choice(["SAME", "VALID"]), c=int(rng.integers(1, 13)), mult=int(rng.integers(1, 3)))


class _Q:
    """Quantization of one dtype: activation scales/zero points, filters, biases."""

    def __init__(self, dtype):
        self.dtype = dtype

    def act(self, scale):
        if self.dtype == np.float32:
            return {}
        return dict(scale=scale, zp=3 if self.dtype == np.int8 else 0)

    def filt(self, rng, shape):
        if self.dtype == np.float32:
            return rng.uniform(-1, 1, shape).astype(np.float32), {}
        return rng.integers(-127, 128, shape).astype(np.int8), dict(scale=0.02, zp=0)

    def bias(self, rng, n, scale):
        if self.dtype == np.float32:
            return rng.uniform(-1, 1, n).astype(np.float32), {}
        dt = np.int32 if self.dtype == np.int8 else np.int64
        return rng.integers(-2000, 2000, n).astype(dt), dict(scale=scale, zp=0)


def chain_model(rng, dtype, n_layers=3):
    """input -> n_layers random convolutions -> output; None if a layer's output would be empty."""
    q = _Q(dtype)
    b = 2 if rng.random() < 0.2 else 1
    h, w, c = int(rng.integers(3, 13)), int(rng.integers(3, 13)), int(rng.integers(1, 9))
    g = graphmodels.Graph()
    scale = 0.05
    x = g.input("x", dtype, (b, h, w, c), **q.act(scale))
    t = x
    for k in range(n_layers):
        L = _layer(rng, dtype)
        fh, fw = L["f"]
        oh = _out_size(h, fh, L["s"][0], L["d"][0], L["padding"])
        ow = _out_size(w, fw, L["s"][1], L["d"][1], L["padding"])
        if oh < 1 or ow < 1:
            return None
        if L["kind"] in ("avg", "max", "l2"):
            if L["d"] != (1, 1):
                oh = _out_size(h, fh, L["s"][0], 1, L["padding"])
                ow = _out_size(w, fw, L["s"][1], 1, L["padding"])
                if oh < 1 or ow < 1:
                    return None
            o = S.Pool2DOptionsT()
            o.padding = PAD[L["padding"]]
            o.strideH, o.strideW = L["s"]
            o.filterHeight, o.filterWidth = fh, fw
            o.fusedActivationFunction = S.ActivationFunctionType.NONE
            code = {"avg": BO.AVERAGE_POOL_2D, "max": BO.MAX_POOL_2D, "l2": BO.L2_POOL_2D}[L["kind"]]
            # (TFLite's quantized pools keep the input's scale and zero point)
            t = g.op(code, [t], dtype, (b, oh, ow, c), S.BuiltinOptions.Pool2DOptions, o, **q.act(scale))
            h, w = oh, ow
            continue
        if L["kind"] == "dw":
            oc = c * L["mult"]
            f, fq = q.filt(rng, (1, fh, fw, oc))
            o = S.DepthwiseConv2DOptionsT()
            o.depthMultiplier = L["mult"]
            otype, code = S.BuiltinOptions.DepthwiseConv2DOptions, BO.DEPTHWISE_CONV_2D
            taps = fh * fw
        else:
            oc = L["c"]
            f, fq = q.filt(rng, (oc, fh, fw, c))
            o = S.Conv2DOptionsT()
            otype, code = S.BuiltinOptions.Conv2DOptions, BO.CONV_2D
            taps = fh * fw * c
        o.padding = PAD[L["padding"]]
        o.strideH, o.strideW = L["s"]
        o.dilationHFactor, o.dilationWFactor = L["d"]
        o.fusedActivationFunction = S.ActivationFunctionType.NONE
        bias, bq = q.bias(rng, oc, scale * 0.02)
        out_scale = scale * 0.02 * 40 * np.sqrt(taps)   # keeps most outputs inside the int range
        t = g.op(code, [t, g.const(f"f{k}", f, **fq), g.const(f"b{k}", bias, **bq)], dtype, (b, oh, ow, oc),
                 otype, o, **q.act(out_scale))
        h, w, c, scale = oh, ow, oc, out_scale
    g.output(t)
    return g.tflite()


def _input(rng, data):
    d = oracle.input_details(data)[0]
    if d["dtype"] == np.float32:
        return rng.uniform(-1, 1, d["shape"]).astype(np.float32)
    info = np.iinfo(d["dtype"])
    return rng.integers(info.min // 2, info.max // 2, d["shape"]).astype(d["dtype"])


def _run(engine, data, x, **kw):
    it = engine.Interpreter(engine.Model(data), **kw)
    it.set_input(0, x)
    it.invoke()
    return it.get_output(0), it


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float32], ids=["int8", "int16x8", "float32"])
def test_conv_chains_over_their_inputs_bit_exact(engine, dtype):
    from micronn_tools import plan
    rng = np.random.default_rng({np.int8: 1, np.int16: 2, np.float32: 3}[dtype])
    done = slid = 0
    while done < 40:
        data = chain_model(rng, dtype)
        if data is None:
            continue
        done += 1
        x = _input(rng, data)
        want = oracle.run(data, [x])[0]
        apart, it0 = _run(engine, data, x, planner="no_reuse")
        for reuse in (False, True):
            got, it = _run(engine, data, x, reuse_inputs=reuse)
            if dtype == np.float32:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            else:
                assert np.array_equal(got, want), (done, reuse)
            assert np.array_equal(got, apart)
            p = plan.Problem(data, reuse_inputs=reuse)
            pairs = [b for b in p.bufs if b.over is not None]
            slid += bool(pairs)
            # Every allowed overlap is a convolution's output over the input dying there.
            for y in pairs:
                assert p.bufs[y.over].last == y.first and y.shift % 16 == 0
            # The overlaps only ever help: the same buffers planned without them need no less.
            plain = [plan.Buf(b.k, b.tensor, b.scratch, b.size, b.first, b.last) for b in p.bufs]
            assert it.stats()["nonpersistent"] <= plan.peak(plain, plan.plan_ffd(plain, moves=False))
            # The host's search over orders, stored in the model, is used and stays exact.
            res = plan.run_planners(p, names=("optimal",), max_seconds=0.5)
            new = plan.with_offline_plan(data, plan.offline_vector(p, res["optimal"]["offsets"]))
            stored, its = _run(engine, new, x, planner="offline", reuse_inputs=reuse)
            assert np.array_equal(stored, got)
            assert its.stats()["nonpersistent"] == res["optimal"]["arena"]
    assert slid >= 20, slid   # most chains have an input that dies at a convolution


def test_slide_reaches_the_lower_bound_on_a_pointwise_expansion(engine):
    """1x1 convolution 8 -> 16 channels on 24x24 (the first expansion of a MobileNet): its input
    may end one input row above the output's end, so the two take 9,408 bytes, not 13,824."""
    from micronn_tools import plan
    rng = np.random.default_rng(5)
    g = graphmodels.Graph()
    x = g.input("x", np.int8, (1, 24, 24, 8), scale=0.05, zp=3)
    o = S.Conv2DOptionsT()
    o.padding, o.strideH, o.strideW, o.dilationHFactor, o.dilationWFactor = S.Padding.VALID, 1, 1, 1, 1
    a = g.op(BO.DEPTHWISE_CONV_2D, [x, g.const("fa", rng.integers(-127, 128, (1, 1, 1, 8)).astype(np.int8),
                                               scale=0.02, zp=0),
                               g.const("ba", np.zeros(8, np.int32), scale=0.001, zp=0)],
             np.int8, (1, 24, 24, 8), S.BuiltinOptions.DepthwiseConv2DOptions, _dw_opts(), scale=0.05, zp=3)
    y = g.op(BO.CONV_2D, [a, g.const("fb", rng.integers(-127, 128, (16, 1, 1, 8)).astype(np.int8), scale=0.02, zp=0),
                    g.const("bb", np.zeros(16, np.int32), scale=0.001, zp=0)],
             np.int8, (1, 24, 24, 16), S.BuiltinOptions.Conv2DOptions, o, scale=0.1, zp=0)
    g.output(y)
    data = g.tflite()
    xin = _input(rng, data)
    got, it = _run(engine, data, xin, reuse_inputs=True)
    assert np.array_equal(got, oracle.run(data, [xin])[0])
    # x (4,608) dies at the depthwise (a slides below it), then a under y (9,216): a row of a
    # (192 B) sticks out above y
    assert it.stats()["nonpersistent"] == 9216 + 192


def _dw_opts():
    o = S.DepthwiseConv2DOptionsT()
    o.padding, o.strideH, o.strideW, o.depthMultiplier = S.Padding.VALID, 1, 1, 1
    o.dilationHFactor, o.dilationWFactor = 1, 1
    return o
