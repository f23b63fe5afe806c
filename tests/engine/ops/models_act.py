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
opmodels._TT.setdefault(np.dtype(np.uint32), S.TensorType.UINT32)
runners._DT.setdefault(np.dtype(np.uint32), 15)

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


# ---- support-matrix cases (engine/mn_ops.h; see test_op_matrix.py) ------------------------------

def _full(rng, t):
    return full_range(rng, t)


def _nonneg(rng, t):
    if t.dtype == np.float32:
        return rng.uniform(0.01, 50, t.shape).astype(np.float32)
    lo = t.zp[0] if t.quantized else 0
    return rng.integers(lo, np.iinfo(t.dtype).max, t.shape, endpoint=True).astype(t.dtype)


def _softmax16(rng, t):
    spread = int(12.0 / t.scale[0])
    return rng.integers(-spread // 2, spread // 2, t.shape).astype(np.int16)


def _rows12(rng, t):
    spread = int(min(255, max(2, 12.0 / t.scale[0])))
    center = int(rng.integers(-128 + spread // 2, 128 - spread // 2))
    return np.clip(center + rng.integers(-spread // 2, spread // 2 + 1, t.shape), -128, 127).astype(np.int8)


_Q8 = ((0.05, 3), (0.04, -10))
_Q16 = ((0.001, 0), (0.0008, 0))


def _u(op, dtype, in_q=None, out_q=None, **kw):
    m = unary(op, dtype, (2, 3, 7, 5), in_q, out_q, **kw)
    if op in (BO.ELU, BO.CEIL, BO.ROUND):
        m.oracle_resolver = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
    return m


def _cases():
    c = {}

    def add(op, combo, build, gen=_full):
        c[(op, combo)] = lambda rng, b=build, g=gen: (b(rng), g)

    sig16 = ((0.0003, 0), (2 ** -15, 0))
    add("LOGISTIC", "int8", lambda r: _u(BO.LOGISTIC, "int8", (0.05, 3), (1 / 256, -128)))
    add("LOGISTIC", "int16", lambda r: _u(BO.LOGISTIC, "int16", *sig16))
    add("LOGISTIC", "float32", lambda r: _u(BO.LOGISTIC, "float32"))
    add("TANH", "int8", lambda r: _u(BO.TANH, "int8", (0.03, 3), (1 / 128, 0)))
    add("TANH", "int16", lambda r: _u(BO.TANH, "int16", *sig16))
    add("TANH", "float32", lambda r: _u(BO.TANH, "float32"))
    for op in ("RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"):
        code = getattr(BO, op)
        add(op, "int8", lambda r, code=code: _u(code, "int8", (0.05, 3), (0.03, -100)))
        add(op, "float32", lambda r, code=code: _u(code, "float32"))
        if op in ("RELU", "RELU6"):
            add(op, "int16", lambda r, code=code: _u(code, "int16", *_Q16))
    leaky = dict(attrs={"alpha": 0.2}, fields={0: 0.2})
    add("LEAKY_RELU", "int8", lambda r: _u(BO.LEAKY_RELU, "int8", *_Q8, **leaky))
    add("LEAKY_RELU", "int16", lambda r: _u(BO.LEAKY_RELU, "int16", *_Q16, **leaky))
    add("LEAKY_RELU", "float32", lambda r: _u(BO.LEAKY_RELU, "float32", **leaky))
    add("HARD_SWISH", "int8", lambda r: _u(BO.HARD_SWISH, "int8", *_Q8))
    add("HARD_SWISH", "float32", lambda r: _u(BO.HARD_SWISH, "float32"))
    add("PRELU", "int8", lambda r: prelu(r, "int8", (2, 4, 5, 3), (3,)))
    add("PRELU", "float32", lambda r: prelu(r, "float32", (2, 4, 5, 3), (3,)))
    for op, dts in (("ELU", ("int8",)), ("GELU", ("int8", "int16")), ("EXP", ("int8", "int16")),
                    ("LOG", ("int8", "int16"))):
        code = getattr(BO, op)
        for dt in dts:
            q = ((0.03, -120), (0.2, -100)) if dt == "int8" else ((0.0003, 0), (0.0003, 0))
            add(op, dt, lambda r, code=code, dt=dt, q=q: _u(code, dt, *q))
    for op in ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "GELU", "NEG", "ROUND", "SIN", "SQUARE"):
        add(op, "float32", lambda r, code=getattr(BO, op): _u(code, "float32"))
    for op in ("LOG", "SQRT", "RSQRT"):
        add(op, "float32", lambda r, code=getattr(BO, op): _u(code, "float32"), _nonneg)
    for op in ("SQRT", "RSQRT"):
        code = getattr(BO, op)
        add(op, "int8", lambda r, code=code: _u(code, "int8", (0.05, 3), (0.05, -3)), _nonneg)
        add(op, "int16", lambda r, code=code: _u(code, "int16", *_Q16), _nonneg)
    add("ABS", "int8", lambda r: _u(BO.ABS, "int8", (0.05, 3), (0.03, -100)))
    add("ABS", "int16", lambda r: _u(BO.ABS, "int16", *_Q16))
    add("ABS", "int32", lambda r: _u(BO.ABS, "int32"))
    for dt in ("int8", "int16", "int32"):
        add("NEG", dt, lambda r, dt=dt: _u(BO.NEG, dt))
    types = ["float32", "int8", "uint8", "int16", "int32", "bool", "uint32"]
    for i in types:
        for o in types:
            add("CAST", f"{i}->{o}", lambda r, i=i, o=o: cast(i, o, (3, 17)), _cast_gen)
    add("SOFTMAX", "int16", lambda r: _u(BO.SOFTMAX, "int16", (0.0003, 0), (1 / 32768, 0),
                                         attrs={"beta": 1.0}, fields={0: 1.0}), _softmax16)
    add("LOG_SOFTMAX", "int8", lambda r: _u(BO.LOG_SOFTMAX, "int8", (0.05, 3), (16 / 256, 127)), _rows12)
    add("LOG_SOFTMAX", "float32", lambda r: _u(BO.LOG_SOFTMAX, "float32"))
    add("L2_NORMALIZATION", "int8", lambda r: _u(BO.L2_NORMALIZATION, "int8", (0.05, 3), (1 / 128, 0)))
    add("L2_NORMALIZATION", "float32", lambda r: _u(BO.L2_NORMALIZATION, "float32"))
    add("QUANTIZE", "int32->int8", lambda r: unary(BO.QUANTIZE, "int32", (3, 41), (0.0001, 0), (0.05, 3),
                                                   out_dtype="int8"), _int32_gen_small)
    add("QUANTIZE", "int32->int16", lambda r: unary(BO.QUANTIZE, "int32", (3, 41), (1e-5, 7), (0.001, 0),
                                                    out_dtype="int16"), _int32_gen)
    add("QUANTIZE", "uint8->uint8", lambda r: unary(BO.QUANTIZE, "uint8", (3, 41), (0.05, 128), (0.03, 120),
                                                    out_dtype="uint8"))
    return c


def _cast_gen(rng, t):
    if t.dtype == np.bool_:
        return rng.integers(0, 2, t.shape).astype(np.bool_)
    if t.dtype == np.float32:   # also beyond the integer ranges (saturation) and NaN
        x = rng.normal(0, 100, t.shape).astype(np.float32)
        x.flat[:4] = [-1e10, 5e9, 3e9, np.nan][:x.size]
        return x
    return full_range(rng, t)


def _int32_gen_small(rng, t):
    return rng.integers(-60000, 60000, t.shape).astype(np.int32)


def _int32_gen(rng, t):
    return rng.integers(-3000000, 3000000, t.shape).astype(np.int32)


CASES = _cases()
