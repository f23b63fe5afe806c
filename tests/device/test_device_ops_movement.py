"""A sample of the data-movement, shape and reduction kernels on the board: single-op models
(tests/engine/ops/models_movement.py) run through the firmware and compared with the LiteRT
reference kernels, so these kernels are exercised on Cortex-M and RV32, not only on the host."""
import os
import sys

import numpy as np
import pytest

import devhelp
import oracle
from devhelp import assert_matches

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))
import models_movement as MM  # noqa: E402


def _models():
    rng = np.random.default_rng(8)
    in_q = [dict(scale=[0.05], zp=[3])] * 3
    return {
        "op_concat_s8": MM.concatenation("int8", [(1, 4, 4, 3), (1, 4, 4, 5), (1, 4, 4, 2)], -1, in_q=in_q,
                                         out_q=in_q[0]),
        "op_strided_slice_s16": MM.strided_slice("int16", (2, 6, 5, 4), [1, -1, 0], [2, 0, 5], [1, -2, 2],
                                                 ellipsis_mask=0, shrink_axis_mask=1, end_mask=4),
        "op_transpose_f32": MM.transpose("float32", (2, 3, 4, 5), (0, 3, 1, 2)),
        "op_mean_s8": MM.reduce("mean", "int8", (1, 6, 5, 8), [1, 2], True, in_q=dict(scale=[0.04], zp=[-5]),
                                out_q=dict(scale=[0.02], zp=[7])),
        "op_pad_s8": MM.pad("int8", (1, 5, 4, 3), [[0, 0], [1, 2], [2, 0], [0, 1]]),
        "op_resize_bilinear_s8": MM.resize("bilinear", "int8", (1, 4, 5, 3), (7, 9), half_pixel=True),
        "op_gather_s8": MM.gather("int8", (3, 10, 4), (2, 3), axis=1, batch_dims=0, const_params=True, rng=rng),
        "op_split_v_f32": MM.split_v("float32", (2, 9, 3), [2, -1, 3], 1),
        "op_arg_max_s8": MM.arg_min_max("max", "int8", (3, 20), 1),
        "op_reverse_s16": MM.reverse("int16", (2, 5, 3), [1]),
        "op_dus_s8": MM.dynamic_update_slice("int8", (3, 5, 4), (2, 2, 4)),
    }


# inputs other than random data (start indices within and beyond the operand: clamped)
GENS = {"op_dus_s8": MM.dus_gen([2, 7, 0])}


@pytest.mark.parametrize("name", list(_models()))
def test_op_sample(dev, tmp_path, monkeypatch, name):
    model = _models()[name]
    (tmp_path / f"{name}.tflite").write_bytes(model.tflite())
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    rng = np.random.default_rng(9)
    gen = GENS.get(name) or (MM.index_gen(model) if hasattr(model, "index_limit") else MM.rand_any)
    sets = [[gen(rng, model.tensors[i]) for i in model.graph_inputs] for _ in range(2)]
    got = dev.run(name, sets)
    mb = model.tflite()
    for k, (inputs, outs) in enumerate(zip(sets, got)):
        want = oracle.run(mb, inputs)
        for i, (g, w) in enumerate(zip(outs, want)):
            assert_matches(g, w, f"{name} input set {k} output {i}")
