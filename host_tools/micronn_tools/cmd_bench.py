"""`micronn bench MODEL [--board B | --port P] [--json] [--plot FILE.png] [--runs N]`."""
import argparse
import ast
import json
import os

from .cli_common import CliError, add_board_args, board_spec, check_firmware_ops, ensure_model, \
    open_target, put_verified, say, verify_model

DESCRIPTION = """\
Measure one inference of MODEL on a board.

Emulated boards run under QEMU with -icount shift=0 (1 ns of guest time per executed
instruction), so time.ticks_cpu() differences x the board's instructions_per_tick (board.json)
are exact instruction counts, independent of host load. Real boards (--port) report
microseconds (time.ticks_us).

Method: one warm-up invoke, then --runs timed invokes of an interpreter without the profiler;
the median is reported (samples in --json). A second interpreter with the engine's profiler gives
the per-op profile (op index, name, instructions or us, share of the total); the interpreter
overhead is that run's total minus the sum of its per-op figures (the op loop, the profiler's own
clock reads and the Python call). Arena bytes (persistent / non-persistent) are those of the
interpreter without the profiler (the profiler adds its counters to the persistent part).
Inputs are zeros unless --input files are given (same rules as `micronn run`).
"""

JSON_DOC = """\
--json keys (stable): model, sha256, board, emulated, unit ("instructions" or "us"), runs,
per_inference (median), samples[], min, max, profile_clock, per_op[] {index, name, value, share,
variant}, kernels[] (the firmware's optimized backends),
ops_total, overhead, overhead_share, profiled_total, arena {bytes, persistent, nonpersistent,
needed}, model_source."""

# Emulated boards: start each timed invoke at a fixed phase of the cycle counter's tick, so
# repeated runs count identical instructions (board.sync_cycles(), see README "Counting").
SYNC_CODE = {True: "import board\n_sync = board.sync_cycles", False: "_sync = lambda: None"}
# The run clock: _clk() around invoke(), _span(t0, t1, T0, T1) the ticks between, where T0/T1 are
# _wide() read outside the window. Emulated boards count instructions with time.ticks_cpu, which
# wraps at 2^30 ticks (a VIRT_RV32 model of 1.5 G instructions came out as 450 M): the profiler's
# 64-bit counter (micronn.ticks), read around it, supplies the whole periods; the window itself
# keeps the cheap call, so figures below 2^30 ticks are what they were. Real boards: ticks_us.
CLOCK_CODE = {True: "_clk = time.ticks_cpu\n"
                    "_wide = micronn.ticks if micronn.PROFILE_CLOCK == 'cpu' else (lambda: 0)\n"
                    "def _span(_a, _b, _A, _B):\n"
                    "    _d = time.ticks_diff(_b, _a) % 0x40000000\n"
                    "    return _d + ((_B - _A - _d + 0x20000000) // 0x40000000) * 0x40000000 if _B > _A else _d",
              False: "_clk = time.ticks_us\n_wide = lambda: 0\n"
                     "def _span(_a, _b, _A, _B):\n    return time.ticks_diff(_b, _a)"}

BENCH_CODE = """\
import micronn, time, gc
{sync}
_m = micronn.load({src})
{clock}
def _fill(_it):
    _files = {files!r}
    for _i in range(_it.num_inputs):
        if _files:
            with open(_files[_i], 'rb') as _f:
                _f.readinto(_it.input(_i))
        else:
            _it.input(_i).fill(0)
_it = micronn.Interpreter(_m)
_fill(_it)
_it.invoke()
_s = []
for _r in range({runs}):
    _fill(_it)
    _it.reset()
    _T0 = _wide()   # (before the sync: the window starts at a tick edge)
    _sync()
    _t0 = _clk()
    _it.invoke()
    _t1 = _clk()
    _T1 = _wide()
    _s.append(_span(_t0, _t1, _T0, _T1))
_res = {{'samples': _s, 'stats': _it.stats(), 'clock': micronn.PROFILE_CLOCK}}
_it = None
gc.collect()
_it = micronn.Interpreter(_m, profile=True)
_fill(_it)
_it.invoke()
_fill(_it)
_it.reset()
_it.profile_clear()
_T0 = _wide()
_sync()
_t0 = _clk()
_it.invoke()
_t1 = _clk()
_T1 = _wide()
_res['ptotal'] = _span(_t0, _t1, _T0, _T1)
_res['profile'] = _it.profile()
_res['variants'] = _it.variants() if hasattr(_it, 'variants') else ()
_res['kernels'] = micronn.kernels() if hasattr(micronn, 'kernels') else ()
print(repr(_res))
"""


def add_parser(sub):
    p = sub.add_parser("bench", help="instructions/us per inference, per-op profile, arena split",
                       description=DESCRIPTION, epilog=JSON_DOC + "\n\nexit status: 0 ok, 1 error, 2 usage",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL.tflite")
    add_board_args(p)
    p.add_argument("--runs", type=int, default=5, metavar="N", help="timed invokes after the warm-up (default 5)")
    p.add_argument("--json", action="store_true", help="machine-readable output (keys below)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the per-op profile (matplotlib)")
    p.add_argument("--input", "-i", action="append", default=[], metavar="IN.npy",
                   help="input data (default: zeros)")
    p.set_defaults(func=run)
    return p


def measure(board, spec, emulated, data, model, path, args, arrays=None):
    """Run the benchmark on an open board; returns the report dict (see JSON_DOC)."""
    check_firmware_ops(board, model, args.timeout)
    if not emulated and (spec is None or not spec.cpu_hz):
        clock = board.eval("micronn.PROFILE_CLOCK", timeout=args.timeout, pre="import micronn")
        if clock == "cpu":
            raise CliError(f"{board.name}: the profiler counts CPU cycles but the board's clock rate is "
                           "unknown; give --board NAME with --port so board.json supplies cpu_hz")
    src, where = ensure_model(board, data, path, args)
    files = []
    for i, a in enumerate(arrays or []):
        put_verified(board, a.tobytes(), f"micronn_in{i}.bin", args, label=f"copy input {i}")
        files.append(f"micronn_in{i}.bin")
    code = BENCH_CODE.format(src=src, clock=CLOCK_CODE[emulated], sync=SYNC_CODE[emulated],
                             runs=args.runs, files=files)
    say(f"benchmarking on {board.name}: 1 warm-up + {args.runs} runs + 1 profiled run", args.quiet)
    out = board.exec(code, timeout=args.timeout)
    res = ast.literal_eval(out.strip().splitlines()[-1])
    ipt = spec.instructions_per_tick if (spec is not None and emulated) else None
    clock = res["clock"]

    def total_units(ticks):  # the run clock (ticks_cpu or ticks_us)
        if emulated:
            return round(ticks * ipt) if ipt else ticks
        return ticks

    def prof_units(ticks):  # the profiler clock (micronn.PROFILE_CLOCK)
        if clock == "cpu":
            if emulated:
                return round(ticks * ipt) if ipt else ticks
            if spec is not None and spec.cpu_hz:
                return ticks * 1e6 / spec.cpu_hz
            return None
        if clock == "ns":
            return ticks / 1000.0
        return ticks  # "us"

    samples = [total_units(t) for t in res["samples"]]
    med = sorted(samples)[len(samples) // 2]
    per_op = []
    variants = res.get("variants") or ()
    for idx, name, calls, ticks in res["profile"]:
        v = prof_units(ticks // max(calls, 1))
        per_op.append({"index": idx, "name": name, "value": v,
                       "variant": variants[idx] if idx < len(variants) else "?"})
    unit = "instructions" if emulated and ipt else ("cpu ticks" if emulated else "us")
    if any(o["value"] is None for o in per_op):
        raise CliError(f"{board.name}: the profiler counts CPU cycles but the board's cpu_hz is unknown; "
                       "give --board NAME with --port so board.json supplies it")
    ops_total = sum(o["value"] for o in per_op)
    ptotal = total_units(res["ptotal"])
    for o in per_op:
        o["share"] = o["value"] / ptotal if ptotal else 0.0
    st = res["stats"]
    return {
        "model": os.path.abspath(path), "sha256": __import__("hashlib").sha256(data).hexdigest(),
        "board": board.name, "emulated": emulated, "unit": unit, "runs": args.runs,
        "per_inference": med, "samples": samples, "min": min(samples), "max": max(samples),
        "profile_clock": clock, "per_op": per_op, "ops_total": ops_total,
        "profiled_total": ptotal, "overhead": ptotal - ops_total,
        "overhead_share": (ptotal - ops_total) / ptotal if ptotal else 0.0,
        "arena": {"bytes": st["arena_size"], "persistent": st["persistent"],
                  "nonpersistent": st["nonpersistent"], "needed": st["needed"]},
        "model_source": where, "kernels": list(res.get("kernels") or ()),
    }


def fmt_num(v):
    return f"{v:,.0f}" if isinstance(v, (int, float)) and abs(v) >= 100 else f"{v:,.2f}"


def print_text(r):
    print(f"{os.path.basename(r['model'])} on {r['board']}: {fmt_num(r['per_inference'])} {r['unit']} "
          f"per inference (median of {r['runs']}; min {fmt_num(r['min'])}, max {fmt_num(r['max'])})")
    print(f"arena: {r['arena']['bytes']} bytes = persistent {r['arena']['persistent']} + "
          f"non-persistent {r['arena']['nonpersistent']} (+ alignment slack)")
    print(f"kernels: {', '.join(r['kernels']) or 'reference only'}")
    print(f"\n  {'op':>3}  {'name':<30} {'kernel':<26} {r['unit']:>14} {'share':>7}")
    for o in r["per_op"]:
        print(f"  {o['index']:>3}  {o['name']:<30} {o['variant']:<26} {fmt_num(o['value']):>14} "
              f"{100 * o['share']:6.2f}%")
    print(f"  {'':>3}  {'sum of ops':<30} {fmt_num(r['ops_total']):>14}")
    print(f"  {'':>3}  {'interpreter overhead':<30} {fmt_num(r['overhead']):>14} {100 * r['overhead_share']:6.2f}%")
    print(f"  {'':>3}  {'total (profiled run)':<30} {fmt_num(r['profiled_total']):>14}")


def plot(r, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CliError("--plot needs matplotlib (pip install -r host_tools/requirements.txt)") from None
    labels = [f"{o['index']} {o['name']}" for o in r["per_op"]] + ["overhead"]
    values = [o["value"] for o in r["per_op"]] + [max(r["overhead"], 0)]
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(labels) + 1.5))
    ax.barh(range(len(values)), values, color=["C0"] * (len(values) - 1) + ["C3"])
    ax.set_yticks(range(len(values)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"{r['unit']} per inference")
    ax.set_title(f"{os.path.basename(r['model'])} on {r['board']}: {fmt_num(r['per_inference'])} {r['unit']}",
                 fontsize=9)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        raise CliError(f"--plot {path}: cannot write: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def run(args):
    if args.runs < 1:
        raise CliError("--runs must be at least 1", code=2)
    data, model = verify_model(args.model)
    arrays = None
    if args.input:
        from .cmd_run import load_inputs
        args.zeros, args.quantize = False, False
        arrays, _ = load_inputs(args, model)
    spec = board_spec(args)
    emulated = not args.port and spec is not None and spec.emulated
    board = open_target(args, spec)
    try:
        r = measure(board, spec, emulated, data, model, args.model, args, arrays)
    finally:
        board.close()
    if args.plot:
        plot(r, args.plot)
        say(f"plot written to {args.plot}", args.quiet)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print_text(r)
    return 0
