#!/usr/bin/env python3
"""Firmware sizes: every kernel linked, per emulated board, against the board's flash; and, per
shared model, a firmware that links only the kernels that model needs (OPS=<its op set>
TYPES=<its type families> VARIANTS=<the kernel variants its nodes select on the board's
backends>, as `make firmware MODELS=` selects them; model not frozen). Builds into build/size/<BOARD>-<what>/ with `make firmware` and prints a Markdown report
(README, "Firmware size"); --json writes the figures too.

    .venv/bin/python tools/firmware_sizes.py [--boards B,...] [--model-boards B,...] [--json OUT]
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host_tools"))
from micronn_tools import bench_report, opset  # noqa: E402

EMULATED = ["MPS2_AN386", "MPS2_AN500", "MPS3_AN547", "NETDUINOPLUS2", "VIRT_RV32"]


def build(board, name, ops, types="all", variants="all"):
    out = ROOT / "build" / "size" / f"{board}-{name}"
    cmd = ["make", "-s", "--no-print-directory", "firmware", f"BOARD={board}", f"FIRMWARE_BUILD={out}",
           f"OPS={ops}", f"TYPES={types or 'all'}", f"VARIANTS={variants or 'none'}"]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return out


def sizes(board, out):
    """text, data, bss of firmware.elf (flash holds text + data) and the engine's .text+.rodata."""
    tool = "riscv64-unknown-elf-size" if board == "VIRT_RV32" else "arm-none-eabi-size"
    line = subprocess.run([tool, "-B", str(out / "firmware.elf")], check=True, capture_output=True,
                          text=True).stdout.splitlines()[1]
    text, data, bss = (int(x) for x in line.split()[:3])
    return {"text": text, "data": data, "bss": bss, "flash": text + data,
            "engine": bench_report.code_size(out / "firmware.map")}


def model_ops(path):
    names, _ = opset.ops_used([path.read_bytes()], [path.name])
    return " ".join(names)


def model_types(path):
    return " ".join(opset.types_used([path.read_bytes()]))


def board_kernels(board):
    """The board's optimized backends (MICRONN_KERNELS in its mpconfigboard.mk), as the Makefile."""
    for name in ("mpconfigboard.mk", "mpconfigvariant.mk"):
        f = ROOT / "boards" / board / name
        for line in f.read_text().splitlines() if f.exists() else ():
            m = re.match(r"MICRONN_KERNELS\s*\??=\s*(.*)", line)
            if m:
                return m.group(1).strip()
    return ""


def model_variants(path, board):
    return " ".join(opset.variants_used([path.read_bytes()], board_kernels(board)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", default=",".join(EMULATED), help="boards for the all-kernels build")
    ap.add_argument("--model-boards", default="MPS2_AN386", help="boards for the per-model builds")
    ap.add_argument("--models-dir", default=str(ROOT.parent / "shared" / "models"))
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args(argv)
    boards = [b for b in a.boards.split(",") if b]
    model_boards = [b for b in a.model_boards.split(",") if b]
    models = sorted(Path(a.models_dir).glob("*.tflite"))
    res = {"all": {}, "models": {}}
    for b in boards:
        print(f"building {b}, every kernel ...", file=sys.stderr)
        s = sizes(b, build(b, "all", "all"))
        s["flash_bytes"] = json.loads((ROOT / "boards" / b / "board.json").read_text())["flash_bytes"]
        res["all"][b] = s
    for m in models:
        ops, types = model_ops(m), model_types(m)
        res["models"][m.stem] = {"ops": ops.split(), "types": types.split()}
        for b in model_boards:
            print(f"building {b} for {m.name}: {ops}; types: {types or 'all'}", file=sys.stderr)
            res["models"][m.stem][b] = sizes(b, build(b, m.stem, ops, types, model_variants(m, b)))
    print(render(res, model_boards))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


def render(res, model_boards):
    rows = ["| board | flash used (text + data) | of the board's flash | engine + kernels (.text + .rodata) |",
            "|---|---|---|---|"]
    for b, s in res["all"].items():
        share = s["flash"] / s["flash_bytes"]
        rows.append(f"| {b} | {s['flash']:,} | {share:.0%} of {s['flash_bytes']:,}"
                    f"{'' if share <= 1 else ' (does not fit)'} | {s['engine'] or 0:,} |")
    rows += ["", "| model | kernels | types | " + " | ".join(f"{b} flash (engine)" for b in model_boards) + " |",
             "|---|---|---|" + "---|" * len(model_boards)]
    for m, r in res["models"].items():
        cells = [f"{r[b]['flash']:,} ({r[b]['engine'] or 0:,})" for b in model_boards]
        rows.append(f"| {m} | {len(r['ops'])} | {' '.join(r.get('types') or ['all'])} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
