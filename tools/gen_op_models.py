#!/usr/bin/env python3
"""Write the single-op test models of every kernel and dtype combination into a directory.

    python tools/gen_op_models.py OUT_DIR [--seed N] [--op NAME ...]

One <OP>_<combination>.tflite per entry of the support matrix (engine/mn_ops.h), built by the
same builders the tests use: the CASES tables of tests/engine/ops/models_*.py, keyed by
(op, dtype combination) exactly as mn_ops.h spells them. Also writes index.json (file -> op,
dtypes, description, inputs) so the set can be inspected (`micronn inspect OUT_DIR/X.tflite`) or
run outside pytest. Exit 1 when a combination of mn_ops.h has no builder.
"""
import argparse
import importlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS_DIR = ROOT / "tests" / "engine" / "ops"
OPS_H = ROOT / "usermod" / "micronn" / "engine" / "mn_ops.h"


def claims(path=OPS_H):
    """[(op, combination)] of mn_ops.h, in file order."""
    out = []
    for m in re.finditer(r'^MN_OP\((\w+),\s*(\w+),\s*(\d+),\s*"([^"]*)"\)', path.read_text(), re.M):
        out += [(m.group(1), c) for c in m.group(4).split()]
    return out


def all_cases():
    """{(op, combination): build(rng) -> (OpModel, input generator or None)} of every models_*.py."""
    sys.path.insert(0, str(OPS_DIR))
    cases = {}
    for f in sorted(OPS_DIR.glob("models_*.py")):
        mod = importlib.import_module(f.stem)
        for k, v in getattr(mod, "CASES", {}).items():
            if k in cases:
                raise ValueError(f"{f.name}: case {k} defined twice")
            cases[k] = v
    return cases


def signature(model, op):
    """The model's dtype combination as mn_ops.h spells it: the data input's dtype (x for SELECT
    and SELECT_V2, input for TRANSPOSE_CONV; int16x8 / float32x8 for int16 / float32 data with int8 weights), "->output dtype" when that differs,
    or always for conversion ops."""
    import numpy as np
    if hasattr(model, "signature"):   # several subgraphs (models_control.FlowModel): the op's own operands
        return model.signature(op)
    names = {np.dtype(np.bool_): "bool"}
    data = model.inputs[{"SELECT": 1, "SELECT_V2": 1, "TRANSPOSE_CONV": 2}.get(op, 0)]
    i = model.tensors[data].dtype
    o = model.tensors[model.outputs[0]].dtype
    i, o = names.get(i, i.name), names.get(o, o.name)
    if i in ("int16", "float32") and len(model.inputs) > 1 and model.inputs[1] >= 0 \
            and model.tensors[model.inputs[1]].dtype == np.int8:
        i = o = i + "x8"   # int16 activations (int16x8) or float32 ones (hybrid), int8 weights
    return i if i == o and op not in ("QUANTIZE", "DEQUANTIZE", "CAST") else f"{i}->{o}"


def file_name(op, combo):
    return f"{op}_{combo.replace('->', '_to_')}.tflite"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--op", action="append", help="only these ops (repeatable)")
    args = ap.parse_args(argv)
    import numpy as np
    cases = all_cases()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index, missing = {}, []
    for op, combo in claims():
        if args.op and op not in args.op:
            continue
        if (op, combo) not in cases:
            missing.append(f"{op} {combo}")
            continue
        model, _ = cases[(op, combo)](np.random.default_rng(args.seed))
        name = file_name(op, combo)
        (out / name).write_bytes(model.tflite())
        index[name] = {"op": op, "dtypes": combo, "desc": model.desc,
                       "inputs": [{"shape": list(model.tensors[i].shape), "dtype": model.tensors[i].dtype.name}
                                  for i in model.graph_inputs]}
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(f"gen_op_models: {len(index)} models in {out}")
    if missing:
        print("gen_op_models: no builder for: " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
