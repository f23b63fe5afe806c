"""Opcode versions and options tables are checked against the registry (engine/mn_ops.h) before
any kernel reads an option by field id: hand-made models with a too-high version or another op's
options table are refused with a message naming op, version / options type."""
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import models_binary as MB
import runners


@pytest.fixture(scope="module")
def engine():
    if not runners.engine_runner():
        pytest.skip("engine ctypes wrapper / libmicronn.so not available")
    from micronn_tools import engine as E
    return E


def _patched(model, fn):
    import flatbuffers
    mt = S.ModelT.InitFromPackedBuf(model.tflite(), 0)
    fn(mt)
    b = flatbuffers.Builder(1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _error(E, data):
    with pytest.raises(E.MicronnError) as ei:
        E.Interpreter(E.Model(data))
    return ei.value


@pytest.mark.parametrize("op,dtype,max_version", [("ADD", "int8", 3), ("MUL", "int16", 4), ("SUB", "int16", 5),
                                                  ("EQUAL", "int8", 4), ("SELECT_V2", None, 1)])
def test_version_above_the_kernel_is_refused(engine, rng, op, dtype, max_version):
    m = MB.select(rng, op, "float32") if op.startswith("SELECT") else MB.binary(rng, op, dtype)

    def version(v):
        def f(mt):
            mt.operatorCodes[0].version = v
        return f
    for v in range(1, max_version + 1):   # every implemented version prepares
        engine.Interpreter(engine.Model(_patched(m, version(v))))
    e = _error(engine, _patched(m, version(max_version + 1)))
    assert e.status == engine.ERR_UNSUPPORTED
    assert (f"op 0 {op}: opcode version {max_version + 1} not supported (the kernel implements "
            f"versions 1 to {max_version})") in str(e)


def test_kernels_report_their_versions(engine):
    ks = {k["name"]: k for k in engine.kernels()}
    assert ks["ADD"]["max_version"] == 3 and ks["SUB"]["max_version"] == 5 and ks["CONV_2D"]["max_version"] == 8
    assert all(k["max_version"] >= 1 and k["options"] != "?" for k in ks.values())


@pytest.mark.parametrize("op,other", [("ADD", "MulOptions"), ("MUL", "AddOptions"), ("LESS", "GreaterOptions"),
                                      ("LOGICAL_AND", "Conv2DOptions")])
def test_options_of_another_op_are_refused(engine, rng, op, other):
    m = MB.binary(rng, op, "bool" if op.startswith("LOGICAL") else "float32")

    def f(mt):
        o = mt.subgraphs[0].operators[0]
        o.builtinOptionsType = getattr(S.BuiltinOptions, other)
        o.builtinOptions = getattr(S, other + "T")()
    e = _error(engine, _patched(m, f))
    assert e.status == engine.ERR_MODEL
    assert f"op 0 {op}: builtin options table is {other}, {op} takes {m.options.__class__.__name__[:-1]}" in str(e)


def test_absent_options_mean_defaults(engine, rng):
    m = MB.binary(rng, "ADD", "float32", (2, 3), (2, 3), act=1)

    def f(mt):
        o = mt.subgraphs[0].operators[0]
        o.builtinOptionsType, o.builtinOptions = 0, None
    it = engine.Interpreter(engine.Model(_patched(m, f)))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    it.set_input(0, x)
    it.set_input(1, x)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0), 2 * x)   # no fused RELU without options
