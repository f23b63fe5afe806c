"""A sample of the hybrid kernels (float32 activations quantized on the fly, int8 weights; single-op
models from tests/engine/ops/models_hybrid.py) run through the firmware and compared with the
LiteRT reference kernels, so they are exercised on Cortex-M and RV32 too."""
import os
import sys

import numpy as np
import pytest

import devhelp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))
import models_hybrid as MH  # noqa: E402
import opmodels as M  # noqa: E402


def _models():
    rng = np.random.default_rng(21)
    return {
        "op_fc_hybrid_sym": (MH.fully_connected_hybrid(rng, in_shape=(3, 24), units=5), MH.hybrid_input),
        "op_fc_hybrid_asym_pc": (MH.fully_connected_hybrid(rng, in_shape=(4, 17), units=6, per_channel=True,
                                                           asymmetric=True, act=M.ACT_RELU), MH.hybrid_input),
        "op_conv_hybrid_pt": (MH.conv2d_hybrid(rng, False, n=2, h=6, w=5, cin=3, cout=4, stride=(2, 1)),
                              MH.image_input),
        "op_conv_hybrid_pc": (MH.conv2d_hybrid(rng, True, n=1, h=7, w=6, cin=2, cout=3, dil=(1, 2),
                                               padding=M.VALID), MH.image_input),
        "op_dw_hybrid": (MH.depthwise_hybrid(rng, True, n=2, h=6, w=6, cin=3, mult=2, act=M.ACT_RELU6),
                         MH.image_input),
        "op_svdf_hybrid": (MH.svdf_hybrid(rng, True, batches=2, input_size=9, units=3, rank=2, memory=4),
                           MH.hybrid_input),
        "op_lstm_hybrid": (MH.lstm_hybrid(rng, True, batches=2, time=1, n_input=6, n_cell=5, n_output=4, proj=True,
                                          peephole=True), MH.hybrid_input),
        "op_bmm_hybrid": (MH.batch_matmul_hybrid(rng, (2, 6, 3), (2, 6, 4), adj_x=True, asymmetric=True),
                          MH.hybrid_input),
    }


@pytest.mark.parametrize("name", list(_models()))
def test_op_sample(dev, tmp_path, monkeypatch, name):
    model, gen = _models()[name]
    rng = np.random.default_rng(22)
    sets = [[gen(rng, model.tensors[i]) for i in model.graph_inputs] for _ in range(2)]
    devhelp.check_single_op(dev, tmp_path, monkeypatch, name, model, sets)
