"""Data-movement, shape and reduction kernels against LiteRT's BUILTIN_REF kernels (the oracle),
through the kernel shim and the full engine: integer and bool outputs bit-exact, float32 within
1e-5 relative (see test_op_kernels.check)."""

import numpy as np
import pytest

import models_movement as MM
from test_op_kernels import _expect_reject, check

ALL = MM.DTYPES_ALL


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
