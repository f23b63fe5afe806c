"""The generator's graph IR: values with shapes, nodes with attributes and float weights.

Shapes are not stored per node: `infer()` derives every value's shape from the graph inputs' shapes
and the nodes' attributes (raising Invalid for an illegal combination), so the shrinker can cut a
graph or shrink an input and simply infer again.
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

SAME, VALID = 0, 1
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3

# Node kinds and what each needs (rank of input 0; number of tensor inputs)
UNARY_ACT = ("relu", "relu6", "relun1", "logistic", "tanh", "leaky", "hswish")
BINARY = ("add", "sub", "mul", "sqdiff", "max", "min")
POOLS = ("avgpool", "maxpool", "l2pool")
MOVEMENT = ("reshape", "pad", "sslice", "transpose")


class Invalid(Exception):
    pass


def out_size(padding, n, f, stride, dil=1):
    eff = (f - 1) * dil + 1
    o = (n + stride - 1) // stride if padding == SAME else (n - eff + stride) // stride
    if o < 1:
        raise Invalid(f"output size {o}")
    return o


@dataclasses.dataclass
class Node:
    kind: str
    ins: list          # value ids; for binary ops a None second input means "the constant w['c']"
    out: int
    a: dict = dataclasses.field(default_factory=dict)     # attributes
    w: dict = dataclasses.field(default_factory=dict)     # float weights (float64 arrays)


@dataclasses.dataclass
class IR:
    family: str                      # float32 | int8 | int16 | hybrid
    inputs: list                     # value ids
    in_shapes: dict                  # value id -> shape (graph inputs only)
    nodes: list
    outputs: list
    seed: int = 0                    # data seed: quantization choices, inputs
    float_io: bool = True            # int families: float interface (QUANTIZE / DEQUANTIZE at the edges)
    invokes: int = 1                 # invokes per run (state carried: SVDF)
    oracle: str = "litert"           # litert | tflm
    shapes: dict = dataclasses.field(default_factory=dict)   # filled by infer()

    def clone(self):
        return copy.deepcopy(self)

    def producers(self):
        return {n.out: n for n in self.nodes}

    def consumers(self):
        c = {}
        for n in self.nodes:
            for v in n.ins:
                if v is not None:
                    c.setdefault(v, []).append(n)
        return c

    def kinds(self):
        return sorted({n.kind for n in self.nodes})

    def describe(self):
        parts = []
        for n in self.nodes:
            ins = ",".join("c" if v is None else f"v{v}" for v in n.ins)
            attrs = " ".join(f"{k}={v}" for k, v in sorted(n.a.items()) if k != "note")
            parts.append(f"v{n.out}={n.kind}({ins}) {attrs} -> {self.shapes.get(n.out)}")
        head = (f"family={self.family} float_io={self.float_io} invokes={self.invokes} oracle={self.oracle} "
                f"inputs={[(v, self.in_shapes[v]) for v in self.inputs]} outputs={self.outputs}")
        return "\n".join([head] + parts)


def _bcast(a, b):
    try:
        return tuple(int(x) for x in np.broadcast_shapes(a, b))
    except ValueError:
        raise Invalid(f"broadcast {a} {b}")


def infer_node(n, shp):
    """Output shape of node n given its inputs' shapes `shp` (list, None for a constant)."""
    k, a, w = n.kind, n.a, n.w
    x = shp[0]
    if k in ("conv", "dw", "avgpool", "maxpool", "l2pool"):
        if len(x) != 4:
            raise Invalid("rank")
        fh, fw = a["f"]
        sh, sw = a["s"]
        dh, dw = a.get("d", (1, 1))
        oh = out_size(a["pad"], x[1], fh, sh, dh)
        ow = out_size(a["pad"], x[2], fw, sw, dw)
        if k == "conv":
            cout, _, _, cin = w["w"].shape
            if cin != x[3]:
                raise Invalid("conv channels")
            return (x[0], oh, ow, cout)
        if k == "dw":
            if w["w"].shape[3] != x[3] * a["mult"]:
                raise Invalid("dw channels")
            return (x[0], oh, ow, x[3] * a["mult"])
        if a["pad"] == SAME and (fh > x[1] + 1 or fw > x[2] + 1):
            pass
        return (x[0], oh, ow, x[3])
    if k == "fc":
        units, depth = w["w"].shape
        if x[-1] != depth:
            raise Invalid("fc depth")
        if a.get("keep"):
            return tuple(x[:-1]) + (units,)
        return (int(np.prod(x)) // depth, units)
    if k in BINARY:
        y = shp[1] if n.ins[1] is not None else w["c"].shape
        o = _bcast(x, y)
        if len(o) > 4 or o != tuple(x) and a.get("keep_shape0"):
            raise Invalid("broadcast")
        return o
    if k in UNARY_ACT or k in ("softmax", "requant"):
        return tuple(x)
    if k == "mean":
        ax = a["axes"]
        if any(i >= len(x) for i in ax):
            raise Invalid("axes")
        if a["keep"]:
            return tuple(1 if i in ax else d for i, d in enumerate(x))
        o = tuple(d for i, d in enumerate(x) if i not in ax)
        if not o:
            raise Invalid("scalar mean")
        return o
    if k == "reshape":
        n_el = int(np.prod(x))
        t = list(a["shape"])
        if t.count(-1) == 1:
            rest = int(np.prod([d for d in t if d != -1]))
            if rest <= 0 or n_el % rest:
                raise Invalid("reshape")
            t[t.index(-1)] = n_el // rest
        if int(np.prod(t)) != n_el:
            raise Invalid("reshape")
        return tuple(t)
    if k == "concat":
        ax = a["axis"]
        if any(len(s) != len(x) for s in shp) or ax >= len(x):
            raise Invalid("concat rank")
        for s in shp:
            if any(s[i] != x[i] for i in range(len(x)) if i != ax):
                raise Invalid("concat shape")
        o = list(x)
        o[ax] = sum(s[ax] for s in shp)
        return tuple(o)
    if k == "pad":
        p = a["pads"]
        if len(p) != len(x):
            raise Invalid("pad rank")
        return tuple(d + lo + hi for d, (lo, hi) in zip(x, p))
    if k == "transpose":
        if len(a["perm"]) != len(x):
            raise Invalid("perm")
        return tuple(x[i] for i in a["perm"])
    if k == "sslice":
        b, e, s = a["begin"], a["end"], a["strides"]
        if len(b) != len(x):
            raise Invalid("slice rank")
        o = []
        for i, d in enumerate(x):
            lo = 0 if a["bmask"] >> i & 1 else min(b[i], d)
            hi = d if a["emask"] >> i & 1 else min(e[i], d)
            m = max(0, -(-(hi - lo) // s[i]))
            if m < 1:
                raise Invalid("empty slice")
            o.append(m)
        return tuple(o)
    if k == "svdf":
        if len(x) != 2:
            raise Invalid("svdf rank")
        filters, ni = w["wf"].shape
        if x[1] != ni:
            raise Invalid("svdf input")
        return (x[0], filters // a["rank"])
    raise Invalid(f"unknown kind {k}")


def infer(ir):
    """Fill ir.shapes; raise Invalid if any node is illegal. Drops nodes nothing depends on."""
    shapes = dict(ir.in_shapes)
    for n in ir.nodes:
        shp = []
        for v in n.ins:
            if v is None:
                shp.append(None)
            elif v not in shapes:
                raise Invalid(f"v{v} undefined")
            else:
                shp.append(shapes[v])
        o = infer_node(n, shp)
        if any(d < 1 for d in o) or int(np.prod(o)) > 4096:
            raise Invalid("size")
        shapes[n.out] = o
    for v in ir.outputs:
        if v not in shapes:
            raise Invalid("output undefined")
    ir.shapes = shapes
    return ir


def prune(ir):
    """Remove nodes no output depends on and inputs nothing reads (in place); returns ir."""
    live = set(ir.outputs)
    keep = []
    for n in reversed(ir.nodes):
        if n.out in live:
            keep.append(n)
            live.update(v for v in n.ins if v is not None)
    ir.nodes = keep[::-1]
    ir.inputs = [v for v in ir.inputs if v in live]
    ir.in_shapes = {v: s for v, s in ir.in_shapes.items() if v in ir.inputs}
    return ir
