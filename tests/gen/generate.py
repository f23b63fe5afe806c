"""Random graphs of the generator IR (tests/gen/ir.py): chains, branches, residual joins (ADD, SUB, MUL,
MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, CONCATENATION of two live values), several outputs, with random
legal shapes, strides, paddings, dilations, fused activations and broadcasts.

    ir = generate(seed)                 # family, op mix, sizes: all from the seed
    ir = generate(seed, family="int8")

Float weights are drawn with a fan-in scale (outputs O(1) for O(1) inputs), so quantizing them
post-training from a calibration run (tests/gen/emit.py) gives non-saturating activations.
"""
from __future__ import annotations

import numpy as np

from .ir import (ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, IR, SAME, VALID, Invalid, Node, infer,
                 infer_node, out_size)

FAMILIES = ("int8", "int16", "float32", "hybrid")

# Node kinds per type family (what the engine's support matrix and LiteRT's reference kernels both run)
_COMMON = ["conv", "dw", "fc", "add", "sub", "mul", "max", "min", "avgpool", "maxpool", "mean", "softmax",
           "logistic", "tanh", "relu", "relu6", "leaky", "reshape", "concat", "pad", "sslice", "transpose"]
KINDS = {
    "float32": _COMMON + ["sqdiff", "relun1", "hswish", "l2pool", "svdf"],
    "hybrid": _COMMON + ["sqdiff", "relun1", "hswish", "l2pool", "svdf"],
    "int8": _COMMON + ["sqdiff", "relun1", "hswish", "requant", "svdf"],
    "int16": _COMMON + ["requant"],
}
# relative frequency (the others 1.0)
WEIGHT = {"conv": 3.0, "dw": 2.5, "fc": 2.5, "add": 2.5, "mul": 1.2, "concat": 1.5, "svdf": 0.6, "reshape": 1.2,
          "l2pool": 0.4, "sqdiff": 0.6, "requant": 0.6}

ACTS = (ACT_NONE, ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1)


class _Builder:
    def __init__(self, rng, family, tflm=False):
        self.rng, self.family, self.tflm = rng, family, tflm
        self.ir = IR(family=family, inputs=[], in_shapes={}, nodes=[], outputs=[])
        self.shapes = {}
        self.next = 0
        self.uses = {}

    def new_value(self):
        v = self.next
        self.next += 1
        return v

    def add_input(self, shape):
        v = self.new_value()
        self.ir.inputs.append(v)
        self.ir.in_shapes[v] = tuple(shape)
        self.shapes[v] = tuple(shape)
        return v

    def try_node(self, kind, ins, a=None, w=None):
        n = Node(kind, list(ins), -1, a or {}, w or {})
        try:
            o = infer_node(n, [None if v is None else self.shapes[v] for v in ins])
        except Invalid:
            return None
        if any(d < 1 for d in o) or int(np.prod(o)) > 2048:
            return None
        n.out = self.new_value()
        self.shapes[n.out] = o
        self.ir.nodes.append(n)
        for v in ins:
            if v is not None:
                self.uses[v] = self.uses.get(v, 0) + 1
        return n.out


def _rand_act(rng):
    return int(rng.choice(ACTS))


def _spatial(rng, x, dil_ok=True):
    """Filter, stride, dilation, padding that fit input x (NHWC); or None."""
    for _ in range(6):
        fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sh, sw = (int(rng.integers(1, 4)), int(rng.integers(1, 4))) if rng.random() < 0.5 else (1, 1)
        d = (1, 1)
        if dil_ok and rng.random() < 0.2 and (sh, sw) == (1, 1):
            d = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pad = SAME if rng.random() < 0.6 else VALID
        try:
            out_size(pad, x[1], fh, sh, d[0])
            out_size(pad, x[2], fw, sw, d[1])
        except Invalid:
            continue
        return (fh, fw), (sh, sw), d, pad
    return None


def _pick(rng, b, pred, recent=0.7):
    """A live value satisfying pred, the most recent more often (chains) than older ones (branches)."""
    vals = [v for v in b.shapes if pred(b.shapes[v])]
    if not vals:
        return None
    if rng.random() < recent:
        return vals[-1] if rng.random() < 0.6 else vals[max(0, len(vals) - 3):][int(rng.integers(0, min(3, len(vals))))]
    return vals[int(rng.integers(0, len(vals)))]


def _const_shape(rng, s):
    """A shape that broadcasts against s: s itself, its channels, or ones with some dims kept."""
    r = rng.random()
    if r < 0.3:
        return (s[-1],)
    if r < 0.45:
        return (1,)
    if r < 0.6:
        return tuple(s)
    return tuple(d if rng.random() < 0.5 else 1 for d in s)


def _add_op(rng, b, kind):
    fam = b.family
    any_v = lambda s: True
    if kind in ("conv", "dw", "avgpool", "maxpool", "l2pool"):
        x = _pick(rng, b, lambda s: len(s) == 4)
        if x is None:
            return None
        s = b.shapes[x]
        sp = _spatial(rng, s, dil_ok=kind in ("conv", "dw"))
        if sp is None:
            return None
        f, st, d, pad = sp
        if kind == "conv":
            cout = int(rng.integers(1, 9))
            fan = f[0] * f[1] * s[3]
            # (CONV_2D always has a bias, as converters write it: LiteRT's conv.cc demands one
            # on several paths)
            w = {"w": rng.normal(0, 1.0 / np.sqrt(fan), (cout, f[0], f[1], s[3])),
                 "b": rng.normal(0, 0.3, cout)}
            return b.try_node("conv", [x], dict(f=f, s=st, d=d, pad=pad, act=_rand_act(rng),
                                                pc=bool(rng.random() < 0.7)), w)
        if kind == "dw":
            mult = int(rng.choice([1, 1, 1, 2, 3]))
            cout = s[3] * mult
            if cout > 16:
                return None
            w = {"w": rng.normal(0, 1.0 / np.sqrt(f[0] * f[1]), (1, f[0], f[1], cout)),
                 "b": rng.normal(0, 0.3, cout) if rng.random() < 0.85 or fam == "hybrid" else None}
            return b.try_node("dw", [x], dict(f=f, s=st, d=d, pad=pad, mult=mult, act=_rand_act(rng),
                                              pc=bool(rng.random() < 0.7)), w)
        act = _rand_act(rng) if rng.random() < 0.3 else ACT_NONE
        return b.try_node(kind, [x], dict(f=f, s=st, pad=pad, act=act))
    if kind == "fc":
        keep = rng.random() < 0.15
        x = _pick(rng, b, (lambda s: s[-1] <= 64) if keep else (lambda s: len(s) == 2 and s[-1] <= 96))
        if x is None:
            return None
        depth = b.shapes[x][-1]
        units = int(rng.integers(1, 17))
        w = {"w": rng.normal(0, 1.0 / np.sqrt(depth), (units, depth)),
             "b": rng.normal(0, 0.3, units) if rng.random() < 0.85 else None}
        a = dict(act=_rand_act(rng), keep=keep, pc=bool(rng.random() < 0.5) and fam == "int8",
                 asym=bool(rng.random() < 0.5))
        if fam == "hybrid":
            a["pc"] = bool(rng.random() < 0.5)
        return b.try_node("fc", [x], a, w)
    if kind in ("add", "sub", "mul", "sqdiff", "max", "min"):
        x = _pick(rng, b, any_v)
        s = b.shapes[x]
        others = [v for v in b.shapes if v != x and _compatible(b.shapes[v], s)]
        a = {}
        if kind in ("add", "sub", "mul"):
            a["act"] = _rand_act(rng) if rng.random() < 0.4 else ACT_NONE
        if others and rng.random() < 0.75:
            y = others[int(rng.integers(0, len(others)))]
            ins = [x, y] if rng.random() < 0.7 else [y, x]
            return b.try_node(kind, ins, a)
        cs = _const_shape(rng, s)
        c = rng.normal(0, 1.0, cs)
        if kind == "mul":
            c = rng.uniform(0.3, 1.5, cs) * rng.choice([-1, 1], cs)
        return b.try_node(kind, [x, None], a, {"c": c})
    if kind == "mean":
        x = _pick(rng, b, lambda s: len(s) >= 2)
        if x is None:
            return None
        r = len(b.shapes[x])
        if r == 4 and rng.random() < 0.6:
            axes = [1, 2]
        else:
            axes = sorted(int(i) for i in rng.choice(np.arange(1, r), int(rng.integers(1, r)), replace=False))
        return b.try_node("mean", [x], dict(axes=axes, keep=bool(rng.random() < 0.5)))
    if kind == "softmax":
        x = _pick(rng, b, lambda s: len(s) in (2, 4) and s[-1] > 1)
        if x is None:
            return None
        return b.try_node("softmax", [x], dict(beta=float(rng.choice([1.0, 1.0, 0.5, 2.0]))))
    if kind in ("relu", "relu6", "relun1", "logistic", "tanh", "hswish", "requant"):
        x = _pick(rng, b, any_v)
        a = {}
        if kind == "requant":
            a["gain"] = float(rng.uniform(0.6, 2.0))
        return b.try_node(kind, [x], a)
    if kind == "leaky":
        x = _pick(rng, b, any_v)
        return b.try_node("leaky", [x], dict(alpha=float(rng.choice([0.1, 0.2, 0.01, 0.5]))))
    if kind == "reshape":
        x = _pick(rng, b, any_v)
        s = b.shapes[x]
        n = int(np.prod(s))
        if len(s) == 4:
            t = [s[0], -1] if rng.random() < 0.7 else [-1, s[3]]
        else:
            divs = [d for d in range(1, n + 1) if n % d == 0]
            h = int(rng.choice(divs))
            rest = [d for d in range(1, n // h + 1) if (n // h) % d == 0]
            w_ = int(rng.choice(rest))
            t = [1, h, w_, -1]
        return b.try_node("reshape", [x], dict(shape=t))
    if kind == "concat":
        x = _pick(rng, b, any_v)
        s = b.shapes[x]
        ax = len(s) - 1 if rng.random() < 0.7 else int(rng.integers(0, len(s)))
        others = [v for v in b.shapes if len(b.shapes[v]) == len(s)
                  and all(b.shapes[v][i] == s[i] for i in range(len(s)) if i != ax)]
        ins = [x] + [others[int(rng.integers(0, len(others)))] for _ in range(int(rng.integers(1, 3)))]
        rng.shuffle(ins)
        return b.try_node("concat", ins, dict(axis=ax, act=ACT_NONE))   # (LiteRT refuses a fused activation)
    if kind == "pad":
        x = _pick(rng, b, any_v)
        s = b.shapes[x]
        pads = [(0, 0) if (i == 0 and rng.random() < 0.8) else (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
                for i in range(len(s))]
        return b.try_node("pad", [x], dict(pads=pads))
    if kind == "transpose":
        x = _pick(rng, b, lambda s: len(s) >= 2)
        if x is None:
            return None
        perm = [int(i) for i in rng.permutation(len(b.shapes[x]))]
        return b.try_node("transpose", [x], dict(perm=perm))
    if kind == "sslice":
        x = _pick(rng, b, any_v)
        s = b.shapes[x]
        begin, end, strides = [], [], []
        bm = em = 0
        for i, d in enumerate(s):
            lo = int(rng.integers(0, d)) if rng.random() < 0.5 else 0
            hi = int(rng.integers(lo + 1, d + 1))
            st = int(rng.choice([1, 1, 1, 2, 3]))
            if rng.random() < 0.2:
                bm |= 1 << i
                lo = 0
            if rng.random() < 0.2:
                em |= 1 << i
            begin.append(lo)
            end.append(hi)
            strides.append(st)
        return b.try_node("sslice", [x], dict(begin=begin, end=end, strides=strides, bmask=bm, emask=em))
    if kind == "svdf":
        x = _pick(rng, b, lambda s: len(s) == 2 and s[1] <= 64)
        if x is None:
            return None
        ni = b.shapes[x][1]
        units, rank, mem = int(rng.integers(1, 9)), int(rng.integers(1, 3)), int(rng.integers(2, 9))
        filters = units * rank
        w = {"wf": rng.normal(0, 1.0 / np.sqrt(ni), (filters, ni)),
             "wt": rng.normal(0, 1.0 / np.sqrt(mem), (filters, mem)),
             "b": rng.normal(0, 0.1, units) if rng.random() < 0.8 or b.tflm else None}   # (TFLM's int8
        # SVDF dereferences the bias it treats as optional: SIGSEGV without one, an oracle limit)
        a = dict(rank=rank, act=ACT_RELU if fam == "int8" else int(rng.choice([ACT_NONE, ACT_RELU])),
                 asym=bool(rng.random() < 0.5))
        if fam == "int8":
            a["time8"] = b.tflm   # int8 weights_time and state (TFLM's converter; TFLM is the oracle)
        return b.try_node("svdf", [x], a, w)
    raise ValueError(kind)


def _compatible(a, b):
    if len(a) != len(b):
        return False
    try:
        o = np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return tuple(o) == tuple(b) or tuple(o) == tuple(a)


def generate(seed, family=None, max_ops=None, kinds=None):
    """A random valid IR from `seed` (int). family: one of FAMILIES (default: from the seed)."""
    rng = np.random.default_rng([seed, 0x6e6e])
    family = family or FAMILIES[int(rng.integers(0, len(FAMILIES)))]
    # int8 SVDF with int8 weights_time and state runs on TFLM only: such models take TFLM as their
    # oracle and leave out FULLY_CONNECTED (TFLM's int8 FULLY_CONNECTED rounds twice where LiteRT's,
    # and the engine's, round once: engine/mn_quant.h; a known oracle difference, excluded by rule).
    tflm = family == "int8" and kinds is None and rng.random() < 0.08
    b = _Builder(rng, family, tflm)
    n_in = 1 if rng.random() < 0.8 else 2
    for _ in range(n_in):
        if rng.random() < 0.65:
            shape = (int(rng.choice([1, 1, 1, 2])), int(rng.integers(1, 11)), int(rng.integers(1, 11)),
                     int(rng.integers(1, 9)))
        else:
            shape = (int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 49)))
        b.add_input(shape)
    pool = list(kinds or KINDS[family])
    if tflm:   # (TFLM has no RELU_N1_TO_1)
        pool = [k for k in pool if k not in ("fc", "relun1")]
    p = np.array([WEIGHT.get(k, 1.0) * (8 if tflm and k == "svdf" else 1) for k in pool])
    p /= p.sum()
    n_ops = int(rng.integers(1, (max_ops or 9) + 1))
    tries = 0
    while len(b.ir.nodes) < n_ops and tries < 6 * n_ops + 10:
        tries += 1
        k = str(rng.choice(pool, p=p))
        _add_op(rng, b, k)
    if not b.ir.nodes:
        _add_op(rng, b, "relu")
    ir = b.ir
    # outputs: every value nothing reads, plus sometimes an inner one; at most 4
    read = {v for n in ir.nodes for v in n.ins if v is not None}
    outs = [n.out for n in ir.nodes if n.out not in read]
    inner = [n.out for n in ir.nodes if n.out in read]
    if inner and rng.random() < 0.2:
        outs.append(inner[int(rng.integers(0, len(inner)))])
    ir.outputs = outs[-4:]
    from .ir import prune
    prune(ir)
    ir.seed = int(seed)
    ir.float_io = family in ("float32", "hybrid") or bool(rng.random() < 0.5)
    if any(n.kind == "svdf" for n in ir.nodes):
        ir.invokes = 3
        if any(n.a.get("time8") for n in ir.nodes if n.kind == "svdf"):
            ir.oracle = "tflm"
    infer(ir)
    return ir
