"""The builtin ops a set of models needs, as the engine itself reads them.

    python -m micronn_tools.opset a.tflite b.tflite     ->  "CONV_2D DEPTHWISE_CONV_2D ..."

`make firmware MODELS=...` uses this to link only those kernels (MICRONN_OPS). It fails (exit 1,
naming model, op and reason on stderr) when the engine cannot run a model: an op micronn has no
kernel for, or one whose kernel refuses the model (dtype, version, options), as the host build of
the engine, which has every kernel, reports it. --allow-unsupported (make ... ALLOW_UNSUPPORTED=1)
only warns, and the firmware gets the kernels that exist.

    python -m micronn_tools.opset --types a.tflite b.tflite ->  "int8 float32"

The type families (mn_config.h MICRONN_TYPE_*) the models' ops need (MICRONN_TYPES): an op's
family is its input activation's (input 0): int8 (also uint8), int16, float32, or hybrid for
float32 with int8 weights (input 1), as the engine's mn_check_family classifies it; an output 0
of another dtype adds its family too (SOFTMAX int8 -> int16 needs the int16 one). The type
conversions QUANTIZE, DEQUANTIZE and CAST, whose kernels are not split by family, do not count
(an int8 model with float32 input and output needs no float32 kernels).

    python -m micronn_tools.opset --variants --kernels "dsp generic" a.tflite ...
        ->  "dsp.conv_s8 dsp.depthwise_s8_mult1"

The optimized kernel variants (kernels/mn_variants.h) the models' nodes select on a board with
these backends, in order of preference (the board's MICRONN_KERNELS): a firmware for the models
links only those (MICRONN_VARIANTS); "none" when they select none; "all" (with a warning) when
--allow-unsupported and a model cannot be prepared. The host build of the engine
evaluates each backend's own fits() over the same lists the firmware compiles (mn_variants_query).
The reference int8 convolutions are listed too ("ref.conv_s8", "ref.depthwise_s8") when a node
runs one (no variant fits, or its weights are not constants; every such node with --kernels
reference): a firmware links them only then.

    python -m micronn_tools.opset --patches a.tflite b.tflite ->  "1" or "0"

Whether one of the models stores a patch stage (`micronn plan --patches --write`): a firmware
for these models then keeps patch-based execution (MICRONN_PATCHES), which it leaves out otherwise.
"""
import sys

from . import engine


class UnsupportedOps(ValueError):
    def __init__(self, problems, names):
        self.problems, self.names = problems, names
        super().__init__("\n".join(problems))


def ops_used(model_bytes_list, labels=None, allow_unsupported=False):
    """Sorted builtin op names (with a kernel in the engine) used by the models, in every
    subgraph. Raises
    UnsupportedOps listing every op the engine cannot run unless allow_unsupported."""
    labels = labels or [f"model {i}" for i in range(len(model_bytes_list))]
    names, problems = set(), []
    for label, data in zip(labels, model_bytes_list):
        model = engine.Model(data)
        checks = model.check_ops()
        for op, chk in zip(model.ops(), checks):
            if op["kernel"] == "none":
                what = "custom op" if op["builtin"] == 32 else "op"
                hint = engine.custom_op_hint(op["name"]) if op["builtin"] == 32 else None
                problems.append(f"{label}: op {op['index']} {op['name']}: " + (
                    hint or f"micronn has no kernel for this {what} yet"))
                continue
            names.add(op["name"])
            if chk is not None:
                reason = chk[1]
                if reason.startswith("op ") and ": " in reason:
                    reason = reason.split(": ", 1)[1]
                problems.append(f"{label}: op {op['index']} {op['name']}: {reason}")
        # ops of the other subgraphs (IF / WHILE / CALL_ONCE branches, micronn_subgraph's): their
        # kernels must be linked too (their failures show in the calling op's check above)
        for k in range(1, model.num_subgraphs):
            for op in model.subgraph(k).ops():
                if op["kernel"] != "none":
                    names.add(op["name"])
                else:
                    problems.append(f"{label}: subgraph {k} op {op['index']} {op['name']}: "
                                    "micronn has no kernel for this op yet")
    if problems and not allow_unsupported:
        raise UnsupportedOps(problems, sorted(names))
    return sorted(names), problems


# Ops whose input dtype says nothing about the kernels the other ops need.
CONVERSIONS = {"QUANTIZE", "DEQUANTIZE", "CAST"}
FAMILIES = ("int8", "int16", "float32", "hybrid")   # MICRONN_TYPE_<upper>


def op_family(act_dtype, weights_dtype):
    """The type family of an op with input dtype act_dtype and input 1 dtype weights_dtype (dtype
    names as engine.Model.tensor gives them; None when absent), or None."""
    if act_dtype == "float32":
        return "hybrid" if weights_dtype == "int8" else "float32"
    if act_dtype == "int16":
        return "int16"
    if act_dtype in ("int8", "uint8"):
        return "int8"
    return None


def types_used(model_bytes_list):
    """Sorted type families (FAMILIES order) the ops of the models need, in every subgraph."""
    found = set()
    for data in model_bytes_list:
        model = engine.Model(data)
        for k in range(model.num_subgraphs):
            m = model if k == 0 else model.subgraph(k)
            for op in m.ops():
                if op["name"] in CONVERSIONS:
                    continue
                ins = m.op_tensors(op["index"])
                if not ins or ins[0] < 0:
                    continue
                w = m.tensor(ins[1])["dtype"] if len(ins) > 1 and ins[1] >= 0 else None
                found.add(op_family(m.tensor(ins[0])["dtype"], w))
                outs = m.op_tensors(op["index"], engine.OP_OUTPUTS)
                if outs and outs[0] >= 0:
                    found.add(op_family(m.tensor(outs[0])["dtype"], None))
    return [f for f in FAMILIES if f in found]


def _query_prepare(model, **kw):
    """An Interpreter prepared while a variant query runs. In a query every selection returns
    NULL (the reference path) except in the sizing run, which sizes with the variants; a
    reference path may request buffers its variant does not (SVDF's output scratch), so the
    arena gets room beyond the sized figure."""
    need = model.arena_needed(**kw)
    return engine.Interpreter(model, arena_size=2 * need + 4096, **kw)


def variants_used(model_bytes_list, kernels):
    """Sorted names of the variants the models' nodes select with the optimized backends `kernels`
    ("mve dsp generic", in order of preference), as a firmware with those backends selects them."""
    L = engine.lib()
    if not hasattr(L, "mn_variants_query_begin"):
        raise engine.MicronnError(engine.ERR_STATE, "the engine library has no variant query; rebuild it "
                                  "with `make -C tests/engine lib`")
    if L.mn_variants_query_begin(kernels.encode()) != 0:
        raise ValueError(f"kernel backends {kernels!r}: the host build does not know one of them")
    try:
        for data in model_bytes_list:
            model = engine.Model(data)
            _query_prepare(model)   # its prepare evaluates every selection
            if stores_patch_stage([data]):   # a patch stage's nodes select for their bands
                _query_prepare(model, patches=True)
        names, i = [], 0
        while (name := L.mn_variants_query_name(i)) is not None:
            names.append(name.decode())
            i += 1
    finally:
        L.mn_variants_query_end()
    return sorted(names)


PATCH_METADATA = b"micronn_patch_v1"   # a patch stage stored by `micronn plan --patches --write`


def stores_patch_stage(model_bytes_list):
    """Whether one of the models stores a patch stage (its firmware then needs MICRONN_PATCHES)."""
    from ai_edge_litert import schema_py_generated as s
    for b in model_bytes_list:
        m = s.Model.GetRootAs(b, 0)
        if any(m.Metadata(i).Name() == PATCH_METADATA for i in range(m.MetadataLength())):
            return True
    return False


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    allow = "--allow-unsupported" in args
    types = "--types" in args
    patches = "--patches" in args
    variants = "--variants" in args
    kernels = None
    if "--kernels" in args:
        k = args.index("--kernels")
        kernels = args[k + 1] if k + 1 < len(args) else None
        args = args[:k] + args[k + 2:]
    paths = [a for a in args if a not in ("--allow-unsupported", "--types", "--patches", "--variants")]
    if not paths or (variants and kernels is None):
        print("usage: python -m micronn_tools.opset [--allow-unsupported] [--types | --patches | "
              "--variants --kernels \"dsp generic\"] MODEL.tflite ...", file=sys.stderr)
        return 2
    if types or patches or variants:
        try:
            blobs = []
            for p in paths:
                with open(p, "rb") as f:
                    blobs.append(f.read())
            if variants:
                try:
                    print(" ".join(variants_used(blobs, kernels)) or "none")
                except engine.MicronnError as e:
                    if not allow:
                        raise
                    # a model the engine cannot prepare (--allow-unsupported): keep every variant
                    print("micronn opset: warning: %s: linking every variant" % e, file=sys.stderr)
                    print("all")
            else:
                print(" ".join(types_used(blobs)) if types else int(stores_patch_stage(blobs)))
        except (OSError, ValueError, engine.MicronnError) as e:
            print("micronn opset: %s" % e, file=sys.stderr)
            return 1
        return 0
    try:
        blobs = []
        for p in paths:
            with open(p, "rb") as f:
                blobs.append(f.read())
        names, problems = ops_used(blobs, [p.rsplit("/", 1)[-1] for p in paths], allow)
    except UnsupportedOps as e:
        for line in e.problems:
            print(f"micronn opset: {line}", file=sys.stderr)
        print("micronn opset: the firmware could not run these models; ALLOW_UNSUPPORTED=1 builds it "
              "anyway", file=sys.stderr)
        return 1
    except (OSError, ValueError, engine.MicronnError) as e:
        print("micronn opset: %s" % e, file=sys.stderr)
        return 1
    for line in problems:
        print(f"micronn opset: warning: {line} (ALLOW_UNSUPPORTED=1)", file=sys.stderr)
    print(" ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
