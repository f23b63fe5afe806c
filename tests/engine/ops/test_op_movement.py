"""Data-movement, shape and reduction kernels against LiteRT's BUILTIN_REF kernels (the oracle),
through the kernel shim and the full engine: integer and bool outputs bit-exact, float32 within
1e-5 relative (see test_op_kernels.check)."""

import numpy as np
import pytest

import models_movement as MM
from test_op_kernels import _expect_reject, check

ALL = MM.DTYPES_ALL
NO_BOOL = tuple(d for d in ALL if d != "bool")      # LiteRT rejects bool for PACK, SPLIT, SPLIT_V
NO_INT64 = tuple(d for d in ALL if d != "int64")    # ... and int64 for UNPACK


def run(runner, rng, model, sat=None):
    return check(runner, rng, model, gen=MM.rand_any, max_saturated=sat)


# ---- TRANSPOSE ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,perm", [
    ((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((1, 5, 6, 3), (0, 3, 1, 2)), ((2, 3, 4, 5), (3, 2, 1, 0)),
    ((2, 3, 2, 4, 3), (4, 0, 3, 1, 2)), ((2, 1, 3, 2, 2, 3), (5, 3, 1, 4, 0, 2)), ((4, 5), (0, 1))])
def test_transpose(runner, rng, dtype, shape, perm):
    run(runner, rng, MM.transpose(dtype, shape, perm))


def test_transpose_reject_non_const_perm(runner, rng):
    m = MM.transpose("int8", (2, 3), (1, 0))
    m.tensors[1].data = None
    _expect_reject(runner, m, "perm", "constant")


# ---- CONCATENATION / PACK / UNPACK / SPLIT / SPLIT_V --------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shapes,axis", [
    (((2, 3), (2, 5)), 1), (((2, 3), (4, 3), (1, 3)), 0), (((1, 4, 4, 3), (1, 4, 4, 5)), -1),
    (((2, 3, 4, 2), (2, 1, 4, 2), (2, 2, 4, 2)), 1), (((3,), (4,)), 0), (((2, 2, 1, 3, 2),) * 4, 2)])
def test_concatenation(runner, rng, dtype, shapes, axis):
    run(runner, rng, MM.concatenation(dtype, shapes, axis))


def test_concatenation_uint8_requantize(runner, rng):
    # TFLite rescales uint8 inputs quantized unlike the output (in float, rounding half away).
    for scales in ([0.05, 0.1, 0.023], [0.2, 0.01, 0.05]):
        in_q = [dict(scale=[s], zp=[int(z)]) for s, z in zip(scales, rng.integers(100, 150, 3))]
        m = MM.concatenation("uint8", [(2, 3), (2, 4), (2, 70)], 1, in_q=in_q, out_q=dict(scale=[0.05], zp=[120]))
        run(runner, rng, m, sat=0.6)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_concatenation_reject_mixed_quant(runner, rng, dtype):
    m = MM.concatenation(dtype, [(2, 3), (2, 3)], 1, in_q=[MM.qkw(dtype), MM.qkw(dtype, scale=0.1, zp=0)])
    _expect_reject(runner, m, "quantization", "input 1")


@pytest.mark.parametrize("dtype", NO_BOOL)
@pytest.mark.parametrize("shape,n,axis", [((3, 4), 2, 0), ((3, 4), 3, 1), ((3, 4), 2, 2), ((2, 1, 3), 4, -1),
                                          ((5,), 1, 0), ((2, 3, 2, 2), 3, 2)])
def test_pack(runner, rng, dtype, shape, n, axis):
    run(runner, rng, MM.pack(dtype, shape, n, axis))


@pytest.mark.parametrize("dtype", NO_INT64)
@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1), ((2, 3, 2, 2), 2), ((1, 5), 0)])
def test_unpack(runner, rng, dtype, shape, axis):
    run(runner, rng, MM.unpack(dtype, shape, axis))


@pytest.mark.parametrize("dtype", NO_BOOL)
@pytest.mark.parametrize("shape,n,axis", [((4, 6), 2, 0), ((4, 6), 3, 1), ((1, 8, 8, 12), 4, -1),
                                          ((2, 6, 3), 6, 1), ((5,), 1, 0)])
def test_split(runner, rng, dtype, shape, n, axis):
    run(runner, rng, MM.split(dtype, shape, n, axis))


@pytest.mark.parametrize("dtype", NO_BOOL)
@pytest.mark.parametrize("shape,sizes,axis", [((4, 6), [1, 2, 3], 1), ((7, 2), [3, -1, 2], 0),
                                              ((1, 3, 10, 2), [4, 6], -2), ((2, 5), [5], 1)])
def test_split_v(runner, rng, dtype, shape, sizes, axis):
    run(runner, rng, MM.split_v(dtype, shape, sizes, axis))


def test_split_reject_non_const_axis(runner, rng):
    m = MM.split("int8", (4, 6), 2, 1)
    m.tensors[0].data = None
    _expect_reject(runner, m, "axis", "constant")


# ---- SQUEEZE / EXPAND_DIMS ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dims", [((1, 3, 1, 4), ()), ((1, 3, 1, 4), (0,)), ((2, 1, 1, 4), (-2, 1)),
                                        ((1, 1, 1, 6), (0, 1, 2))])
def test_squeeze(runner, rng, dtype, shape, dims):
    run(runner, rng, MM.squeeze(dtype, shape, dims))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 2), ((2, 3, 4), -1), ((5,), 0)])
def test_expand_dims(runner, rng, dtype, shape, axis):
    run(runner, rng, MM.expand_dims(dtype, shape, axis))


# ---- PAD / PADV2 --------------------------------------------------------------------------------

PADS = [((2, 3), [[1, 0], [2, 3]]), ((1, 4, 5, 3), [[0, 0], [1, 1], [2, 0], [0, 0]]),
        ((2, 3, 4), [[1, 1], [0, 2], [3, 0]]), ((1, 2, 2, 2, 3), [[0, 1], [1, 0], [0, 0], [2, 1], [1, 1]]),
        ((4,), [[0, 0]]), ((1, 3, 3, 1), [[0, 0], [0, 0], [0, 0], [0, 0]])]
PAD_DTYPES = ("int8", "int16", "float32", "int32", "int64", "uint8")   # LiteRT: no bool


@pytest.mark.parametrize("dtype", PAD_DTYPES)
@pytest.mark.parametrize("shape,pads", PADS)
def test_pad(runner, rng, dtype, shape, pads):
    run(runner, rng, MM.pad(dtype, shape, pads))


def test_pad_int64_paddings(runner, rng):
    run(runner, rng, MM.pad("int8", (2, 3), [[1, 2], [0, 1]], pad_dtype=np.int64))


@pytest.mark.parametrize("dtype", PAD_DTYPES)
@pytest.mark.parametrize("shape,pads", PADS[:4])
@pytest.mark.parametrize("const_value", [True, False])
def test_padv2(runner, rng, dtype, shape, pads, const_value):
    value = (7 if dtype != "float32" else 1.5) if const_value else None
    run(runner, rng, MM.pad(dtype, shape, pads, v2=True, value=value))


def test_pad_reject(runner, rng):
    m = MM.pad("int8", (2, 3), [[1, 0], [2, 3]])
    m.tensors[1].data = None
    _expect_reject(runner, m, "paddings", "constant")
