"""Single-op models for the data-movement, shape and reduction kernels (issue 8, ops-c).

Builders return opmodels.OpModel; tensors are built with opmodels.T. Quantized tensors get random
but realistic scales and zero points; data-movement ops keep input and output quantization equal
(they copy raw values, as TFLite does).
"""
from __future__ import annotations

import numpy as np

from opmodels import BO, S, T, single_op

DTYPES_ALL = ("int8", "int16", "float32", "int32", "int64", "uint8", "bool")


def qkw(dtype, scale=0.05, zp=3):
    """Quantization keywords for T: int8/int16/uint8 are quantized (int16 symmetric)."""
    if dtype == "int8":
        return dict(scale=[scale], zp=[zp])
    if dtype == "int16":
        return dict(scale=[scale / 256], zp=[0])
    if dtype == "uint8":
        return dict(scale=[scale], zp=[128 + zp])
    return {}


def rand_any(rng, t):
    """Random data covering the whole range of t's dtype (bool: coin flips)."""
    if t.dtype == np.bool_:
        return rng.integers(0, 2, t.shape).astype(np.bool_)
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    info = np.iinfo(t.dtype)
    lo, hi = max(info.min, -2**40), min(info.max, 2**40)
    return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)


def const(name, values, dtype=np.int32):
    a = np.asarray(values, dtype=dtype)
    return T(name, dtype, a.shape, data=a)


# ---- TRANSPOSE ----------------------------------------------------------------------------------

def transpose(dtype, shape, perm, perm_dtype=np.int32):
    q = qkw(dtype)
    out_shape = tuple(shape[p] for p in perm)
    return single_op(BO.TRANSPOSE, [T("input", dtype, shape, **q), const("perm", perm, perm_dtype)],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.TransposeOptions,
                     S.TransposeOptionsT(), {}, desc=f"transpose {dtype} {shape} {perm}")
