"""Delegation on the host build of the engine: the op list is partitioned between a delegate (here
the "generic" kernel backend, kernels/mn_variants.c) and the interpreter's kernels (reference
compute functions), and the delegated run is bit-exact with the undelegated one."""
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import graphmodels
import oracle
from graphmodels import BO


def _run(engine, data, inputs, **kw):
    it = engine.Interpreter(engine.Model(data), profile=True, **kw)
    for i, x in enumerate(inputs):
        it.set_input(i, x)
    it.invoke()
    return [it.output(i).copy() for i in range(it.num_outputs)], it.profile()


@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled", "micro_speech_quantized"])
def test_delegated_run_is_bit_exact(engine, name):
    data = oracle.read_model(name + ".tflite")
    m = engine.Model(data)
    rng = np.random.default_rng(1)
    inputs = []
    for idx in m.input_indices():
        t = m.tensor(idx)
        info = np.iinfo(t["dtype"])
        inputs.append(rng.integers(info.min, info.max + 1, t["shape"]).astype(t["dtype"]))
    want = oracle.run(data, inputs)
    plain, prof0 = _run(engine, data, inputs, reference=True)
    got, prof = _run(engine, data, inputs, delegate="generic", reference=True)
    for g, p, w in zip(got, plain, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(p, w)
    assert all(p["variant"] == "reference" and p["backend"] is None for p in prof0)
    # every op the backend covers runs in a subgraph with the backend's variants, the rest with
    # the reference compute functions; every op ran exactly once
    assert sorted(p["op"] for p in prof) == list(range(len(prof)))
    assert all(p["calls"] == 1 for p in prof)
    delegated = [p for p in prof if p["backend"] == "generic"]
    assert delegated and all(p["name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SVDF")
                             for p in delegated)
    if "generic" in engine.backends():   # (a KERNELS=reference host build runs reference functions)
        assert any(p["variant"].startswith("generic.") for p in delegated)
    assert all(p["variant"] == "reference" for p in prof if p["backend"] is None)


def _fc(g, x, n_in, n_out, rng, name):
    w = g.const(name + "_w", rng.normal(0, 1, (n_out, n_in)).astype(np.float32))
    b = g.const(name + "_b", rng.normal(0, 1, (n_out,)).astype(np.float32))
    return g.op(BO.FULLY_CONNECTED, [x, w, b], np.float32, (1, n_out), S.BuiltinOptions.FullyConnectedOptions,
                S.FullyConnectedOptionsT(), name=name)


def _branchy_model():
    """Model order A (FC), B (RELU), C (FC of A), D (ADD of B and C), E (FC of D), F (FC of in).
    Partitioned: B first (the CPU's ready op), then the connected subgraph {A, C} and F alone
    (supported and ready in the same round, but not connected to A/C), then D, then {E}."""
    rng = np.random.default_rng(5)
    g = graphmodels.Graph()
    x = g.input("in", np.float32, (1, 4))
    a = _fc(g, x, 4, 4, rng, "A")
    b = g.op(BO.RELU, [x], np.float32, (1, 4), name="B")
    c = _fc(g, a, 4, 4, rng, "C")
    d = g.op(BO.ADD, [b, c], np.float32, (1, 4), S.BuiltinOptions.AddOptions, S.AddOptionsT(), name="D")
    g.output(_fc(g, d, 4, 3, rng, "E"))
    g.output(_fc(g, x, 4, 2, rng, "F"))
    return g.tflite()


def test_partition_groups_across_the_model_order(engine):
    data = _branchy_model()
    x = np.array([[0.5, -1, 2, -0.25]], np.float32)
    want, _ = _run(engine, data, [x])
    got, prof = _run(engine, data, [x], delegate="generic", reference=True)
    order = [(p["op"], p["backend"]) for p in prof]
    assert order == [(1, None), (0, "generic"), (2, "generic"), (5, "generic"), (3, None), (4, "generic")]
    for g_, w in zip(got, want):   # float32: the same compute functions ran (generic), so equal
        np.testing.assert_array_equal(g_, w)
    ref = oracle.run(data, [x])
    for g_, w in zip(got, ref):
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-6)


def test_min_subgraph_keeps_small_subgraphs_on_the_kernels(engine):
    data = _branchy_model()
    x = np.array([[0.5, -1, 2, -0.25]], np.float32)
    _, prof = _run(engine, data, [x], delegate="generic", reference=True, min_subgraph=2)
    assert [(p["op"], p["backend"]) for p in prof] == [
        (1, None), (0, "generic"), (2, "generic"), (5, None), (3, None), (4, None)]
    assert [p["variant"] for p in prof if p["backend"] is None and p["name"] == "FULLY_CONNECTED"] == \
        ["reference", "reference"]
    # nothing left to delegate: the model order stays
    _, prof = _run(engine, data, [x], delegate="generic", min_subgraph=3)
    assert [p["op"] for p in prof] == list(range(6)) and all(p["backend"] is None for p in prof)


def test_unknown_delegate(engine):
    with pytest.raises(engine.MicronnError) as e:
        engine.Interpreter(engine.Model(_branchy_model()), delegate="npu")
    # the names partition and Interpreter(delegate=) take, not only the backends compiled in
    assert engine.delegates() == ["mve", "dsp", "generic"]
    assert "no delegate 'npu' (delegates: mve, dsp, generic)" in str(e.value)
    for name in engine.delegates():
        engine.Interpreter(engine.Model(_branchy_model()), delegate=name)


def test_errors_name_the_model_op_after_reordering(engine):
    """Messages of ops that moved keep the model's op numbers."""
    rng = np.random.default_rng(2)
    g = graphmodels.Graph()
    x = g.input("in", np.float32, (1, 4))
    r = g.op(BO.RELU, [x], np.float32, (1, 4), name="r")
    a = _fc(g, x, 4, 4, rng, "A")
    g.output(g.custom("Atan2", [r, a], np.int8, (1, 4), scale=0.1))
    with pytest.raises(engine.MicronnError) as e:
        engine.Interpreter(engine.Model(g.tflite()), delegate="generic")
    assert "op 2 Atan2: dtypes float32, float32 -> int8 not supported" in str(e.value)


def test_declared_coverage_matches_the_compiled_backends(engine):
    """mn_delegate.c declares each backend's coverage (so every build partitions for every
    backend); for the backends compiled into this library it must equal their variant lists."""
    assert engine.lib().mn_delegate_coverage_ok() == 1


def test_boundary_conversions_join_the_subgraph(engine):
    """The float<->int8 conversions at a subgraph's boundary run inside it (TIDL's boundary dtype
    conversion): the tensors crossing the boundary are float, as on the CPU side."""
    data = graphmodels.conversions_model()
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    want, _ = _run(engine, data, [x], reference=True)
    got, prof = _run(engine, data, [x], delegate="generic", reference=True)
    assert [(p["op"], p["name"], p["backend"]) for p in prof] == [
        (0, "QUANTIZE", "generic"), (1, "FULLY_CONNECTED", "generic"), (2, "DEQUANTIZE", "generic"),
        (3, "RELU", None)]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[0], oracle.run(data, [x])[0], rtol=1e-5, atol=1e-6)
    assert np.count_nonzero(got[0]) >= 2   # not all clipped by the RELU
    # conversions do not count as the subgraph's ops: one FC is below min_subgraph=2
    _, prof = _run(engine, data, [x], delegate="generic", min_subgraph=2)
    assert all(p["backend"] is None for p in prof)


def test_shared_conversion_stays_on_the_cpu(engine):
    data = graphmodels.conversions_model(shared_quantize=True)
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    want, _ = _run(engine, data, [x], reference=True)
    got, prof = _run(engine, data, [x], delegate="generic", reference=True)
    backend = {p["op"]: p["backend"] for p in prof}
    assert backend == {0: None, 1: "generic", 2: "generic", 3: None, 4: None}
    for g_, w in zip(got, want):
        np.testing.assert_array_equal(g_, w)
