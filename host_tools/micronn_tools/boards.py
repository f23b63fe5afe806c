"""Board descriptors, read from ``boards/*/board.json``.

Every piece of host code (tests, the ``micronn`` CLI, the QEMU launcher) learns what a board is
only through this module, so adding a board means adding one directory with a ``board.json`` and
nothing else on the host side.

A ``board.json`` looks like::

    {"name": "MPS2_AN386", "core": "Cortex-M4F", "arch": "armv7e-m",
     "ram_bytes": 4194304, "flash_bytes": 4194304, "fs_bytes": 1048576, "heap_bytes": 1048576,
     "emulated_machine": "mps2-an386", "real_counterpart": "...",
     "qemu": {"binary": "qemu-system-arm", "args": ["-machine", "mps2-an386"]},
     "firmware": "firmware.elf", "cpu_hz": 25000000, "instructions_per_tick": 40,
     "fault_address": "0x...", "default": true}

``"qemu": null`` marks a board that is not emulated (``UNIX``: the firmware is a host executable).

``"qemu": {..., "storage": {"size": "16M"}}`` says that QEMU's machine RAM of that size holds the
board's non-volatile regions (littlefs, ROMFS): the launcher backs it with a file, the board's
*storage image*, so files survive a restart of the emulator as they survive a power cycle of
flash. ``"storage": {"region": ["0x20020000", "64K"]}`` is for machines without such RAM: the
launcher writes the image into that memory before the board runs and reads it back when it stops
QEMU (through QEMU's gdbstub), so files survive a clean stop (not a SIGKILL of the launcher). ``"romfs_bytes"`` is the size of the board's ROMFS region (0: none).

Environment variables for development and tests of the host tools themselves:
``MICRONN_BOARDS_DIR`` (where the ``board.json`` directories are, default ``<repo>/boards``),
``MICRONN_BUILD_DIR`` (where firmware is built, default ``<repo>/build``) and
``MICRONN_STORAGE_DIR`` (where storage images are, default ``build/<board>/``; the tests point
it at a fresh directory per session so no test sees files left by an earlier run).
"""
import json
import re
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from . import repo_root

#: QEMU arguments every emulated board gets after its own ``qemu.args``. ``-icount`` with
#: ``shift=0`` makes the guest clock advance 1 ns per executed instruction, which is what makes
#: ``time.ticks_cpu()`` a deterministic instruction counter (see PLATFORM.md).
ICOUNT_ARGS = ["-icount", "shift=0,align=off,sleep=off"]
COMMON_QEMU_ARGS = ["-nographic", "-monitor", "null"]

_REQUIRED = ("name", "firmware")
_INT_FIELDS = ("ram_bytes", "flash_bytes", "fs_bytes", "heap_bytes", "cpu_hz", "romfs_bytes")
_SIZE_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class BoardConfigError(Exception):
    """A board is unknown or its board.json is malformed."""


class FirmwareMissing(BoardConfigError):
    """The board's firmware has not been built yet; the message says how to build it."""


def boards_dir() -> Path:
    return Path(os.environ.get("MICRONN_BOARDS_DIR") or Path(repo_root()) / "boards")


def build_dir() -> Path:
    return Path(os.environ.get("MICRONN_BUILD_DIR") or Path(repo_root()) / "build").absolute()


def storage_dir() -> Optional[Path]:
    d = os.environ.get("MICRONN_STORAGE_DIR")
    return Path(d) if d else None


def _parse_size(value, what):
    """QEMU-style sizes: 16M, 2G, or a plain number of bytes."""
    text = str(value).strip().upper()
    try:
        if text[-1:] in _SIZE_SUFFIX:
            return int(text[:-1]) * _SIZE_SUFFIX[text[-1]]
        return int(text, 0)
    except ValueError:
        raise BoardConfigError(f"{what}: not a size: {value!r}") from None


def _parse_int(value, what):
    """Accept ints and "0x..."/decimal strings (JSON has no hex literals)."""
    if value is None or isinstance(value, int):
        return value
    try:
        return int(str(value), 0)
    except ValueError:
        raise BoardConfigError(f"{what}: not an integer: {value!r}") from None


@dataclass(frozen=True)
class BoardSpec:
    """What one ``board.json`` says about a board (immutable)."""

    name: str
    directory: Path
    firmware: str
    core: Optional[str] = None
    arch: Optional[str] = None
    ram_bytes: Optional[int] = None
    flash_bytes: Optional[int] = None
    fs_bytes: Optional[int] = None
    heap_bytes: Optional[int] = None
    emulated_machine: Optional[str] = None
    real_counterpart: Optional[str] = None
    qemu: Optional[dict] = None
    cpu_hz: Optional[int] = None
    romfs_bytes: Optional[int] = None
    instructions_per_tick: Optional[float] = None
    fault_address: Optional[int] = None
    default: bool = False
    raw: Dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def emulated(self) -> bool:
        """True when the board boots under QEMU (``"qemu"`` is not null)."""
        return self.qemu is not None

    @property
    def firmware_path(self) -> Path:
        """``build/<name>/<firmware>``: where ``make firmware BOARD=<name>`` puts the image."""
        return build_dir() / self.name / self.firmware

    @property
    def storage_region(self):
        """``(address, size)`` of the memory the launcher saves to the storage image when QEMU
        stops and writes back before the board runs (``qemu.storage.region``), for machines
        whose RAM cannot be file-backed; None otherwise."""
        st = (self.qemu or {}).get("storage") or {}
        if "region" not in st:
            return None
        addr, size = st["region"]
        return (_parse_int(addr, f"{self.name}: qemu.storage.region"),
                _parse_size(size, f"{self.name}: qemu.storage.region"))

    @property
    def storage_bytes(self) -> Optional[int]:
        """Size of the storage image (None: the board's storage is volatile)."""
        st = (self.qemu or {}).get("storage")
        if not st:
            return None
        if "region" in st:
            return self.storage_region[1]
        return _parse_size(st["size"], f"{self.name}: qemu.storage.size")

    @property
    def storage_path(self) -> Optional[Path]:
        """The storage image QEMU maps as this board's non-volatile memory: ``build/<name>/
        storage.img``, or ``$MICRONN_STORAGE_DIR/<name>.img`` (None: the board has none)."""
        if self.storage_bytes is None:
            return None
        d = storage_dir()
        return d / f"{self.name}.img" if d else build_dir() / self.name / "storage.img"

    def _make_var(self, var):
        """A variable of the board's mpconfigboard.mk (where the port build reads it), or None."""
        try:
            text = (self.directory / "mpconfigboard.mk").read_text()
        except OSError:
            return None
        m = re.search(rf"^{var}\s*\??=\s*(.*?)\s*$", text, re.M)
        return m.group(1) if m else None

    @property
    def uart_driver(self) -> Optional[str]:
        """The console UART driver the port links (UART_DRIVER, e.g. ``uart_cmsdk``)."""
        return self._make_var("UART_DRIVER")

    @property
    def kernel_backends(self) -> Optional[str]:
        """The optimized kernel backends the firmware links (MICRONN_KERNELS, e.g. ``dsp generic``)."""
        return self._make_var("MICRONN_KERNELS")

    @property
    def build_command(self) -> str:
        return f"make firmware BOARD={self.name}"

    def require_firmware(self) -> Path:
        """The firmware path, or FirmwareMissing telling the user the build command."""
        path = self.firmware_path
        if not path.is_file():
            raise FirmwareMissing(
                f"{self.name}: firmware {path} does not exist; build it with "
                f"`{self.build_command}`")
        return path

    def qemu_argv(self, serial: str = "pty", firmware=None, extra=(), storage=None) -> List[str]:
        """The full QEMU command line for this board.

        ``serial`` is a QEMU -serial backend (``pty``, ``mon:stdio``, ``tcp:...``). With
        ``mon:stdio`` the ``-monitor null`` is left out so QEMU's Ctrl-A escapes work.
        ``storage``: path of the storage image backing the machine RAM (shared mapping: every
        write the board makes lands in the file); None leaves QEMU's RAM volatile.
        """
        if not self.emulated:
            raise BoardConfigError(f"{self.name} is not an emulated board (\"qemu\": null)")
        binary = self.qemu.get("binary")
        if not binary:
            raise BoardConfigError(f"{self.name}: board.json qemu.binary is missing")
        common = ["-nographic"] if serial.startswith("mon:") else list(COMMON_QEMU_ARGS)
        mem = []
        if storage is not None and self.storage_region is None:
            if self.storage_bytes is None:
                raise BoardConfigError(f"{self.name}: board.json has no qemu.storage")
            path = str(storage).replace(",", ",,")  # QEMU's option syntax escapes commas
            mem = ["-object", f"memory-backend-file,id=mn-storage,size={self.storage_bytes},"
                              f"mem-path={path},share=on", "-machine", "memory-backend=mn-storage"]
        return ([binary] + list(self.qemu.get("args", [])) + mem + common + ["-serial", serial]
                + ICOUNT_ARGS + ["-kernel", str(firmware or self.firmware_path)] + list(extra))

    def instructions(self, ticks: int) -> Optional[int]:
        """Convert a ``time.ticks_cpu()`` difference into executed instructions (under -icount)."""
        if self.instructions_per_tick is None:
            return None
        return round(ticks * self.instructions_per_tick)


def _from_json(path: Path) -> BoardSpec:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BoardConfigError(f"{path}: cannot read board.json: {e}") from None
    if not isinstance(data, dict):
        raise BoardConfigError(f"{path}: board.json must hold a JSON object")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise BoardConfigError(f"{path}: missing key(s) {', '.join(missing)}")
    if data["name"] != path.parent.name:
        raise BoardConfigError(
            f"{path}: name {data['name']!r} differs from its directory {path.parent.name!r}")
    qemu = data.get("qemu")
    if qemu is not None and (not isinstance(qemu, dict) or "binary" not in qemu):
        raise BoardConfigError(f"{path}: \"qemu\" must be null or an object with \"binary\"")
    kwargs = {k: _parse_int(data.get(k), f"{path}: {k}") for k in _INT_FIELDS}
    ipt = data.get("instructions_per_tick")  # 1e9 / cpu_hz under -icount: 31.25 at 32 MHz
    if ipt is not None and not isinstance(ipt, (int, float)):
        raise BoardConfigError(f"{path}: instructions_per_tick must be a number, not {ipt!r}")
    kwargs["instructions_per_tick"] = ipt
    return BoardSpec(
        name=data["name"], directory=path.parent, firmware=data["firmware"],
        core=data.get("core"), arch=data.get("arch"),
        emulated_machine=data.get("emulated_machine"),
        real_counterpart=data.get("real_counterpart"), qemu=qemu,
        fault_address=_parse_int(data.get("fault_address"), f"{path}: fault_address"),
        default=bool(data.get("default", False)), raw=data, **kwargs)


def all_boards() -> List[BoardSpec]:
    """Every board with a board.json, sorted by name."""
    root = boards_dir()
    return [_from_json(p) for p in sorted(root.glob("*/board.json"))]


def emulated_boards() -> List[BoardSpec]:
    return [b for b in all_boards() if b.emulated]


def names() -> List[str]:
    return [b.name for b in all_boards()]


def get(name: str) -> BoardSpec:
    """The board called ``name`` (case-sensitive, as in ``boards/<name>/``)."""
    path = boards_dir() / name / "board.json"
    if not path.is_file():
        known = ", ".join(names()) or "none"
        raise BoardConfigError(f"unknown board {name!r} (known boards: {known})")
    return _from_json(path)


def default() -> BoardSpec:
    """The board marked ``"default": true`` (exactly one should be)."""
    marked = [b for b in all_boards() if b.default]
    if len(marked) == 1:
        return marked[0]
    if not marked:
        raise BoardConfigError(f"no board in {boards_dir()} has \"default\": true")
    raise BoardConfigError("more than one default board: " + ", ".join(b.name for b in marked))
