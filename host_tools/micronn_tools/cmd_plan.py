"""`micronn plan MODEL... [--planner X] [--write OUT.tflite] [--png F] [--svg F] [--json | --markdown]`:
memory plans of a model's non-persistent arena, the best one stored in the model."""
import json
import os

from .cli_common import CliError, add_board_args, check_firmware_ops, ensure_model, open_target, read_file, \
    say, verify_model

DOC = """\
What is planned: every tensor that needs arena memory during invoke (not constants or variables)
and every kernel scratch buffer, with the lifetimes and 16-byte-rounded sizes the engine itself
uses (read from the host engine after a prepare). Inputs stay alive to the end unless
--reuse-inputs (then the plan is only valid for Interpreter(m, reuse_inputs=True)).

lower bound   the most bytes alive at any one op: no plan can need less (a convolution's output
              and the dying input it may overlap count as the least they can cover together)
ffd           greedy first-fit-decreasing, the device's own planner (what you get without a plan)
by-size       greedy by size, best fit (Lee et al. 2019, mobile-GPU inference paper)
by-breadth    greedy by breadth, best fit (same paper)
optimal       branch and bound from the best greedy plan; "proven" when it finished the search
              (or met the lower bound) within --max-seconds / --max-nodes; when convolutions may
              overlap their inputs, a local search over placement orders instead, proven only at
              the lower bound

Each figure is the planned part of the arena the engine ends up with for that plan: the stored
plan fixes tensor offsets and the engine places scratch buffers around them (simulated here, and
checked against the host engine with --write). Scratch sizes are the host library's kernels
(generic backend, as UNIX and VIRT_RV32); a board with dsp/mve kernels may have other scratch
buffers, which its engine places around the stored tensors in the same way: give --board B (or
--port P) to plan with the buffers that board's own engine reports (Interpreter.plan()); --write
then checks the new model on that board.

--write stores the chosen plan as TFLM's OfflineMemoryAllocation metadata
([version 0, subgraph 0, n_tensors, offset or -1 per tensor]); the engine checks it when it
loads the model (alignment, no overlap of tensors alive together) and uses it by default.

--patches plans the model as Interpreter(m, patches=True) runs it: a chain of early conv / pool
ops (from the first op reading a model input) computed in bands of output rows or streamed
through line buffers, so its inner activations never exist in full; the stage is the one that
needs the least arena (ties: the least recomputed multiply-accumulates). The report gives its ops,
rows, the arena with and without it, and the recomputed share of the stage's MACs. With --write
the stage is stored too (micronn_patch_v1 metadata), and patches=True then uses that stage.

--tables (with --write) also stores the per-op tables the engine computes at prepare (per-channel
multipliers and shifts, biases with the input offset folded in, other kernel-variant data, and
the pointer-free kernel data of FULLY_CONNECTED, SVDF, QUANTIZE and SOFTMAX) as micronn_quant_v1
metadata. The engine still computes each table, compares it byte for byte with the stored one
and, when identical, reads the stored copy in place instead of keeping its own in the arena's
persistent part (with the model in flash or ROMFS, that RAM is saved). Without --board the
tables are the host library's (generic kernels): a board whose backend keeps other variant data
uses the stored multipliers and keeps its own variant data. With --board B they are the ones
that board's own kernels keep (Interpreter(tables=[...]) there), so all of them match on it."""


def add_parser(sub):
    import argparse
    p = sub.add_parser("plan", help="memory plans (lower bound, greedy and optimal planners); store or draw one",
                       description="Plan the non-persistent arena of MODEL with every planner, report the "
                                   "bytes each needs against the lower bound, and optionally store the best "
                                   "plan in the model (--write) or draw it (--png/--svg).",
                       epilog=DOC + "\n\nexit status: 0 ok, 1 error, 2 usage",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="+", metavar="MODEL.tflite")
    p.add_argument("--planner", default="best", choices=("best", "ffd", "by-size", "by-breadth", "optimal"),
                   help="which plan to store/draw (default: the one needing the fewest bytes)")
    p.add_argument("--write", metavar="OUT.tflite", help="write MODEL with the plan stored in it")
    p.add_argument("--tables", action="store_true",
                   help="with --write: also store the per-op tables (micronn_quant_v1), used in place")
    p.add_argument("--png", metavar="F.png", help="draw the plan (op index x offset) as PNG")
    p.add_argument("--svg", metavar="F.svg", help="draw the plan as SVG")
    p.add_argument("--reuse-inputs", action="store_true",
                   help="let input memory be reused after its last use (Interpreter(reuse_inputs=True))")
    p.add_argument("--patches", action="store_true",
                   help="plan with the patch stage that needs the least arena (Interpreter(patches=True))")
    p.add_argument("--max-seconds", type=float, default=10.0, help="time budget of the optimal planner (10)")
    p.add_argument("--max-nodes", type=int, default=200_000, help="node budget of the optimal planner (200000)")
    add_board_args(p, default_note="none: the host library's buffers")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable output")
    fmt.add_argument("--markdown", action="store_true", help="one table row per model (README table)")
    p.set_defaults(func=run)
    return p


def analyse(path, args):
    from . import engine, plan
    data, model = verify_model(path)
    board_plan = None
    if args.board or args.port:
        board_plan = on_board(args, data, model, path, "_it.plan()")
    try:
        prob = plan.Problem(data, reuse_inputs=args.reuse_inputs, board_plan=board_plan,
                            patches=getattr(args, "patches", False))
    except engine.MicronnError as e:
        raise CliError(f"model {path}: the engine cannot prepare it: {e}") from None
    names = plan.PLANNERS if args.planner in ("best", "optimal") else ("ffd", args.planner)
    res = plan.run_planners(prob, names, args.max_nodes, args.max_seconds)
    chosen = plan.choose(res) if args.planner == "best" else args.planner
    return data, prob, res, chosen


def on_board(args, data, model, path, expr, tables=False):
    """`expr` evaluated on the board with `_it` an Interpreter of the model (copied if needed); with
    tables, `_t` the list of the per-op tables its prepare kept (Interpreter(tables=...))."""
    board = open_target(args)
    try:
        check_firmware_ops(board, model, args.timeout)
        src, _ = ensure_model(board, data, path, args)
        kw = ", tables=_t" if tables else ""
        return board.eval(expr, timeout=args.timeout,
                          pre=f"import micronn\n_t = []\n_it = micronn.Interpreter(micronn.load({src}), "
                              f"reuse_inputs={bool(args.reuse_inputs)}{kw})")
    finally:
        board.close()


# The board's tables, hex-encoded for the serial line.
BOARD_TABLES = "[(a, b, c, __import__('binascii').hexlify(d)) for a, b, c, d in _t]"


def board_tables(args, data, model, path):
    """[(subgraph, op, tag, bytes)]: the tables the board's own kernels keep for the model."""
    return [(int(sg), int(op), int(tag), bytes.fromhex(h.decode()))
            for sg, op, tag, h in on_board(args, data, model, path, BOARD_TABLES, tables=True)]


def report(path, prob, res, chosen):
    bufs = prob.bufs
    return {
        "model": os.path.abspath(path),
        "ops": prob.n_ops,
        "buffers": len(bufs),
        "tensors": sum(b.tensor is not None for b in bufs),
        "scratch": sum(b.tensor is None for b in bufs),
        "lower_bound": prob.lower_bound(),
        "engine_greedy": prob.engine_stats["nonpersistent"],
        "planners": {n: {k: v for k, v in r.items() if k not in ("offsets", "device_offsets")}
                     for n, r in res.items()},
        "chosen": chosen,
        "arena": res[chosen]["arena"],
        "patch": patch_report(prob),
    }


def patch_report(prob):
    """The patch stage (None without --patches; {"stage": None, ...} when none helps)."""
    if not getattr(prob, "patches_asked", False):
        # not asked: what --patches would give, in one line
        try:
            p = prob.model.patch_choice(reuse_inputs=prob.reuse_inputs)
        except Exception:   # (an engine error is reported by the plan itself)
            p = None
        return p and {"hint": True, "first": p["first"], "last": p["last"], "stream": p["stream"],
                      "rows": p["rows"], "arena": p["arena"], "arena_without": p["arena_without"]}
    p = prob.patch
    ops = prob.model.ops()
    return {"stage": None if p is None else {
        "ops": [f"{i} {ops[i]['name']}" for i in p["ops"]],
        "rows": "stream" if p["stream"] else p["rows"], "bands": p["bands"],
        "macs": p["macs"], "macs_patched": p["macs_patched"], "recompute_percent": 100.0 * p["recompute"]},
        "arena": p["arena"] if p else None, "arena_without": p["arena_without"] if p else None}


def print_text(r):
    print(f"{r['model']}: {r['buffers']} planned buffers ({r['tensors']} tensors, {r['scratch']} scratch) "
          f"over {r['ops']} ops")
    print(f"  {'lower bound (max bytes alive at one op)':<44} {r['lower_bound']:>10,}")
    for n, p in r["planners"].items():
        what = {"ffd": "ffd (the device's own planner)"}.get(n, n)
        if n == "optimal":
            what += f" ({'proven' if p['proven'] else 'not proven'}, {p['nodes']:,} nodes, {p['seconds']:.1f} s)"
        print(f"  {what:<44} {p['arena']:>10,}")
    pr = r.get("patch")
    if pr is not None and pr.get("hint"):
        how = "streamed" if pr["stream"] else f"bands of {pr['rows']} rows"
        print(f"  with --patches (ops {pr['first']}..{pr['last']}, {how}): arena {pr['arena']:,} instead of "
              f"{pr['arena_without']:,} (greedy)")
    elif pr is not None:
        st = pr["stage"]
        if st is None:
            print("  patch stage: none needs less arena than no patches")
        else:
            how = "streamed (line buffers)" if st["rows"] == "stream" else \
                f"bands of {st['rows']} output rows ({st['bands']} bands)"
            print(f"  patch stage: ops {st['ops'][0]} .. {st['ops'][-1]} ({len(st['ops'])} ops), {how}")
            print(f"  {'arena with / without the stage (greedy)':<44} {pr['arena']:>10,} / {pr['arena_without']:,}")
            print(f"  {'recomputed MACs':<44} {st['recompute_percent']:>9.1f}% of the stage's "
                  f"{st['macs']:,}")
    gap = r["arena"] - r["lower_bound"]
    print(f"  chosen: {r['chosen']}, {r['arena']:,} bytes planned"
          + (" (= lower bound: optimal)" if gap == 0 else f" ({gap:,} above the lower bound)"))


def markdown(rows):
    from .plan import PLANNERS
    out = ["| model | buffers | lower bound | " + " | ".join(PLANNERS) + " | chosen |",
           "|---|---|---|" + "---|" * len(PLANNERS) + "---|"]
    for r in rows:
        cells = []
        for n in PLANNERS:
            p = r["planners"].get(n)
            v = "-" if p is None else f"{p['arena']:,}"
            if n == "optimal" and p is not None:
                v += "" if p["proven"] else " (not proven)"
            cells.append(v)
        out.append(f"| {os.path.basename(r['model'])} | {r['buffers']} | {r['lower_bound']:,} | "
                   + " | ".join(cells) + f" | {r['chosen']} |")
    return "\n".join(out)


def write_plan(args, data, prob, res, chosen, out):
    """Store the plan, then check it with the host engine: it must load, use the stored offsets and
    need exactly the predicted bytes."""
    from . import engine, plan
    vec = plan.offline_vector(prob, res[chosen]["offsets"])
    new = plan.with_offline_plan(data, vec)
    if prob.patch:
        new = plan.with_metadata(new, {plan.PATCH_METADATA: plan.patch_metadata(prob.patch)})
    try:
        m = engine.Model(new)
        it = engine.Interpreter(m, planner="offline", reuse_inputs=prob.reuse_inputs, patches=prob.patch)
    except engine.MicronnError as e:
        raise CliError(f"the engine rejects the written plan: {e}") from None
    st = it.stats()
    want = res[chosen]["arena"]
    if prob.board:
        # The buffers are the board's: check there (the host library's scratch may differ).
        st = on_board(args, new, m, out, "_it.stats()")
    if st["nonpersistent"] != want:
        raise CliError(f"the engine needs {st['nonpersistent']} planned bytes with the stored plan, "
                       f"predicted {want}")
    if it.stats()["copied_bytes"] != prob.engine_stats["copied_bytes"]:
        raise CliError("rewriting the model changed the alignment of its constant data")
    tables = ""
    where = "the board" if prob.board else "this host"
    if args.tables:
        before = st if prob.board else it.stats()
        if prob.board:
            # the board's own kernels' tables (its backends' variant data too), checked there
            found = board_tables(args, new, m, out)
            new = plan.with_metadata(new, {engine.TABLES_METADATA: engine.tables_metadata(found)})
            n, nbytes = len(found), sum(len(t[3]) for t in found)
            after = on_board(args, new, engine.Model(new), out, "_it.stats()")
        else:
            new, n, nbytes = plan.with_tables(new, planner="offline", reuse_inputs=prob.reuse_inputs)
            after = engine.Interpreter(engine.Model(new), planner="offline", reuse_inputs=prob.reuse_inputs,
                                       patches=prob.patch).stats()
        if after["nonpersistent"] != before["nonpersistent"] or after["persistent"] > before["persistent"]:
            raise CliError("the engine needs more arena with the stored tables")
        st = after
        tables = (f"; {n} tables ({nbytes:,} bytes) stored as micronn_quant_v1: persistent "
                  f"{before['persistent']:,} -> {after['persistent']:,} bytes on {where}")
    try:
        with open(out, "wb") as f:
            f.write(new)
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}") from None
    if prob.patch:
        tables += f"; patch stage ops {prob.patch['first']}..{prob.patch['last']} stored as {plan.PATCH_METADATA}"
    say(f"wrote {out}: plan '{chosen}' stored as {plan.METADATA_NAME} ({prob.n_tensors} tensors); "
        f"checked by the engine: {st['nonpersistent']:,} planned bytes, arena {st['needed']:,} on {where}"
        f"{tables}")


def run(args):
    from . import plan
    if len(args.models) > 1 and (args.write or args.png or args.svg):
        raise CliError("--write, --png and --svg take a single MODEL")
    if args.tables and not args.write:
        raise CliError("--tables stores the tables in the model written by --write OUT.tflite")
    for m in args.models:
        read_file(m, "model")
    rows = []
    for path in args.models:
        data, prob, res, chosen = analyse(path, args)
        r = report(path, prob, res, chosen)
        rows.append(r)
        title = f"{os.path.basename(path)}: {chosen} plan, {r['arena']:,} B (lower bound {r['lower_bound']:,} B)"
        for pic in (args.png, args.svg):
            if pic:
                try:
                    plan.draw(prob, res[chosen]["device_offsets"], pic, title)
                except OSError as e:
                    raise CliError(f"cannot write {pic}: {e.strerror or e}") from None
        if args.write:
            write_plan(args, data, prob, res, chosen, args.write)
        if not args.json and not args.markdown:
            print_text(r)
    if args.json:
        print(json.dumps(rows[0] if len(rows) == 1 else rows, indent=1))
    elif args.markdown:
        print(markdown(rows))
    return 0
