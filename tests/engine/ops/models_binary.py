"""Single-op models of the elementwise binary ops (ADD, ADD_N, SUB, MUL, DIV, FLOOR_DIV, FLOOR_MOD,
SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, comparisons, LOGICAL_*, SELECT, SELECT_V2), built like
opmodels.py's, with quantization chosen so that outputs use their range without saturating, and
input generators that make the interesting cases frequent (equal values for comparisons, no zero
divisors for integer division).

CASES maps (op, dtype combination as in engine/mn_ops.h) to a builder rng -> (OpModel, input
generator); tools/gen_op_models.py and test_op_matrix.py use it.
"""
from __future__ import annotations

import numpy as np

from opmodels import BO, S, T, OpModel, ACT_NONE, _s8_act

_OPTS = {  # op -> (options type, options class, kshim fields from (act, pot))
    "ADD": ("AddOptions", S.AddOptionsT), "SUB": ("SubOptions", S.SubOptionsT),
    "MUL": ("MulOptions", S.MulOptionsT), "DIV": ("DivOptions", S.DivOptionsT),
    "FLOOR_DIV": ("FloorDivOptions", S.FloorDivOptionsT), "FLOOR_MOD": ("FloorModOptions", S.FloorModOptionsT),
    "SQUARED_DIFFERENCE": ("SquaredDifferenceOptions", S.SquaredDifferenceOptionsT),
    "MAXIMUM": ("MaximumMinimumOptions", S.MaximumMinimumOptionsT),
    "MINIMUM": ("MaximumMinimumOptions", S.MaximumMinimumOptionsT),
    "EQUAL": ("EqualOptions", S.EqualOptionsT), "NOT_EQUAL": ("NotEqualOptions", S.NotEqualOptionsT),
    "LESS": ("LessOptions", S.LessOptionsT), "LESS_EQUAL": ("LessEqualOptions", S.LessEqualOptionsT),
    "GREATER": ("GreaterOptions", S.GreaterOptionsT),
    "GREATER_EQUAL": ("GreaterEqualOptions", S.GreaterEqualOptionsT),
    "LOGICAL_AND": ("LogicalAndOptions", S.LogicalAndOptionsT),
    "LOGICAL_OR": ("LogicalOrOptions", S.LogicalOrOptionsT),
    "LOGICAL_NOT": ("LogicalNotOptions", S.LogicalNotOptionsT),
    "SELECT": ("SelectOptions", S.SelectOptionsT), "SELECT_V2": ("SelectV2Options", S.SelectV2OptionsT),
}
COMPARISONS = ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")
ACT_OPS = ("ADD", "SUB", "MUL", "DIV")       # ops with a fused activation (field 0)
_RANGE = {np.dtype(np.int8): (-128, 127), np.dtype(np.int16): (-20000, 20000), np.dtype(np.uint8): (0, 255)}


def _options(op, act=ACT_NONE, pot=None):
    tname, cls = _OPTS[op]
    o = cls()
    fields = {}
    if op in ACT_OPS:
        o.fusedActivationFunction = act
        fields[0] = act
    if pot is not None:
        o.potScaleInt16 = pot
        fields[1] = int(pot)
    return getattr(S.BuiltinOptions, tname), o, fields


def _q_for(rng, op, dtype, s1, s2):
    """Output (scale, zero point) for a quantized op with input scales s1, s2."""
    lo, hi = _RANGE[dtype]
    span = (hi - lo) / 2.0
    zp = 0 if dtype == np.int16 else int(rng.integers(-20, 21))
    if op in ("ADD", "SUB"):
        return (s1 + s2) * span / (hi - lo) * 2.0 * float(rng.uniform(0.9, 1.3)), zp
    if op == "MUL":
        return s1 * s2 * span * span / 3.0 / ((hi - lo) / 8.0) * float(rng.uniform(0.8, 1.2)), zp
    if op == "SQUARED_DIFFERENCE":
        m = max(s1, s2) * span
        return m * m / (hi - lo) * 2.5 * float(rng.uniform(0.8, 1.2)), lo + 5   # ~4x the mean square
    return s1, zp   # MAXIMUM / MINIMUM / SELECT: the inputs' quantization


def binary(rng, op, dtype, shape1=(2, 3, 4), shape2=(2, 3, 4), act=ACT_NONE, pot=None, same_q=False):
    """An elementwise binary op (ADD ... GREATER_EQUAL, LOGICAL_AND/OR) on inputs of `dtype`."""
    dt = np.dtype(dtype)
    oshape = tuple(np.broadcast_shapes(shape1, shape2))
    out_dt = np.dtype(np.bool_) if op in COMPARISONS else dt
    if dt in _RANGE and op not in ("FLOOR_DIV", "FLOOR_MOD") and not op.startswith("LOGICAL"):
        if dt == np.int16:
            if pot:
                e = int(rng.integers(9, 12))
                s1, s2, z1, z2 = 2.0 ** -e, 2.0 ** -(e + int(rng.integers(0, 3))), 0, 0
                if rng.integers(0, 2):
                    s1, s2 = s2, s1
            else:
                s1, s2, z1, z2 = float(rng.uniform(2e-5, 2e-4)), float(rng.uniform(2e-5, 2e-4)), 0, 0
        else:
            (s1, z1), (s2, z2) = _s8_act(rng), _s8_act(rng)
            if dt == np.uint8:
                z1, z2 = z1 + 128, z2 + 128
        if same_q or op in ("MAXIMUM", "MINIMUM", "SELECT", "SELECT_V2"):
            s2, z2 = s1, z1
        cmp_unit = None
        if op in COMPARISONS:
            # scales base or 2 * base: real values on a grid of 2 * base are exact in both, so
            # equal and ordered pairs are both frequent (gen_for)
            # (TFLite rescales by 256 * scale: below 1/256 per step, neighbours compare equal)
            base = s1 / 2 if dt != np.int16 else float(rng.uniform(0.002, 0.01))
            s1 = base * int(rng.integers(1, 3))
            # EQUAL / NOT_EQUAL: one scale (zero points differ): with two scales TFLite's rescaled
            # values of equal reals can differ in the last bit, and equality never happens
            s2 = s1 if same_q or op in ("EQUAL", "NOT_EQUAL") else base * int(rng.integers(1, 3))
            if dt == np.int16:
                z1 = z2 = 0
            cmp_unit = 2 * base
        if pot and dt == np.int16:
            so, zo = max(s1, s2), 0
        else:
            so, zo = _q_for(rng, op, dt, s1, s2)
        q1, q2 = dict(scale=[s1], zp=[z1]), dict(scale=[s2], zp=[z2])
        qo = {} if out_dt == np.bool_ else dict(scale=[so], zp=[zo])
    else:
        q1 = q2 = qo = {}
    ts = [T("input1", dt, shape1, **q1), T("input2", dt, shape2, **q2), T("output", out_dt, oshape, **qo)]
    otype, opts, fields = _options(op, act, pot)
    m = OpModel(getattr(BO, op), ts, [0, 1], [2], otype, opts, fields,
                desc=f"{op.lower()} {dtype} {shape1}*{shape2} a{act} pot{pot}")
    m.cmp_unit = cmp_unit if q1 else None
    return m


def logical_not(rng, shape=(3, 5)):
    otype, opts, fields = _options("LOGICAL_NOT")
    ts = [T("input", np.bool_, shape), T("output", np.bool_, shape)]
    return OpModel(BO.LOGICAL_NOT, ts, [0], [1], otype, opts, fields, desc=f"logical_not {shape}")


def select(rng, op, dtype, cond_shape=(2, 3, 4), x_shape=(2, 3, 4), y_shape=(2, 3, 4)):
    dt = np.dtype(dtype)
    q = {}
    if dt in (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.uint8)):
        q = dict(scale=[0.05], zp=[0 if dt != np.uint8 else 128])
    oshape = tuple(np.broadcast_shapes(cond_shape, x_shape, y_shape)) if op == "SELECT_V2" else x_shape
    ts = [T("condition", np.bool_, cond_shape), T("x", dt, x_shape, **q), T("y", dt, y_shape, **q),
          T("output", dt, oshape, **q)]
    otype, opts, fields = _options(op)
    return OpModel(getattr(BO, op), ts, [0, 1, 2], [3], otype, opts, fields,
                   desc=f"{op.lower()} {dtype} {cond_shape} {x_shape} {y_shape}")


# ---- inputs -------------------------------------------------------------------------------------

def gen_for(op, model=None):
    """Input generator for op (and its model, for quantized comparisons): rng, T -> array."""
    unit = getattr(model, "cmp_unit", None)

    def gen(rng, t):
        if t.dtype == np.bool_:
            # mostly true for AND, mostly false for OR: both outcomes stay frequent when broadcast
            p = {"LOGICAL_AND": 0.75, "LOGICAL_OR": 0.25}.get(op, 0.5)
            return rng.random(t.shape) < p
        if unit and t.scale:
            # real values j * unit, j small: exactly representable in both inputs
            step = int(round(unit / t.scale[0]))
            n = int(np.prod(t.shape))
            # every grid value in turn (shuffled): a small broadcast input still spans the grid
            j = rng.permutation(np.resize(np.arange(-2, 3), n)).reshape(t.shape)
            return (t.zp[0] + step * j).astype(t.dtype)
        small = op in COMPARISONS     # small ranges: equal values are frequent
        nonzero = op in ("DIV", "FLOOR_DIV", "FLOOR_MOD") and t.name == "input2"
        if t.dtype == np.float32:
            if small:
                return (rng.integers(-2, 3, t.shape) * 0.5).astype(np.float32)
            x = rng.normal(0, 2.0, t.shape).astype(np.float32)
            if nonzero:
                x = np.where(np.abs(x) < 0.25, np.float32(0.5), x).astype(np.float32)
            return x
        lo, hi = _RANGE.get(t.dtype, (-1000, 1000))
        if small:
            mid = (lo + hi) // 2
            lo, hi = mid - 2, mid + 2
        elif op in ("FLOOR_DIV", "FLOOR_MOD", "DIV") or t.dtype == np.int32:
            lo, hi = max(lo, -1000), min(hi, 1000)
            if nonzero:
                lo, hi = -30, 30
        x = rng.integers(lo, hi + 1, t.shape).astype(t.dtype)
        if nonzero:
            x[x == 0] = 7
        return x
    return gen


# ---- the support matrix's cases ----------------------------------------------------------------

def add_n(rng, dtype, shape=(2, 3, 4), n=3):
    """ADD_N of n same-shape float32 / int32 tensors."""
    ins = [T(f"input{i}", dtype, shape) for i in range(n)]
    return OpModel(BO.ADD_N, ins + [T("output", dtype, shape)], list(range(n)), [n],
                   S.BuiltinOptions.AddNOptions, S.AddNOptionsT(), {}, desc=f"add_n {dtype} {n}x{shape}")


def _cases():
    c = {}
    for dt in ("float32", "int32"):
        c[("ADD_N", dt)] = lambda rng, dt=dt: add_n(rng, dt)
    for op in ("ADD", "SUB"):
        for dt in ("int8", "int16", "int32", "float32"):
            c[(op, dt)] = lambda rng, op=op, dt=dt: binary(rng, op, dt, (2, 1, 4), (3, 1), act=1)
    for op in ("MUL", "MAXIMUM", "MINIMUM"):
        for dt in ("int8", "int16", "int32", "float32"):
            c[(op, dt)] = lambda rng, op=op, dt=dt: binary(rng, op, dt, (2, 3, 4), (3, 1))
    for dt in ("float32", "int32"):
        c[("DIV", dt)] = lambda rng, dt=dt: binary(rng, "DIV", dt, (2, 3), (3,))
    for op in ("FLOOR_DIV", "FLOOR_MOD"):
        for dt in ("int8", "int16", "int32", "float32"):
            c[(op, dt)] = lambda rng, op=op, dt=dt: binary(rng, op, dt, (2, 3, 4), (4,))
    for dt in ("int8", "int32", "float32"):
        c[("SQUARED_DIFFERENCE", dt)] = lambda rng, dt=dt: binary(rng, "SQUARED_DIFFERENCE", dt, (2, 5), (1, 5))
    for op in COMPARISONS:
        for dt in ("int8", "uint8", "int16", "int32", "float32") + (("bool",) if op in ("EQUAL", "NOT_EQUAL") else ()):
            c[(op, dt if dt == "bool" else dt + "->bool")] = lambda rng, op=op, dt=dt: binary(rng, op, dt, (2, 3, 4), (3, 1))
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        c[(op, "bool")] = lambda rng, op=op: binary(rng, op, "bool", (2, 3, 4), (4,))
    c[("LOGICAL_NOT", "bool")] = lambda rng: logical_not(rng)
    for dt in ("int8", "int16", "int32", "uint8", "float32", "bool"):
        c[("SELECT", dt)] = lambda rng, dt=dt: select(rng, "SELECT", dt, (3,), (3, 2, 2), (3, 2, 2))
        c[("SELECT_V2", dt)] = lambda rng, dt=dt: select(rng, "SELECT_V2", dt, (2, 1, 4), (3, 1), (1, 3, 4))
    def case(f, op):
        def build(rng):
            m = f(rng)
            return m, gen_for(op, m)
        return build
    return {k: case(f, k[0]) for k, f in c.items()}


CASES = _cases()
