"""Models with several subgraphs: IF, WHILE, CALL_ONCE and resource variables (VAR_HANDLE,
READ_VARIABLE, ASSIGN_VARIABLE), built with the TFLite schema's Python object API as opmodels.py
builds single-op models.

A ``Graph`` is one subgraph (tensors as opmodels.T, plus resource tensors); ``FlowModel`` holds
them (subgraph 0 is the main one) and looks like an OpModel to the tests: ``tensors``,
``graph_inputs`` and ``outputs`` are subgraph 0's, ``tflite()`` serialises all of them, and
``signature(op)`` gives the dtype combination of the op under test as mn_ops.h spells it.

CASES maps (op, dtype combination as in engine/mn_ops.h) to a builder rng -> (model, input
generator or None), as models_binary.CASES.
"""
from __future__ import annotations

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

from opmodels import T, _TT

BO = S.BuiltinOperator
BOPT = S.BuiltinOptions

# ops whose test models need the whole engine (the kernel shim runs one op of one subgraph)
ENGINE_ONLY = {"IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}

_NAMES = {v: k for k, v in vars(BO).items() if not k.startswith("_")}


class Graph:
    """One subgraph under construction."""

    def __init__(self, name):
        self.name = name
        self.tensors = []
        self.resource = set()     # indices of resource tensors
        self.ops = []             # (builtin, inputs, outputs, options_type, options)
        self.inputs = []
        self.outputs = []

    def t(self, name, dtype, shape, data=None, scale=None, zp=None):
        self.tensors.append(T(name, dtype, shape, data=data, scale=scale, zp=zp))
        return len(self.tensors) - 1

    def res(self, name):
        self.tensors.append(T(name, np.int32, ()))
        self.resource.add(len(self.tensors) - 1)
        return len(self.tensors) - 1

    def op(self, builtin, ins, outs, options_type=0, options=None):
        self.ops.append((builtin, list(ins), list(outs), options_type, options))

    def var_handle(self, shared_name, container=""):
        h = self.res(f"h_{shared_name}")
        o = S.VarHandleOptionsT()
        o.container = container.encode()
        o.sharedName = shared_name.encode()
        self.op(BO.VAR_HANDLE, [], [h], BOPT.VarHandleOptions, o)
        return h


def _if_opts(then_i, else_i):
    o = S.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = then_i, else_i
    return o


def _while_opts(cond_i, body_i):
    o = S.WhileOptionsT()
    o.condSubgraphIndex, o.bodySubgraphIndex = cond_i, body_i
    return o


def _call_once_opts(init_i):
    o = S.CallOnceOptionsT()
    o.initSubgraphIndex = init_i
    return o


class FlowModel:
    def __init__(self, graphs, builtin, desc=""):
        self.graphs = graphs
        self.builtin = builtin
        self.desc = desc

    # the OpModel view: subgraph 0
    @property
    def tensors(self):
        return self.graphs[0].tensors

    @property
    def inputs(self):
        return self.graphs[0].inputs

    @property
    def outputs(self):
        return self.graphs[0].outputs

    @property
    def graph_inputs(self):
        return self.graphs[0].inputs

    def signature(self, op):
        """The dtype combination of the first `op` of subgraph 0 (mn_ops.h's spelling)."""
        g = self.graphs[0]
        code = getattr(BO, op)
        builtin, ins, outs, _, _ = next(o for o in g.ops if o[0] == code)

        def name(i):
            if i in g.resource:
                return "resource"
            dt = g.tensors[i].dtype
            return "bool" if dt == np.bool_ else dt.name
        if op == "CALL_ONCE":
            return "none"
        if op == "IF":
            return name(ins[1])
        if op in ("WHILE", "ASSIGN_VARIABLE"):
            return name(ins[0 if op == "WHILE" else 1])
        return name(outs[0])

    def tflite(self) -> bytes:
        m = S.ModelT()
        m.version = 3
        codes = sorted({o[0] for g in self.graphs for o in g.ops})
        m.operatorCodes = []
        for c in codes:
            oc = S.OperatorCodeT()
            oc.builtinCode = c
            oc.deprecatedBuiltinCode = min(c, 127)
            oc.version = 1
            m.operatorCodes.append(oc)
        bufs = [S.BufferT()]
        m.subgraphs = []
        for g in self.graphs:
            sg = S.SubGraphT()
            sg.tensors = []
            for k, t in enumerate(g.tensors):
                tt = S.TensorT()
                tt.name = t.name.encode()
                tt.shape = np.array(t.shape, dtype=np.int32)
                tt.type = S.TensorType.RESOURCE if k in g.resource else _TT[t.dtype]
                tt.isVariable = t.variable
                tt.buffer = 0
                if t.const:
                    b = S.BufferT()
                    b.data = np.frombuffer(t.data.tobytes(), dtype=np.uint8)
                    bufs.append(b)
                    tt.buffer = len(bufs) - 1
                if t.quantized:
                    q = S.QuantizationParametersT()
                    q.scale = np.array(t.scale, dtype=np.float32)
                    q.zeroPoint = np.array(t.zp, dtype=np.int64)
                    tt.quantization = q
                sg.tensors.append(tt)
            sg.operators = []
            for builtin, ins, outs, ot, opts in g.ops:
                op = S.OperatorT()
                op.opcodeIndex = codes.index(builtin)
                op.inputs = np.array(ins, dtype=np.int32)
                op.outputs = np.array(outs, dtype=np.int32)
                op.builtinOptionsType = ot
                op.builtinOptions = opts
                sg.operators.append(op)
            sg.inputs = np.array(g.inputs, dtype=np.int32)
            sg.outputs = np.array(g.outputs, dtype=np.int32)
            sg.name = g.name.encode()
            m.subgraphs.append(sg)
        m.buffers = bufs
        m.description = b"micronn control-flow test"
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---- quantization of the data tensors ------------------------------------------------------------

def _q(dtype, rng):
    """(scale, zero point) lists for a data tensor of dtype (None for float32 / int32)."""
    if dtype == "int8":
        return [float(rng.uniform(0.02, 0.06))], [int(rng.integers(-20, 21))]
    if dtype == "int16":
        return [float(rng.uniform(2e-4, 6e-4))], [0]
    return None, None


def _binary(g, builtin, a, b, out):
    opts = {BO.ADD: (BOPT.AddOptions, S.AddOptionsT), BO.SUB: (BOPT.SubOptions, S.SubOptionsT),
            BO.LESS: (BOPT.LessOptions, S.LessOptionsT)}[builtin]
    g.op(builtin, [a, b], [out], opts[0], opts[1]())


def gen_small(rng, t):
    """Inputs away from the ends of the integer range (sums and loops do not saturate)."""
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    if t.dtype == np.bool_:
        return rng.integers(0, 2, t.shape).astype(np.bool_)
    lim = {np.dtype(np.int8): 40, np.dtype(np.int16): 4000}.get(t.dtype, 1000)
    return rng.integers(-lim, lim + 1, t.shape).astype(t.dtype)


# ---- IF -------------------------------------------------------------------------------------------

def if_model(rng, dtype, shape=(2, 3), then_index=1, else_index=2, cond_dtype=np.bool_):
    """IF(cond, a, b): then = ADD(a, b), else = SUB(a, b), all tensors of dtype (same
    quantization for inputs; the output scale doubled)."""
    sc, zp = _q(dtype, rng)
    osc = [2 * sc[0]] if sc else None
    g0, g1, g2 = Graph("main"), Graph("then"), Graph("else")
    c = g0.t("cond", cond_dtype, ())
    a = g0.t("a", dtype, shape, scale=sc, zp=zp)
    b = g0.t("b", dtype, shape, scale=sc, zp=zp)
    o = g0.t("out", dtype, shape, scale=osc, zp=zp)
    g0.op(BO.IF, [c, a, b], [o], BOPT.IfOptions, _if_opts(then_index, else_index))
    g0.inputs, g0.outputs = [c, a, b], [o]
    for g, builtin in ((g1, BO.ADD), (g2, BO.SUB)):
        x = g.t("x", dtype, shape, scale=sc, zp=zp)
        y = g.t("y", dtype, shape, scale=sc, zp=zp)
        z = g.t("z", dtype, shape, scale=osc, zp=zp)
        _binary(g, builtin, x, y, z)
        g.inputs, g.outputs = [x, y], [z]
    return FlowModel([g0, g1, g2], BO.IF, desc=f"IF {dtype} {shape}: then ADD, else SUB")


# ---- WHILE ----------------------------------------------------------------------------------------

def while_model(rng, dtype, shape=(4,), step=None):
    """WHILE over (x, i, n): cond i < n; body x += step (a constant of dtype), i += 1. Inputs x
    and n (i starts at the constant 0); outputs x and i after the loop."""
    sc, zp = _q(dtype, rng)
    if step is None:
        if dtype == "float32":
            step = rng.normal(0, 1, shape).astype(np.float32)
        elif sc:
            step = rng.integers(-6, 7, shape).astype(dtype)
        else:
            step = rng.integers(-50, 51, shape).astype(np.int32)
    g0, gc, gb = Graph("main"), Graph("cond"), Graph("body")
    x = g0.t("x", dtype, shape, scale=sc, zp=zp)
    i0 = g0.t("i0", np.int32, (), data=np.zeros((), np.int32))
    n = g0.t("n", np.int32, ())
    xo, io, no = g0.t("x_out", dtype, shape, scale=sc, zp=zp), g0.t("i_out", np.int32, ()), g0.t("n_out", np.int32, ())
    g0.op(BO.WHILE, [x, i0, n], [xo, io, no], BOPT.WhileOptions, _while_opts(1, 2))
    g0.inputs, g0.outputs = [x, n], [xo, io]
    # cond: i < n
    cx, ci, cn = gc.t("x", dtype, shape, scale=sc, zp=zp), gc.t("i", np.int32, ()), gc.t("n", np.int32, ())
    cb = gc.t("go", np.bool_, ())
    _binary(gc, BO.LESS, ci, cn, cb)
    gc.inputs, gc.outputs = [cx, ci, cn], [cb]
    # body
    bx, bi, bn = gb.t("x", dtype, shape, scale=sc, zp=zp), gb.t("i", np.int32, ()), gb.t("n", np.int32, ())
    bstep = gb.t("step", dtype, shape, data=step, scale=sc, zp=zp if zp is None else [0])
    one = gb.t("one", np.int32, (), data=np.ones((), np.int32))
    bx2, bi2 = gb.t("x_next", dtype, shape, scale=sc, zp=zp), gb.t("i_next", np.int32, ())
    _binary(gb, BO.ADD, bx, bstep, bx2)
    _binary(gb, BO.ADD, bi, one, bi2)
    gb.inputs, gb.outputs = [bx, bi, bn], [bx2, bi2, bn]
    return FlowModel([g0, gc, gb], BO.WHILE, desc=f"WHILE {dtype} {shape}: x += step while i < n")


def while_gen(n):
    """Input generator for while_model with n iterations."""
    def gen(rng, t):
        if t.name == "n":
            return np.array(n, np.int32)
        return gen_small(rng, t)
    return gen


# ---- resource variables -----------------------------------------------------------------------------

def variable_model(rng, dtype, shape=(2, 3)):
    """CALL_ONCE(init: v = C), then READ v -> before; ASSIGN v = x; READ v -> after. One invoke
    shows the init value and the assignment; several show the state across invokes."""
    sc, zp = _q(dtype, rng)
    init = gen_small(rng, T("c", dtype, shape))
    g0, g1 = Graph("main"), Graph("init")
    g0.op(BO.CALL_ONCE, [], [], BOPT.CallOnceOptions, _call_once_opts(1))
    h = g0.var_handle("v")
    x = g0.t("x", dtype, shape, scale=sc, zp=zp)
    before = g0.t("before", dtype, shape, scale=sc, zp=zp)
    after = g0.t("after", dtype, shape, scale=sc, zp=zp)
    g0.op(BO.READ_VARIABLE, [h], [before], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    g0.op(BO.ASSIGN_VARIABLE, [h, x], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    g0.op(BO.READ_VARIABLE, [h], [after], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    g0.inputs, g0.outputs = [x], [before, after]
    h1 = g1.var_handle("v")
    c = g1.t("c", dtype, shape, data=init, scale=sc, zp=zp)
    g1.op(BO.ASSIGN_VARIABLE, [h1, c], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    return FlowModel([g0, g1], BO.READ_VARIABLE, desc=f"variable {dtype} {shape}: init, read, assign, read")


def accumulator_model(rng, dtype, shape=(3,)):
    """As TFLM's resource variable tests: CALL_ONCE(init: acc = 0); acc = acc + x; output acc."""
    g0, g1 = Graph("main"), Graph("init")
    g0.op(BO.CALL_ONCE, [], [], BOPT.CallOnceOptions, _call_once_opts(1))
    h = g0.var_handle("acc", container="state")
    x = g0.t("x", dtype, shape)
    old = g0.t("old", dtype, shape)
    new = g0.t("new", dtype, shape)
    g0.op(BO.READ_VARIABLE, [h], [old], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    _binary(g0, BO.ADD, old, x, new)
    g0.op(BO.ASSIGN_VARIABLE, [h, new], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    g0.inputs, g0.outputs = [x], [new]
    h1 = g1.var_handle("acc", container="state")
    z = g1.t("zeros", dtype, shape, data=np.zeros(shape, dtype))
    g1.op(BO.ASSIGN_VARIABLE, [h1, z], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    return FlowModel([g0, g1], BO.ASSIGN_VARIABLE, desc=f"accumulator {dtype} {shape}")


# ---- nesting -----------------------------------------------------------------------------------------

def endless_while(rng):
    """WHILE i < n whose body never changes i."""
    m = while_model(rng, "float32")
    gb = m.graphs[2]
    bx, bi, bn = gb.inputs
    gb.outputs = [gb.outputs[0], bi, bn]
    return m


def if_of_while(rng):
    """IF(c, x, n): then = a WHILE adding `step` n times (subgraphs 2, 3), else = x + x."""
    w = while_model(rng, "float32")
    g0, gt, ge = Graph("main"), Graph("then"), Graph("else")
    c, x, n = g0.t("c", np.bool_, ()), g0.t("x", np.float32, (4,)), g0.t("n", np.int32, ())
    o = g0.t("out", np.float32, (4,))
    g0.op(BO.IF, [c, x, n], [o], BOPT.IfOptions, _if_opts(1, 4))
    g0.inputs, g0.outputs = [c, x, n], [o]
    tx, tn = gt.t("x", np.float32, (4,)), gt.t("n", np.int32, ())
    i0 = gt.t("i0", np.int32, (), data=np.zeros((), np.int32))
    xo, io, no = gt.t("x_out", np.float32, (4,)), gt.t("i_out", np.int32, ()), gt.t("n_out", np.int32, ())
    gt.op(BO.WHILE, [tx, i0, tn], [xo, io, no], BOPT.WhileOptions, _while_opts(2, 3))
    gt.inputs, gt.outputs = [tx, tn], [xo]
    ex, en, eo = ge.t("x", np.float32, (4,)), ge.t("n", np.int32, ()), ge.t("y", np.float32, (4,))
    _binary(ge, BO.ADD, ex, ex, eo)
    ge.inputs, ge.outputs = [ex, en], [eo]
    return FlowModel([g0, gt, w.graphs[1], w.graphs[2], ge], BO.IF, desc="IF of WHILE")


def counting_while(rng):
    """A WHILE whose body counts its iterations in a resource variable that the main graph reads:
    the table is shared by the top interpreter and the nested ones."""
    w = while_model(rng, "int32")
    g0, gc, gb = w.graphs
    gi = Graph("init")
    h = gi.var_handle("iterations")
    z = gi.t("zero", np.int32, (), data=np.zeros((), np.int32))
    gi.op(BO.ASSIGN_VARIABLE, [h, z], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    hb = gb.var_handle("iterations")
    cnt, cnt2 = gb.t("count", np.int32, ()), gb.t("count_next", np.int32, ())
    one = gb.t("one_more", np.int32, (), data=np.ones((), np.int32))
    gb.op(BO.READ_VARIABLE, [hb], [cnt], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    _binary(gb, BO.ADD, cnt, one, cnt2)
    gb.op(BO.ASSIGN_VARIABLE, [hb, cnt2], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    ops = g0.ops
    g0.ops = []
    g0.op(BO.CALL_ONCE, [], [], BOPT.CallOnceOptions, _call_once_opts(3))
    g0.ops += ops
    h0 = g0.var_handle("iterations")
    total = g0.t("total", np.int32, ())
    g0.op(BO.READ_VARIABLE, [h0], [total], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    g0.outputs = g0.outputs + [total]
    return FlowModel([g0, gc, gb, gi], BO.WHILE, desc="WHILE counting in a variable")



def op_graph(op, name):
    """A subgraph holding one single-op model of opmodels.py (inputs: its non-constant inputs)."""
    g = Graph(name)
    g.tensors = [T(t.name, t.dtype, t.shape, data=t.data, scale=t.scale, zp=t.zp, qdim=t.qdim,
                   variable=t.variable) for t in op.tensors]
    g.op(op.builtin, op.inputs, op.outputs, op.options_type, op.options)
    g.inputs, g.outputs = list(op.graph_inputs), list(op.outputs)
    return g


def if_of_svdf(rng):
    """IF(c, x): both branches an int8 SVDF (its own weights and state tensor each; the output
    quantization alike): the state of a nested subgraph carries over invokes and is reset with
    the top one."""
    from opmodels import svdf
    ops = [svdf(np.random.default_rng(1), out_zp=3), svdf(np.random.default_rng(1), out_zp=3)]
    w = ops[1].tensors[1]
    w.data = np.ascontiguousarray(-w.data)   # other weights, same quantization
    branches = [op_graph(ops[0], "then"), op_graph(ops[1], "else")]
    src = branches[0].tensors
    g0 = Graph("main")
    c = g0.t("c", np.bool_, ())
    x = g0.t("x", np.int8, src[0].shape, scale=src[0].scale, zp=src[0].zp)
    o = g0.t("out", np.int8, src[5].shape, scale=src[5].scale, zp=src[5].zp)
    g0.op(BO.IF, [c, x], [o], BOPT.IfOptions, _if_opts(1, 2))
    g0.inputs, g0.outputs = [c, x], [o]
    m = FlowModel([g0] + branches, BO.IF, desc="IF of SVDF (state in the branches)")
    m.branch_ops = ops   # the branches as single-op models
    return m


def _cases():
    c = {}
    for dt in ("int8", "int16", "float32", "int32"):
        c[("IF", dt)] = lambda rng, dt=dt: (if_model(rng, dt), gen_small)
        c[("WHILE", dt)] = lambda rng, dt=dt: (while_model(rng, dt), while_gen(3))
    for dt in ("int8", "int16", "float32", "int32", "bool"):
        for op in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
            c[(op, dt)] = lambda rng, dt=dt: (variable_model(rng, dt), gen_small)
    c[("VAR_HANDLE", "resource")] = lambda rng: (variable_model(rng, "float32"), gen_small)
    c[("CALL_ONCE", "none")] = lambda rng: (variable_model(rng, "int8"), gen_small)
    return c


CASES = _cases()
