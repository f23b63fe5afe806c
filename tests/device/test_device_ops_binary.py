"""A sample of the elementwise kernels (single-op models from tests/engine/ops/models_binary.py)
on the board, against the LiteRT reference kernels: quantized rescaling, broadcasting, bool
outputs and integer division run on Cortex-M and RV32, not only on the host."""
import os
import sys
import zlib

import numpy as np
import pytest

import devhelp
import oracle
from devhelp import assert_matches

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))

import models_binary as MB  # noqa: E402


def _models():
    rng = np.random.default_rng(11)
    return {
        "bin_add_s16": ("ADD", MB.binary(rng, "ADD", "int16", (2, 4, 8), (8,), act=1)),
        "bin_sub_s16_pot": ("SUB", MB.binary(rng, "SUB", "int16", (4, 16), (4, 16), pot=True)),
        "bin_mul_s8": ("MUL", MB.binary(rng, "MUL", "int8", (2, 3, 1, 8), (1, 5, 8))),
        "bin_sqdiff_s8": ("SQUARED_DIFFERENCE", MB.binary(rng, "SQUARED_DIFFERENCE", "int8", (3, 16), (1, 16))),
        "bin_less_s8": ("LESS", MB.binary(rng, "LESS", "int8", (4, 1, 6), (3, 6))),
        "bin_floor_mod_s32": ("FLOOR_MOD", MB.binary(rng, "FLOOR_MOD", "int32", (3, 10), (10,))),
        "bin_div_f32": ("DIV", MB.binary(rng, "DIV", "float32", (2, 3, 5), (5,), act=3)),
        "bin_select_v2_f32": ("SELECT_V2", MB.select(rng, "SELECT_V2", "float32", (2, 1, 4), (3, 1), (1, 3, 4))),
        "bin_add_n_f32": ("ADD_N", MB.add_n(rng, "float32", (2, 3, 5), 4)),
    }


MODELS = _models()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_op_on_device(dev, tmp_path, monkeypatch, name):
    op, m = MODELS[name]
    mb = m.tflite()
    (tmp_path / f"{name}.tflite").write_bytes(mb)
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    gen = MB.gen_for(op, m)
    sets = [[gen(rng, m.tensors[i]) for i in m.graph_inputs] for _ in range(2)]
    got = dev.run(name, sets)
    for k, (inputs, outs) in enumerate(zip(sets, got)):
        want = oracle.run(mb, inputs)
        for i, (g, w) in enumerate(zip(outs, want)):
            assert_matches(g, w, f"{name} input set {k} output {i}")
