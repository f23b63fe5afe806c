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


PAD = (M.SAME, M.VALID)


@pytest.mark.parametrize("per_channel,equal", [(False, False), (True, False), (True, True)],
                         ids=["pt", "pc", "pc_equal"])
@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((1, 2), (2, 1))])
@pytest.mark.parametrize("act", [M.ACT_NONE, M.ACT_RELU6])
def test_conv2d_hybrid(runner, rng, per_channel, equal, padding, stride, dil, act):
    m = MH.conv2d_hybrid(rng, per_channel, equal, n=2, h=int(rng.integers(5, 9)), w=int(rng.integers(5, 9)),
                         cin=int(rng.integers(1, 5)), cout=int(rng.integers(1, 6)), fh=int(rng.integers(1, 4)),
                         fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding, act=act)
    check(runner, rng, m, gen=MH.image_input)


def test_conv2d_hybrid_groups(runner, rng):
    """Grouped: TFLite's per-channel path (asymmetric input) even with equal scales."""
    m = MH.conv2d_hybrid(rng, True, True, n=2, h=6, w=7, cin=8, cout=6, groups=2)
    check(runner, rng, m, gen=MH.image_input)
    m = MH.conv2d_hybrid(rng, True, False, n=1, h=5, w=5, cin=6, cout=9, groups=3)
    check(runner, rng, m, gen=MH.image_input)


@pytest.mark.parametrize("equal", [False, True], ids=["pc", "pc_equal"])
@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (2, 2))])
def test_depthwise_hybrid(runner, rng, equal, padding, stride, dil):
    """Always TFLite's per-channel path (asymmetric input), also with equal scales."""
    m = MH.depthwise_hybrid(rng, True, equal, n=2, h=int(rng.integers(5, 9)), w=int(rng.integers(5, 9)),
                            cin=int(rng.integers(1, 5)), mult=int(rng.integers(1, 4)), fh=int(rng.integers(1, 4)),
                            fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding,
                            act=int(rng.choice(M.ACTS)), bias=bool(rng.integers(0, 2)))
    check(runner, rng, m, gen=MH.image_input)


def test_hybrid_refusals(runner, rng):
    """What TFLite's hybrid kernels do not take: a weights zero point, a per-tensor depthwise filter
    (LiteRT reads past its one scale), a grouped conv with one filter scale."""
    for m, words in ((MH.conv2d_hybrid(rng, True), ["zero point"]),
                     (MH.depthwise_hybrid(rng, False), ["depthwise", "scales"]),
                     (MH.conv2d_hybrid(rng, False, n=1, h=5, w=5, cin=4, cout=4, groups=2), ["grouped", "scales"])):
        if words == ["zero point"]:
            m.tensors[1].zp = [2] * len(m.tensors[1].zp)
        with pytest.raises(Exception) as e:
            runner(m, [MH.image_input(rng, m.tensors[0])])
        assert all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
@pytest.mark.parametrize("act", [M.ACT_NONE, M.ACT_RELU])
def test_svdf_hybrid(runner, rng, asymmetric, act):
    """Several invokes: the float state carries the quantized feature stage from step to step."""
    m = MH.svdf_hybrid(rng, asymmetric, batches=int(rng.integers(1, 4)), input_size=int(rng.integers(3, 20)),
                       units=int(rng.integers(1, 5)), rank=int(rng.integers(1, 3)), memory=int(rng.integers(1, 6)),
                       act=act, bias=bool(rng.integers(0, 2)))
    check(runner, rng, m, invokes=4, gen=MH.hybrid_input)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
@pytest.mark.parametrize("lhs,rhs,adj_x,adj_y", [((2, 3, 6), (6, 4), False, False), ((3, 5), (5, 2), False, False),
                                                 ((2, 1, 6, 3), (3, 4, 6), True, True), ((2, 7, 4), (2, 5, 7), True, True),
                                                 ((4, 9), (9, 3), False, False)])
def test_batch_matmul_hybrid(runner, rng, asymmetric, lhs, rhs, adj_x, adj_y):
    m = MH.batch_matmul_hybrid(rng, lhs, rhs, adj_x, adj_y, asymmetric)
    check(runner, rng, m, gen=MH.hybrid_input)
