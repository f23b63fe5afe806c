"""Elementwise binary ops (models_binary.py) against LiteRT's reference kernels: broadcast shapes
up to 6-D, batch > 1, fused activations, non-trivial scales and zero points, int16 with general and
power-of-two scales, and every dtype the reference kernels support."""

import numpy as np
import pytest

import models_binary as MB
from models_binary import COMPARISONS
from runners import KernelError, run_oracle
from test_op_kernels import check

SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((4, 1, 3), (1, 5, 1)), ((1, 4, 5, 3), (1, 1, 1, 3)),
          ((6,), (1,)), ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)), ((2, 1, 2, 1, 2, 3), (1, 3, 1, 2, 1, 1))]
ACTS = (0, 1, 2, 3)


def _check(runner, rng, m, op, **kw):
    out = m.tensors[m.outputs[0]]
    if out.dtype == np.bool_:
        want = check(runner, rng, m, gen=MB.gen_for(op, m), max_saturated=None)
        w = want[-1][0]
        # both outcomes must occur, or the comparison was not tested
        assert w.size < 8 or 0 < w.sum() < w.size, f"{m.desc}: output is all {bool(w.flat[0])}"
        return want
    return check(runner, rng, m, gen=MB.gen_for(op, m), **kw)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_arith_broadcast(runner, rng, op, dtype, shapes):
    m = MB.binary(rng, op, dtype, *shapes)
    _check(runner, rng, m, op)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
@pytest.mark.parametrize("act", ACTS)
def test_arith_activation(runner, rng, op, dtype, act):
    m = MB.binary(rng, op, dtype, (3, 2, 5), (2, 5), act=act)
    _check(runner, rng, m, op, max_saturated=None)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (7,), (1, 4, 5, 3)])
@pytest.mark.parametrize("act", (0, 1))
def test_addsub_int16_pot(runner, rng, op, shape, act):
    """int16 with power-of-two scales: TFLite's separate saturating path (pot_scale_int16)."""
    m = MB.binary(rng, op, "int16", shape, shape, act=act, pot=True)
    _check(runner, rng, m, op, max_saturated=None)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_addsub_int16_pot_broadcast_refused(runner, rng, op):
    # LiteRT's reference kernel aborts on this combination; micronn refuses it in prepare.
    m = MB.binary(rng, op, "int16", (2, 3), (3,), pot=True)
    with pytest.raises(Exception) as e:
        runner(m, [np.zeros((2, 3), np.int16), np.zeros((3,), np.int16)])
    assert "power-of-two scales with broadcast" in str(e.value)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_addsub_int16_general_with_pot_scales(runner, rng, op):
    """pot_scale_int16=false forces the general int16 path even for power-of-two scales."""
    m = MB.binary(rng, op, "int16", (2, 7), (2, 7), pot=False)
    m.tensors[0].scale, m.tensors[1].scale, m.tensors[2].scale = [2.0 ** -10], [2.0 ** -12], [2.0 ** -10]
    _check(runner, rng, m, op)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("s1,s2,so", [(0.5, 0.001, 0.3), (0.001, 0.5, 0.6), (0.05, 0.05, 0.02), (0.2, 0.3, 0.004)])
def test_arith_int8_scales(runner, rng, op, s1, s2, so):
    """Very different scales; for MUL, s1 * s2 / so >= 1 too (TFLite's version 3 rescale)."""
    m = MB.binary(rng, op, "int8", (2, 17), (2, 17))
    m.tensors[0].scale, m.tensors[1].scale, m.tensors[2].scale = [s1], [s2], [so]
    _check(runner, rng, m, op, max_saturated=None)


# every dtype each op has (the support matrix's cases; LiteRT has e.g. no int8 DIV)
OTHER = [(op, dt) for op in ("DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM")
         for dt in ("int8", "int16", "int32", "float32") if (op, dt) in MB.CASES]
CMP = [(op, dt) for op in COMPARISONS for dt in ("int8", "uint8", "int16", "int32", "float32", "bool")
       if (op, dt if dt == "bool" else dt + "->bool") in MB.CASES]


@pytest.mark.parametrize("op,dtype", OTHER)
@pytest.mark.parametrize("shapes", SHAPES[:6])
def test_other_binary(runner, rng, op, dtype, shapes):
    m = MB.binary(rng, op, dtype, *shapes)
    _check(runner, rng, m, op)


@pytest.mark.parametrize("act", ACTS)
def test_div_activation(runner, rng, act):
    m = MB.binary(rng, "DIV", "float32", (2, 6), (6,), act=act)
    _check(runner, rng, m, "DIV")


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD"])
def test_integer_division_by_zero_is_an_error(runner, rng, op):
    m = MB.binary(rng, op, "int32", (2, 3), (2, 3))
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.ones((2, 3), dtype=np.int32)
    y[1, 2] = 0
    with pytest.raises(Exception) as e:
        runner(m, [x, y])
    assert "division by zero" in str(e.value)


@pytest.mark.parametrize("op,dtype", CMP)
@pytest.mark.parametrize("shapes", SHAPES[:5])
def test_comparisons(runner, rng, op, dtype, shapes):
    m = MB.binary(rng, op, dtype, *shapes)
    _check(runner, rng, m, op)


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_comparisons_same_quantization(runner, rng, op, dtype):
    m = MB.binary(rng, op, dtype, (3, 8), (3, 8), same_q=True)
    _check(runner, rng, m, op)


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_logical(runner, rng, op, shapes):
    _check(runner, rng, MB.binary(rng, op, "bool", *shapes), op)


def test_logical_not(runner, rng):
    _check(runner, rng, MB.logical_not(rng, (2, 3, 5)), "LOGICAL_NOT")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "float32", "bool"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3,), (3, 2, 2), (3, 2, 2)), ((4,), (4,), (4,))])
def test_select(runner, rng, dtype, shapes):
    _check(runner, rng, MB.select(rng, "SELECT", dtype, *shapes), "SELECT")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "float32", "bool"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((2, 1, 4), (3, 1), (1, 3, 4)),
                                    ((1,), (2, 3), (3,)), ((2, 1, 1, 2, 3), (1, 2, 1, 2, 1), (3,))])
def test_select_v2(runner, rng, dtype, shapes):
    _check(runner, rng, MB.select(rng, "SELECT_V2", dtype, *shapes), "SELECT_V2")


def test_select_rejects_unbroadcastable(runner, rng):
    m = MB.select(rng, "SELECT", "float32", (2, 3), (3, 2), (3, 2))
    with pytest.raises(Exception) as e:
        runner(m, [np.ones((2, 3), bool), np.ones((3, 2), np.float32), np.ones((3, 2), np.float32)])
    assert "SELECT" in str(e.value) or "broadcast" in str(e.value)


def test_mixed_input_dtypes_rejected(runner, rng):
    m = MB.binary(rng, "MUL", "float32", (2, 3), (2, 3))
    m.tensors[1] = MB.T("input2", np.int32, (2, 3))
    with pytest.raises(Exception) as e:
        runner(m, [np.ones((2, 3), np.float32), np.ones((2, 3), np.int32)])
    assert "mixed input dtypes float32 and int32" in str(e.value)


# ---- ADD_N ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("n,shape", [(2, (5,)), (3, (2, 3, 4)), (7, (1, 4, 4, 2)), (2, ())])
def test_add_n(runner, rng, dtype, n, shape):
    check(runner, rng, MB.add_n(rng, dtype, shape, n), gen=MB.gen_for("ADD_N"))


def test_add_n_int32_wraps(runner, rng):
    m = MB.add_n(rng, "int32", (4,), 3)
    x = np.array([2**31 - 1, -2**31, 5, -7], dtype=np.int32)
    check(runner, rng, m, gen=lambda rng_, t: x)


def test_reject_add_n_shapes(runner, rng):
    m = MB.add_n(rng, "float32", (2, 3), 3)
    m.tensors[1] = MB.T("input1", np.float32, (1, 3))
    with pytest.raises(KernelError if runner.__name__ == "run_kshim" else Exception) as e:
        runner(m, [np.ones(t.shape, np.float32) for t in m.tensors[:3]])
    assert "shape" in str(e.value)
