"""`micronn flash`: firmware and files onto boards.

Three jobs, chosen by the arguments:
  micronn flash --firmware FILE.elf [--board B]           install an emulated board's image
  micronn flash FILE ... [--board B | --port P] [--dest D] copy models/scripts to a board
  micronn flash --romfs MODEL ... [--board B | --port P]    models into the board's ROMFS
  micronn flash --esp32 --port P [--firmware fw.bin] [--model m.tflite ...]   esptool
"""
import argparse
import csv
import hashlib
import os
import shlex
import shutil
import subprocess
import sys

from .cli_common import CliError, add_board_args, board_spec, model_firmware_hint, \
    no_space_message, open_target, put_verified, read_file, say

DESCRIPTION = """\
Put firmware and/or files on a board.

1. Emulated board image:  micronn flash --firmware FILE.elf [--board BOARD]
   Installs FILE as build/<BOARD>/<firmware> (board.json "firmware"), the image that
   `micronn run`/`bench` and the tests boot. The file must be an ELF for the board's
   architecture; it is copied atomically and its sha256 checked after the copy.

2. Files to any MicroPython board:  micronn flash FILE... [--board BOARD | --port PORT] [--dest DIR]
   Copies models (.tflite, .bin), scripts (.py, .mpy) or anything else with mpremote-style
   transfers (raw REPL), each verified by a sha256 computed on the board; a file whose sha256 is
   already there is skipped (--force copies anyway). A transfer cut by a board reset is retried
   once and otherwise reported as failed, with the partial file removed. An emulated board
   keeps its filesystem in its storage image (build/<BOARD>/storage.img), so files stay there
   across QEMU restarts, as on a real board's flash.

   --romfs MODEL...: instead, write the files as one ROMFS image into the board's ROMFS region
   (vfs.rom_ioctl, MicroPython 1.25), replacing what it held, mounted at /rom. The data of each
   file starts 16-byte aligned, and micronn.load('/rom/NAME') uses it in place: no heap copy.
   The board is soft-reset first (nothing may still use the old image); the image's sha256 is
   checked on the board. Needs firmware with a ROMFS region (board.info()['romfs_bytes']).

3. ESP32 over its ROM bootloader (esptool):  micronn flash --esp32 --port PORT
        [--chip esp32] [--baud 460800] [--firmware firmware.bin [--firmware-offset ADDR]]
        [--model MODEL.tflite (--model-offset ADDR | --partitions partitions.csv)] [--dry-run]
   Runs exactly:
     python -m esptool --chip CHIP --port PORT --baud BAUD write-flash \\
         --flash-mode keep --flash-size keep ADDR firmware.bin ADDR MODEL.tflite
   The firmware offset defaults to 0x1000 for esp32/esp32s2 and 0x0 for the others (where
   MicroPython's esp32 port puts its combined firmware.bin). The model is written unchanged (the
   .bin form of `micronn convert`) at --model-offset, or at the "model" partition of
   --partitions (an ESP-IDF partition CSV; the model must fit the partition). Offsets must be
   multiples of 0x1000 (flash sectors, so also 16-byte aligned for the engine). esptool verifies
   the written flash itself. --dry-run prints the command and runs nothing.
"""

FIRMWARE_OFFSETS = {"esp32": 0x1000, "esp32s2": 0x1000}
ELF_MACHINES = {"qemu-system-arm": (40, "ARM"), "qemu-system-riscv32": (243, "RISC-V")}


def add_parser(sub):
    p = sub.add_parser("flash", help="install firmware (emulated image or ESP32 via esptool), copy files to a board",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="exit status: 0 ok, 1 error (no port, failed/unverified transfer, ...), 2 usage")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to copy to the board's filesystem")
    add_board_args(p)
    p.add_argument("--firmware", metavar="IMAGE", help="firmware image (emulated: ELF; --esp32: firmware.bin)")
    p.add_argument("--dest", default="", metavar="DIR", help="directory on the board for FILEs (default: the root)")
    p.add_argument("--force", action="store_true", help="copy FILEs even when the board has the same sha256")
    p.add_argument("--romfs", action="store_true",
                   help="write FILEs as a ROMFS image to the board's ROMFS region (/rom, zero-copy models)")
    p.add_argument("--dry-run", action="store_true", help="print what would be done (the esptool command) and stop")
    e = p.add_argument_group("ESP32 (esptool)")
    e.add_argument("--esp32", action="store_true", help="flash an ESP32-family chip with esptool")
    e.add_argument("--chip", default="esp32", help="esptool chip type (default esp32)")
    e.add_argument("--baud", type=int, default=460800, help="flashing baud rate (default 460800)")
    e.add_argument("--firmware-offset", type=_addr, metavar="ADDR", help="default 0x1000 (esp32, esp32s2) or 0x0")
    e.add_argument("--model", metavar="MODEL", help="model file to write to flash unchanged")
    e.add_argument("--model-offset", type=_addr, metavar="ADDR", help="flash address for --model")
    e.add_argument("--partitions", metavar="CSV", help="ESP-IDF partition table; --model goes to its 'model' partition")
    p.set_defaults(func=run)
    return p


def _addr(s):
    try:
        v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an address: {s!r} (use e.g. 0x3f0000)") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"negative address {s!r}")
    return v


# ---- ESP32 -------------------------------------------------------------------------------------

def parse_partitions(path):
    """ESP-IDF partition CSV -> {name: (offset, size)} (explicit offsets and sizes only)."""
    text = read_file(path, "partition table").decode("utf-8", "replace")
    parts = {}
    for row in csv.reader(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")):
        row = [c.strip() for c in row]
        if len(row) < 5:
            continue
        name, _type, _sub, off, size = row[:5]
        try:
            parts[name] = (int(off, 0), _size(size))
        except ValueError:
            raise CliError(f"{path}: partition {name!r}: offset/size must be explicit numbers "
                           f"(got {off!r}, {size!r})") from None
    return parts


def _size(s):
    s = s.strip().upper()
    mult = 1
    if s.endswith("K"):
        s, mult = s[:-1], 1024
    elif s.endswith("M"):
        s, mult = s[:-1], 1024 * 1024
    return int(s, 0) * mult


def esptool_argv(args):
    """The esptool command line for --esp32 (validated; CliError on bad arguments)."""
    if not args.port:
        raise CliError("--esp32 needs --port PORT (the ESP32's USB serial port, e.g. /dev/ttyUSB0)")
    if not args.firmware and not args.model:
        raise CliError("--esp32: nothing to flash; give --firmware firmware.bin and/or --model MODEL")
    pairs = []
    if args.firmware:
        if not os.path.isfile(args.firmware):
            raise CliError(f"--firmware {args.firmware}: no such file")
        off = args.firmware_offset if args.firmware_offset is not None else FIRMWARE_OFFSETS.get(args.chip, 0)
        pairs.append((off, args.firmware, os.path.getsize(args.firmware), None))
    if args.model:
        data = read_file(args.model, "model")
        if len(data) < 8 or data[4:8] != b"TFL3":
            raise CliError(f"--model {args.model}: not a TFLite model (no 'TFL3' identifier)")
        if args.model_offset is not None and args.partitions:
            raise CliError("give --model-offset or --partitions, not both", code=2)
        if args.model_offset is not None:
            pairs.append((args.model_offset, args.model, len(data), None))
        elif args.partitions:
            parts = parse_partitions(args.partitions)
            if "model" not in parts:
                raise CliError(f"{args.partitions}: no partition named 'model' "
                               f"(has: {', '.join(parts) or 'none'})")
            off, size = parts["model"]
            if len(data) > size:
                raise CliError(f"--model {args.model}: {len(data)} bytes do not fit the 'model' "
                               f"partition ({size} bytes at {off:#x})")
            pairs.append((off, args.model, len(data), size))
        else:
            raise CliError("--model needs --model-offset ADDR or --partitions partitions.csv")
    for off, path, _, _ in pairs:
        if off % 0x1000:
            raise CliError(f"{path}: flash offset {off:#x} is not a multiple of 0x1000 (a flash sector)")
    spans = sorted((off, off + n, path) for off, path, n, _ in pairs)
    for (a0, a1, pa), (b0, _b1, pb) in zip(spans, spans[1:]):
        if b0 < a1:
            raise CliError(f"{pa} ({a0:#x}..{a1:#x}) overlaps {pb} at {b0:#x}")
    argv = [sys.executable, "-m", "esptool", "--chip", args.chip, "--port", args.port,
            "--baud", str(args.baud), "write-flash", "--flash-mode", "keep", "--flash-size", "keep"]
    for off, path, _, _ in pairs:
        argv += [f"{off:#x}", path]
    return argv


def flash_esp32(args):
    argv = esptool_argv(args)
    shown = " ".join(shlex.quote(a) for a in ["python"] + argv[1:])
    if args.dry_run:
        print(shown)
        return 0
    if "://" not in args.port and not os.path.exists(args.port):
        raise CliError(f"no board at {args.port}: no such serial port")
    say(f"running: {shown}", args.quiet)
    try:
        rc = subprocess.call(argv)
    except OSError as e:
        raise CliError(f"cannot run esptool: {e}") from None
    if rc != 0:
        raise CliError(f"esptool failed with exit status {rc} (its output above says why)")
    return 0


# ---- emulated firmware image -------------------------------------------------------------------

def install_firmware(args):
    spec = board_spec(args)
    if args.port:
        raise CliError("--firmware with --port: writing firmware over a serial REPL is not possible; "
                       "use --esp32 for ESP32 boards, or your board's own bootloader tool")
    if not spec.emulated:
        raise CliError(f"{spec.name} is not an emulated board; build it with `{spec.build_command}`")
    data = read_file(args.firmware, "firmware")
    if data[:4] != b"\x7fELF":
        raise CliError(f"{args.firmware}: not an ELF file (emulated boards boot ELF images)")
    machine = int.from_bytes(data[18:20], "little") if len(data) > 20 else -1
    want = ELF_MACHINES.get(spec.qemu.get("binary"))
    if want and machine != want[0]:
        raise CliError(f"{args.firmware}: ELF machine {machine} is not {want[1]} ({want[0]}), "
                       f"which {spec.name} ({spec.core}) needs")
    dest = spec.firmware_path
    if args.dry_run:
        print(f"would install {args.firmware} ({len(data)} bytes) as {dest}")
        return 0
    os.makedirs(dest.parent, exist_ok=True)
    tmp = str(dest) + ".micronn-tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    with open(tmp, "rb") as f:
        if hashlib.sha256(f.read()).digest() != hashlib.sha256(data).digest():
            os.remove(tmp)
            raise CliError(f"{dest}: written data does not verify; nothing installed")
    shutil.copymode(args.firmware, tmp)
    os.replace(tmp, dest)
    say(f"installed {args.firmware} as {dest} (sha256 {hashlib.sha256(data).hexdigest()[:16]}...)", args.quiet)
    return 0


# ---- files -------------------------------------------------------------------------------------

def copy_files(args):
    for f in args.files:
        if not os.path.isfile(f):
            raise CliError(f"{f}: no such file")
    spec = board_spec(args)
    if args.dry_run:
        for f in args.files:
            print(f"would copy {f} -> {_remote(args, f)} on {args.port or spec.name}")
        return 0
    board = open_target(args, spec)
    try:
        if args.dest:
            board.exec(f"import os\ntry:\n os.mkdir({args.dest.strip('/')!r})\nexcept OSError:\n pass",
                       timeout=args.timeout)
        files = [(f, _remote(args, f), read_file(f)) for f in args.files]
        _check_fits(board, files)
        for f, remote, data in files:
            put_verified(board, data, remote, args, label=f"copy {os.path.basename(f)}",
                         firmware_hint=_hint(board, f), force=args.force)
    finally:
        board.close()
    return 0


def flash_romfs(args):
    from . import romfs
    from .board import BoardError, TransferError
    from .cli_common import Progress
    for f in args.files:
        if not os.path.isfile(f):
            raise CliError(f"{f}: no such file")
    if args.dest:
        raise CliError("--dest does not apply to --romfs (files go to /rom)", code=2)
    try:
        image = romfs.build_from_paths(args.files)
    except ValueError as e:
        raise CliError(f"cannot build the ROMFS image: {e}") from None
    spec = board_spec(args)
    if args.dry_run:
        print(f"would write a {len(image)}-byte ROMFS image ({', '.join(os.path.basename(f) for f in args.files)}) "
              f"to {args.port or spec.name}")
        return 0
    board = open_target(args, spec)
    try:
        size = board.romfs_size()
        if not size:
            raise CliError(f"{board.name}: this firmware has no ROMFS region (vfs.rom_ioctl)")
        if len(image) > size:
            raise CliError(f"{board.name}: the ROMFS image is {len(image)} bytes, the region holds {size}")
        digest = board.romfs_deploy(image, progress=Progress("romfs", args.quiet), timeout=args.timeout)
    except TransferError as e:
        raise CliError(f"writing ROMFS to {board.name} failed: {e}") from None
    except BoardError as e:
        raise CliError(f"{board.name}: {e}") from None
    finally:
        board.close()
    for f in args.files:
        say(f"/rom/{os.path.basename(f)}: {os.path.getsize(f)} bytes", args.quiet)
    say(f"ROMFS: {len(image)} of {size} bytes written, sha256 {digest[:16]}... verified on the board",
        args.quiet)
    return 0


def _hint(board, f):
    return model_firmware_hint(board, f) if f.endswith((".tflite", ".bin")) else None


def _check_fits(board, files):
    """Refuse the whole copy, before writing anything, when the files do not all fit."""
    from .board import space_needed
    bsize, free = board.free_space(files[0][1])
    need = sum(space_needed(len(data), bsize) for _, _, data in files)
    if need <= free:
        return
    if len(files) == 1:
        f, _, data = files[0]
        raise CliError(no_space_message(board, os.path.basename(f), len(data), free, _hint(board, f)))
    total = sum(len(data) for _, _, data in files)
    big = [f for f, _, _ in files if f.endswith((".tflite", ".bin"))]
    hint = (f"build models into the firmware instead: make firmware BOARD="
            f"{board.spec.name if board.spec else '<BOARD>'} MODELS=\"{' '.join(os.path.abspath(f) for f in big)}\""
            if big else None)
    raise CliError(no_space_message(board, f"{len(files)} files", total, free, hint, plural=True))


def _remote(args, f):
    base = os.path.basename(f)
    d = args.dest.strip("/")
    return f"{d}/{base}" if d else base


def run(args):
    if args.esp32:
        return flash_esp32(args)
    if args.model or args.partitions or args.model_offset is not None:
        raise CliError("--model/--model-offset/--partitions belong to --esp32 flashing; to copy a model "
                       "to a board's filesystem give it as FILE", code=2)
    if args.firmware and args.files:
        raise CliError("give either --firmware (install an image) or FILEs (copy to a board), not both", code=2)
    if args.romfs:
        if args.firmware or not args.files:
            raise CliError("--romfs takes FILEs (and no --firmware)", code=2)
        return flash_romfs(args)
    if args.firmware:
        return install_firmware(args)
    if args.files:
        return copy_files(args)
    raise CliError("nothing to do: give --firmware IMAGE, FILEs to copy, or --esp32 (see micronn flash --help)",
                   code=2)
