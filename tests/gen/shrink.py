"""Shrink a failing IR to a minimal one that fails the same way (delta debugging on the graph).

    small = shrink(ir, fails)     # fails(ir) -> bool; ir is not modified

Candidate reductions, tried greedily until none applies:
  - keep one output only;
  - cut: a value read by a node becomes a new graph input of its shape (what produced it goes);
  - bypass: a node is removed, its readers read its input (when the shapes agree);
  - inputs: a dimension of a graph input shrinks (halved or minus one; weights stay, so an
    illegal result such as a channel count that no longer fits is rejected by infer());
  - attributes: fused activation NONE, per-tensor weights, no bias, stride/dilation 1.
Every candidate is pruned and re-inferred; the failure must reproduce on the candidate's own
quantization and inputs (make_case is run again), so the result is a genuine standalone case.
"""
from __future__ import annotations

import numpy as np

from .ir import Invalid, infer, prune


def _valid(ir):
    try:
        prune(ir)
        if not ir.nodes or not ir.outputs:
            return None
        infer(ir)
        return ir
    except Invalid:
        return None


def _candidates(ir):
    # one output
    if len(ir.outputs) > 1:
        for v in ir.outputs:
            c = ir.clone()
            c.outputs = [v]
            yield c
    cons = ir.consumers()
    nxt = max([v for v in ir.shapes if isinstance(v, int)] + [-1]) + 1
    # bypass a node
    for n in reversed(ir.nodes):
        for src in [v for v in n.ins if v is not None]:
            if ir.shapes.get(src) == ir.shapes.get(n.out) or n.out not in ir.outputs:
                c = ir.clone()
                c.nodes = [m for m in c.nodes if m.out != n.out]
                for m in c.nodes:
                    m.ins = [src if v == n.out else v for v in m.ins]
                c.outputs = [src if v == n.out else v for v in c.outputs]
                c.outputs = list(dict.fromkeys(v for v in c.outputs if v not in c.inputs))
                yield c
    # cut: a value becomes a graph input
    for n in ir.nodes:
        if n.out in cons:
            c = ir.clone()
            new = nxt
            c.nodes = [m for m in c.nodes]
            for m in c.nodes:
                m.ins = [new if v == n.out else v for v in m.ins]
            c.outputs = [v for v in c.outputs if v != n.out] or c.outputs
            if n.out in c.outputs:
                continue
            c.inputs = c.inputs + [new]
            c.in_shapes = {**c.in_shapes, new: ir.shapes[n.out]}
            yield c
    # smaller inputs
    for v in ir.inputs:
        s = ir.in_shapes[v]
        for d in range(len(s)):
            for nd in sorted({s[d] // 2, s[d] - 1}, reverse=True):
                if nd >= 1 and nd != s[d]:
                    c = ir.clone()
                    c.in_shapes[v] = tuple(nd if i == d else x for i, x in enumerate(s))
                    yield c
    # simpler attributes
    for i, n in enumerate(ir.nodes):
        for key, val in (("act", 0), ("pc", False), ("s", (1, 1)), ("d", (1, 1)), ("keep", False),
                         ("asym", False)):
            if key in n.a and n.a[key] != val:
                c = ir.clone()
                c.nodes[i].a[key] = val
                yield c
        if n.w.get("b") is not None and n.kind != "conv" and ir.family != "hybrid" and ir.oracle != "tflm":
            c = ir.clone()
            c.nodes[i].w["b"] = None
            yield c


def shrink(ir, fails, max_steps=400, log=None):
    cur = ir.clone()
    infer(cur)
    steps = 0
    progress = True
    while progress and steps < max_steps:
        progress = False
        for c in _candidates(cur):
            steps += 1
            if steps >= max_steps:
                break
            c = _valid(c)
            if c is None:
                continue
            try:
                ok = fails(c)
            except Exception:
                ok = False
            if ok:
                cur = c
                progress = True
                if log:
                    log(f"shrink: {len(cur.nodes)} ops, inputs {[cur.in_shapes[v] for v in cur.inputs]}")
                break
    return cur


def size(ir):
    return len(ir.nodes), sum(int(np.prod(s)) for s in ir.in_shapes.values())
