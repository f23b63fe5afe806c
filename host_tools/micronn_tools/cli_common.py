"""Shared pieces of the `micronn` subcommands: errors, model files, boards, transfers, progress.

Every user-facing failure is raised as :class:`CliError` (or one of the library errors that
``cli.main`` turns into a one-line message); nothing here prints a traceback.
"""
import hashlib
import os
import sys
import time

import numpy as np

from . import boards, repo_root

#: Where the board keeps copied models and run files (relative: works on every kind of board).
REMOTE_DIR = ""
#: Transfers at least this long show a progress line.
PROGRESS_MIN_BYTES = 16 * 1024
#: Bytes per raw-REPL write during put (fewer round trips than board.py's default 4 KiB).
PUT_CHUNK = 16 * 1024


class CliError(Exception):
    """A failure to report as ``micronn: error: <message>`` with exit status ``code``."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def models_dir():
    """$MICRONN_MODELS_DIR, else ../shared/models relative to the repo root."""
    env = os.environ.get("MICRONN_MODELS_DIR") or os.environ.get("MICRONN_MODELS")
    if env:
        return os.path.abspath(env)
    return os.path.abspath(os.path.join(repo_root(), "..", "shared", "models"))


def read_file(path, what="file"):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise CliError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{what} {path}: is a directory") from None
    except OSError as e:
        raise CliError(f"{what} {path}: cannot read: {e.strerror or e}") from None


def engine_lib_hint():
    return "build the host engine library with `make -C tests/engine lib`"


def load_engine():
    """The engine module with its library loaded, or CliError saying how to build it."""
    from . import engine
    try:
        engine.lib()
    except OSError as e:
        raise CliError(f"cannot load the host engine library {engine.default_lib_path()}: {e}; "
                       + engine_lib_hint()) from None
    return engine


def verify_model(path):
    """Read ``path`` and verify it with the engine (mn_model_init). Returns (bytes, engine.Model)."""
    data = read_file(path, "model")
    engine = load_engine()
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise CliError(f"model {path}: not a TFLite model (no 'TFL3' identifier at offset 4)")
    try:
        model = engine.Model(data)
    except engine.MicronnError as e:
        raise CliError(f"model {path}: rejected by the engine: {e}") from None
    return data, model


def model_name(path):
    from .convert import sanitize_name
    return sanitize_name(path)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ---- progress ------------------------------------------------------------------------------------

class Progress:
    """``progress(done, total)`` callback printing one updating line on stderr.

    On a terminal the line is rewritten in place; otherwise (logs, CI) a line is printed at
    every 25 %. ``quiet`` disables it."""

    def __init__(self, label, quiet=False, stream=None):
        self.label = label
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self.last_q = -1
        self.last_t = 0.0
        self.done_printed = False

    def __call__(self, done, total):
        if self.quiet:
            return
        pct = 100 if not total else int(100 * done / total)
        now = time.monotonic()
        rate = done / max(now - self.t0, 1e-6) / 1024
        text = f"{self.label}: {pct:3d}% ({done // 1024}/{total // 1024} KiB, {rate:.0f} KiB/s)"
        if self.tty:
            if now - self.last_t > 0.1 or done >= total:
                self.stream.write("\r" + text)
                self.last_t = now
            if done >= total and not self.done_printed:
                self.stream.write("\n")
                self.done_printed = True
        else:
            q = pct // 25
            if q != self.last_q:
                self.last_q = q
                self.stream.write(text + "\n")
        self.stream.flush()


def say(msg, quiet=False):
    """Status messages go to stderr so stdout stays clean for results."""
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


# ---- boards --------------------------------------------------------------------------------------

def add_board_args(p, default_note="the default emulated board"):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--board", metavar="BOARD",
                   help=f"emulated board to boot (QEMU) or UNIX; default: {default_note}. "
                        "With --port it names the board.json describing the real board")
    p.add_argument("--port", metavar="PORT",
                   help="a real board on this serial port (any pyserial URL: /dev/ttyACM0, "
                        "socket://host:port, rfc2217://host:port)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="give up when the board does not answer one request within S seconds "
                        "(default 300)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or status messages")


def board_spec(args):
    """The BoardSpec selected by --board (or the default board without --port), or None."""
    try:
        if args.board:
            return boards.get(args.board)
        if args.port:
            return None
        return boards.default()
    except boards.BoardConfigError as e:
        raise CliError(str(e)) from None


def open_target(args, spec=None):
    """Connect to the board the arguments name. Raises CliError with the reason."""
    from .board import BoardError, open_board
    from .qemu import QemuError
    spec = spec if spec is not None else board_spec(args)
    if args.port:
        if not _port_exists(args.port):
            raise CliError(f"no board at {args.port}: no such serial port")
    elif spec is not None:
        if spec.emulated or spec.name == "UNIX":
            try:
                spec.require_firmware()
            except boards.FirmwareMissing as e:
                raise CliError(str(e)) from None
    say(f"connecting to {args.port or spec.name}"
        + (" (booting QEMU)" if not args.port and spec.emulated else ""), args.quiet)
    try:
        return open_board(spec.name if spec else None, port=args.port)
    except (BoardError, QemuError, boards.BoardConfigError) as e:
        raise CliError(f"cannot reach the board: {e}") from None


def _port_exists(port):
    if "://" in port:
        return True  # network URL: pyserial reports failures when opening
    return os.path.exists(port)


def board_ops(board, timeout):
    """Op names the board's firmware has kernels for (micronn.ops())."""
    from .board import BoardExecError
    try:
        return set(board.eval("micronn.ops()", timeout=timeout, pre="import micronn"))
    except BoardExecError as e:
        if "_micronn" in e.traceback or "micronn" in e.traceback and "ImportError" in e.traceback:
            raise CliError(f"{board.name}: the firmware has no micronn module (ImportError); "
                           "rebuild it with the C module (`make firmware BOARD=...`)") from None
        raise


def _ops_desc(missing):
    return ", ".join(f"{n} (op{'s' if len(v) > 1 else ''} {', '.join(map(str, v))})"
                     for n, v in sorted(missing.items()))


#: BuiltinOperator CUSTOM: an op named by its custom_code.
CUSTOM_CODE = 32


def check_firmware_ops(board, model, timeout):
    """CliError naming every op of ``model`` (engine.Model) the firmware lacks, telling apart ops
    micronn has no kernel for (no firmware can run them) from kernels this firmware was built
    without (a rebuild helps). micronn.ops() lists builtin ops only: a custom op micronn has a
    kernel for (the signal library's, Atan2, ...) is left to the board's Interpreter, which names
    any kernel the firmware lacks (NotImplementedError)."""
    have = board_ops(board, timeout)
    not_built, none = {}, {}
    for op in model.ops():
        if op.get("builtin") == CUSTOM_CODE and op.get("kernel") != "none":
            continue
        if op["name"] not in have:
            (none if op.get("kernel") == "none" else not_built).setdefault(op["name"], []).append(op["index"])
    if not (none or not_built):
        return
    parts = []
    if none:
        parts.append(f"micronn has no kernel for {_ops_desc(none)} yet, so no firmware can run this model")
    if not_built:
        ops = " ".join(sorted(not_built))
        parts.append(f"the firmware on {board.name} was built without the kernel"
                     f"{'s' if len(not_built) > 1 else ''} for {_ops_desc(not_built)}; rebuild it with "
                     f"`make firmware BOARD={board.name} MODELS=<this model>` (or OPS=\"{ops} ...\" / OPS=all)")
    raise CliError("; ".join(parts) + f". The firmware has: {', '.join(sorted(have)) or 'none'}")


def find_frozen(board, data, timeout):
    """Name of a built-in model (micronn.models) with the same size and sha256, or None.
    Only models of the same size are hashed (on the board)."""
    digest = hashlib.sha256(data).digest()
    code = (
        "import micronn, hashlib\n"
        "_r = None\n"
        "for _k, _v in micronn.models.items():\n"
        f"    if len(_v) == {len(data)} and hashlib.sha256(_v).digest() == {digest!r}:\n"
        "        _r = _k\n"
        "        break\n"
        "print(repr(_r))\n")
    out = board.exec(code, timeout=timeout).strip().splitlines()
    if not out or out[-1] == "None":
        return None
    import ast
    return ast.literal_eval(out[-1])


def put_verified(board, data, remote, args, label=None, retries=1, firmware_hint=None, force=False):
    """Copy ``data`` to ``remote`` on the board unless the board already has a file with the
    same sha256 (computed on the board; ``force`` copies anyway). board.put writes a temporary
    file, verifies it, renames it; here the board is then soft-reset and the file hashed once
    more, so "verified" is only printed for the file that survives the board's own flush. One
    retry after a reset or a dropped link. A file that does not fit fails at once (nothing is
    copied), with ``firmware_hint`` (how to build it into the firmware instead) when given.
    Returns True when it copied, False when it skipped."""
    from .board import BoardCrash, BoardError, BoardTimeout, NoSpaceError, TransferError, TMP_SUFFIX
    want = sha256(data)
    if not force:
        try:
            size, have = board.sha256(remote, timeout=args.timeout)
            if size == len(data) and have == want:
                say(f"{remote}: already on {board.name} (sha256 matches), not copied", args.quiet)
                return False
        except TransferError:
            pass  # not there (or unreadable): copy it
    attempt = 0
    while True:
        try:
            # progress only for long transfers (the UART moves tens of KiB/s)
            quiet = args.quiet or len(data) < PROGRESS_MIN_BYTES
            board.put(data, remote, progress=Progress(label or f"copy {remote}", quiet),
                      chunk_size=PUT_CHUNK, timeout=args.timeout, settle=True)
            say(f"{remote}: {len(data)} bytes written, sha256 verified on the board", args.quiet)
            return True
        except NoSpaceError as e:
            raise CliError(no_space_message(board, remote, e.size, e.free, firmware_hint)) from None
        except (BoardCrash, TransferError, BoardTimeout) as e:
            attempt += 1
            if attempt > retries:
                try:
                    board._remove_quietly(remote + TMP_SUFFIX)
                except BoardError:
                    pass
                raise CliError(f"copying {remote} to {board.name} failed ({e}); {remote} on the "
                               "board was left as it was (absent or its previous version)") from None
            say(f"{remote}: transfer failed ({str(e).splitlines()[0]}); retrying", args.quiet)
            try:
                if not board.ping(timeout=10):
                    board.hard_reset()
            except BoardError as e2:
                raise CliError(f"{board.name} did not come back after a failed transfer: {e2}") from None


def model_firmware_hint(board, path):
    """How to build the model at ``path`` into the firmware of ``board`` instead of copying it."""
    name = board.spec.name if board.spec is not None else "<BOARD>"
    return f"build it into the firmware instead: make firmware BOARD={name} MODELS={os.path.abspath(path)}"


def no_space_message(board, what, size, free, firmware_hint=None, plural=False):
    msg = (f"{what} ({size:,} bytes) {'do' if plural else 'does'} not fit on {board.name}: its filesystem has "
           f"{max(free, 0):,} bytes free; nothing was copied")
    return f"{msg}; {firmware_hint}" if firmware_hint else msg


def ensure_model(board, data, path, args):
    """Make the model available on the board. Returns the source expression for
    ``micronn.load(...)`` on the board and a description."""
    name = find_frozen(board, data, args.timeout)
    if name is not None:
        say(f"model: built into the firmware as micronn.models[{name!r}] (same sha256)", args.quiet)
        return repr(name), f"built-in {name!r}"
    remote = REMOTE_DIR + model_name(path) + ".tflite"
    put_verified(board, data, remote, args, label=f"copy model {os.path.basename(path)}",
                 firmware_hint=model_firmware_hint(board, path))
    return repr(remote), f"file {remote}"


def quantize(x, scale, zero_point, dtype):
    """TFLite quantization: round half away from zero, then clamp to the integer type."""
    info = np.iinfo(dtype)
    q = np.sign(x) * np.floor(np.abs(x) / scale + 0.5) + zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(q, scale, zero_point):
    return ((q.astype(np.float64) - zero_point) * scale).astype(np.float32)


def np_dtype(info):
    from . import engine
    dt = engine.DTYPES.get(info["dtype_code"])
    if dt is None:
        raise CliError(f"tensor {info['name']!r}: dtype {info['dtype']} is not supported by the CLI")
    return np.dtype(dt)
