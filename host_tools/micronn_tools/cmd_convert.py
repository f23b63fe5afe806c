"""`micronn convert MODEL -o OUT`: the model in the form OUT's suffix names, verified first."""
import argparse
import os
import subprocess

from . import convert as conv
from . import repo_root
from .cli_common import CliError, say, verify_model

DESCRIPTION = """\
Write MODEL in the form OUT's suffix picks:
  .py   module NAME = b'...' (freeze it with freeze() in a manifest, or copy it to a board)
  .mpy  the .py form compiled with mpy-cross (found via $MPY_CROSS, PATH, or the repo's build)
  .c    const uint8_t NAME[] __attribute__((aligned(16))) + const size_t NAME_len
  .h    header-only: static const uint8_t NAME[] (aligned 16) + NAME_LEN
  .bin  the flatbuffer unchanged, for a flash region (write it at a 16-byte aligned address)

The model is verified by the engine (every offset, vector and index is bounds-checked) before
anything is written; a malformed model gives a message and exit status 1, and no output file.

Alignment: the C forms carry __attribute__((aligned(16))), so the linker places the array at a
16-byte boundary in flash and the engine reads every constant tensor in place. A .bin is
byte-identical to the model: keep the address you write it to 16-byte aligned (flash sectors
are). Frozen .py/.mpy bytes objects have no alignment guarantee from MicroPython; the engine then
copies misaligned constant tensors into the arena once at prepare (reported as "copied" in
Interpreter.stats()). Models built into the firmware with `make firmware MODELS=...` are emitted
as aligned C arrays, so they stay zero-copy.
"""


def add_parser(sub):
    p = sub.add_parser("convert", help="model -> .py/.mpy/.c/.h/.bin (verified by the engine first)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="exit status: 0 ok, 1 error (bad model, missing output directory, ...), "
                              "2 usage (including an OUT suffix not listed above)")
    p.add_argument("model", metavar="MODEL.tflite")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .py, .mpy, .c, .h or .bin")
    p.add_argument("--name", help="C/Python identifier (default: the output file's stem)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=run)
    return p


def _mpy_cross_default():
    if os.environ.get("MPY_CROSS"):
        return
    micropy = os.environ.get("MICROPY_DIR") or os.path.join(repo_root(), "build", "micropython")
    exe = os.path.join(micropy, "mpy-cross", "build", "mpy-cross")
    if os.path.isfile(exe):
        os.environ["MPY_CROSS"] = exe


def run(args):
    suffix = os.path.splitext(args.output)[1].lower()
    if suffix not in conv.FORMS:
        raise CliError(f"{args.output}: unknown output form {suffix or '(no suffix)'!r}; "
                       f"use one of {', '.join(conv.FORMS)}", code=2)
    data, _ = verify_model(args.model)
    if suffix == ".mpy":
        _mpy_cross_default()
    outdir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(outdir):
        raise CliError(f"{args.output}: directory {outdir} does not exist")
    try:
        name = conv.convert(data, args.output, args.name or None)
    except conv.ConvertError as e:
        raise CliError(str(e)) from None
    except subprocess.CalledProcessError as e:
        raise CliError(f"mpy-cross failed with status {e.returncode}") from None
    except OSError as e:
        raise CliError(f"{args.output}: cannot write: {e.strerror or e}") from None
    say(f"{args.output}: {name} ({len(data)} bytes of model, verified by the engine)", args.quiet)
    return 0
