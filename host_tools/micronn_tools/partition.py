"""`micronn partition MODEL --backend NAME -o OUT.tflite`: split a model between a kernel backend
and the CPU kernels, ahead of time (as TI's TIDL offload does).

The engine's own partitioner decides (the host library, mn_delegate.c: maximal connected subgraphs
of the ops the backend supports, in a topological order with no cycle through the other ops,
min_subgraph). The rewritten model keeps every op outside those subgraphs in subgraph 0, in the
engine's execution order, and replaces each subgraph by one custom op "micronn_subgraph" whose
custom options read "backend=NAME;subgraph=K"; subgraph K of the same file holds the subgraph's
ops, with the boundary tensors as its inputs and outputs (constants stay inside and share the
original buffers). The result is a standard .tflite: LiteRT's flatbuffer reader parses it, and
micronn runs it (engine/kernels/custom/micronn_subgraph.c runs subgraph K with a second
interpreter on that backend) with the same output bits as the original.
"""
import copy

import numpy as np

from . import engine

CUSTOM_CODE = "micronn_subgraph"


class PartitionError(ValueError):
    pass


def _schema():
    try:
        from ai_edge_litert import schema_py_generated as S
    except ImportError as e:  # pragma: no cover - installed by `make setup`
        raise PartitionError("micronn partition needs the TFLite schema from ai-edge-litert "
                             "(pip install ai-edge-litert)") from e
    return S


def plan(data, backend, min_subgraph=1):
    """The engine's partition: list of (model op index, subgraph id or -1) in execution order."""
    m = engine.Model(data)
    try:
        it = engine.Interpreter(m, delegate=backend, min_subgraph=min_subgraph, reference=True)
    except engine.MicronnError as e:
        raise PartitionError(str(e)) from e
    return [(p["op"], p["subgraph"]) for p in it.profile()]


def partition(data, backend, min_subgraph=1):
    """Rewritten model bytes and a summary: [{"subgraph": K, "backend", "ops": [model op indices],
    "inputs": [tensor], "outputs": [tensor]}]."""
    import flatbuffers
    S = _schema()
    order = plan(data, backend, min_subgraph)
    model = S.ModelT.InitFromPackedBuf(data, 0)
    if len(model.subgraphs) != 1:
        raise PartitionError(f"the model has {len(model.subgraphs)} subgraphs; only single-subgraph "
                             "models can be partitioned")
    main = model.subgraphs[0]
    ops = main.operators
    produced_by = {}
    for i, op in enumerate(ops):
        for t in _ints(op.outputs):
            if t >= 0:
                produced_by[t] = i
    groups = {}
    for i, g in order:
        if g >= 0:
            groups.setdefault(g, []).append(i)
    graph_outputs = set(_ints(main.outputs))
    code_index = _opcode(model, S)

    summary, new_ops, emitted = [], [], set()
    for i, g in order:
        if g < 0:
            new_ops.append(ops[i])
            continue
        if g in emitted:
            continue
        emitted.add(g)
        members = groups[g]
        inside = set(members)
        read = [t for j in members for t in _ints(ops[j].inputs) if t >= 0]
        written = [t for j in members for t in _ints(ops[j].outputs) if t >= 0]
        inputs = _unique(t for t in read if produced_by.get(t) not in inside and not _const(model, main, t))
        used_outside = {t for j, op in enumerate(ops) if j not in inside for t in _ints(op.inputs)}
        outputs = _unique(t for t in written if t in used_outside or t in graph_outputs)
        k = len(model.subgraphs)
        model.subgraphs.append(_subgraph(S, main, [ops[j] for j in members], inputs, outputs, f"{backend}_{g}"))
        c = S.OperatorT()
        c.opcodeIndex = code_index
        c.inputs = np.array(inputs, dtype=np.int32)
        c.outputs = np.array(outputs, dtype=np.int32)
        c.customOptions = np.frombuffer(f"backend={backend};subgraph={k}".encode(), dtype=np.uint8)
        new_ops.append(c)
        summary.append({"subgraph": k, "backend": backend, "ops": members, "inputs": inputs, "outputs": outputs})
    main.operators = new_ops
    b = flatbuffers.Builder(len(data) + 4096)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output()), summary


def _ints(v):
    return [] if v is None else [int(x) for x in v]


def _unique(it):
    seen, out = set(), []
    for t in it:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _const(model, sg, t):
    buf = sg.tensors[t].buffer
    b = model.buffers[buf] if 0 < buf < len(model.buffers) else None
    return b is not None and ((b.data is not None and len(b.data)) or (b.offset or 0) > 1)


def _opcode(model, S):
    for k, oc in enumerate(model.operatorCodes):
        if oc.builtinCode == S.BuiltinOperator.CUSTOM and (oc.customCode or b"").decode() == CUSTOM_CODE:
            return k
    oc = S.OperatorCodeT()
    oc.builtinCode = S.BuiltinOperator.CUSTOM
    oc.deprecatedBuiltinCode = S.BuiltinOperator.CUSTOM
    oc.customCode = CUSTOM_CODE.encode()
    oc.version = 1
    model.operatorCodes.append(oc)
    return len(model.operatorCodes) - 1


def _subgraph(S, main, ops, inputs, outputs, name):
    """A subgraph of copies of `ops` and of the tensors they use (renumbered)."""
    remap, tensors = {}, []

    def idx(t):
        if t < 0:
            return t
        if t not in remap:
            remap[t] = len(tensors)
            tensors.append(copy.deepcopy(main.tensors[t]))
        return remap[t]
    new_ops = []
    for op in ops:
        c = copy.deepcopy(op)
        c.inputs = np.array([idx(t) for t in _ints(op.inputs)], dtype=np.int32)
        c.outputs = np.array([idx(t) for t in _ints(op.outputs)], dtype=np.int32)
        if op.intermediates is not None and len(op.intermediates):
            c.intermediates = np.array([idx(t) for t in _ints(op.intermediates)], dtype=np.int32)
        new_ops.append(c)
    sg = S.SubGraphT()
    sg.inputs = np.array([idx(t) for t in inputs], dtype=np.int32)
    sg.outputs = np.array([idx(t) for t in outputs], dtype=np.int32)
    sg.tensors = tensors
    sg.operators = new_ops
    sg.name = name.encode()
    return sg


def add_parser(sub):
    p = sub.add_parser(
        "partition", help="split a model between a kernel backend and the CPU kernels (custom ops)",
        description=__doc__, formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL.tflite")
    p.add_argument("--backend", required=True, help="kernel backend: mve, dsp or generic")
    p.add_argument("--min-subgraph", type=int, default=1, metavar="N",
                   help="smallest number of ops worth a subgraph (default 1)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.tflite")
    p.set_defaults(func=run)
    return p


def run(args):
    from .cli_common import CliError
    with open(args.model, "rb") as f:
        data = f.read()
    if args.min_subgraph < 1:
        raise CliError("--min-subgraph must be >= 1", 2)
    try:
        out, summary = partition(data, args.backend, args.min_subgraph)
    except (PartitionError, engine.MicronnError) as e:
        raise CliError(str(e))
    with open(args.output, "wb") as f:
        f.write(out)
    n_ops = sum(len(s["ops"]) for s in summary)
    print(f"{args.output}: {len(summary)} subgraph(s) on {args.backend} holding {n_ops} of "
          f"{len(plan(data, args.backend, args.min_subgraph))} ops; {len(out)} bytes")
    for s in summary:
        print(f"  subgraph {s['subgraph']}: ops {_ranges(s['ops'])}, inputs {s['inputs']}, outputs {s['outputs']}")
    return 0


def _ranges(ix):
    out, start = [], None
    for k, i in enumerate(ix):
        if start is None:
            start = i
        if k + 1 == len(ix) or ix[k + 1] != i + 1:
            out.append(str(start) if start == i else f"{start}-{i}")
            start = None
    return ",".join(out)
