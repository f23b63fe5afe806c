"""Data-movement, shape and reduction kernels against LiteRT's BUILTIN_REF kernels (the oracle),
through the kernel shim and the full engine: integer and bool outputs bit-exact, float32 within
1e-5 relative (see test_op_kernels.check)."""

import numpy as np
import pytest

import models_movement as MM
from runners import run_oracle
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


# ---- STRIDED_SLICE / SLICE ----------------------------------------------------------------------

SS_CASES = [
    dict(shape=(4, 6), begin=[1, 0], end=[3, 6], strides=[1, 2]),
    dict(shape=(4, 6), begin=[-1, 5], end=[-5, 0], strides=[-1, -2]),                   # negative strides
    dict(shape=(4, 6), begin=[2, 1], end=[0, 0], strides=[1, 1], end_mask=3),
    dict(shape=(4, 6), begin=[9, -9], end=[-9, 9], strides=[-1, 1], begin_mask=1),       # clamping
    dict(shape=(2, 3, 4, 5), begin=[0, 1, 0, 2], end=[2, 2, 4, 5], strides=[1, 1, 2, 1], shrink_axis_mask=2),
    dict(shape=(2, 3, 4, 5), begin=[1, -1], end=[2, 0], strides=[1, 1], ellipsis_mask=0, shrink_axis_mask=3),
    dict(shape=(2, 3, 4, 5), begin=[0, 1], end=[0, 3], strides=[1, 1], ellipsis_mask=1),   # [..., 1:3]
    dict(shape=(2, 3, 4, 5), begin=[1, 0, 2], end=[2, 0, 4], strides=[1, 1, 1], ellipsis_mask=2),  # [1:2, ..., 2:4]
    dict(shape=(3, 4), begin=[0, 0, 1], end=[0, 3, 3], strides=[1, 1, 1], new_axis_mask=1),
    dict(shape=(3, 4), begin=[1, 0, 0], end=[2, 0, 4], strides=[1, 1, -1], new_axis_mask=2, end_mask=4),
    dict(shape=(1, 5, 8, 3), begin=[0, 0, 0, 1], end=[1, 5, 8, 2], strides=[1, 1, 1, 1], shrink_axis_mask=8),
    dict(shape=(2, 3, 4, 5), begin=[0, 1, 1, 1], end=[2, 1, 2, 3], strides=[1, 1, 1, 1], offset=True),
    dict(shape=(2, 3, 4, 5), begin=[-1, 0, -3, 1], end=[1, 2, 2, 2], strides=[1, 1, 1, 2], offset=True),
    dict(shape=(6,), begin=[4], end=[0], strides=[-2]),
    dict(shape=(2, 3, 4, 5), begin=[1, 0], end=[2, 0], strides=[1, 1], ellipsis_mask=2, shrink_axis_mask=1),
    dict(shape=(3, 4, 5), begin=[0, 1, 0], end=[0, 2, 0], strides=[1, 1, 1], new_axis_mask=4, ellipsis_mask=1),
]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("case", range(len(SS_CASES)))
def test_strided_slice(runner, rng, dtype, case):
    run(runner, rng, MM.strided_slice(dtype, **SS_CASES[case]))


def test_strided_slice_reject_shrink_out_of_range(runner, rng):
    m = MM.strided_slice("int8", (3, 4), [1, 0], [2, 4], [1, 1], shrink_axis_mask=1)
    m.tensors[1].data = np.array([3, 0], np.int32)   # row 3 of 3
    _expect_reject(runner, m, "shrink axis 0", "out of range")


def test_strided_slice_reject_offset_with_masks(runner, rng):
    m = MM.strided_slice("int8", (2, 3, 4, 5), [0, 1, 1, 1], [2, 1, 2, 3], [1, 1, 1, 1], offset=True)
    m.fields[1] = m.options.endMask = 2
    _expect_reject(runner, m, "offset", "masks")
    m = MM.strided_slice("int8", (2, 3, 4, 5), [0, 1, 1, 1], [2, 1, 2, 3], [1, 1, 1, 1], offset=True)
    for t in m.tensors[1:4]:
        t.data, t.shape = t.data[:3], (3,)
    _expect_reject(runner, m, "offset", "every dim")


def test_strided_slice_reject_non_const(runner, rng):
    m = MM.strided_slice("int8", **SS_CASES[0])
    m.tensors[2].data = None
    _expect_reject(runner, m, "end", "constant")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,begin,size", [((4, 6), [1, 2], [2, 3]), ((4, 6), [0, 3], [-1, -1]),
                                              ((2, 3, 4, 5), [1, 0, 2, 1], [1, 3, 2, -1]),
                                              ((1, 2, 3, 4, 5), [0, 1, 1, 0, 2], [1, 1, 2, 4, 3])])
def test_slice(runner, rng, dtype, shape, begin, size):
    run(runner, rng, MM.slice_(dtype, shape, begin, size))


def test_slice_int64_indices(runner, rng):
    run(runner, rng, MM.slice_("float32", (4, 6), [1, 2], [2, -1], idx_dtype=np.int64))


# ---- GATHER / GATHER_ND -------------------------------------------------------------------------

GATHER_DTYPES = ("int8", "int16", "float32", "int32", "int64", "uint8", "bool")


@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("case", [
    dict(params_shape=(5, 3), indices_shape=(4,)), dict(params_shape=(5, 3), indices_shape=(2, 3), axis=1),
    dict(params_shape=(2, 6, 4), indices_shape=(7,), axis=-2), dict(params_shape=(10,), indices_shape=()),
    dict(params_shape=(3, 5, 2), indices_shape=(3, 4), axis=1, batch_dims=1),
    dict(params_shape=(2, 3, 5, 2), indices_shape=(2, 3, 2), axis=2, batch_dims=-1),
    dict(params_shape=(2, 4, 3), indices_shape=(2, 2, 2), axis=2, batch_dims=1),
    dict(params_shape=(6, 4), indices_shape=(3, 2), idx_dtype=np.int64)])
def test_gather(runner, rng, dtype, case):
    m = MM.gather(dtype, **case)
    check(runner, rng, m, gen=MM.index_gen(m), max_saturated=None)


def test_gather_const_params_embedding_like(runner, rng):
    m = MM.gather("int8", (50, 16), (1, 12), const_params=True, rng=rng)
    check(runner, rng, m, gen=MM.index_gen(m), max_saturated=None)


def test_gather_index_out_of_range(runner, rng):
    m = MM.gather("int8", (5, 3), (4,))
    with pytest.raises(Exception, match="out of range"):
        runner(m, [MM.rand_any(rng, m.tensors[0]), np.array([0, 1, 5, 2], dtype=np.int32)])


@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("params_shape,indices_shape", [((5, 3), (4, 1)), ((5, 3), (4, 2)), ((2, 3, 4), (2, 2, 2)),
                                                        ((4, 3, 2), (3,)), ((6,), (5, 1))])
def test_gather_nd(runner, rng, dtype, params_shape, indices_shape):
    m = MM.gather_nd(dtype, params_shape, indices_shape)
    check(runner, rng, m, gen=MM.index_gen(m), max_saturated=None)


def test_gather_nd_int64_and_out_of_range(runner, rng):
    m = MM.gather_nd("float32", (4, 3), (2, 2), idx_dtype=np.int64)
    check(runner, rng, m, gen=MM.index_gen(m), max_saturated=None)
    with pytest.raises(Exception, match="out of range"):
        runner(m, [MM.rand_any(rng, m.tensors[0]), np.array([[0, 1], [4, 0]], dtype=np.int64)])


# ---- MEAN / SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD -----------------------------------------

RED_SHAPES = [((2, 3, 4), [1]), ((2, 3, 4), [0, 2]), ((1, 5, 5, 8), [1, 2]), ((1, 5, 5, 8), [-1]),
              ((3, 4), [0, 1]), ((2, 3, 4, 5), [3, 1, 1]), ((7,), [0]), ((2, 1, 3, 2, 3), [0, 3])]


@pytest.mark.parametrize("kind", ["mean", "sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("shape,axes", RED_SHAPES)
@pytest.mark.parametrize("keep", [False, True])
def test_reduce_plain(runner, rng, kind, dtype, shape, axes, keep):
    def gen(rng_, t):
        if t.dtype == np.float32:
            return rng_.normal(0, 1, t.shape).astype(np.float32)
        return rng_.integers(-2**20, 2**20, t.shape).astype(t.dtype)
    check(runner, rng, MM.reduce(kind, dtype, shape, axes, keep), gen=gen, max_saturated=None)


# int16 SUM: LiteRT 2.3's reference reads int16 data as uint8, so there is no oracle (see below).
@pytest.mark.parametrize("kind,dtype", [("mean", "int8"), ("mean", "uint8"), ("mean", "int16"), ("sum", "int8"),
                                        ("sum", "uint8")])
@pytest.mark.parametrize("shape,axes", RED_SHAPES)
@pytest.mark.parametrize("keep", [False, True])
def test_reduce_quantized(runner, rng, kind, dtype, shape, axes, keep):
    # different input and output quantization: the requantizing path
    n = int(np.prod([shape[a] for a in set(a % len(shape) for a in axes)]))
    s_in = float(rng.uniform(0.01, 0.1))
    s_out = s_in * float(rng.uniform(0.3, 0.8)) * (1.0 if kind == "mean" else np.sqrt(n) * 2.5)
    if dtype == "int16":
        in_q, out_q = dict(scale=[s_in / 256], zp=[0]), dict(scale=[s_out / 256], zp=[0])
    else:
        base = 128 if dtype == "uint8" else 0
        in_q = dict(scale=[s_in], zp=[base + int(rng.integers(-20, 21))])
        out_q = dict(scale=[s_out], zp=[base + int(rng.integers(-20, 21))])
    m = MM.reduce(kind, dtype, shape, axes, keep, in_q=in_q, out_q=out_q)
    if kind == "sum" and dtype != "uint8":
        check_sum_via_uint8(runner, rng, m)
    else:
        check(runner, rng, m, gen=MM.rand_any)


def check_sum_via_uint8(runner, rng, m):
    """LiteRT 2.3's reference SUM reads int8 and int16 data as uint8 (its int8 results are the uint8
    ones reinterpreted). int8 SUM is checked through its exact uint8 twin instead: data and both
    zero points shifted by 128 give the same sum minus zero point * count, hence the same output
    plus 128. int16 SUM (same code as int8/uint8, with int16 bounds) has no oracle to compare with."""
    x = MM.rand_any(rng, m.tensors[0])
    twin = MM.reduce("sum", "uint8", m.tensors[0].shape, list(m.tensors[1].data), bool(m.fields[0]),
                     in_q=dict(scale=m.tensors[0].scale, zp=[m.tensors[0].zp[0] + 128]),
                     out_q=dict(scale=m.tensors[2].scale, zp=[m.tensors[2].zp[0] + 128]))
    want = (run_oracle(twin, [(x.astype(np.int16) + 128).astype(np.uint8)])[0].astype(np.int16) - 128).astype(np.int8)
    got = np.asarray(runner(m, [x])[0]).reshape(want.shape)
    np.testing.assert_array_equal(got, want, err_msg=m.desc)
    assert np.mean(np.abs(want.astype(int)) >= 127) < 0.6, f"{m.desc}: saturated"


@pytest.mark.parametrize("kind", ["mean", "sum"])
def test_reduce_same_quant_and_large_count(runner, rng, kind):
    for shape, axes in [((1, 12, 12, 4), [1, 2]), ((1, 300), [1]), ((2, 3), [1])]:
        q = dict(scale=[0.05], zp=[-3])
        out_q = q if kind == "mean" else dict(scale=[0.05 * np.sqrt(shape[axes[0]]) * 3], zp=[2])
        m = MM.reduce(kind, "int8", shape, axes, True, in_q=q, out_q=out_q)
        if kind == "sum":
            check_sum_via_uint8(runner, rng, m)
        else:
            check(runner, rng, m, gen=MM.rand_any)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("shape,axes", RED_SHAPES[:5])
def test_reduce_minmax_quantized(runner, rng, kind, dtype, shape, axes):
    check(runner, rng, MM.reduce(kind, dtype, shape, axes), gen=MM.rand_any)


def test_reduce_minmax_reject_quant_change(runner, rng):
    m = MM.reduce("max", "int8", (2, 3), [1], in_q=MM.qkw("int8"), out_q=MM.qkw("int8", 0.1, 0))
    _expect_reject(runner, m, "quantization")


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "int8", "int16"])
@pytest.mark.parametrize("shape,axes", [((2, 3, 4), [1]), ((3, 4), [0, 1]), ((2, 5, 2), [0, 2]), ((4, 2), [-1])])
def test_reduce_prod(runner, rng, dtype, shape, axes):
    n = int(np.prod([shape[a] for a in set(a % len(shape) for a in axes)]))
    in_q = out_q = None
    if dtype in ("int8", "int16"):
        s_in = 0.02 if dtype == "int8" else 0.02 / 256
        in_q = dict(scale=[s_in], zp=[int(rng.integers(-5, 6)) if dtype == "int8" else 0])
        # values of +-(1..3) real: products up to 3^n
        out_q = dict(scale=[(2.0 ** n) / (127 if dtype == "int8" else 32767)], zp=[0])

    def gen(rng_, t):
        if t.dtype == np.float32:
            return rng_.uniform(-2, 2, t.shape).astype(np.float32)
        if t.dtype in (np.int32, np.int64):
            return rng_.integers(-40, 40, t.shape).astype(t.dtype)
        real = rng_.uniform(-2.2, 2.2, t.shape)
        return np.clip(np.round(real / t.scale[0]) + t.zp[0], *np.iinfo(t.dtype).__dict__ and
                       (np.iinfo(t.dtype).min, np.iinfo(t.dtype).max)).astype(t.dtype)
    check(runner, rng, MM.reduce("prod", dtype, shape, axes, in_q=in_q, out_q=out_q), gen=gen, max_saturated=None)


def test_reduce_reject_non_const_axis(runner, rng):
    m = MM.reduce("mean", "int8", (2, 3), [1])
    m.tensors[1].data = None
    _expect_reject(runner, m, "axis", "constant")


# ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR --------------------------------------------------

RESIZE_CASES = [((1, 4, 5, 3), (8, 10)), ((2, 5, 3, 2), (3, 7)), ((1, 8, 8, 1), (3, 3)), ((1, 1, 1, 4), (2, 3)),
                ((1, 6, 4, 2), (6, 4)), ((1, 3, 7, 2), (1, 1)), ((1, 2, 2, 5), (9, 7))]
RESIZE_MODES = [(False, False), (True, False), (False, True)]


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "uint8"])
@pytest.mark.parametrize("shape,size", RESIZE_CASES)
@pytest.mark.parametrize("mode", RESIZE_MODES)
def test_resize_bilinear(runner, rng, dtype, shape, size, mode):
    run(runner, rng, MM.resize("bilinear", dtype, shape, size, *mode))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "uint8", "int32"])   # LiteRT: no int64
@pytest.mark.parametrize("shape,size", RESIZE_CASES)
@pytest.mark.parametrize("mode", RESIZE_MODES)
def test_resize_nearest(runner, rng, dtype, shape, size, mode):
    run(runner, rng, MM.resize("nearest", dtype, shape, size, *mode))


def test_resize_reject_non_const_size(runner, rng):
    m = MM.resize("bilinear", "int8", (1, 4, 4, 1), (8, 8))
    m.tensors[1].data = None
    _expect_reject(runner, m, "size", "constant")


# ---- SPACE_TO_DEPTH / DEPTH_TO_SPACE / SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND -------------------

S2D_DTYPES = ("int8", "float32", "int32", "int64", "uint8")   # LiteRT: no int16, bool


@pytest.mark.parametrize("dtype", S2D_DTYPES)
@pytest.mark.parametrize("shape,block", [((1, 4, 6, 3), 2), ((2, 6, 3, 2), 3), ((1, 2, 2, 1), 1), ((1, 8, 8, 5), 4)])
def test_space_to_depth(runner, rng, dtype, shape, block):
    run(runner, rng, MM.space_to_depth(dtype, shape, block))


@pytest.mark.parametrize("dtype", S2D_DTYPES)
@pytest.mark.parametrize("shape,block", [((1, 2, 3, 12), 2), ((2, 2, 1, 18), 3), ((1, 1, 1, 16), 4)])
def test_depth_to_space(runner, rng, dtype, shape, block):
    run(runner, rng, MM.space_to_depth(dtype, shape, block, inverse=True))


S2B_DTYPES = ("int8", "int16", "float32", "int32", "int64", "uint8")


@pytest.mark.parametrize("dtype", S2B_DTYPES)
@pytest.mark.parametrize("shape,block,pads", [((1, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]),
                                              ((2, 5, 3, 2), [2, 3], [[1, 0], [2, 1]]),
                                              ((1, 3, 2), [2], [[1, 2]]), ((3, 2, 4, 1), [1, 2], [[0, 3], [0, 2]])])
def test_space_to_batch(runner, rng, dtype, shape, block, pads):
    run(runner, rng, MM.space_to_batch(dtype, shape, block, pads))


@pytest.mark.parametrize("dtype", S2B_DTYPES)
@pytest.mark.parametrize("shape,block,crops", [((4, 2, 2, 3), [2, 2], [[0, 0], [0, 0]]),
                                               ((12, 2, 3, 2), [2, 3], [[1, 0], [2, 1]]),
                                               ((4, 3, 2), [2], [[1, 2]]), ((6, 2, 2, 1), [3, 2], [[2, 1], [0, 3]])])
def test_batch_to_space(runner, rng, dtype, shape, block, crops):
    run(runner, rng, MM.space_to_batch(dtype, shape, block, crops, inverse=True))


# ---- MIRROR_PAD ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ("int8", "int16", "float32", "int32", "int64", "uint8"))
@pytest.mark.parametrize("shape,pads", [((3, 4), [[1, 2], [3, 0]]), ((1, 4, 5, 2), [[0, 0], [2, 3], [1, 1], [0, 1]]),
                                        ((5,), [[4, 3]]), ((2, 3, 4), [[1, 1], [2, 2], [0, 3]])])
@pytest.mark.parametrize("mode", [0, 1])
def test_mirror_pad(runner, rng, dtype, shape, pads, mode):
    if mode == 0:   # REFLECT pads at most dim - 1
        pads = [[min(a, d - 1), min(b, d - 1)] for d, (a, b) in zip(shape, pads)]
    run(runner, rng, MM.mirror_pad(dtype, shape, pads, mode))


# ---- FILL / ZEROS_LIKE / BROADCAST_TO / BROADCAST_ARGS / SHAPE -------------------------------------

@pytest.mark.parametrize("dtype", ("int8", "int16", "float32", "int32", "int64", "bool"))
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 5), (7,), (1, 2, 3, 4, 5)])
def test_fill(runner, rng, dtype, shape):
    run(runner, rng, MM.fill(dtype, shape))


def test_fill_non_const_dims(runner, rng):
    m = MM.fill("float32", (2, 3), const_dims=False)
    x = [np.array([2, 3], np.int32), np.array(1.25, np.float32)]
    np.testing.assert_array_equal(np.asarray(runner(m, x)[0]).reshape(2, 3), run_oracle(m, x)[0])


@pytest.mark.parametrize("dtype", ("float32", "int32", "int64"))   # LiteRT: only these
def test_zeros_like(runner, rng, dtype):
    run(runner, rng, MM.zeros_like(dtype, (2, 3, 4)))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1, 3), (2, 4, 3)),
                                          ((1,), (2, 2, 2, 2)), ((4, 1, 1), (2, 4, 3, 5)), ((2, 3), (2, 3))])
def test_broadcast_to(runner, rng, dtype, shape, target):
    run(runner, rng, MM.broadcast_to(dtype, shape, target))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("s0,s1", [([2, 1, 3], [4, 1]), ([5], [1, 2, 1]), ([1, 1], [3, 4])])
def test_broadcast_args(runner, rng, dtype, s0, s1):
    m = MM.broadcast_args(dtype, len(s0), len(s1))
    x = [np.array(s0, dtype), np.array(s1, dtype)]
    want = run_oracle(m, x)[0]
    np.testing.assert_array_equal(np.asarray(runner(m, x)[0]).reshape(want.shape), want)


@pytest.mark.parametrize("out_dtype", ["int32", "int64"])
@pytest.mark.parametrize("shape", [(3, 4), (1, 2, 3, 4, 5), (7,)])
def test_shape(runner, rng, out_dtype, shape):
    check(runner, rng, MM.shape_op("int8", shape, out_dtype), gen=MM.rand_any, max_saturated=None)


# ---- ARG_MAX / ARG_MIN / CUMSUM / EMBEDDING_LOOKUP ----------------------------------------------

@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int32"])   # LiteRT: no int16, int64 input
@pytest.mark.parametrize("shape,axis", [((3, 10), 1), ((4, 5, 6), 0), ((2, 3, 4, 5), -2), ((9,), 0)])
@pytest.mark.parametrize("out_dtype", ["int32", "int64"])
def test_arg_min_max(runner, rng, kind, dtype, shape, axis, out_dtype):
    def gen(rng_, t):   # few distinct values: ties must resolve to the first index
        if t.dtype == np.float32:
            return rng_.integers(-3, 4, t.shape).astype(np.float32)
        return rng_.integers(0, 5, t.shape).astype(t.dtype)
    check(runner, rng, MM.arg_min_max(kind, dtype, shape, axis, out_dtype), gen=gen, max_saturated=None)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("shape,axis", [((3, 10), 1), ((4, 5, 6), 0), ((2, 3, 4, 5), -2)])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(runner, rng, dtype, shape, axis, exclusive, reverse):
    run(runner, rng, MM.cumsum(dtype, shape, axis, exclusive, reverse))


@pytest.mark.parametrize("dtype,out_dtype,per_row", [("float32", "float32", False), ("int8", "int8", False),
                                                     ("int32", "int32", False), ("int8", "float32", False),
                                                     ("int8", "float32", True)])
@pytest.mark.parametrize("rows,row_shape,n_ids", [(10, (4,), 3), (6, (2, 3), 8), (20, (1,), 1)])
def test_embedding_lookup(runner, rng, dtype, out_dtype, per_row, rows, row_shape, n_ids):
    m = MM.embedding_lookup(rng, dtype, out_dtype, rows, row_shape, n_ids, per_row)
    check(runner, rng, m, gen=MM.index_gen(m), max_saturated=None)


def test_embedding_lookup_reject_uint8_hybrid(runner, rng):
    _expect_reject(runner, MM.embedding_lookup(rng, "uint8", "float32", 4, (2,), 2), "uint8", "float32")


# ---- randomised sweeps of the intricate ones ----------------------------------------------------

def _random_strided_slice(rng):
    """A random STRIDED_SLICE LiteRT accepts (masks, out-of-range and negative indices, strides)."""
    while True:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.integers(1, 6, rank))
        n = int(rng.integers(1, rank + 1))
        begin = [int(v) for v in rng.integers(-7, 8, n)]
        end = [int(v) for v in rng.integers(-7, 8, n)]
        strides = [int(rng.choice([-3, -2, -1, 1, 1, 2, 3])) for _ in range(n)]
        masks = [int(rng.integers(0, 1 << n)) for _ in range(2)]
        ellipsis = (1 << int(rng.integers(0, n))) if rng.random() < 0.25 else 0
        new_axis = int(rng.integers(0, 1 << n)) if rng.random() < 0.25 else 0
        shrink = int(rng.integers(0, 1 << n)) if rng.random() < 0.4 else 0
        for k in range(n):
            if shrink >> k & 1:   # TFLite needs a positive stride and an index inside the dim there
                strides[k] = 1
                if k < rank:
                    begin[k] = int(rng.integers(-shape[k], shape[k]))
        offset = rng.random() < 0.2
        if offset:   # without masks, in range (LiteRT does not clamp offset slices; masks: refused)
            masks, ellipsis, new_axis, shrink, n = [0, 0], 0, 0, 0, rank
            begin = [int(rng.integers(0, d)) for d in shape]
            end = [int(rng.integers(0, d - b + 1)) for d, b in zip(shape, begin)]
            strides = [int(rng.integers(1, 3)) for _ in range(n)]
        try:
            m = MM.strided_slice("int8", shape, begin, end, strides, masks[0], masks[1], ellipsis, new_axis,
                                 shrink, offset=offset)
        except Exception:
            continue   # LiteRT refuses the combination
        out_shape = m.tensors[-1].shape   # LiteRT's reference crashes on some empty slices; <= 6-D here
        if 0 < np.prod(out_shape) <= 1000 and len(out_shape) <= 6:
            return m


@pytest.mark.parametrize("seed", range(48))
def test_random_strided_slice(runner, seed):
    rng = np.random.default_rng(5000 + seed)
    m = _random_strided_slice(rng)
    run(runner, rng, m)


@pytest.mark.parametrize("seed", range(24))
def test_random_mean(runner, seed):
    rng = np.random.default_rng(6000 + seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(1, 7, rank))
    axes = [int(a) for a in rng.integers(-rank, rank, int(rng.integers(1, rank + 1)))]
    dtype = str(rng.choice(["int8", "uint8", "int16", "float32"]))
    s_in = float(rng.uniform(0.005, 0.2))
    s_out = s_in * float(rng.uniform(0.2, 1.5))
    base = 128 if dtype == "uint8" else 0
    zin, zout = (0, 0) if dtype == "int16" else (base + int(rng.integers(-30, 31)), base + int(rng.integers(-30, 31)))
    q = {} if dtype == "float32" else dict(in_q=dict(scale=[s_in], zp=[zin]), out_q=dict(scale=[s_out], zp=[zout]))
    check(runner, rng, MM.reduce("mean", dtype, shape, axes, bool(rng.integers(0, 2)), **q), gen=MM.rand_any,
          max_saturated=None)


# ---- REVERSE_V2 / DYNAMIC_UPDATE_SLICE / REDUCE_ALL / REDUCE_ANY ---------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((2, 3, 4), -1), ((2, 3, 4), 0), ((1, 5, 6, 3), 2)])
def test_reverse(runner, rng, dtype, shape, axis):
    run(runner, rng, MM.reverse(dtype, shape, [axis]))


@pytest.mark.parametrize("dtype", ("int8", "int16", "float32", "int32"))
def test_reverse_contiguous_axes_bit_exact_with_tflm(runner, rng, dtype):
    """Several contiguous axes: LiteRT reverses one axis only, TFLM contiguous ones."""
    from runners import run_tflm
    check(runner, rng, MM.reverse(dtype, (2, 3, 4, 5), [1, 2]), gen=MM.rand_any, max_saturated=None,
          oracle=run_tflm)


def test_reverse_any_axes(runner, rng):
    """Any set of axes (TF's reverse_v2; neither reference kernel takes non-contiguous ones): the
    result is numpy's flip of the input."""
    m = MM.reverse("int16", (2, 3, 4, 5), [0, 2, -1])
    x = MM.rand_any(rng, m.tensors[0])
    np.testing.assert_array_equal(runner(m, [x])[0].reshape(x.shape), np.flip(x, (0, 2, 3)))


def test_reverse_repeated_axis_refused(runner, rng):
    _expect_reject(runner, MM.reverse("int8", (2, 3), [1, -1]), "axis")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("starts", [[0, 0, 0], [1, 3, 0], [5, -2, 9]])   # the last one clamped
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_dynamic_update_slice(runner, rng, dtype, starts, index_dtype):
    m = MM.dynamic_update_slice(dtype, (3, 5, 4), (2, 2, 3), index_dtype)
    check(runner, rng, m, gen=MM.dus_gen(starts), max_saturated=None)


def test_dynamic_update_slice_indices_change_between_invokes(runner, rng):
    m = MM.dynamic_update_slice("float32", (4, 6), (2, 3))
    ins = [[MM.rand_any(rng, m.tensors[0]), MM.rand_any(rng, m.tensors[1]), np.array(s, np.int32)]
           for s in ([0, 0], [2, 3], [1, 2])]
    for got, want in zip(runner(m, ins, 3), run_oracle(m, ins, 3)):
        np.testing.assert_array_equal(np.asarray(got[0]).reshape(want[0].shape), want[0])


@pytest.mark.parametrize("kind", ["all", "any"])
@pytest.mark.parametrize("shape,axes,keep", [((2, 3, 4), [1], False), ((2, 3, 4), [0, 2], True),
                                             ((8, 6), [-1], False), ((3, 4), [0, 1], False)])
def test_reduce_all_any(runner, rng, kind, shape, axes, keep):
    m = MM.reduce(kind, "bool", shape, axes, keep_dims=keep)
    count = int(np.prod([shape[a] for a in axes]))
    p_all = 0.5 ** (1 / count)   # each output True or False with even odds
    want = check(runner, rng, m, gen=MM._bools(p_all if kind == "all" else 1 - p_all), max_saturated=None)
    if want[0][0].size > 3:
        assert 0 < want[0][0].sum() < want[0][0].size, "both outcomes occur"
