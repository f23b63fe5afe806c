"""int16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (int16 activations, int8 weights, int64 or
int32 bias), TRANSPOSE_CONV and BATCH_MATMUL against LiteRT's reference kernels: bit-exact for
integers, 1e-5 relative for float32; outputs checked not to be mostly saturated."""
import numpy as np
import pytest

import models_conv as MC
import opmodels as M
from runners import run_oracle
from test_op_kernels import check

PAD = (M.SAME, M.VALID)
BIAS = (np.int64, np.int32)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((1, 3), (2, 1)), ((2, 1), (2, 3))])
@pytest.mark.parametrize("act", M.ACTS)
def test_conv2d_16x8(runner, rng, bias, padding, stride, dil, act):
    m = MC.conv2d_16x8(rng, bias, n=2, h=int(rng.integers(6, 10)), w=int(rng.integers(6, 10)),
                       cin=int(rng.integers(1, 5)), cout=int(rng.integers(1, 6)), fh=int(rng.integers(1, 4)),
                       fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding, act=act,
                       per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
def test_conv2d_16x8_groups(runner, rng, bias):
    m = MC.conv2d_16x8(rng, bias, n=1, h=6, w=7, cin=8, cout=6, groups=2, per_channel=True)
    check(runner, rng, m)


@pytest.mark.parametrize("padding", PAD)
@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (2, 2))])
@pytest.mark.parametrize("act", M.ACTS)
def test_depthwise_16x8(runner, rng, padding, stride, dil, act):
    m = MC.depthwise_16x8(rng, n=2, h=int(rng.integers(6, 10)), w=int(rng.integers(6, 10)),
                          cin=int(rng.integers(1, 5)), mult=int(rng.integers(1, 4)), fh=int(rng.integers(1, 4)),
                          fw=int(rng.integers(1, 4)), stride=stride, dil=dil, padding=padding, act=act,
                          per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS + (None,), ids=lambda b: np.dtype(b).name if b else "nobias")
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", M.ACTS)
def test_fully_connected_16x8(runner, rng, bias, per_channel, act):
    m = MC.fully_connected_16x8(rng, bias or np.int64, in_shape=(2, 3, 24), units=7, act=act,
                                per_channel=per_channel, bias=bias is not None, keep_num_dims=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=None if act != M.ACT_NONE else 0.6)


@pytest.mark.parametrize("bias", BIAS, ids=lambda b: np.dtype(b).name)
def test_fully_connected_16x8_weights_zero_point(runner, rng, bias):
    m = MC.fully_connected_16x8(rng, bias, weights_zp=-5, in_shape=(4, 40), units=9)
    check(runner, rng, m)


def test_fully_connected_16x8_large_bias(runner, rng):
    """Accumulators beyond int32 (an int64 bias of +-2^35): the int64 requantization is exact."""
    m = MC.fully_connected_16x8(rng, np.int64, in_shape=(3, 16), units=6)
    m.tensors[2].data = rng.integers(-2 ** 35, 2 ** 35, 6).astype(np.int64)
    m.tensors[3].scale = [float(2 ** 35 * m.tensors[0].scale[0] * m.tensors[1].scale[0] / 20000)]
    check(runner, rng, m)


def _refused(runner, m, words):
    ins = [M.random_input(np.random.default_rng(0), m.tensors[i]) for i in m.graph_inputs]
    with pytest.raises(Exception) as e:
        runner(m, ins)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_depthwise_16x8_int32_bias_refused(runner, rng):
    """TFLite's DEPTHWISE_CONV_2D takes only an int64 bias with int16 input."""
    m = MC.depthwise_16x8(rng, np.int32, n=1, h=5, w=5, cin=2, mult=1)
    with pytest.raises(Exception):
        run_oracle(m, [M.random_input(rng, m.tensors[0])])
    _refused(runner, m, ["bias", "int32"])


@pytest.mark.parametrize("which", [0, 3])
def test_16x8_nonzero_zero_point_refused(runner, rng, which):
    m = MC.conv2d_16x8(rng, n=1, h=5, w=5, cin=2, cout=2)
    m.tensors[which].zp = [3]
    _refused(runner, m, ["zero point"])
