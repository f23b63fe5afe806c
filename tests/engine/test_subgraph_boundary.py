"""Boundary tensors of the custom op micronn_subgraph (engine/kernels/custom/micronn_subgraph.c),
which points the subgraph's inputs and outputs at the op's operands instead of copying: a subgraph
whose output is its input, that returns one tensor twice, or whose in-place RESHAPE touches the
boundary, still gives every output its value, on every rerun."""
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as S

import graphmodels
from graphmodels import BO


def _model(sub, n_out):
    """x [2,8] -> RELU -> micronn_subgraph(subgraph 1 = `sub`) -> n_out outputs, each -> RELU6."""
    g = graphmodels.Graph()
    x = g.input("x", np.float32, (2, 8))
    r = g.op(BO.RELU, [x], np.float32, (2, 8), name="r")
    c = g.custom("micronn_subgraph", [r], np.float32, (2, 8), custom_options=b"backend=generic;subgraph=1",
                 name="s0")
    outs = [c] + [g.tensor(f"s{k}", np.float32, (2, 8)) for k in range(1, n_out)]
    g.ops[-1].outputs = np.array(outs, np.int32)
    for o in outs:
        g.output(g.op(BO.RELU6, [o], np.float32, (2, 8)))
    for o in sub.ops:   # one operator-code list per model
        o.opcodeIndex = g._code(*sub.codes[o.opcodeIndex])
    m = g.model()
    sg = sub.model().subgraphs[0]
    sg.name = b"sub"
    m.subgraphs.append(sg)
    return graphmodels.serialize(m)


def _run(engine, data, x, **kw):
    it = engine.Interpreter(engine.Model(data), **kw)
    out = []
    for _ in range(3):   # reruns: nothing may depend on what the arena held before
        it.set_input(0, x)
        it.invoke()
        out.append([it.output(i).copy() for i in range(it.num_outputs)])
    return out


def _expect(x, f):
    return np.clip(f(np.maximum(x, 0)), 0, 6)


X = np.linspace(-4, 8, 16, dtype=np.float32).reshape(2, 8)


@pytest.mark.parametrize("planner", ["greedy", "no_reuse"])
def test_subgraph_output_is_its_input(engine, planner):
    sub = graphmodels.Graph()
    a = sub.input("a", np.float32, (2, 8))
    sub.output(a)
    for outs in _run(engine, _model(sub, 1), X, planner=planner):
        np.testing.assert_array_equal(outs[0], _expect(X, lambda v: v))


def test_subgraph_returns_its_input_and_a_result(engine):
    sub = graphmodels.Graph()
    a = sub.input("a", np.float32, (2, 8))
    neg = sub.op(BO.NEG, [a], np.float32, (2, 8))
    sub.output(a)
    sub.output(neg)
    for outs in _run(engine, _model(sub, 2), X):
        np.testing.assert_array_equal(outs[0], _expect(X, lambda v: v))
        np.testing.assert_array_equal(outs[1], _expect(X, lambda v: -v))


def test_subgraph_in_place_reshape_of_its_input(engine):
    sub = graphmodels.Graph()
    a = sub.input("a", np.float32, (2, 8))
    opts = S.ReshapeOptionsT()
    opts.newShape = [16]
    flat = sub.op(BO.RESHAPE, [a], np.float32, (16,), S.BuiltinOptions.ReshapeOptions, opts)
    opts2 = S.ReshapeOptionsT()
    opts2.newShape = [2, 8]
    back = sub.op(BO.RESHAPE, [flat], np.float32, (2, 8), S.BuiltinOptions.ReshapeOptions, opts2)
    sub.output(sub.op(BO.NEG, [back], np.float32, (2, 8)))
    for outs in _run(engine, _model(sub, 1), X):
        np.testing.assert_array_equal(outs[0], _expect(X, lambda v: -v))


def test_subgraph_output_is_a_reshape_of_its_input(engine):
    sub = graphmodels.Graph()
    a = sub.input("a", np.float32, (2, 8))
    opts = S.ReshapeOptionsT()
    opts.newShape = [2, 8]
    sub.output(sub.op(BO.RESHAPE, [a], np.float32, (2, 8), S.BuiltinOptions.ReshapeOptions, opts))
    for outs in _run(engine, _model(sub, 1), X):
        np.testing.assert_array_equal(outs[0], _expect(X, lambda v: v))


def test_subgraph_returns_one_tensor_twice(engine):
    sub = graphmodels.Graph()
    a = sub.input("a", np.float32, (2, 8))
    neg = sub.op(BO.NEG, [a], np.float32, (2, 8))
    sub.output(neg)
    sub.output(neg)
    sub.output(a)
    for outs in _run(engine, _model(sub, 3), X):
        np.testing.assert_array_equal(outs[0], _expect(X, lambda v: -v))
        np.testing.assert_array_equal(outs[1], _expect(X, lambda v: -v))
        np.testing.assert_array_equal(outs[2], _expect(X, lambda v: v))
