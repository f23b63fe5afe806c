"""The optimized int8 ADD / SUB / MUL variants (kernels/<backend>/elementwise_s8.c) as the
interpreter selects them: single-op models of each handled broadcast shape (same shape, a
scalar operand, a per-channel operand along the innermost dimension, lengths that are not a
multiple of the vector width) bit-exact with LiteRT's reference kernels, the variant each node
runs (the host build has the generic backend; other broadcasts stay on the reference function),
and which variants an Armv7E-M / Helium firmware selects for them (variant query). The kernels
themselves are checked against the reference functions on every instruction set by
tests/kernels (equiv.c)."""
import os
import sys
import zlib

import numpy as np
import pytest

import oracle

from micronn_tools import opset

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "ops"))
sys.path.insert(0, os.path.dirname(HERE))
import models_binary as MB  # noqa: E402
import resnet_models  # noqa: E402

# (op, shape1, shape2, fused activation, handled by the variants)
CASES = {
    "add_same_relu": ("ADD", (1, 6, 7, 9), (1, 6, 7, 9), 1, True),
    "add_chan": ("ADD", (1, 5, 5, 24), (24,), 0, True),
    "add_chan_first": ("ADD", (1, 1, 19), (3, 4, 19), 1, True),
    "add_scalar": ("ADD", (2, 37), (1,), 0, True),
    "add_scalar_first": ("ADD", (1, 1), (5, 13), 3, True),
    "add_other": ("ADD", (2, 1, 8), (1, 3, 1), 0, False),
    "sub_same": ("SUB", (3, 33), (3, 33), 0, True),
    "sub_chan": ("SUB", (4, 16), (1, 16), 1, True),
    "sub_scalar_first": ("SUB", (1,), (7, 9), 0, True),
    "sub_scalar": ("SUB", (7, 9), (1, 1), 0, True),
    "mul_same": ("MUL", (2, 3, 41), (2, 3, 41), 0, True),
    "mul_chan": ("MUL", (1, 4, 4, 12), (1, 1, 1, 12), 1, True),
    "mul_scalar_first": ("MUL", (1,), (3, 11), 0, True),
    "mul_other": ("MUL", (2, 3, 1, 8), (1, 5, 8), 0, False),
}


def model(name):
    op, s1, s2, act, _ = CASES[name]
    return MB.binary(np.random.default_rng(zlib.crc32(name.encode())), op, "int8", s1, s2, act=act)


def inputs(name, m, k=0):
    rng = np.random.default_rng(zlib.crc32(name.encode()) + k)
    gen = MB.gen_for(CASES[name][0], m)
    return [gen(rng, m.tensors[i]) for i in m.graph_inputs]


@pytest.fixture
def generic_engine(engine):
    if "generic" not in engine.backends():
        pytest.skip("the host library has no generic backend (KERNELS=reference)")
    return engine


@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_exact_and_selected(generic_engine, name):
    op, _, _, _, handled = CASES[name]
    m = model(name)
    data = m.tflite()
    it = generic_engine.Interpreter(generic_engine.Model(data), profile=True)
    variants = [p["variant"] for p in it.profile()]
    assert variants == [f"generic.{'add' if op in ('ADD', 'SUB') else 'mul'}_s8" if handled else "reference"], variants
    spread = set()
    for k in range(3):
        xs = inputs(name, m, k)
        for i, x in enumerate(xs):
            it.set_input(i, x)
        it.invoke()
        got = it.output(0)
        np.testing.assert_array_equal(got, oracle.run(data, xs)[0], err_msg=f"{name} set {k}")
        spread |= set(np.unique(got).tolist())
    assert len(spread) > 8, f"{name}: outputs {sorted(spread)} too few distinct values to see a rounding error"


def test_resnet8_bit_exact(generic_engine):
    """The ResNet-8 bench model: its three residual ADDs run generic.add_s8, the whole model
    bit-exact with LiteRT, with and without the optimized variants."""
    data, x = resnet_models.resnet8()
    want = oracle.run(data, [x])[0]
    for reference in (False, True):
        it = generic_engine.Interpreter(generic_engine.Model(data), reference=reference, profile=True)
        it.set_input(0, x)
        it.invoke()
        np.testing.assert_array_equal(it.output(0), want)
        adds = [p["variant"] for p in it.profile() if p["name"] == "ADD"]
        assert adds == (["reference"] * 3 if reference else ["generic.add_s8"] * 3), adds
    assert len(np.unique(want)) > 3


@pytest.mark.parametrize("kernels,prefix", [("dsp generic", "dsp"), ("mve dsp generic", "mve"),
                                            ("generic", "generic")])
def test_query_names_elementwise_variants(generic_engine, kernels, prefix):
    data = [model(n).tflite() for n in ("add_same_relu", "sub_chan", "mul_scalar_first")]
    used = opset.variants_used(data, kernels)
    assert f"{prefix}.add_s8" in used and f"{prefix}.mul_s8" in used, used
    # a broadcast the variants do not handle selects none
    assert not [v for v in opset.variants_used([model("add_other").tflite()], kernels) if "add_s8" in v]
