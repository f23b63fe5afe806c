"""Shapes that reach every branch of the optimized compute variants compiled into the host engine
(kernels/generic: channel blocks and their remainders, depth multipliers, border and interior
pixels, groups, dilation, folded offsets), against the oracle. The kernel shim runs the reference
functions on the same models, so both sides of each variant are checked."""
import pytest

import opmodels as M
from test_op_kernels import check


@pytest.mark.parametrize("cin", [1, 4, 5, 8, 11, 16])
@pytest.mark.parametrize("mult", [1, 2, 3])
@pytest.mark.parametrize("case", [
    dict(h=9, w=7, fh=3, fw=3, stride=(1, 1), padding=M.SAME),
    dict(h=10, w=11, fh=3, fw=3, stride=(2, 2), padding=M.SAME),
    dict(h=8, w=9, fh=5, fw=3, stride=(1, 2), padding=M.VALID, dil=(2, 1)),
    dict(h=6, w=6, fh=1, fw=1, stride=(1, 1), padding=M.VALID),
])
def test_depthwise_variant_shapes(runner, rng, cin, mult, case):
    check(runner, rng, M.depthwise(rng, "int8", cin=cin, mult=mult, **case))


@pytest.mark.parametrize("case", [
    dict(h=9, w=8, cin=3, cout=5, fh=3, fw=3, stride=(1, 1), padding=M.SAME),
    dict(h=11, w=10, cin=8, cout=6, fh=3, fw=3, stride=(2, 2), padding=M.SAME),
    dict(h=9, w=9, cin=4, cout=7, fh=2, fw=3, stride=(1, 1), padding=M.SAME, dil=(2, 2)),
    dict(h=7, w=7, cin=17, cout=9, fh=1, fw=1, stride=(1, 1), padding=M.VALID),
    dict(h=8, w=8, cin=6, cout=4, fh=1, fw=1, stride=(2, 2), padding=M.VALID),
    dict(h=7, w=6, cin=5, cout=3, fh=1, fw=1, stride=(1, 1), padding=M.SAME),
    dict(n=2, h=6, w=5, cin=9, cout=4, fh=3, fw=2, stride=(1, 1), padding=M.SAME),
])
def test_conv_variant_shapes(runner, rng, case):
    check(runner, rng, M.conv2d(rng, "int8", **case))


@pytest.mark.parametrize("groups", [2, 3])
def test_conv_variant_groups_border(runner, rng, groups):
    check(runner, rng, M.conv2d(rng, "int8", h=7, w=6, cin=3 * groups, cout=2 * groups, fh=3, fw=3,
                                padding=M.SAME, groups=groups))


@pytest.mark.parametrize("depth", [1, 3, 4, 7, 64, 97])
@pytest.mark.parametrize("per_channel", [False, True])
def test_fc_variant_depths(runner, rng, depth, per_channel):
    check(runner, rng, M.fully_connected(rng, "int8", in_shape=(3, depth), units=6, per_channel=per_channel))


@pytest.mark.parametrize("dims", [dict(input_size=13, units=5, rank=2, memory=3),
                                  dict(batches=1, input_size=32, units=8, rank=1, memory=7)])
def test_svdf_variant_shapes(runner, rng, dims):
    check(runner, rng, M.svdf(rng, "int8", **dims), invokes=4)
