"""Several subgraphs on the board (models from tests/engine/ops/models_control.py) against LiteRT's
reference kernels: IF taking both branches, WHILE with several iteration counts, a WHILE inside
an IF, and resource variables holding state across invokes (CALL_ONCE + VAR_HANDLE / READ /
ASSIGN), also after Interpreter.reset(), which runs CALL_ONCE again."""
import os
import sys
import zlib

import numpy as np
import pytest

import devhelp
from devhelp import assert_matches

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))

import models_control as MC  # noqa: E402
from runners import run_oracle  # noqa: E402


def _models():
    rng = np.random.default_rng(23)
    return {
        "cf_if_s8": MC.if_model(rng, "int8", shape=(3, 8)),
        "cf_if_f32": MC.if_model(rng, "float32", shape=(2, 5)),
        "cf_while_s16": MC.while_model(rng, "int16", shape=(6,)),
        "cf_if_of_while_f32": MC.if_of_while(rng),
        "cf_accumulator_s32": MC.accumulator_model(rng, "int32", shape=(5,)),
        "cf_variable_f32": MC.variable_model(rng, "float32", shape=(2, 4)),
    }


MODELS = _models()


def _sets(name, m, rng):
    if name.startswith("cf_if_of_while"):
        return [[np.array(c), rng.normal(size=4).astype(np.float32), np.array(n, np.int32)]
                for c, n in ((True, 3), (False, 2), (True, 0))]
    if name.startswith("cf_if"):
        ab = [MC.gen_small(rng, m.tensors[i]) for i in m.graph_inputs[1:]]
        return [[np.array(True)] + ab, [np.array(False)] + ab]
    if name.startswith("cf_while"):
        return [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]]), np.array(n, np.int32)] for n in (0, 1, 5)]
    return [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]])] for _ in range(4)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_control_flow_on_device(dev, tmp_path, monkeypatch, name):
    m = MODELS[name]
    mb = m.tflite()
    (tmp_path / f"{name}.tflite").write_bytes(mb)
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    sets = _sets(name, m, rng)
    stateful = name in ("cf_accumulator_s32", "cf_variable_f32")
    # stateful models: one interpreter over every set, as LiteRT's over as many invokes
    got = dev.run(name, sets, reset_each=not stateful)
    if stateful:
        want = run_oracle(m, sets, invokes=len(sets))
    else:
        want = [run_oracle(m, s) for s in sets]
    for k, (outs, ws) in enumerate(zip(got, want)):
        for i, (g, w) in enumerate(zip(outs, ws)):
            assert_matches(g, w, f"{name} input set {k} output {i}")
    if stateful:
        # reset before each invoke: CALL_ONCE runs again, so every invoke is the first
        got = dev.run(name, sets, reset_each=True)
        for k, (outs, s) in enumerate(zip(got, sets)):
            for i, (g, w) in enumerate(zip(outs, run_oracle(m, s))):
                assert_matches(g, w, f"{name} after reset, input set {k} output {i}")
