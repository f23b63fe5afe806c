"""Benchmark report (`make bench`): models on emulated boards with the board's optimized kernels
and with reference kernels only, in the same run, next to the TFLM numbers measured the same way
(shared PLATFORM.md).

    python -m micronn_tools.bench_report --out build/bench --board MPS2_AN386 --board MPS3_AN547 \\
        --reference-build build/bench-ref --model ../shared/models/person_detect.tflite

The optimized firmware of board B is build/B/firmware.elf (`make firmware BOARD=B`), the
reference one DIR/B/firmware.elf (`make firmware BOARD=B KERNELS=reference FIRMWARE_BUILD=DIR/B`).
Writes OUT/report.md, OUT/report.json and OUT/<model>_<board>.png (per-op-type bars: reference,
optimized, TFLM where known).
"""
import argparse
import json
import os
import re
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
                      "per_op_ref_m4": {"CONV_2D": 53.6e6, "DEPTHWISE_CONV_2D": 41.5e6},
                      "per_op_cmsis_m4": {"CONV_2D": 14.3e6, "DEPTHWISE_CONV_2D": 8.2e6}},
    "keyword_scrambled": {"ref_m4": 256_520, "cmsis_m4": 135_680, "cmsis_m7": 135_800,
                          "mve_m55": 63_125, "arena": 13_172, "noop_invoke": 720},
}
#: Which TFLM columns apply to a board (same core / ISA), and the per-op-type figures.
BOARD_COLUMNS = {
    "MPS2_AN386": [("ref_m4", "TFLM reference M4"), ("cmsis_m4", "TFLM CMSIS-NN M4")],
    "MPS2_AN500": [("cmsis_m7", "TFLM CMSIS-NN M7")],
    "MPS3_AN547": [("mve_m55", "TFLM CMSIS-NN (MVE) M55")],
}
BOARD_PER_OP = {"MPS2_AN386": [("per_op_ref_m4", "TFLM reference M4"), ("per_op_cmsis_m4", "TFLM CMSIS-NN M4")]}
DEFAULT_MODELS = ("person_detect.tflite", "keyword_scrambled.tflite")
DEFAULT_BOARDS = ("MPS2_AN386", "MPS2_AN500", "MPS3_AN547", "VIRT_RV32")
KINDS = ("optimized", "reference")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m micronn_tools.bench_report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/bench", help="output directory (default build/bench)")
    ap.add_argument("--board", action="append", default=[],
                    help=f"emulated board (repeatable; default {' '.join(DEFAULT_BOARDS)})")
    ap.add_argument("--model", action="append", default=[], help="model file (repeatable; default "
                                                                     "person_detect and keyword_scrambled)")
    ap.add_argument("--reference-build", metavar="DIR",
                    help="build directory of the reference-kernel firmware (DIR/<board>/firmware.elf); "
                         "without it only the optimized firmware is measured")
    ap.add_argument("--arm-bench", metavar="FILE",
                    help="output of `make -C tests/engine arm-bench` (engine-only M4 figures: no-op invoke, "
                         "prepare) to include")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except CliError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 1


def _build_dirs(args):
    dirs = [("optimized", None)]
    if args.reference_build:
        dirs.append(("reference", os.path.abspath(args.reference_build)))
    return dirs


def _measure_board(bname, kind, build, models, args):
    """Measure every model on one firmware of board bname; returns (results, code size)."""
    from .board import BoardError
    from .cmd_bench import measure
    saved = os.environ.get("MICRONN_BUILD_DIR")
    if build:
        os.environ["MICRONN_BUILD_DIR"] = build
    try:
        spec = boards.get(bname)
        ns = argparse.Namespace(board=bname, port=None, timeout=args.timeout, quiet=False, runs=args.runs)
        board = open_target(ns, spec)
        out = []
        try:
            for path in models:
                data, model = verify_model(path)
                t0 = time.monotonic()
                r = measure(board, spec, True, data, model, path, ns)
                r["host_seconds"] = round(time.monotonic() - t0, 1)
                r["name"] = os.path.splitext(os.path.basename(path))[0]
                r["kind"] = kind
                r["macs"] = op_macs(data)
                out.append(r)
                print(f"{r['name']} on {bname} ({kind}): {r['per_inference']:,} {r['unit']}", flush=True)
        except BoardError as e:
            raise CliError(f"{bname} ({kind}): {e}") from None
        finally:
            board.close()
        return out, code_size(spec.firmware_path.with_name("firmware.map"))
    except boards.BoardConfigError as e:
        raise CliError(str(e)) from None
    finally:
        if saved is None:
            os.environ.pop("MICRONN_BUILD_DIR", None)
        else:
            os.environ["MICRONN_BUILD_DIR"] = saved


def _run(args):
    board_names = args.board or list(DEFAULT_BOARDS)
    models = args.model or [os.path.join(models_dir(), m) for m in DEFAULT_MODELS]
    os.makedirs(args.out, exist_ok=True)
    results, sizes = [], {}
    for bname in board_names:
        for kind, build in _build_dirs(args):
            rs, size = _measure_board(bname, kind, build, models, args)
            results += rs
            sizes.setdefault(bname, {})[kind] = size
    report = {"generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "method": "QEMU -icount shift=0 (1 instruction = 1 ns), ticks_cpu x instructions_per_tick, "
                        f"median of {args.runs} invokes after a warm-up",
              "tflm": TFLM, "results": results, "code_size": sizes,
              "arm_bench": parse_arm_bench(args.arm_bench) if args.arm_bench else {}}
    if not args.no_plot:
        for (name, bname), pair in pairs(results).items():
            png = os.path.join(args.out, f"{name}_{bname}.png")
            plot_pair(pair, png)
            pair["optimized"]["plot"] = os.path.basename(png)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    md = render_md(report)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(md)
    print(md)
    print(f"written: {os.path.join(args.out, 'report.md')}, report.json")
    return 0


# ---- model arithmetic -------------------------------------------------------------------------

def op_macs(model_bytes):
    """Multiply-accumulates of each operator (0 for ops without a weight product), by the engine's
    own reading of the model."""
    from . import engine
    m = engine.Model(model_bytes)

    def shape(t):
        return list(m.tensor(t)["shape"]) if t >= 0 else []

    def prod(xs):
        n = 1
        for x in xs:
            n *= x
        return n

    out = []
    for op in m.ops():
        ins, outs = m.op_tensors(op["index"]), m.op_tensors(op["index"], engine.OP_OUTPUTS)
        o = prod(shape(outs[0])) if outs else 0
        name, macs = op["name"], 0
        if name == "CONV_2D" and len(ins) > 1:
            macs = o * prod(shape(ins[1])[1:])
        elif name == "DEPTHWISE_CONV_2D" and len(ins) > 1:
            macs = o * prod(shape(ins[1])[1:3])
        elif name == "FULLY_CONNECTED" and len(ins) > 1:
            macs = o * shape(ins[1])[-1]
        elif name == "SVDF" and len(ins) > 2:
            batches = shape(ins[0])[0]
            macs = batches * (prod(shape(ins[1])) + prod(shape(ins[2])))
        out.append(macs)
    return out


def engine_sections(map_text):
    """(size, section, object) of every .text / .rodata input section the link kept from the
    engine's objects (object relative to usermod/micronn/engine/), from a linker map's text."""
    # Sections before this heading were discarded by --gc-sections.
    text = map_text.partition("Linker script and memory map")[2]
    out, pending = [], None
    row = re.compile(r"^\s+(\.(?:text|rodata)\S*)?\s*0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o)\s*$")
    for line in text.splitlines():
        head = re.match(r"^ (\.(?:text|rodata)\S*)\s*$", line)
        if head:
            pending = head.group(1)
            continue
        m = row.match(line)
        if m and (m.group(1) or pending) and "/engine/" in m.group(3):
            out.append((int(m.group(2), 16), m.group(1) or pending, m.group(3).split("/engine/")[1]))
        pending = None
    return out


def code_size(map_path):
    """Bytes of .text and .rodata the link kept from the engine's objects (firmware.map), or None."""
    try:
        text = map_path.read_text(errors="replace")
    except OSError:
        return None
    return sum(size for size, _, _ in engine_sections(text))


def parse_arm_bench(path):
    """Per-model engine figures from `make -C tests/engine arm-bench` output."""
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise CliError(f"--arm-bench {path}: {e.strerror}") from None
    for line in lines:
        m = re.match(r"^(\S+)\.tflite\s+.*\| (.*) insns$", line)
        if m:
            out[m.group(1)] = {k: int(v) for k, v in re.findall(r"([a-z-]+)\s+(\d+)", m.group(2))}
    return out


def pairs(results):
    """{(model, board): {"optimized": r, "reference": r}} in measurement order."""
    out = OrderedDict()
    for r in results:
        out.setdefault((r["name"], r["board"]), {})[r["kind"]] = r
    return out


def by_type(r):
    """Per op type: (instructions, MACs, set of variants), in execution order of first use."""
    out = OrderedDict()
    for o, macs in zip(r["per_op"], r.get("macs") or [0] * len(r["per_op"])):
        v, m, var = out.get(o["name"], (0, 0, set()))
        var.add(o.get("variant", "?"))
        out[o["name"]] = (v + o["value"], m + macs, var)
    return out


# ---- rendering --------------------------------------------------------------------------------

def _ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def _num(v):
    return f"{v:,.0f}" if v else "-"


def _per_mac(v, macs):
    return f"{v / macs:.2f}" if v and macs else "-"


def render_md(rep):
    lines = ["# micronn benchmark report", "",
             f"Generated {rep['generated']}. Method: {rep['method']}. TFLM figures: the same method on the same QEMU "
             "machines (PLATFORM.md). Ratios are micronn / TFLM (below 1 = micronn is cheaper). "
             "\"optimized\" is the board's default kernel backends, \"reference\" the same firmware built with "
             "KERNELS=reference.", "",
             "| model | board | optimized | reference | speed-up | instr/MAC | TFLM | optimized / TFLM | arena "
             "(persistent + non-persistent) | TFLM arena |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (name, board), pair in pairs(rep["results"]).items():
        opt, ref = pair.get("optimized"), pair.get("reference")
        t = TFLM.get(name, {})
        cols = [(k, label) for k, label in BOARD_COLUMNS.get(board, []) if k in t]
        macs = sum(opt.get("macs") or [])
        a = opt["arena"]
        lines.append(
            f"| {name} | {board} | {opt['per_inference']:,} | {_num(ref and ref['per_inference'])} | "
            f"{_ratio(ref and ref['per_inference'], opt['per_inference'])} | {_per_mac(opt['per_inference'], macs)} | "
            f"{'<br>'.join(f'{label}: {t[k]:,}' for k, label in cols) or '-'} | "
            f"{'<br>'.join(_ratio(opt['per_inference'], t[k]) for k, _ in cols) or '-'} | "
            f"{a['bytes']:,} ({a['persistent']:,} + {a['nonpersistent']:,}) | {_num(t.get('arena'))} |")
    lines += ["", "## Code size", "",
              "Bytes of `.text` + `.rodata` the firmware link kept from the engine and its kernels "
              "(from `firmware.map`; the firmware links every kernel its models need).", "",
              "| board | optimized | reference |", "|---|---|---|"]
    for board, s in rep.get("code_size", {}).items():
        lines.append(f"| {board} | {_num(s.get('optimized'))} | {_num(s.get('reference'))} |")
    ab = rep.get("arm_bench") or {}
    if ab:
        lines += ["", "## Engine on Cortex-M4 (tests/engine/arm/bench.c)", "",
                  "Interpreter overhead like for like: invoke with every kernel replaced by a no-op, against "
                  "TFLM's no-op invoke; prepare with automatic arena sizing (sizing dry run + prepare).", "",
                  "| model | no-op invoke | TFLM no-op invoke | sizing + prepare |", "|---|---|---|---|"]
        for name, f in ab.items():
            lines.append(f"| {name} | {_num(f.get('noop-invoke'))} | {_num(TFLM.get(name, {}).get('noop_invoke'))} | "
                         f"{_num(f.get('sizing', 0) + f.get('prepare', 0))} |")
    lines.append("")
    for (name, board), pair in pairs(rep["results"]).items():
        lines += _detail(name, board, pair)
    return "\n".join(lines) + "\n"


def _detail(name, board, pair):
    opt, ref = pair.get("optimized"), pair.get("reference")
    t = TFLM.get(name, {})
    per_op_cols = [(k, label) for k, label in BOARD_PER_OP.get(board, []) if k in t]
    lines = [f"## {name} on {board}", "",
             f"Kernels: {', '.join(opt.get('kernels') or []) or 'reference only'}. Interpreter overhead (profiled "
             f"run minus the sum of its ops, profiler clock reads included): {opt['overhead']:,} "
             f"({100 * opt['overhead_share']:.3f}%).", "",
             "| op type | kernel variants | optimized | reference | speed-up | MACs | instr/MAC | "
             + "".join(f"{label} | " for _, label in per_op_cols),
             "|---|---|---|---|---|---|---|" + "---|" * len(per_op_cols)]
    ref_types = by_type(ref) if ref else {}
    for op, (v, macs, var) in sorted(by_type(opt).items(), key=lambda kv: -kv[1][0]):
        rv = ref_types.get(op, (0,))[0]
        lines.append(f"| {op} | {', '.join(sorted(var))} | {v:,.0f} | {_num(rv)} | {_ratio(rv, v)} | {_num(macs)} | "
                     f"{_per_mac(v, macs)} | " + "".join(f"{_num(t[k].get(op))} | " for k, _ in per_op_cols))
    lines += ["", f"Samples (optimized): {', '.join(f'{s:,}' for s in opt['samples'])}. "
              f"Model from: {opt['model_source']}.", ""]
    if opt.get("plot"):
        lines += [f"![per-op-type profile]({opt['plot']})", ""]
    return lines


def plot_pair(pair, path):
    """Horizontal bars per op type: reference and optimized instructions, TFLM's figure marked."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        raise CliError("the plots need matplotlib (pip install -r host_tools/requirements.txt)") from None
    opt, ref = pair.get("optimized"), pair.get("reference")
    name, board = opt["name"], opt["board"]
    types = [op for op, _ in sorted(by_type(opt).items(), key=lambda kv: -kv[1][0])]
    ov = [by_type(opt)[op][0] for op in types]
    rv = [by_type(ref).get(op, (0,))[0] for op in types] if ref else None
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(types) + 1.8))
    ys = range(len(types))
    h = 0.38 if rv else 0.7
    ax.barh([y - h / 2 for y in ys] if rv else ys, ov, height=h, color="C0", label="micronn optimized")
    if rv:
        ax.barh([y + h / 2 for y in ys], rv, height=h, color="C7", label="micronn reference")
    t = TFLM.get(name, {})
    for (k, label), color in zip(BOARD_PER_OP.get(board, []), ("C3", "C1")):
        if k in t:
            xs = [(t[k][op], y) for y, op in zip(ys, types) if op in t[k]]
            if xs:
                ax.scatter([x for x, _ in xs], [y for _, y in xs], marker="|", s=600, color=color, label=label,
                           zorder=3)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(types, fontsize=8)
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1e6:g} M" if x else "0"))
    ax.set_xlabel("instructions per inference")
    total = f"{opt['per_inference']:,} instructions" + (f" (reference {ref['per_inference']:,})" if ref else "")
    cols = [f"{label} {t[k]:,}" for k, label in BOARD_COLUMNS.get(board, []) if k in t]
    ax.set_title(f"{name} on {board}: {total}" + ("\n" + "; ".join(cols) if cols else ""), fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        raise CliError(f"{path}: cannot write: {e.strerror or e}") from None
    finally:
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
