"""int8 DEPTHWISE_CONV_2D on the board against LiteRT's reference kernels: the shapes the depthwise
variants specialize (dsp.depthwise_s8_pair / _mult1, mve.depthwise_s8_3x3 / _rows / _m1 / _mult):
3x3 and 5x5, stride 2, 1-D windows (Kx1 over 1xTx1xC as streaming audio nets, 1xK), odd channel
counts, SAME and VALID padding, depth multipliers 1 and 2, fused activations."""
import os
import sys

import numpy as np
import pytest

import devhelp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))
import opmodels as M  # noqa: E402


def _models():
    rng = np.random.default_rng(35)
    dw = M.depthwise
    return {
        "dw_3x3_s1_wide": dw(rng, h=6, w=18, cin=8, mult=1),
        "dw_3x3_s1_odd": dw(rng, h=7, w=14, cin=13, mult=1, padding=M.VALID, act=M.ACT_RELU6),
        "dw_3x3_s2": dw(rng, h=9, w=11, cin=12, mult=1, stride=(2, 2)),
        "dw_5x5_s1": dw(rng, h=8, w=16, cin=5, mult=1, fh=5, fw=5),
        "dw_5x5_s2_valid": dw(rng, h=11, w=12, cin=16, mult=1, fh=5, fw=5, stride=(2, 2), padding=M.VALID),
        "dw_kx1_stream": dw(rng, h=49, w=1, cin=20, mult=1, fh=9, fw=1, act=M.ACT_RELU),
        "dw_kx1_s2_valid": dw(rng, h=30, w=1, cin=7, mult=1, fh=5, fw=1, stride=(2, 1), padding=M.VALID),
        "dw_1xk": dw(rng, h=1, w=25, cin=9, mult=1, fh=1, fw=7),
        "dw_mult2": dw(rng, h=7, w=13, cin=5, mult=2),
        "dw_mult2_s2_kx1": dw(rng, h=21, w=1, cin=3, mult=2, fh=4, fw=1, stride=(2, 1)),
        "dw_dilated": dw(rng, h=9, w=14, cin=8, mult=1, dil=(2, 2)),
    }


@pytest.mark.parametrize("name", list(_models()))
def test_depthwise(dev, tmp_path, monkeypatch, name):
    model = _models()[name]
    rng = np.random.default_rng(36)
    sets = [[M.random_input(rng, model.tensors[i]) for i in model.graph_inputs] for _ in range(2)]
    devhelp.check_single_op(dev, tmp_path, monkeypatch, name, model, sets)
