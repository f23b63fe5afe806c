"""`micronn demo`: person detection on the default emulated board (what `make demo` runs);
`micronn demo speech`: micro_speech from raw audio (what `make demo-speech` runs, cmd_demo_speech.py)."""
import argparse
import os

import numpy as np

from .cmd_demo_speech import DESCRIPTION as SPEECH_DESCRIPTION
from .cli_common import CliError, add_board_args, board_spec, check_firmware_ops, ensure_model, \
    models_dir, open_target, read_file, say, verify_model

#: What LiteRT's reference kernels give for the two test images (shared/models/README.md).
EXPECTED = {"person.bmp": [-113, 113], "no_person.bmp": [57, -57]}
LABELS = ("no person", "person")

DESCRIPTION = """\
Classify person.bmp and no_person.bmp (96x96 8-bit greyscale) with person_detect.tflite on a
board and print both scores [notperson, person], the instructions per inference (emulated
boards; microseconds on real ones) and the arena bytes. The BMP's pixel rows are taken top-down
(BMP stores them bottom-up) and their bytes copied unchanged into the int8 input, as TFLM's own
test does; the expected scores are person -> [-113, 113], no_person -> [57, -57]. Exit status 1
when a score differs. `make demo` builds the firmware with person_detect built in and runs this.

`micronn demo speech`:
""" + SPEECH_DESCRIPTION


def add_parser(sub):
    p = sub.add_parser("demo", help="person detection on the default emulated board (make demo)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", choices=("person", "speech"), default="person",
                   help="person: person detection (default); speech: micro_speech from raw audio "
                        "(audio/*_1000ms.wav, make demo-speech)")
    add_board_args(p)
    p.add_argument("--models-dir", metavar="DIR",
                   help="where the models, BMPs and audio/ clips are (default: $MICRONN_MODELS_DIR "
                        "or ../shared/models)")
    p.set_defaults(func=run)
    return p


def bmp_to_input(path):
    """The pixel bytes of an 8-bit greyscale BMP, rows top-down, as int8 [1, H, W, 1]."""
    b = read_file(path, "image")
    if len(b) < 54 or b[:2] != b"BM":
        raise CliError(f"{path}: not a BMP file")
    off = int.from_bytes(b[10:14], "little")
    w = int.from_bytes(b[18:22], "little", signed=True)
    h = int.from_bytes(b[22:26], "little", signed=True)
    bpp = int.from_bytes(b[28:30], "little")
    comp = int.from_bytes(b[30:34], "little")
    if bpp != 8 or comp != 0 or w <= 0 or h == 0:
        raise CliError(f"{path}: need an uncompressed 8-bit BMP, got {bpp} bpp, compression {comp}")
    stride = (w + 3) // 4 * 4
    if off + stride * abs(h) > len(b):
        raise CliError(f"{path}: truncated pixel data")
    rows = [b[off + r * stride: off + r * stride + w] for r in range(abs(h))]
    if h > 0:  # bottom-up
        rows.reverse()
    return np.frombuffer(b"".join(rows), dtype=np.int8).reshape(1, abs(h), w, 1)


def run(args):
    if getattr(args, "what", "person") == "speech":
        from .cmd_demo_speech import run_speech
        return run_speech(args)
    from .cmd_run import execute
    mdir = args.models_dir or models_dir()
    model_path = os.path.join(mdir, "person_detect.tflite")
    data, model = verify_model(model_path)
    inp = model.tensor(model.input_indices()[0])
    images = {}
    for name in EXPECTED:
        a = bmp_to_input(os.path.join(mdir, name))
        if a.shape != tuple(inp["shape"]):
            raise CliError(f"{name}: image shape {list(a.shape)} does not match the model input {list(inp['shape'])}")
        images[name] = a
    spec = board_spec(args)
    emulated = not args.port and spec is not None and spec.emulated
    board = open_target(args, spec)
    results = {}
    try:
        check_firmware_ops(board, model, args.timeout)
        src, where = ensure_model(board, data, model_path, args)
        for name, a in images.items():
            outs, res = execute(board, spec, src, model, [a], args, repeat=1, emulated=emulated)
            results[name] = (outs[0].reshape(-1).tolist(), res)
    finally:
        board.close()
    desc = f"{spec.name} ({spec.core}, emulated)" if emulated else (args.port + (f" ({spec.name})" if spec else ""))
    print(f"person detection (person_detect.tflite) on {desc}")
    print(f"  model: {where}")
    ok = True
    for name, (scores, res) in results.items():
        exp = EXPECTED[name]
        verdict = LABELS[int(np.argmax(scores))]
        good = scores == exp
        ok &= good
        print(f"  {name:<14} scores [notperson, person] = {scores}  -> {verdict:<9} "
              f"(expected {exp}: {'ok' if good else 'MISMATCH'})")
    ticks, st = results["person.bmp"][1]["ticks"][0], results["person.bmp"][1]["stats"]
    if emulated and spec.instructions_per_tick:
        print(f"  instructions per inference: {spec.instructions(ticks):,}")
    elif emulated:
        print(f"  CPU ticks per inference: {ticks:,}")
    else:
        print(f"  microseconds per inference: {ticks:,}")
    print(f"  arena: {st['arena_size']:,} bytes (persistent {st['persistent']:,} + "
          f"non-persistent {st['nonpersistent']:,} + alignment slack)")
    if not ok:
        raise CliError("the scores differ from the reference (LiteRT reference kernels)")
    say("demo ok", args.quiet)
    return 0
