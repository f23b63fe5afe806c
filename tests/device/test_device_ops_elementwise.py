"""The optimized int8 ADD / SUB / MUL variants on the board (dsp on Cortex-M4/M7, mve on the
M55, generic on RV32), against LiteRT's reference kernels: every broadcast shape they handle
(same shape, a scalar operand, a per-channel operand, lengths off the vector width), one they
leave to the reference function, fused activations, and the ResNet-8 bench model whose residual
ADDs they run."""
import os
import sys
import zlib

import numpy as np
import pytest

import devhelp

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "engine", "ops"))
sys.path.insert(0, TESTS)
import models_binary as MB  # noqa: E402
import resnet_models  # noqa: E402

# name: (op, shape1, shape2, fused activation)
CASES = {
    "ew_add_same_relu": ("ADD", (1, 6, 7, 9), (1, 6, 7, 9), 1),
    "ew_add_chan": ("ADD", (1, 5, 5, 24), (24,), 0),
    "ew_add_scalar_first": ("ADD", (1, 1), (5, 13), 3),
    "ew_add_other": ("ADD", (2, 1, 8), (1, 3, 1), 0),
    "ew_sub_chan_first": ("SUB", (1, 19), (3, 4, 19), 1),
    "ew_sub_scalar": ("SUB", (7, 9), (1,), 0),
    "ew_mul_same": ("MUL", (2, 3, 41), (2, 3, 41), 0),
    "ew_mul_chan": ("MUL", (1, 4, 4, 12), (1, 1, 1, 12), 1),
    "ew_mul_scalar": ("MUL", (3, 11), (1,), 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise_on_device(dev, tmp_path, monkeypatch, name):
    op, s1, s2, act = CASES[name]
    seed = zlib.crc32(name.encode())
    m = MB.binary(np.random.default_rng(seed), op, "int8", s1, s2, act=act)
    gen = MB.gen_for(op, m)
    rng = np.random.default_rng(seed + 1)
    sets = [[gen(rng, m.tensors[i]) for i in m.graph_inputs] for _ in range(2)]
    devhelp.check_single_op(dev, tmp_path, monkeypatch, name, m, sets)


class _Bytes:
    def __init__(self, data):
        self.data = data

    def tflite(self):
        return self.data


def test_resnet8_on_device(dev, board_spec, tmp_path, monkeypatch):
    data, x = resnet_models.resnet8()
    # the model is copied to the board's filesystem and loaded into its heap (NETDUINOPLUS2: 64 KB
    # of filesystem and 110 KB of heap for a 90 KB model and its arena)
    for what, have in (("filesystem", board_spec.fs_bytes), ("heap", board_spec.heap_bytes)):
        if have is not None and have < 2 * len(data):
            pytest.skip(f"the {len(data)}-byte ResNet-8 does not fit the board's {have}-byte {what}")
    noise = np.random.default_rng(5).integers(-128, 128, x.shape, dtype=np.int8)
    devhelp.check_single_op(dev, tmp_path, monkeypatch, "ew_resnet8", _Bytes(data), [[x], [noise]])
