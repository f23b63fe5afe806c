"""Several subgraphs: IF, WHILE, CALL_ONCE and resource variables against LiteRT (BUILTIN_REF),
over several invokes where there is state; errors the engine must name (bad subgraph index,
recursion, mismatched subgraph operands, read before assign, a variable changing dtype); a WHILE
that never ends stopped by should_stop. Models: models_control.py. The whole engine runs them
(the kernel shim cannot: one op of one subgraph)."""
import numpy as np
import pytest

import models_control as MC
from models_control import BO, BOPT, FlowModel, Graph
from runners import engine_runner, run_oracle

S = MC.S

E = pytest.importorskip("micronn_tools.engine")


@pytest.fixture(scope="module")
def run():
    r = engine_runner()
    if not r:
        pytest.fail("engine ctypes wrapper / libmicronn.so not available: make -C tests/engine lib", pytrace=False)
    return r


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def same(got, want, desc):
    assert len(got) == len(want), desc
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g).reshape(w.shape)
        assert g.dtype == w.dtype, desc
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{desc} output {k}")
        else:
            assert np.array_equal(g, w), f"{desc} output {k}: got {g.ravel()[:8]} want {w.ravel()[:8]}"


def compare(run, model, inputs, invokes=1):
    want = run_oracle(model, inputs, invokes)
    got = run(model, inputs, invokes)
    if invokes == 1:
        want, got = [want], [got]
    for step, (g, w) in enumerate(zip(got, want)):
        same(g, w, f"{model.desc} invoke {step}")
    return want


def prepare_error(model):
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(E.Model(model.tflite()))
    return str(e.value)


DTYPES = ["int8", "int16", "float32", "int32"]


# ---- IF -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_if_takes_both_branches(run, rng, dtype):
    m = MC.if_model(rng, dtype, shape=(3, 5))
    a, b = (MC.gen_small(rng, m.tensors[i]) for i in m.graph_inputs[1:])
    outs = []
    for c in (True, False, True):
        outs.append(compare(run, m, [np.array(c), a, b])[0][0])
    # the branches differ (then ADD, else SUB), so both really ran
    assert not np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


def test_if_branches_across_invokes(run, rng):
    """One interpreter, the branch changing from invoke to invoke."""
    m = MC.if_model(rng, "float32", shape=(4,))
    ins = [[np.array(bool(c))] + [MC.gen_small(rng, m.tensors[i]) for i in m.graph_inputs[1:]]
           for c in (1, 0, 0, 1, 0)]
    compare(run, m, ins, invokes=len(ins))


def test_if_int32_condition(run, rng):
    """A one-element int32 condition: nonzero is true."""
    m = MC.if_model(rng, "int32", cond_dtype=np.int32)
    a, b = (MC.gen_small(rng, m.tensors[i]) for i in m.graph_inputs[1:])
    assert np.array_equal(run(m, [np.array(7, np.int32), a, b])[0], a + b)
    assert np.array_equal(run(m, [np.array(0, np.int32), a, b])[0], a - b)


# ---- WHILE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3, 7, -2])
def test_while_counts(run, rng, dtype, n):
    m = MC.while_model(rng, dtype)
    ins = [MC.while_gen(n)(rng, m.tensors[i]) for i in m.graph_inputs]
    want = compare(run, m, ins)
    assert want[0][1] == max(n, 0)


def test_while_iteration_counts_across_invokes(run, rng):
    m = MC.while_model(rng, "int8", shape=(2, 3))
    ins = [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]]), np.array(n, np.int32)] for n in (4, 0, 2, 9)]
    compare(run, m, ins, invokes=len(ins))


def test_endless_while_is_stopped_by_should_stop(rng):
    m = MC.endless_while(rng)
    polls = []
    stop = [True]
    it = E.Interpreter(E.Model(m.tflite()), should_stop=lambda: stop[0] and (polls.append(1) or len(polls) > 500))
    it.set_input(0, np.zeros(4, np.float32))
    it.set_input(1, np.array(3, np.int32))
    with pytest.raises(E.MicronnError) as e:
        it.invoke()
    assert e.value.status == E.ERR_ABORTED and "should_stop" in str(e.value), e.value
    assert len(polls) == 501
    # the interpreter stays usable: a loop that ends
    stop[0] = False
    it.set_input(1, np.array(0, np.int32))
    it.invoke()
    assert it.output(1) == 0


# ---- CALL_ONCE and resource variables -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "int32", "bool"])
def test_variable_state_across_invokes(run, rng, dtype):
    """Invoke k reads what invoke k-1 assigned (invoke 0: CALL_ONCE's init value)."""
    m = MC.variable_model(rng, dtype)
    ins = [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]])] for _ in range(4)]
    want = compare(run, m, ins, invokes=4)
    for k in range(1, 4):
        assert np.array_equal(want[k][0], ins[k - 1][0])


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_accumulator(run, rng, dtype):
    """TFLM's resource-variable test: acc = 0 once, then acc += x every invoke."""
    m = MC.accumulator_model(rng, dtype)
    ins = [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]])] for _ in range(6)]
    want = compare(run, m, ins, invokes=6)
    total = np.sum([x[0] for x in ins], axis=0)
    np.testing.assert_allclose(want[-1][0], total, rtol=1e-5)


def test_reset_runs_call_once_again(rng):
    m = MC.accumulator_model(rng, "int32")
    it = E.Interpreter(E.Model(m.tflite()))
    x = np.array([1, 2, 3], np.int32)
    for k in range(3):
        it.set_input(0, x)
        it.invoke()
    assert list(it.output(0)) == [3, 6, 9]
    it.reset()
    it.set_input(0, x)
    it.invoke()
    assert list(it.output(0)) == [1, 2, 3]


# ---- nesting -------------------------------------------------------------------------------------

def test_if_of_while(run, rng):
    m = MC.if_of_while(rng)
    ins = [[np.array(bool(c)), rng.normal(size=4).astype(np.float32), np.array(n, np.int32)]
           for c, n in ((1, 3), (0, 5), (1, 0), (1, 6))]
    compare(run, m, ins, invokes=len(ins))


def test_variable_shared_with_nested_subgraphs(run, rng):
    m = MC.counting_while(rng)
    ins = [[MC.gen_small(rng, m.tensors[m.graph_inputs[0]]), np.array(n, np.int32)] for n in (3, 0, 4, 2)]
    want = compare(run, m, ins, invokes=len(ins))
    assert [int(w[2]) for w in want] == [3, 3, 7, 9]


@pytest.mark.parametrize("build", [MC.counting_while, MC.if_of_while])
def test_nested_arena_is_exact(rng, build):
    """The dry run sizes the nested interpreters' arenas too (two levels for IF of WHILE): the
    arena it reports works, one alignment unit less does not."""
    m = build(rng)
    model = E.Model(m.tflite())
    need = model.arena_needed("greedy", False, False)
    E.Interpreter(model, arena_size=need)
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(model, arena_size=need - 16)
    assert e.value.status == E.ERR_ARENA


# ---- errors ----------------------------------------------------------------------------------------

def test_bad_subgraph_index(rng):
    msg = prepare_error(MC.if_model(rng, "float32", then_index=7))
    assert "op 0 IF: then subgraph 7 does not exist (the model has 3)" in msg, msg
    m = MC.while_model(rng, "int32")
    m.graphs[0].ops[0][4].bodySubgraphIndex = -1
    msg = prepare_error(m)
    assert "op 0 WHILE: body subgraph -1 does not exist (the model has 3)" in msg, msg


def test_recursion_is_refused(rng):
    msg = prepare_error(MC.if_model(rng, "float32", else_index=0))
    assert "else subgraph 0 calls itself (recursion: subgraph 0 is already running: the main one)" in msg, msg
    # deeper: subgraph 1 calls subgraph 1
    g0, g1 = Graph("main"), Graph("init")
    g0.op(BO.CALL_ONCE, [], [], BOPT.CallOnceOptions, MC._call_once_opts(1))
    g1.op(BO.CALL_ONCE, [], [], BOPT.CallOnceOptions, MC._call_once_opts(1))
    msg = prepare_error(FlowModel([g0, g1], BO.CALL_ONCE))
    assert "op 0 CALL_ONCE: init subgraph 1: op 0 CALL_ONCE: init subgraph 1 calls itself" in msg, msg


def test_mismatched_subgraph_operands(rng):
    m = MC.if_model(rng, "int8")
    t = m.graphs[1].tensors[0]
    t.dtype, t.scale, t.zp = np.dtype(np.float32), None, None
    msg = prepare_error(m)
    assert "op 0 IF: input 1 is int8 (6 bytes), then subgraph 1's input 0 is float32 (24 bytes)" in msg, msg
    m = MC.if_model(rng, "int8")
    m.graphs[2].inputs = m.graphs[2].inputs[:1]
    msg = prepare_error(m)
    assert "op 0 IF: else subgraph 2 has 1 inputs, the op passes 2" in msg, msg
    m = MC.while_model(rng, "int32")
    m.graphs[1].tensors[m.graphs[1].outputs[0]].dtype = np.dtype(np.int32)
    msg = prepare_error(m)
    assert "cond subgraph 1 must have one output, a bool scalar" in msg, msg


def read_before_assign():
    g0 = Graph("main")
    h = g0.var_handle("v")
    x, out = g0.t("x", np.float32, (2,)), g0.t("out", np.float32, (2,))
    g0.op(BO.READ_VARIABLE, [h], [out], BOPT.ReadVariableOptions, S.ReadVariableOptionsT())
    g0.op(BO.ASSIGN_VARIABLE, [h, x], [], BOPT.AssignVariableOptions, S.AssignVariableOptionsT())
    g0.inputs, g0.outputs = [x], [out]
    return FlowModel([g0], BO.READ_VARIABLE, desc="read before assign")


def test_read_before_assign(rng):
    m = read_before_assign()
    it = E.Interpreter(E.Model(m.tflite()))
    it.set_input(0, np.ones(2, np.float32))
    with pytest.raises(E.MicronnError) as e:
        it.invoke()
    assert "op 1 READ_VARIABLE: variable 'v' read before it was assigned" in str(e.value), e.value
    # LiteRT refuses it too
    with pytest.raises(Exception):
        run_oracle(m, [np.ones(2, np.float32)])


def test_variable_never_assigned(rng):
    m = read_before_assign()
    m.graphs[0].ops.pop()
    msg = prepare_error(m)
    assert "variable 'v' is never assigned" in msg, msg


def test_assign_changing_dtype(rng):
    m = MC.variable_model(rng, "float32")
    c = m.graphs[1].tensors[1]
    c.dtype, c.data = np.dtype(np.int32), c.data.astype(np.int32)
    msg = prepare_error(m)
    assert ("subgraph 1 op 1 ASSIGN_VARIABLE: variable 'v' changes dtype or size: int32 (24 bytes) here, "
            "float32 (24 bytes) at subgraph 0 op 3") in msg, msg
    m = MC.variable_model(rng, "int8")
    m.graphs[0].tensors[m.graphs[0].outputs[1]].shape = (3, 3)
    msg = prepare_error(m)
    assert "op 4 READ_VARIABLE: output is int8 (9 bytes), variable 'v' is int8 (6 bytes)" in msg, msg


def test_handle_from_outside_the_subgraph_is_refused(rng):
    """A resource handle passed into a subgraph cannot be resolved at prepare: refused clearly."""
    m = MC.variable_model(rng, "float32")
    g0 = m.graphs[0]
    h = next(o[2][0] for o in g0.ops if o[0] == BO.VAR_HANDLE)
    g0.ops = [o for o in g0.ops if o[0] != BO.VAR_HANDLE]
    g0.inputs = g0.inputs + [h]
    msg = prepare_error(m)
    assert "resource handle (input 0, tensor 0) does not come from a VAR_HANDLE op of this subgraph" in msg, msg


@pytest.mark.parametrize("planner", ["greedy", "no_reuse", "offline"])
@pytest.mark.parametrize("reuse_inputs", [False, True])
@pytest.mark.parametrize("delegate", [None, "generic"])
def test_planners(rng, planner, reuse_inputs, delegate):
    """Nested interpreters plan greedily whatever the top one uses (an offline plan describes
    subgraph 0 only) and never reuse their inputs (WHILE reads them after cond ran); a delegate
    partitions each subgraph's ops too."""
    if delegate and delegate not in E.backends():
        pytest.skip(f"no {delegate} backend in this build")
    m = MC.if_of_while(rng)
    ins = [[np.array(bool(c)), rng.normal(size=4).astype(np.float32), np.array(n, np.int32)]
           for c, n in ((1, 3), (0, 5), (1, 2))]
    want = run_oracle(m, ins, len(ins))
    it = E.Interpreter(E.Model(m.tflite()), planner=planner, reuse_inputs=reuse_inputs, delegate=delegate)
    for x, w in zip(ins, want):
        for i, v in enumerate(x):
            it.set_input(i, v)
        it.invoke()
        np.testing.assert_allclose(it.output(0), w[0], rtol=1e-5)


def test_opset_counts_every_subgraph(rng):
    """`make firmware MODELS=...` links the kernels of every subgraph, not only subgraph 0's."""
    from micronn_tools import opset
    names, problems = opset.ops_used([MC.if_of_while(rng).tflite(), MC.counting_while(rng).tflite()])
    assert names == ["ADD", "ASSIGN_VARIABLE", "CALL_ONCE", "IF", "LESS", "READ_VARIABLE", "VAR_HANDLE", "WHILE"]
    assert problems == []


def test_options_table_of_another_op_is_refused(rng):
    """IfOptions and WhileOptions both hold two ints: read by field id, the wrong one would pick
    subgraphs; the registry refuses it first."""
    m = MC.if_model(rng, "float32")
    builtin, ins, outs, _, _ = m.graphs[0].ops[0]
    m.graphs[0].ops[0] = (builtin, ins, outs, BOPT.WhileOptions, MC._while_opts(1, 2))
    msg = prepare_error(m)
    assert "op 0 IF: builtin options table is WhileOptions, IF takes IfOptions" in msg, msg


def test_state_in_nested_subgraphs(rng):
    """Variable tensors of a subgraph (SVDF state) keep their values from one invoke of it to the
    next, as in TFLM, which allocates every subgraph once (LiteRT's IF re-allocates its branch at
    each invoke, zeroing that state, so the reference is each branch's SVDF as a model of its
    own, run by LiteRT over the invokes that took that branch); mn_interp_reset resets them too,
    as TFLM resets every subgraph's variables."""
    m = MC.if_of_svdf(rng)
    x = m.tensors[m.graph_inputs[1]]
    conds = (1, 1, 0, 1, 0, 0, 1)
    xs = [MC.gen_small(rng, x) for _ in conds]
    want = {}
    for b, op in ((1, m.branch_ops[0]), (0, m.branch_ops[1])):
        ks = [k for k, c in enumerate(conds) if c == b]
        outs = run_oracle(op, [[xs[k]] for k in ks], invokes=len(ks))
        want.update({k: o[0] for k, o in zip(ks, outs)})
    it = E.Interpreter(E.Model(m.tflite()))

    def invoke(k):
        it.set_input(0, np.array(bool(conds[k])))
        it.set_input(1, xs[k])
        it.invoke()
        return it.output(0)
    got = [invoke(k) for k in range(len(conds))]
    for k in range(len(conds)):
        assert np.array_equal(got[k], want[k]), f"invoke {k}: got {got[k].ravel()} want {want[k].ravel()}"
    assert not np.array_equal(got[1], run_oracle(m.branch_ops[0], [xs[1]])[0])   # state mattered
    it.reset()
    for k in range(3):
        assert np.array_equal(invoke(k), want[k]), f"after reset, invoke {k}"


def test_branches_share_activation_memory(rng):
    """IF's branches (and WHILE's cond and body) never run at the same time: their activations
    share memory, so the IF op holds both branches' persistent data but one activation area."""
    m = MC.if_model(rng, "float32", shape=(32, 32))   # 4 KB tensors: 12 KB of activations a branch
    it = E.Interpreter(E.Model(m.tflite()))
    if_bytes = it.profile()[0]["persistent"]
    alone = []
    for g in m.graphs[1:]:
        sub = E.Model(FlowModel([g], BO.ADD).tflite())
        alone.append(sub.arena_needed("greedy", False, False))
    assert if_bytes < sum(alone) - 10000, (if_bytes, alone)
    assert if_bytes > max(alone), (if_bytes, alone)
    # and the results stay right with one interpreter running both branches in turn
    a, b = (MC.gen_small(rng, m.tensors[i]) for i in m.graph_inputs[1:])
    for c in (True, False, True, False):
        it.set_input(0, np.array(c))
        it.set_input(1, a)
        it.set_input(2, b)
        it.invoke()
        np.testing.assert_allclose(it.output(0), a + b if c else a - b, rtol=1e-6)
