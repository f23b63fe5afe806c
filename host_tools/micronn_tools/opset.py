"""The builtin ops a set of models needs, as the engine itself reads them.

    python -m micronn_tools.opset a.tflite b.tflite     ->  "CONV_2D DEPTHWISE_CONV_2D ..."

`make firmware MODELS=...` uses this to link only those kernels (MICRONN_OPS). It fails (exit 1,
naming model, op and reason on stderr) when the engine cannot run a model: an op micronn has no
kernel for, or one whose kernel refuses the model (dtype, version, options), as the host build of
the engine, which has every kernel, reports it. --allow-unsupported (make ... ALLOW_UNSUPPORTED=1)
only warns, and the firmware gets the kernels that exist.
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


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    allow = "--allow-unsupported" in args
    paths = [a for a in args if a != "--allow-unsupported"]
    if not paths:
        print("usage: python -m micronn_tools.opset [--allow-unsupported] MODEL.tflite ...", file=sys.stderr)
        return 2
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
