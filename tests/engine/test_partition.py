"""`micronn partition` (host_tools/micronn_tools/partition.py): each subgraph the engine delegates
becomes one custom op "micronn_subgraph" running another subgraph of the same file
(engine/kernels/custom/micronn_subgraph.c); the partitioned model runs bit-exact with the original."""
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import graphmodels
import oracle
from micronn_tools import partition


def _inputs(engine, data, seed=4):
    m = engine.Model(data)
    rng = np.random.default_rng(seed)
    out = []
    for idx in m.input_indices():
        t = m.tensor(idx)
        info = np.iinfo(t["dtype"])
        out.append(rng.integers(info.min, info.max + 1, t["shape"]).astype(t["dtype"]))
    return out


def _run(engine, data, inputs, **kw):
    it = engine.Interpreter(engine.Model(data), **kw)
    for i, x in enumerate(inputs):
        it.set_input(i, x)
    it.invoke()
    return [it.output(i).copy() for i in range(it.num_outputs)], it


@pytest.mark.parametrize("name,backend", [("person_detect", "mve"), ("keyword_scrambled", "dsp"),
                                          ("micro_speech_quantized", "generic")])
def test_partitioned_model_is_bit_exact(engine, name, backend):
    data = oracle.read_model(name + ".tflite")
    out, summary = partition.partition(data, backend)
    assert summary and all(s["backend"] == backend for s in summary)
    m = engine.Model(out)
    assert m.num_subgraphs == 1 + len(summary)
    names = [o["name"] for o in m.ops()]
    assert names.count("micronn_subgraph") == len(summary)
    inputs = _inputs(engine, data)
    want = oracle.run(data, inputs)
    for _ in range(2):  # state (SVDF) lives in the outer arena and carries over like the original's
        got, it = _run(engine, out, inputs, reference=True)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    label = [p["variant"] for p in it.profile() if p["name"] == "micronn_subgraph"]
    host_has = backend in engine.backends()
    assert label == [f"{backend if host_has else 'kernels'}:subgraph{s['subgraph']}" for s in summary]


def test_person_detect_partition_shape(engine):
    data = oracle.read_model("person_detect.tflite")
    _, summary = partition.partition(data, "mve")
    # 27 conv/depthwise ops, the average pool (CPU), the last 1x1 conv, then RESHAPE + SOFTMAX
    assert [s["ops"] for s in summary] == [list(range(27)), [28]]
    _, summary = partition.partition(data, "mve", min_subgraph=2)
    assert [s["ops"] for s in summary] == [list(range(27))]


def test_litert_reads_the_partitioned_model(engine):
    data = oracle.read_model("person_detect.tflite")
    out, summary = partition.partition(data, "mve")
    m = S.Model.GetRootAs(out, 0)
    assert S.Model.ModelBufferHasIdentifier(out, 0)
    assert m.SubgraphsLength() == 3
    mt = S.ModelT.InitFromPackedBuf(out, 0)
    main = mt.subgraphs[0]
    codes = [(oc.builtinCode, oc.customCode) for oc in mt.operatorCodes]
    op0 = main.operators[0]
    assert codes[op0.opcodeIndex] == (S.BuiltinOperator.CUSTOM, b"micronn_subgraph")
    assert bytes(op0.customOptions) == b"backend=mve;subgraph=1"
    assert len(mt.subgraphs[1].operators) == 27
    # LiteRT's own loader parses it and stops only at the op it has no kernel for
    from ai_edge_litert.interpreter import Interpreter
    with pytest.raises((RuntimeError, ValueError)) as e:
        Interpreter(model_content=oracle.patch_quantized_dimension(out)).allocate_tensors()
    assert "micronn_subgraph" in str(e.value)


def test_partition_cli_and_inspect(tmp_path):
    import os
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(partition.__file__), ".."))
    src = oracle.model_path("person_detect.tflite")
    out = tmp_path / "pd_mve.tflite"
    cli = [sys.executable, "-m", "micronn_tools.cli"]
    r = subprocess.run(cli + ["partition", src, "--backend", "mve", "-o", str(out)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "2 subgraph(s) on mve holding 28 of 31 ops" in r.stdout
    assert "subgraph 1: ops 0-26" in r.stdout
    r = subprocess.run(cli + ["inspect", str(out), "--no-tensors"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "Partition: 2 delegated subgraph(s)" in r.stdout
    assert "op 0 micronn_subgraph: subgraph 1 on mve, 27 ops (CONV_2D x13, DEPTHWISE_CONV_2D x14)" in r.stdout
    r = subprocess.run(cli + ["partition", src, "--backend", "npu", "-o", str(out)], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "no delegate 'npu'" in r.stderr


def test_corrupt_subgraph_op_gives_a_clear_error(engine):
    data = oracle.read_model("person_detect.tflite")
    out, _ = partition.partition(data, "mve")
    for opts, msg in [(b"backend=mve;subgraph=7", "subgraph 7 does not exist (the model has 3"),
                      (b"backend=mve;subgraph=0", "subgraph 0 does not exist"),
                      (b"subgraph=1", 'custom options must read "backend=<name>;subgraph=<index>"'),
                      (b"backend=mve;subgraph=2", "delegated subgraph 2 has 2 inputs, the op passes 1"),
                      ]:
        mt = S.ModelT.InitFromPackedBuf(out, 0)
        mt.subgraphs[0].operators[0].customOptions = np.frombuffer(opts, np.uint8)
        if opts.endswith(b"=2"):
            mt.subgraphs[2].inputs = np.array([0, 1], np.int32)   # boundary mismatch
        import flatbuffers
        b = flatbuffers.Builder(1024)
        b.Finish(mt.Pack(b), file_identifier=b"TFL3")
        with pytest.raises(engine.MicronnError) as e:
            engine.Interpreter(engine.Model(bytes(b.Output())))
        assert msg in str(e.value)


def test_partition_takes_boundary_conversions(engine):
    """`micronn partition` of a float-interface int8 model: QUANTIZE and DEQUANTIZE move into the
    delegated subgraph, whose boundary tensors are then float32; bit-exact with the original."""
    data = graphmodels.conversions_model()
    out, summary = partition.partition(data, "generic")
    assert [s["ops"] for s in summary] == [[0, 1, 2]]
    m = engine.Model(out)
    sub = m.subgraph(1)
    assert [o["name"] for o in sub.ops()] == ["QUANTIZE", "FULLY_CONNECTED", "DEQUANTIZE"]
    assert [sub.tensor(t)["dtype"] for t in sub.input_indices() + sub.output_indices()] == ["float32"] * 2
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    want, _ = _run(engine, data, [x])
    got, it = _run(engine, out, [x], reference=True)
    np.testing.assert_array_equal(got[0], want[0])
    assert [o["name"] for o in m.ops()] == ["micronn_subgraph", "RELU"]
