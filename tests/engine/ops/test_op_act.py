"""Activation, unary math and quantization ops against LiteRT's BUILTIN_REF kernels (the oracle),
through the kernel shim and the full engine (see test_op_kernels.check): integer outputs bit for
bit, float32 within 1e-5 relative.  8-bit inputs cover every value of the type; int16 inputs the
whole range, so table lookups, interpolation and saturation are all exercised."""
import numpy as np
import pytest

import models_act as A
from opmodels import BO
from runners import run_oracle
from test_op_kernels import _expect_reject, check

SHAPES = [(4, 64), (2, 3, 7, 5), (1, 300)]   # batch > 1, 4-D, odd sizes


def _int16_full(rng, t):
    if t.dtype == np.int16:
        v = np.concatenate([rng.integers(-32768, 32768, int(np.prod(t.shape)) - 5), [-32768, 32767, 0, 1, -1]])
        return rng.permutation(v).astype(np.int16).reshape(t.shape)
    return A.full_range(rng, t)


# ---- LOGISTIC / TANH ----------------------------------------------------------------------------

@pytest.mark.parametrize("op", [BO.LOGISTIC, BO.TANH])
@pytest.mark.parametrize("shape", SHAPES)
def test_sigmoid_tanh_float(runner, rng, op, shape):
    check(runner, rng, A.unary(op, "float32", shape), gen=A.full_range)


@pytest.mark.parametrize("op", [BO.LOGISTIC, BO.TANH])
@pytest.mark.parametrize("in_q", [(0.05, 3), (0.03, -20), (0.02, 0), (0.0078125, -128), (0.04, 100)])
def test_sigmoid_tanh_int8(runner, rng, op, in_q):
    # LOGISTIC int8 needs output scale 1/256 (any zero point); TANH takes any output quantization.
    outs = [(1 / 256, -128), (1 / 256, -100)] if op == BO.LOGISTIC else [(1 / 128, 0), (0.011, 5)]
    for out_q in outs:
        check(runner, rng, A.unary(op, "int8", (4, 64), in_q, out_q), gen=A.full_range)


@pytest.mark.parametrize("op", [BO.LOGISTIC, BO.TANH])
@pytest.mark.parametrize("in_scale", [2 ** -12, 2 ** -11, 2 ** -10, 0.0003, 1e-4, 0.001, 3.05e-5])
def test_sigmoid_tanh_int16(runner, rng, op, in_scale):
    # Power-of-two scales take the direct path where TFLite has one (2^-12; TANH also 2^-11), the
    # others the rescaling multiplier.
    check(runner, rng, A.unary(op, "int16", (16, 64), (in_scale, 0), (2 ** -15, 0)), gen=_int16_full)


def test_reject_logistic_int8_output_scale(runner, rng):
    _expect_reject(runner, A.unary(BO.LOGISTIC, "int8", (2, 8), (0.05, 0), (1 / 128, 0)), "1/256")


def test_reject_tanh_int16_zero_point(runner, rng):
    _expect_reject(runner, A.unary(BO.TANH, "int16", (2, 8), (2 ** -12, 3), (2 ** -15, 0)), "zero point")


# ---- RELU family --------------------------------------------------------------------------------

RELUS = [BO.RELU, BO.RELU6, BO.RELU_N1_TO_1, BO.RELU_0_TO_1]


@pytest.mark.parametrize("op", RELUS)
@pytest.mark.parametrize("shape", SHAPES)
def test_relu_float(runner, rng, op, shape):
    check(runner, rng, A.unary(op, "float32", shape), gen=A.full_range)


@pytest.mark.parametrize("op", RELUS)
@pytest.mark.parametrize("q", [((0.05, 3), (0.05, 3)), ((0.05, 3), (0.03, -100)), ((0.1, -20), (0.02, -60)),
                               ((0.01, 10), (0.005, -20))])
def test_relu_int8(runner, rng, op, q):
    check(runner, rng, A.unary(op, "int8", (4, 64), *q), gen=A.full_range)


@pytest.mark.parametrize("op", [BO.RELU, BO.RELU6])
@pytest.mark.parametrize("q", [(0.001, 0.0007), (0.0003, 0.0003), (1e-4, 2e-4)])
def test_relu_int16(runner, rng, op, q):
    check(runner, rng, A.unary(op, "int16", (3, 5, 17), (q[0], 0), (q[1], 0)), gen=_int16_full)


@pytest.mark.parametrize("op", [BO.RELU_N1_TO_1, BO.RELU_0_TO_1])
def test_reject_relu_int16(runner, rng, op):
    # LiteRT has no int16 kernel for these two either.
    _expect_reject(runner, A.unary(op, "int16", (2, 8), (0.001, 0), (0.001, 0)), "int16")


# ---- LEAKY_RELU ---------------------------------------------------------------------------------

def _leaky(dtype, alpha, shape=(4, 64), in_q=None, out_q=None):
    return A.unary(BO.LEAKY_RELU, dtype, shape, in_q, out_q, attrs={"alpha": alpha}, fields={0: float(alpha)})


@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5, -0.3, 0.0])
def test_leaky_relu(runner, rng, alpha):
    check(runner, rng, _leaky("float32", alpha, (2, 3, 7, 5)), gen=A.full_range)
    check(runner, rng, _leaky("int8", alpha, (4, 64), (0.05, 3), (0.04, -10)), gen=A.full_range)
    check(runner, rng, _leaky("int8", alpha, (4, 64), (0.1, -30), (0.07, 20)), gen=A.full_range)
    check(runner, rng, _leaky("int16", alpha, (4, 64), (0.001, 0), (0.0008, 0)), gen=_int16_full,
          max_saturated=None if alpha == 1.5 else 0.6)


# ---- HARD_SWISH ---------------------------------------------------------------------------------

@pytest.mark.parametrize("q", [((0.05, 3), (0.04, -10)), ((0.1, -20), (0.06, -100)), ((0.02, 0), (0.015, 5)),
                               ((0.03, 60), (0.02, -60)), ((0.2, -5), (0.1, -90))])
def test_hard_swish_int8(runner, rng, q):
    check(runner, rng, A.unary(BO.HARD_SWISH, "int8", (4, 64), *q), gen=A.full_range)


@pytest.mark.parametrize("shape", SHAPES)
def test_hard_swish_float(runner, rng, shape):
    check(runner, rng, A.unary(BO.HARD_SWISH, "float32", shape), gen=A.full_range)


def test_reject_hard_swish_int16(runner, rng):
    _expect_reject(runner, A.unary(BO.HARD_SWISH, "int16", (2, 8), (0.001, 0), (0.001, 0)), "int16")


# ---- QUANTIZE (pairs beyond test_op_kernels') ---------------------------------------------------

def _gen_for(lo, hi):
    def gen(rng, t):
        if t.dtype == np.float32:
            return rng.normal(0, 2, t.shape).astype(np.float32)
        return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)
    return gen


@pytest.mark.parametrize("in_dtype,out_dtype,in_q,out_q,rng_range", [
    ("int32", "int8", (0.0001, 0), (0.05, 3), (-60000, 60000)),
    ("int32", "int16", (1e-5, 7), (0.001, 0), (-3000000, 3000000)),
    ("int32", "int16", (0.0005, -3), (0.0006, 0), (-40000, 40000)),
    ("uint8", "uint8", (0.05, 128), (0.03, 120), (0, 255)),
    ("int16", "int8", (0.0005, 0), (0.1, -4), (-20000, 20000)),
])
def test_quantize_requant_more(runner, rng, in_dtype, out_dtype, in_q, out_q, rng_range):
    m = A.unary(BO.QUANTIZE, in_dtype, (3, 41), in_q, out_q, out_dtype=out_dtype)
    check(runner, rng, m, gen=_gen_for(*rng_range))


@pytest.mark.parametrize("out_dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("qdim", [0, 1, 2])
def test_quantize_per_channel(runner, rng, out_dtype, qdim):
    shape = (2, 3, 5)
    nch = shape[qdim]
    scales = list(rng.uniform(0.01, 0.05, nch))
    base = {"int8": 0, "uint8": 128, "int16": 0}[out_dtype]
    zps = [base + int(z) for z in rng.integers(-5, 6, nch)] if out_dtype != "int16" else [0] * nch
    m = A.unary(BO.QUANTIZE, "float32", shape, None, (scales, zps, qdim), out_dtype=out_dtype)
    check(runner, rng, m, gen=_gen_for(0, 0))


def test_reject_quantize_int16_zero_point(runner, rng):
    _expect_reject(runner, A.unary(BO.QUANTIZE, "int16", (2, 8), (0.001, 3), (0.002, 0)), "zero point")


# ---- unary math (unary.c) -----------------------------------------------------------------------

def _u(op, dtype, shape=(4, 64), in_q=None, out_q=None, **kw):
    m = A.unary(op, dtype, shape, in_q, out_q, **kw)
    if op in (BO.ELU, BO.CEIL, BO.ROUND):
        # BUILTIN_REF does not register these; the builtin kernels without XNNPACK are the same arithmetic
        # (ELU int8: the same table) and float32 is compared within 1e-5 anyway.
        m.oracle_resolver = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
    return m


def _positive(rng, t):
    if t.dtype == np.float32:
        return rng.uniform(0.01, 50, t.shape).astype(np.float32)
    return A.full_range(rng, t)


FLOAT_UNARY = [BO.ABS, BO.CEIL, BO.COS, BO.ELU, BO.EXP, BO.FLOOR, BO.GELU, BO.LOG, BO.NEG, BO.ROUND,
               BO.RSQRT, BO.SIN, BO.SQRT, BO.SQUARE]


@pytest.mark.parametrize("op", FLOAT_UNARY)
@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 7, 5)])
def test_unary_float(runner, rng, op, shape):
    gen = _positive if op in (BO.LOG, BO.SQRT, BO.RSQRT) else A.full_range
    check(runner, rng, _u(op, "float32", shape), gen=gen)


def test_round_half_even(runner, rng):
    m = _u(BO.ROUND, "float32", (1, 12))
    x = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.49999997, 1e8, -7.5, 1e-30]], np.float32)
    check(runner, rng, m, gen=lambda r, t: x)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(runner, rng, approximate):
    kw = dict(attrs={"approximate": approximate}, fields={0: int(approximate)})
    check(runner, rng, _u(BO.GELU, "float32", (2, 3, 7, 5), **kw), gen=A.full_range)
    for q in [((0.05, 3), (0.03, -100)), ((0.02, -10), (0.01, -60))]:
        check(runner, rng, _u(BO.GELU, "int8", (4, 64), *q, **kw), gen=A.full_range)
    check(runner, rng, _u(BO.GELU, "int16", (16, 64), (0.0003, 0), (0.0003, 0), **kw), gen=_int16_full)


@pytest.mark.parametrize("op", [BO.ELU, BO.EXP, BO.LOG])
@pytest.mark.parametrize("q", [((0.05, 3), (0.05, -3)), ((0.02, -10), (0.1, 20)), ((0.03, -120), (0.2, -100))])
def test_unary_lut_int8(runner, rng, op, q):
    # LOG maps x <= 0 to the lowest output (TFLite's table); EXP / ELU saturate where they must.
    check(runner, rng, _u(op, "int8", (4, 64), *q), gen=A.full_range, max_saturated=0.7)


@pytest.mark.parametrize("op", [BO.EXP, BO.LOG])
@pytest.mark.parametrize("q", [((0.0001, 0), (0.001, 0)), ((0.0003, 0), (0.0002, 0))])
def test_unary_lut_int16(runner, rng, op, q):
    check(runner, rng, _u(op, "int16", (16, 64), *q), gen=_int16_full, max_saturated=0.7)


@pytest.mark.parametrize("dtype,q", [("int8", ((0.05, 3), (0.05, 3))), ("int8", ((0.05, 3), (0.03, -100))),
                                     ("int8", ((0.02, -128), (0.02, -128))), ("int16", ((0.001, 0), (0.0007, 0))),
                                     ("int16", (None, None)), ("int32", (None, None))])
def test_abs_int(runner, rng, dtype, q):
    check(runner, rng, _u(BO.ABS, dtype, (4, 64), *q), gen=A.full_range)


@pytest.mark.parametrize("dtype,q", [("int8", ((0.05, 3), (0.1, -3))), ("int16", ((0.001, 0), (0.001, 0))),
                                     ("int32", (None, None))])
def test_neg_int(runner, rng, dtype, q):
    # LiteRT negates the raw integers (quantization parameters are not used); -min wraps to min.
    check(runner, rng, _u(BO.NEG, dtype, (4, 64), *q), gen=A.full_range)


@pytest.mark.parametrize("op", [BO.SIN, BO.COS, BO.SQUARE, BO.FLOOR])
def test_reject_unary_int8(runner, rng, op):
    _expect_reject(runner, _u(op, "int8", (2, 8), (0.05, 0), (0.05, 0)), "int8")


# ---- CAST ---------------------------------------------------------------------------------------

CAST_TYPES = ["float32", "int8", "uint8", "int16", "int32", "bool"]


def _cast_input(rng, t):
    if t.dtype == np.bool_:
        return rng.integers(0, 2, t.shape).astype(np.bool_)
    if t.dtype == np.float32:
        # in range, fractional, negative zero, beyond every integer type, NaN / inf
        v = rng.normal(0, 100, t.shape).astype(np.float32)
        special = [0.0, -0.0, 0.7, -0.7, 127.9, -128.9, 255.9, 40000.5, -40000.5, 3e9, -3e9, np.nan, np.inf, -np.inf]
        v.flat[:len(special)] = special
        return v
    info = np.iinfo(t.dtype)
    v = rng.integers(info.min, info.max, t.shape, endpoint=True).astype(t.dtype)
    v.flat[:3] = [info.min, info.max, 0]
    return v


@pytest.mark.parametrize("in_dtype", CAST_TYPES)
@pytest.mark.parametrize("out_dtype", CAST_TYPES)
def test_cast(runner, rng, in_dtype, out_dtype):
    check(runner, rng, A.cast(in_dtype, out_dtype, (3, 17)), gen=_cast_input, max_saturated=None)



@pytest.mark.parametrize("in_dtype,out_dtype", [("float32", "float32"), ("int8", "int8"), ("float32", "int32"), ("int32", "bool")])
def test_cast_zero_elements(runner, in_dtype, out_dtype):
    """A zero-element tensor is valid: the kernel copies nothing (under UBSan a NULL data pointer
    passed to memmove failed here, found by the fuzzer)."""
    m = A.cast(in_dtype, out_dtype, (0, 5))
    out = runner(m, [np.zeros((0, 5), dtype=m.tensors[0].dtype)])
    assert out[0].shape == (0, 5)

# ---- SOFTMAX int16 ------------------------------------------------------------------------------

def _softmax16_input(rng, t):
    # A spread of ~12 real units within each row, so that outputs are not mostly 0.
    spread = int(min(30000, 12.0 / t.scale[0]))
    center = rng.integers(-30000 + spread // 2, 30000 - spread // 2)
    return (center + rng.integers(-spread // 2, spread // 2 + 1, t.shape)).astype(np.int16)


@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 10), (5,), (1, 2, 3, 7), (3, 1)])
@pytest.mark.parametrize("in_scale,beta", [(0.001, 1.0), (0.0003, 1.0), (0.002, 0.5), (0.0001, 2.0)])
def test_softmax_int16(runner, rng, shape, in_scale, beta):
    m = A.unary(BO.SOFTMAX, "int16", shape, (in_scale, 0), (1 / 32768, 0), attrs={"beta": beta},
                fields={0: float(beta)})
    check(runner, rng, m, gen=_softmax16_input, max_saturated=None)


def test_reject_softmax_int16_rank5(runner, rng):
    m = A.unary(BO.SOFTMAX, "int16", (1, 2, 1, 2, 3), (0.001, 0), (1 / 32768, 0), attrs={"beta": 1.0},
                fields={0: 1.0})
    _expect_reject(runner, m, "rank")


# ---- L2_NORMALIZATION ---------------------------------------------------------------------------

def _l2(dtype, shape, in_q=None):
    return A.unary(BO.L2_NORMALIZATION, dtype, shape, in_q, (1 / 128, 0) if dtype == "int8" else None)


@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 10), (5,), (1, 2, 3, 7), (6, 2)])
def test_l2norm(runner, rng, shape):
    check(runner, rng, _l2("float32", shape), gen=A.full_range)
    for q in [(0.05, 3), (0.1, -20), (0.02, 127), (0.01, -128)]:
        check(runner, rng, _l2("int8", shape, q), gen=A.full_range, max_saturated=None if shape[-1] < 3 else 0.6)


def test_l2norm_int8_small_sums(runner, rng):
    # rows at the zero point (sum 0) or one step away (sum 1): TFLite's special case
    m = _l2("int8", (4, 8), (0.05, 3))

    def gen(rng_, t):
        x = np.full(t.shape, 3, np.int8)
        x[1, 2] = 4
        x[2, :] = rng_.integers(-5, 10, 8)
        x[3, :] = rng_.integers(-128, 128, 8)
        return x
    check(runner, rng, m, gen=gen, max_saturated=None)


def test_reject_l2norm_output_quant(runner, rng):
    _expect_reject(runner, A.unary(BO.L2_NORMALIZATION, "int8", (2, 8), (0.05, 0), (1 / 256, 0)), "1/128")


# ---- LOG_SOFTMAX --------------------------------------------------------------------------------

def _log_softmax_input(rng, t):
    if t.dtype == np.float32:
        return rng.normal(0, 3.0, t.shape).astype(np.float32)
    # rows spread over ~12 real units: inside the [-16, 0] output range
    spread = int(min(255, max(2, 12.0 / t.scale[0])))
    center = int(rng.integers(-128 + spread // 2, 128 - spread // 2))
    return np.clip(center + rng.integers(-spread // 2, spread // 2 + 1, t.shape), -128, 127).astype(np.int8)


@pytest.mark.parametrize("shape", [(4, 64), (2, 3, 10), (5,), (1, 2, 3, 7), (3, 2)])
def test_log_softmax(runner, rng, shape):
    check(runner, rng, A.unary(BO.LOG_SOFTMAX, "float32", shape), gen=_log_softmax_input)
    for q in [(0.05, 3), (0.1, -20), (0.02, 0), (0.3, 100)]:
        check(runner, rng, A.unary(BO.LOG_SOFTMAX, "int8", shape, q, (16 / 256, 127)), gen=_log_softmax_input)


def test_log_softmax_int8_all_inputs(runner, rng):
    # every input value in one row, several scales: the far tail falls below the limit (-128)
    for scale in (0.00390625, 0.02, 0.1, 0.25):
        m = A.unary(BO.LOG_SOFTMAX, "int8", (2, 256), (scale, 0), (16 / 256, 127))
        check(runner, rng, m, gen=lambda r, t: np.stack([r.permutation(np.arange(-128, 128))] * 2).astype(np.int8),
              max_saturated=None)


def test_reject_log_softmax_output_quant(runner, rng):
    _expect_reject(runner, A.unary(BO.LOG_SOFTMAX, "int8", (2, 8), (0.05, 0), (1 / 256, -128)), "16/256")


# ---- PRELU --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,alpha_shape", [((1, 4, 5, 3), (3,)), ((2, 4, 5, 3), (1, 1, 3)),
                                               ((1, 4, 5, 3), (4, 5, 3)), ((3, 7), (3, 7)), ((2, 6, 4), (6, 1)),
                                               ((2, 3, 4, 5), (1, 3, 1, 1))])
def test_prelu(runner, rng, dtype, shape, alpha_shape):
    check(runner, rng, A.prelu(rng, dtype, shape, alpha_shape), gen=A.full_range)


def test_prelu_alpha_input(runner, rng):
    # alpha as a second graph input instead of a constant
    for dtype in ("float32", "int8"):
        check(runner, rng, A.prelu(rng, dtype, (2, 5, 4), (4,), const_alpha=False), gen=A.full_range)


def test_reject_prelu_alpha_shape(runner, rng):
    _expect_reject(runner, A.prelu(rng, "int8", (1, 4, 5, 3), (5, 1, 3)), "broadcast")


# ---- DEQUANTIZE per channel ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("qdim", [0, 1, 2])
def test_dequantize_per_channel(runner, rng, dtype, qdim):
    shape = (2, 3, 5)
    nch = shape[qdim]
    base = 128 if dtype == "uint8" else 0
    m = A.unary(BO.DEQUANTIZE, dtype, shape, (list(rng.uniform(0.001, 0.1, nch)),
                                              [base + int(z) for z in rng.integers(-10, 11, nch)], qdim),
                None, out_dtype="float32")
    check(runner, rng, m, gen=A.full_range)


# ---- quantized SQRT / RSQRT ---------------------------------------------------------------------

def _nonneg(rng, t):
    if t.dtype == np.int8:
        return rng.permutation(np.resize(np.arange(t.zp[0], 128), int(np.prod(t.shape)))).astype(np.int8).reshape(t.shape)
    v = rng.integers(0, 32768, t.shape)
    v.flat[:3] = [0, 1, 32767]
    return v.astype(np.int16)


@pytest.mark.parametrize("op", [BO.SQRT, BO.RSQRT])
@pytest.mark.parametrize("dtype,q", [("int8", ((0.05, 3), (0.05, -3))), ("int8", ((0.02, -100), (0.03, -120))),
                                     ("int8", ((0.003, -128), (0.01, -128))), ("int16", ((0.001, 0), (0.001, 0))),
                                     ("int16", ((0.0003, 0), (0.01, 0)))])
def test_sqrt_rsqrt_quant(runner, rng, op, dtype, q):
    check(runner, rng, _u(op, dtype, (4, 64), *q), gen=_nonneg, max_saturated=0.7)


@pytest.mark.parametrize("op", [BO.SQRT, BO.RSQRT])
def test_sqrt_rsqrt_negative_input_is_an_error(runner, rng, op):
    # LiteRT fails the invoke too ("only defined for non-negative / positive values")
    m = _u(op, "int8", (2, 8), (0.05, 3), (0.05, -3))
    x = np.full((2, 8), 10, np.int8)
    x[1, 3] = 2
    with pytest.raises(Exception):
        run_oracle(m, [x])
    with pytest.raises(Exception) as ei:
        runner(m, [x])
    assert "below the zero point" in str(ei.value)
