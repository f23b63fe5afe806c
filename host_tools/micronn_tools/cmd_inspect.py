"""`micronn inspect MODEL [--json] [--board B | --port P]`: what is in a model and what it needs."""
import ctypes
import json
import os
import subprocess

from . import engine
from .cli_common import CliError, add_board_args, check_firmware_ops, ensure_model, open_target, \
    read_file, say, sha256, verify_model

JSON_DOC = """\
--json prints one object with these keys (stable; new keys may be added):
  model, size, sha256        the file, its size in bytes and sha256
  subgraphs                  number of subgraphs (0 is the main one; IF, WHILE, CALL_ONCE run others)
  inputs, outputs            tensor indices of the model's inputs / outputs
  operators[]                index, name (builtin name or custom code), builtin (code), version,
                             custom (bool), inputs, outputs (tensor indices, -1 = omitted),
                             input_dtypes, supported (bool: the engine prepared it),
                             error (null or {status, message}: the engine's reason),
                             persistent (persistent arena bytes of its kernel on a 32-bit board:
                             per-channel multipliers, precomputed data, scratch records; null
                             if the arena is not computable)
  tensors[]                  index, name, dtype, shape, bytes, const, variable,
                             quantization (null or {scale[], zero_point[], quantized_dimension})
  supported                  true when every operator prepared in the engine
  unsupported[]              op, name, dtypes, reason: one entry per failing operator
  arena                      bytes (exact arena the engine needs on a 32-bit board, null if
                             unsupported ops), persistent, nonpersistent, kernel_persistent
                             (the operators' part of persistent; the rest is tensor/op records,
                             variable tensors and copies), computed_by, pointer_bits (32),
                             kernels (the kernel sets the figure includes), error
  host_arena                 the same keys from the 64-bit host library (= the UNIX build)
  partition[]                one entry per micronn_subgraph op (a `micronn partition`ed model):
                             op, backend, subgraph (index), ops (names of the subgraph's ops)
  board_arena                (only with --board/--port) bytes, persistent, nonpersistent,
                             board: the same figures from the board's own engine"""

STATUS = {1: "bad argument", 2: "model error", 3: "unsupported", 4: "arena", 5: "state", 6: "kernel error"}


def add_parser(sub):
    p = sub.add_parser(
        "inspect", help="operators, tensors, quantization, op support and exact arena of a model",
        description="Show a model's operators (with input/output tensor indices), tensors "
                    "(dtype, shape, quantization, constant or not, bytes), inputs and outputs, "
                    "which operators the engine supports (with the engine's reason for each one "
                    "it does not: op, dtype, parameter) and the exact arena the engine needs. "
                    "Everything is computed by the engine's own C code: the model through the host "
                    "library (build/host/libmicronn.so), the arena by a 32-bit host build of the "
                    "engine (build/host/mn_arena32), so it is exactly what a 32-bit board with the "
                    "same kernels (reference and generic, as VIRT_RV32) needs; boards with dsp or mve "
                    "kernels add those kernels' scratch; "
                    "the 64-bit figure (the UNIX build's) is reported as host_arena. "
                    "--board/--port also asks the board's own engine.",
        epilog=JSON_DOC + "\n\nexit status: 0 ok (also when ops are unsupported), 1 error, 2 usage",
        formatter_class=_raw())
    p.add_argument("model", metavar="MODEL.tflite")
    p.add_argument("--json", action="store_true", help="machine-readable output (keys below)")
    p.add_argument("--no-tensors", action="store_true", help="text output: leave out the tensor table")
    p.add_argument("--html", metavar="F.html",
                   help="also write a one-page report for a browser: op graph, bytes alive per op, "
                        "memory plan picture (and per-op cost with --bench)")
    p.add_argument("--bench", metavar="B.json",
                   help="with --html: per-op instructions/us from `micronn bench MODEL --json > B.json`")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when some operator is not supported by the engine")
    add_board_args(p, default_note="none (host engine only)")
    p.set_defaults(func=run)
    return p


def _raw():
    import argparse
    return argparse.RawDescriptionHelpFormatter


def collect(path):
    """The inspect report as plain data (the --json object without board_arena)."""
    data, m = verify_model(path)
    ops = m.ops()
    checks = m.check_ops()
    tensors = m.tensors()
    out_ops, unsupported = [], []
    for op, chk in zip(ops, checks):
        ins = m.op_tensors(op["index"], engine.OP_INPUTS)
        outs = m.op_tensors(op["index"], engine.OP_OUTPUTS)
        dts = [tensors[t]["dtype"] if t >= 0 else None for t in ins]
        entry = {
            "index": op["index"], "name": op["name"], "builtin": op["builtin"],
            "version": op["version"], "custom": op["builtin"] == 32,
            "inputs": ins, "outputs": outs, "input_dtypes": dts,
            "supported": chk is None, "persistent": None,
            "error": None if chk is None else {"status": STATUS.get(chk[0], str(chk[0])),
                                               "message": chk[1]},
        }
        out_ops.append(entry)
        if chk is not None:
            unsupported.append({"op": op["index"], "name": op["name"],
                                "dtypes": sorted({d for d in dts if d}), "reason": chk[1]})
    out_t = []
    for t in tensors:
        q = None
        if t["scales"]:
            q = {"scale": [float(x) for x in t["scales"]],
                 "zero_point": [int(x) for x in t["zero_points"]],
                 "quantized_dimension": t["quantized_dimension"]}
        out_t.append({"index": t["index"], "name": t["name"], "dtype": t["dtype"],
                      "shape": list(t["shape"]), "bytes": t["bytes"], "const": t["const"],
                      "variable": t["variable"], "quantization": q})
    host_arena = {"bytes": None, "persistent": None, "nonpersistent": None, "kernel_persistent": None,
                  "computed_by": "engine, 64-bit host library",
                  "pointer_bits": 8 * ctypes.sizeof(ctypes.c_void_p), "error": None}
    arena = dict(host_arena, computed_by="engine, 32-bit host build", pointer_bits=32)
    if not unsupported:
        try:
            # "offline": a plan stored in the model is used, as on the board (else greedy).
            need = m.arena_needed(planner="offline")
            st = engine.Interpreter(m, arena_size=need, planner="offline").stats()
            host_arena.update(bytes=need, persistent=st["persistent"], nonpersistent=st["nonpersistent"],
                              kernel_persistent=st["kernel_persistent"])
            a32 = arena32(path)
            for op, b in zip(out_ops, a32.pop("op_persistent")):
                op["persistent"] = b
            arena.update(a32)
        except engine.MicronnError as e:
            arena["error"] = host_arena["error"] = str(e)
    else:
        arena["error"] = host_arena["error"] = f"{len(unsupported)} operator(s) cannot be prepared"
    return {
        "partition": _partition(m, ops),
        "model": os.path.abspath(path), "size": len(data), "sha256": sha256(data),
        "subgraphs": m.num_subgraphs, "inputs": m.input_indices(), "outputs": m.output_indices(),
        "operators": out_ops, "tensors": out_t, "supported": not unsupported,
        "unsupported": unsupported, "arena": arena, "host_arena": host_arena,
    }


def _partition(m, ops):
    """The delegated subgraphs of a `micronn partition`ed model: one entry per micronn_subgraph op."""
    out = []
    for op in ops:
        if op["name"] != "micronn_subgraph":
            continue
        opts = dict(kv.split("=", 1) for kv in m.custom_options(op["index"]).decode(errors="replace").split(";")
                    if "=" in kv)
        entry = {"op": op["index"], "backend": opts.get("backend"), "subgraph": None, "ops": []}
        try:
            entry["subgraph"] = int(opts.get("subgraph", ""))
            entry["ops"] = [o["name"] for o in m.subgraph(entry["subgraph"]).ops()]
        except (ValueError, IndexError):
            pass
        out.append(entry)
    return out


def arena32(path):
    """Arena figures from the 32-bit host build of the engine (tests/engine/Makefile builds it
    next to the host library)."""
    tool = os.path.join(os.path.dirname(engine.default_lib_path()), "mn_arena32")
    if not os.path.isfile(tool):
        raise CliError(f"{tool} missing: build it with `make -C tests/engine lib`")
    p = subprocess.run([tool, path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise engine.MicronnError(engine.ERR_MODEL, p.stderr.strip() or f"mn_arena32 exit {p.returncode}")
    r = json.loads(p.stdout)
    return {"bytes": r["bytes"], "persistent": r["persistent"], "nonpersistent": r["nonpersistent"],
            "kernel_persistent": r["kernel_persistent"], "op_persistent": r["op_persistent"],
            "kernels": ["reference"] + r.get("kernels", [])}


def board_arena(args, data, model):
    """Arena figures from the board's own engine (model frozen or copied there)."""
    board = open_target(args)
    try:
        check_firmware_ops(board, model, args.timeout)
        src, where = ensure_model(board, data, args.model, args)
        st = board.eval("_it.stats()", timeout=args.timeout,
                        pre=f"import micronn\n_m = micronn.load({src})\n"
                            "_it = micronn.Interpreter(_m)\n_n = _m.arena_needed()\n"
                            "assert _n == _it.arena_size, (_n, _it.arena_size)")
        return {"bytes": st["arena_size"], "persistent": st["persistent"],
                "nonpersistent": st["nonpersistent"], "board": board.name, "model": where}
    finally:
        board.close()


def _shape(s):
    return "[" + ",".join(map(str, s)) + "]"


def _quant(q):
    if not q:
        return ""
    if len(q["scale"]) == 1:
        return f"scale {q['scale'][0]:.6g} zp {q['zero_point'][0]}"
    return f"per-channel x{len(q['scale'])} (dim {q['quantized_dimension']})"


def print_text(r, no_tensors=False):
    ts = r["tensors"]
    print(f"{r['model']}")
    print(f"  {r['size']} bytes, sha256 {r['sha256']}")
    print(f"  {r['subgraphs']} subgraph(s), {len(r['operators'])} operators, {len(ts)} tensors")
    for kind in ("inputs", "outputs"):
        for i, t in enumerate(r[kind]):
            d = ts[t]
            print(f"  {kind[:-1]} {i}: tensor {t} {d['name']!r} {d['dtype']} {_shape(d['shape'])}"
                  + (f" ({_quant(d['quantization'])})" if d["quantization"] else ""))
    print("\nOperators:")
    print(f"  {'op':>3}  {'name':<30} {'inputs':<18} {'outputs':<10} {'persist':>7}  support")
    for op in r["operators"]:
        ins = ",".join(map(str, op["inputs"]))
        outs = ",".join(map(str, op["outputs"]))
        sup = "ok" if op["supported"] else "NO: " + op["error"]["message"]
        pers = "-" if op["persistent"] is None else str(op["persistent"])
        print(f"  {op['index']:>3}  {op['name']:<30} {ins:<18} {outs:<10} {pers:>7}  {sup}")
    if not no_tensors:
        print("\nTensors:")
        print(f"  {'idx':>3}  {'name':<44} {'dtype':<8} {'shape':<16} {'bytes':>8}  {'kind':<8} quantization")
        for t in ts:
            kind = "const" if t["const"] else "variable" if t["variable"] else "-"
            name = t["name"] if len(t["name"]) <= 44 else "..." + t["name"][-41:]
            print(f"  {t['index']:>3}  {name:<44} {t['dtype']:<8} {_shape(t['shape']):<16} "
                  f"{t['bytes']:>8}  {kind:<8} {_quant(t['quantization'])}")
    print()
    if r["supported"]:
        print(f"Support: all {len(r['operators'])} operators are supported by the engine")
    else:
        print(f"Support: {len(r['unsupported'])} of {len(r['operators'])} operators are NOT supported:")
        for u in r["unsupported"]:
            print(f"  op {u['op']} {u['name']} (input dtypes {', '.join(u['dtypes']) or '-'}): {u['reason']}")
    if r["partition"]:
        print(f"Partition: {len(r['partition'])} delegated subgraph(s) (custom op micronn_subgraph)")
        for p in r["partition"]:
            counts = {}
            for n in p["ops"]:
                counts[n] = counts.get(n, 0) + 1
            kinds = ", ".join(f"{n} x{c}" for n, c in sorted(counts.items()))
            print(f"  op {p['op']} micronn_subgraph: subgraph {p['subgraph']} on {p['backend']}, "
                  f"{len(p['ops'])} ops ({kinds})")
    a = r["arena"]
    if a["bytes"] is not None:
        h = r["host_arena"]
        print(f"Arena on a 32-bit board with the {' and '.join(a['kernels'])} kernels: {a['bytes']} bytes "
              f"(persistent {a['persistent']} + non-persistent {a['nonpersistent']} + alignment slack; "
              f"persistent = operators {a['kernel_persistent']} + tensor/op records, variables, copies "
              f"{a['persistent'] - a['kernel_persistent']}); a board's own kernels (dsp, mve) can need "
              f"more scratch: --board B asks its engine")
        print(f"Arena on a 64-bit host (UNIX build): {h['bytes']} bytes")
    else:
        print(f"Arena: not computable: {a['error']}")
    b = r.get("board_arena")
    if b:
        print(f"Arena on {b['board']} (its own engine): {b['bytes']} bytes "
              f"(persistent {b['persistent']} + non-persistent {b['nonpersistent']})")


def write_html(args, r):
    from . import engine, plan, report_html
    bench = None
    if args.bench:
        try:
            bench = json.loads(read_file(args.bench, "bench file"))
            bench["per_op"], bench["unit"], bench["per_inference"]
        except (ValueError, KeyError, TypeError):
            raise CliError(f"{args.bench}: not the output of `micronn bench MODEL --json`") from None
        if bench.get("sha256") not in (None, r["sha256"]):
            raise CliError(f"{args.bench} was measured on another model (sha256 {bench['sha256'][:12]}...)")
    prob = res = chosen = None
    if r["supported"]:
        try:
            prob = plan.Problem(read_file(args.model, "model"))
            res = plan.run_planners(prob, max_seconds=2.0)
            chosen = plan.choose(res)
        except engine.MicronnError:
            prob = None
    text = report_html.render(r, prob, res, chosen, bench)
    try:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"cannot write {args.html}: {e.strerror or e}") from None
    say(f"wrote {args.html}")


def run(args):
    if args.bench and not args.html:
        raise CliError("--bench goes with --html")
    r = collect(args.model)
    if args.board or args.port:
        if not r["supported"]:
            raise CliError("the model has operators the engine cannot prepare; no board arena to ask for")
        data, m = verify_model(args.model)
        r["board_arena"] = board_arena(args, data, m)
    if args.html:
        write_html(args, r)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print_text(r, args.no_tensors)
    if args.strict and not r["supported"]:
        say(f"micronn: {len(r['unsupported'])} unsupported operator(s)")
        return 1
    return 0
