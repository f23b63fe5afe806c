"""Single-op models for the activation / unary math / quantization ops (LOGISTIC, TANH, RELU
family, LEAKY_RELU, HARD_SWISH, ...), built with opmodels' T / OpModel."""
from __future__ import annotations

import numpy as np
from ai_edge_litert import schema_py_generated as S

import opmodels
import runners
from opmodels import BO, OpModel, T

# bool tensors (CAST): the schema / kernel-shim dtype codes, if the shared tables lack them.
opmodels._TT.setdefault(np.dtype(np.bool_), S.TensorType.BOOL)
runners._DT.setdefault(np.dtype(np.bool_), 6)

# Options tables of the unary ops that have one (None: the op has no options table).
_OPTS = {
    BO.LEAKY_RELU: (S.BuiltinOptions.LeakyReluOptions, S.LeakyReluOptionsT),
    BO.HARD_SWISH: (S.BuiltinOptions.HardSwishOptions, S.HardSwishOptionsT),
    BO.GELU: (S.BuiltinOptions.GeluOptions, S.GeluOptionsT),
    BO.EXP: (S.BuiltinOptions.ExpOptions, S.ExpOptionsT),
    BO.ABS: (S.BuiltinOptions.AbsOptions, S.AbsOptionsT),
    BO.NEG: (S.BuiltinOptions.NegOptions, S.NegOptionsT),
    BO.COS: (S.BuiltinOptions.CosOptions, S.CosOptionsT),
    BO.SQUARE: (S.BuiltinOptions.SquareOptions, S.SquareOptionsT),
    BO.CAST: (S.BuiltinOptions.CastOptions, S.CastOptionsT),
    BO.LOG_SOFTMAX: (S.BuiltinOptions.LogSoftmaxOptions, S.LogSoftmaxOptionsT),
    BO.L2_NORMALIZATION: (S.BuiltinOptions.L2NormOptions, S.L2NormOptionsT),
    BO.SOFTMAX: (S.BuiltinOptions.SoftmaxOptions, S.SoftmaxOptionsT),
    BO.QUANTIZE: (S.BuiltinOptions.QuantizeOptions, S.QuantizeOptionsT),
    BO.DEQUANTIZE: (S.BuiltinOptions.DequantizeOptions, S.DequantizeOptionsT),
}

_NAMES = {v: k for k, v in vars(BO).items() if not k.startswith("_")}


def op_name(builtin):
    return _NAMES.get(builtin, str(builtin))


def unary(builtin, dtype, shape=(2, 3, 7), in_q=None, out_q=None, out_dtype=None, attrs=None, fields=None):
    """One input, one output.  in_q / out_q: (scale, zero_point) for quantized tensors (or a list
    of scales and zero points per channel with qdim: (scales, zps, qdim)).  attrs: options-object
    attributes; fields: the same options as kernel-shim field ids."""
    out_dtype = dtype if out_dtype is None else out_dtype

    def tensor(name, dt, q):
        if q is None:
            return T(name, dt, shape)
        if len(q) == 3:
            return T(name, dt, shape, scale=list(q[0]), zp=list(q[1]), qdim=q[2])
        return T(name, dt, shape, scale=[float(q[0])], zp=[int(q[1])])

    ts = [tensor("input", np.dtype(dtype), in_q), tensor("output", np.dtype(out_dtype), out_q)]
    otype, opts = 0, None
    if builtin in _OPTS:
        otype, cls = _OPTS[builtin]
        opts = cls()
        for k, v in (attrs or {}).items():
            setattr(opts, k, v)
    return OpModel(builtin, ts, [0], [1], otype, opts, dict(fields or {}),
                   desc=f"{op_name(builtin)} {dtype}->{out_dtype} {shape} in_q{in_q} out_q{out_q} {attrs or ''}")


def full_range(rng, t):
    """Every value of an 8-bit type (repeated / shuffled to fill t), a uniform spread of int16,
    or float32 around 0 with a spread of 4."""
    n = int(np.prod(t.shape))
    if t.dtype == np.float32:
        return (rng.normal(0, 4.0, t.shape)).astype(np.float32)
    info = np.iinfo(t.dtype)
    if info.bits == 8:
        v = np.resize(np.arange(info.min, info.max + 1), max(n, 256))
        return rng.permutation(v)[:n].astype(t.dtype).reshape(t.shape) if n < 256 else \
            rng.permutation(v[:n]).astype(t.dtype).reshape(t.shape)
    return rng.integers(info.min, info.max, t.shape, endpoint=True).astype(t.dtype)


def cast(in_dtype, out_dtype, shape=(3, 17)):
    m = unary(BO.CAST, in_dtype, shape, out_dtype=out_dtype)
    m.options.inDataType = int(opmodels._TT[np.dtype(in_dtype)])
    m.options.outDataType = int(opmodels._TT[np.dtype(out_dtype)])
    m.fields = {0: m.options.inDataType, 1: m.options.outDataType}
    return m


def prelu(rng, dtype, shape=(1, 4, 5, 3), alpha_shape=(3,), const_alpha=True):
    """PRELU with alpha broadcast to the input (constant, or a second graph input)."""
    if dtype == "float32":
        a = rng.uniform(-0.5, 1.5, alpha_shape).astype(np.float32)
        ts = [T("input", np.float32, shape), T("alpha", np.float32, alpha_shape, data=a if const_alpha else None),
              T("output", np.float32, shape)]
    else:
        in_q = (float(rng.uniform(0.02, 0.08)), int(rng.integers(-20, 21)))
        a_q = (float(rng.uniform(0.005, 0.02)), int(rng.integers(-10, 11)))
        out_q = (in_q[0] * float(rng.uniform(0.8, 1.3)), int(rng.integers(-20, 21)))
        a = rng.integers(-128, 128, alpha_shape).astype(np.int8)
        ts = [T("input", np.int8, shape, scale=[in_q[0]], zp=[in_q[1]]),
              T("alpha", np.int8, alpha_shape, data=a if const_alpha else None, scale=[a_q[0]], zp=[a_q[1]]),
              T("output", np.int8, shape, scale=[out_q[0]], zp=[out_q[1]])]
    return OpModel(BO.PRELU, ts, [0, 1], [2], desc=f"PRELU {dtype} {shape} alpha{alpha_shape} const{const_alpha}")
