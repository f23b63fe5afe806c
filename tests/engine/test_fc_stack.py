"""A stack of int8 FULLY_CONNECTED layers shaped like MLPerf Tiny's anomaly-detection
autoencoder (640 -> 128 x4 -> 8 -> 128 x4 -> 640): outputs bit-exact with LiteRT's reference
kernels, and nothing kept in the arena per output unit (the input offset is added as inputs are
loaded, not folded into a per-unit constant), so every layer's persistent data is the same size
and the activations are the only thing that grows with the layer widths."""
import numpy as np
import pytest

import oracle
from graphmodels import BO, Graph, S

DIMS = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]


def _model(seed=0, dims=DIMS):
    rng = np.random.default_rng(seed)
    g = Graph()
    x = g.input("in", np.int8, (1, dims[0]), scale=0.05, zp=-10)
    for i, (n_in, n_out) in enumerate(zip(dims, dims[1:])):
        last = i == len(dims) - 2
        # weights scaled like a trained layer's (|w| well inside int8), biases a few LSBs of acc
        w = g.const(f"w{i}", np.clip(rng.normal(0, 40, (n_out, n_in)), -127, 127).astype(np.int8),
                    scale=0.02 / np.sqrt(n_in), zp=0)
        b = g.const(f"b{i}", rng.integers(-3000, 3000, (n_out,), dtype=np.int32),
                    scale=0.05 * 0.02 / np.sqrt(n_in), zp=0)
        o = S.FullyConnectedOptionsT()
        o.fusedActivationFunction = 0 if last else 1   # RELU
        x = g.op(BO.FULLY_CONNECTED, [x, w, b], np.int8, (1, n_out), S.BuiltinOptions.FullyConnectedOptions, o,
                 scale=0.05, zp=3 if last else -128)
    g.output(x)
    return g.tflite()


def _inputs(n=DIMS[0]):
    # a smooth, spectrum-like vector (what the autoencoder sees: log-mel frames) and random bytes
    t = np.arange(n)
    smooth = (60 * np.sin(t / 17.0) + 30 * np.cos(t / 5.0)).round().astype(np.int8).reshape(1, -1)
    noise = np.random.default_rng(1).integers(-128, 128, (1, n), dtype=np.int8)
    return [smooth, noise]


@pytest.mark.parametrize("reference", [False, True])
def test_fc_stack_bit_exact(engine, reference):
    data = _model()
    it = engine.Interpreter(engine.Model(data), reference=reference)
    for x in _inputs():
        want = oracle.run(data, [x])[0]
        it.set_input(0, x)
        it.invoke()
        got = it.output(0)
        np.testing.assert_array_equal(got, want)
        assert len(np.unique(got)) > 10, "saturated: the test would not see a wrong offset"


def test_fc_stack_keeps_nothing_per_unit(engine):
    data = _model()
    it = engine.Interpreter(engine.Model(data), reuse_inputs=True)
    prof = it.profile()
    assert {p["variant"] for p in prof} == {"generic.fc_s8"}, prof
    sizes = {p["persistent"] for p in prof}
    assert len(sizes) == 1, f"persistent bytes depend on the layer: {[p['persistent'] for p in prof]}"
    # the widest layer's input and output (128 + 640 bytes) are all that is planned: no scratch
    assert it.stats()["nonpersistent"] == 128 + 640
