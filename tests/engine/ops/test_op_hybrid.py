"""Hybrid kernels (float32 activations quantized on the fly, int8 weights) against LiteRT's
reference kernels, within 1e-5 relative: symmetric and asymmetric input quantization, per-tensor
and per-channel weights, batch rows of very different ranges."""
import numpy as np
import pytest

import models_hybrid as MH
import opmodels as M
from test_op_kernels import check


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["pt", "pc"])
@pytest.mark.parametrize("act", M.ACTS)
def test_fully_connected_hybrid(runner, rng, asymmetric, per_channel, act):
    m = MH.fully_connected_hybrid(rng, in_shape=(2, 3, int(rng.integers(1, 40))), units=int(rng.integers(1, 9)),
                                  act=act, per_channel=per_channel, asymmetric=asymmetric,
                                  bias=bool(rng.integers(0, 2)), keep_num_dims=bool(rng.integers(0, 2)))
    check(runner, rng, m, gen=MH.hybrid_input)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
def test_fully_connected_hybrid_special_rows(runner, rng, asymmetric):
    """All-zero, constant, all-positive and all-negative rows (the quantizer's edge cases)."""
    m = MH.fully_connected_hybrid(rng, in_shape=(6, 20), units=7, asymmetric=asymmetric, per_channel=True)
    x = MH.hybrid_input(rng, m.tensors[0])
    x[0] = 0.0
    x[1] = 3.25
    x[2] = np.abs(x[2]) + 0.5
    x[3] = -np.abs(x[3]) - 0.5
    x[4, ::2] = 0.0
    check(runner, rng, m, gen=lambda rng, t: x)


def test_fully_connected_hybrid_refuses_weight_zero_point(runner, rng):
    m = MH.fully_connected_hybrid(rng)
    m.tensors[1].zp = [3]
    with pytest.raises(Exception) as e:
        runner(m, [MH.hybrid_input(rng, m.tensors[0])])
    assert "zero point" in str(e.value)
