"""Benchmark report (`make bench`): person_detect and keyword_scrambled on emulated boards,
compared with the TFLM numbers measured the same way (shared PLATFORM.md).

    python -m micronn_tools.bench_report --out build/bench --board MPS2_AN386 \
        --model ../shared/models/person_detect.tflite --model ../shared/models/keyword_scrambled.tflite

Writes OUT/report.md, OUT/report.json and OUT/<model>_<board>.png (per-op profiles).
"""
import argparse
import json
import os
import sys
import time
from collections import OrderedDict

from . import boards
from .cli_common import CliError, models_dir, open_target, verify_model

#: TFLM (tflite-micro 90b983c) on the same QEMU machines with -icount, instructions per inference
#: (median of 5 after a warm-up) and arena_used_bytes. Source: PLATFORM.md ("the numbers to beat").
TFLM = {
    "person_detect": {"ref_m4": 95_162_720, "cmsis_m4": 22_572_960, "cmsis_m7": 22_545_040,
                      "mve_m55": 6_508_094, "arena": 82_292, "noop_invoke": 1_400,
                      "per_op_ref_m4": {"CONV_2D": 53.6e6, "DEPTHWISE_CONV_2D": 41.5e6}},
    "keyword_scrambled": {"ref_m4": 256_520, "cmsis_m4": 135_680, "cmsis_m7": 135_800,
                          "mve_m55": 63_125, "arena": 13_172, "noop_invoke": 720},
}
#: Which TFLM columns apply to a board (same core / ISA).
BOARD_COLUMNS = {
    "MPS2_AN386": [("ref_m4", "TFLM reference M4"), ("cmsis_m4", "TFLM CMSIS-NN M4")],
    "MPS2_AN500": [("cmsis_m7", "TFLM CMSIS-NN M7")],
    "MPS3_AN547": [("mve_m55", "TFLM CMSIS-NN (MVE) M55")],
}
DEFAULT_MODELS = ("person_detect.tflite", "keyword_scrambled.tflite")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m micronn_tools.bench_report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/bench", help="output directory (default build/bench)")
    ap.add_argument("--board", action="append", default=[], help="emulated board (repeatable; default MPS2_AN386)")
    ap.add_argument("--model", action="append", default=[], help="model file (repeatable; default "
                                                                     "person_detect and keyword_scrambled)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except CliError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 1


def _run(args):
    from .board import BoardError
    from .cmd_bench import measure, plot
    board_names = args.board or ["MPS2_AN386"]
    models = args.model or [os.path.join(models_dir(), m) for m in DEFAULT_MODELS]
    os.makedirs(args.out, exist_ok=True)
    results = []
    for bname in board_names:
        try:
            spec = boards.get(bname)
        except boards.BoardConfigError as e:
            raise CliError(str(e)) from None
        ns = argparse.Namespace(board=bname, port=None, timeout=args.timeout, quiet=False, runs=args.runs)
        board = open_target(ns, spec)
        try:
            for path in models:
                data, model = verify_model(path)
                t0 = time.monotonic()
                r = measure(board, spec, True, data, model, path, ns)
                r["host_seconds"] = round(time.monotonic() - t0, 1)
                name = os.path.splitext(os.path.basename(path))[0]
                r["name"] = name
                if not args.no_plot:
                    png = os.path.join(args.out, f"{name}_{bname}.png")
                    plot(r, png)
                    r["plot"] = os.path.basename(png)
                results.append(r)
                print(f"{name} on {bname}: {r['per_inference']:,} {r['unit']}, arena {r['arena']['bytes']} bytes",
                      flush=True)
        except BoardError as e:
            raise CliError(f"{bname}: {e}") from None
        finally:
            board.close()
    report = {"generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "method": "QEMU -icount shift=0 (1 instruction = 1 ns), ticks_cpu x instructions_per_tick, "
                        f"median of {args.runs} invokes after a warm-up",
              "tflm": TFLM, "results": results}
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    md = render_md(report)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(md)
    print(md)
    print(f"written: {os.path.join(args.out, 'report.md')}, report.json")
    return 0


def _ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def render_md(rep):
    lines = ["# micronn benchmark report", "",
             f"Generated {rep['generated']}. Method: {rep['method']}. TFLM figures: the same method on the same QEMU "
             "machines (PLATFORM.md). Ratios are micronn / TFLM (below 1 = micronn is cheaper).", "",
             "| model | board | micronn instructions | TFLM | ratio | micronn arena (persistent + non-persistent) "
             "| TFLM arena | interpreter overhead |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rep["results"]:
        t = TFLM.get(r["name"], {})
        cols = BOARD_COLUMNS.get(r["board"], [])
        tflm = "<br>".join(f"{label}: {t[k]:,}" for k, label in cols if k in t) or "-"
        ratio = "<br>".join(_ratio(r["per_inference"], t[k]) for k, _ in cols if k in t) or "-"
        a = r["arena"]
        lines.append(
            f"| {r['name']} | {r['board']} | {r['per_inference']:,} | {tflm} | {ratio} | {a['bytes']:,} "
            f"({a['persistent']:,} + {a['nonpersistent']:,}) | {t.get('arena', 0):,} | "
            f"{r['overhead']:,} ({100 * r['overhead_share']:.3f}%; TFLM no-op invoke {t.get('noop_invoke', '-'):,}) |")
    lines.append("")
    for r in rep["results"]:
        lines += [f"## {r['name']} on {r['board']}", ""]
        by_type = OrderedDict()
        for o in r["per_op"]:
            by_type[o["name"]] = by_type.get(o["name"], 0) + o["value"]
        ref = TFLM.get(r["name"], {}).get("per_op_ref_m4", {}) if r["board"] == "MPS2_AN386" else {}
        lines += ["| op type | instructions | share | TFLM reference M4 |", "|---|---|---|---|"]
        for name, v in sorted(by_type.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {name} | {v:,} | {100 * v / r['profiled_total']:.1f}% | "
                         f"{f'{ref[name]:,.0f}' if name in ref else '-'} |")
        lines += ["", f"Samples: {', '.join(f'{s:,}' for s in r['samples'])}. Model from: {r['model_source']}.",
                  ""]
        if r.get("plot"):
            lines += [f"![per-op profile]({r['plot']})", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
