"""`micronn run MODEL [--board B | --port P] --input in.npy ... [--output out.npy ...]`."""
import argparse
import ast
import os
import sys

import numpy as np

from .cmd_bench import CLOCK_CODE, SYNC_CODE
from .cli_common import CliError, add_board_args, board_spec, check_firmware_ops, dequantize, \
    ensure_model, np_dtype, open_target, put_verified, quantize, say, verify_model

DESCRIPTION = """\
Run MODEL once (or --repeat N times) on a board and bring the outputs back.

Board: an emulated board booted under QEMU (--board, default: the default board of boards/),
the UNIX build (--board UNIX), or a real MicroPython board with micronn firmware (--port).
Emulated firmware is taken from build/<BOARD>/; when it is missing the message names the make
command that builds it.

Model: when the firmware has the same model built in (same size and sha256 as an entry of
micronn.models, checked on the board) that copy in flash is used. Otherwise the file is copied to
the board's filesystem as <name>.tflite, verified by a sha256 computed on the board; the copy is
skipped when a file with the same sha256 is already there.

Inputs: one --input per model input, in order, as .npy files whose dtype and shape match the
input tensor (shapes that differ only by leading/trailing 1s are accepted). Without --input the
command refuses to run, unless --zeros is given (all inputs zero). --quantize takes float arrays
and quantizes them with the input tensor's scale and zero point (round half away from zero, then
clamp, as TFLite does).

Outputs: --output FILE.npy per model output (in order), else printed. --dequantize turns
quantized outputs into float32 with the output tensor's scale and zero point.

Before running, the model's operators are compared with the firmware's kernels
(micronn.ops()); missing ones are named and nothing runs.
"""


def add_parser(sub):
    p = sub.add_parser("run", help="run a model on an emulated or real board with .npy inputs",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="example:\n  micronn run person_detect.tflite --input frame.npy --output scores.npy\n\n"
                              "exit status: 0 ok, 1 error (bad input, missing ops, board timeout, ...), 2 usage")
    p.add_argument("model", metavar="MODEL.tflite")
    add_board_args(p)
    p.add_argument("--input", "-i", action="append", default=[], metavar="IN.npy",
                   help="input tensor data (repeat for each model input, in order)")
    p.add_argument("--output", "-o", action="append", default=[], metavar="OUT.npy",
                   help="where to write each output (repeat per output); default: print them")
    p.add_argument("--zeros", action="store_true", help="run with all-zero inputs when no --input is given")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="invoke N times (state of stateful models carries over); outputs of the last")
    p.add_argument("--quantize", action="store_true",
                   help="inputs are float: quantize them with the input tensors' scale/zero point")
    p.add_argument("--dequantize", action="store_true",
                   help="outputs as float32 using the output tensors' scale/zero point")
    p.set_defaults(func=run)
    return p


def load_inputs(args, model):
    """Host-side input arrays, checked against the model's input tensors (raw bytes per input)."""
    infos = [model.tensor(t) for t in model.input_indices()]
    if not args.input:
        if not args.zeros:
            shapes = "; ".join(f"input {i} {d['name']!r} {d['dtype']} {list(d['shape'])}"
                               for i, d in enumerate(infos))
            raise CliError(f"no --input given; the model needs {len(infos)} input(s): {shapes}. "
                           "Pass --input FILE.npy per input, or --zeros to run on zeros")
        return [np.zeros(d["shape"], dtype=np_dtype(d)) for d in infos], infos
    if len(args.input) != len(infos):
        raise CliError(f"the model has {len(infos)} input(s) but {len(args.input)} --input file(s) were given")
    arrays = []
    for i, (path, d) in enumerate(zip(args.input, infos)):
        want = np_dtype(d)
        what = f"input {i} ({path})"
        if not os.path.isfile(path):
            raise CliError(f"{what}: no such file")
        try:
            a = np.load(path, allow_pickle=False)
        except Exception as e:  # numpy raises several types for non-.npy data
            raise CliError(f"{what}: not a readable .npy file ({e})") from None
        if not isinstance(a, np.ndarray):
            raise CliError(f"{what}: expected one array, got {type(a).__name__} (an .npz?)")
        tdesc = f"the model's input {i} {d['name']!r} is {d['dtype']} {list(d['shape'])}"
        if args.quantize:
            if not np.issubdtype(a.dtype, np.floating):
                raise CliError(f"{what}: --quantize expects floats, got {a.dtype}; {tdesc}")
            if not d["scales"] or d["scale"] == 0 or not np.issubdtype(want, np.integer):
                raise CliError(f"{what}: --quantize: {tdesc}, which is not quantized")
            a = quantize(a, d["scale"], d["zero_point"], want)
        if a.dtype != want:
            hint = " (pass --quantize to quantize float data)" if np.issubdtype(a.dtype, np.floating) \
                and np.issubdtype(want, np.integer) and d["scales"] else ""
            raise CliError(f"{what}: dtype {a.dtype} does not match: {tdesc}{hint}")
        shape = tuple(d["shape"])
        if a.shape != shape:
            squeeze = lambda s: tuple(x for x in s if x != 1)  # noqa: E731
            if a.size != int(np.prod(shape)) or squeeze(a.shape) != squeeze(shape):
                raise CliError(f"{what}: shape {list(a.shape)} does not match: {tdesc}")
            a = a.reshape(shape)
        arrays.append(np.ascontiguousarray(a))
    return arrays, infos


RUN_CODE = """\
import micronn, time
{sync}
_m = micronn.load({src})
_it = micronn.Interpreter(_m, profile={profile})
_files = {files!r}
for _i in range(_it.num_inputs):
    _t = _it.input(_i)
    with open(_files[_i], 'rb') as _f:
        _n = _f.readinto(_t)
    if _n != _t.nbytes:
        raise ValueError('input %d: %d of %d bytes' % (_i, _n, _t.nbytes))
{clock}
_ticks = []
for _r in range({repeat}):
    _T0 = _wide()   # (before the sync: the window starts at a tick edge)
    _sync()
    _t0 = _clk()
    _it.invoke()
    _t1 = _clk()
    _T1 = _wide()
    _ticks.append(_span(_t0, _t1, _T0, _T1))
for _i in range(_it.num_outputs):
    with open('micronn_out%d.bin' % _i, 'wb') as _f:
        _f.write(_it.output(_i))
print(repr({{'ticks': _ticks, 'stats': _it.stats(), 'profile': _it.profile() if {profile} else None,
            'clock': micronn.PROFILE_CLOCK}}))
"""


def execute(board, spec, src, model, arrays, args, repeat=1, profile=False, emulated=True):
    """Send inputs, run, fetch outputs. Returns (outputs as numpy arrays, result dict)."""
    from .board import BoardExecError
    files = []
    for i, a in enumerate(arrays):
        remote = f"micronn_in{i}.bin"
        put_verified(board, a.tobytes(), remote, args, label=f"copy input {i}")
        files.append(remote)
    code = RUN_CODE.format(src=src, profile=profile, files=files, repeat=repeat, sync=SYNC_CODE[emulated],
                           clock=CLOCK_CODE[emulated])
    try:
        out = board.exec(code, timeout=args.timeout)
    except BoardExecError as e:
        if e.exc_type == "NotImplementedError":
            raise CliError(f"{board.name}: {e.traceback.strip().splitlines()[-1]}") from None
        if e.exc_type == "MemoryError":
            raise CliError(f"{board.name}: out of memory: {e.traceback.strip().splitlines()[-1]}") from None
        raise
    res = ast.literal_eval(out.strip().splitlines()[-1])
    outs = []
    for i, t in enumerate(model.output_indices()):
        d = model.tensor(t)
        raw = board.get(f"micronn_out{i}.bin", timeout=args.timeout)
        if len(raw) != d["bytes"]:
            raise CliError(f"output {i}: board returned {len(raw)} bytes, expected {d['bytes']}")
        outs.append(np.frombuffer(raw, dtype=np_dtype(d)).reshape(d["shape"]).copy())
    return outs, res


def instructions(spec, ticks):
    return spec.instructions(ticks) if spec is not None and spec.instructions_per_tick else None


def run(args):
    if args.repeat < 1:
        raise CliError("--repeat must be at least 1", code=2)
    data, model = verify_model(args.model)
    arrays, infos = load_inputs(args, model)
    n_out = model.num_outputs
    if args.output and len(args.output) != n_out:
        raise CliError(f"the model has {n_out} output(s) but {len(args.output)} --output file(s) were given")
    for path in args.output:
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise CliError(f"--output {path}: directory {d} does not exist")
    spec = board_spec(args)
    emulated = not args.port and spec is not None and spec.emulated
    board = open_target(args, spec)
    try:
        check_firmware_ops(board, model, args.timeout)
        src, where = ensure_model(board, data, args.model, args)
        outs, res = execute(board, spec, src, model, arrays, args, repeat=args.repeat, emulated=emulated)
    finally:
        board.close()
    # report
    t = sorted(res["ticks"])[len(res["ticks"]) // 2]
    if emulated:
        n = instructions(spec, t)
        cost = f"{n:,} instructions per inference" if n is not None else f"{t} CPU ticks per inference"
    else:
        cost = f"{t:,} us per inference"
    st = res["stats"]
    say(f"ran on {board.name} ({where}): {cost}; arena {st['arena_size']} bytes "
        f"(persistent {st['persistent']}, non-persistent {st['nonpersistent']})", args.quiet)
    for i, (o, tidx) in enumerate(zip(outs, model.output_indices())):
        d = model.tensor(tidx)
        val = o
        if args.dequantize:
            if not d["scales"] or d["scale"] == 0:
                say(f"output {i}: not quantized; written as {o.dtype}", args.quiet)
            else:
                val = dequantize(o, d["scale"], d["zero_point"])
        if args.output:
            np.save(args.output[i], val)
            say(f"output {i} {d['name']!r} {val.dtype} {list(val.shape)} -> {args.output[i]}", args.quiet)
        else:
            with np.printoptions(threshold=64, linewidth=100):
                print(f"output {i} {d['name']!r} {val.dtype} {list(val.shape)}:")
                print(val)
    sys.stdout.flush()
    return 0
