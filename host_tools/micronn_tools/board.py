"""Connections to a running MicroPython board: run code, move files, reset.

One interface, three kinds of board:

* ``SerialBoard(url)``: anything pyserial opens (``/dev/pts/N``, ``/dev/ttyACM0``,
  ``socket://host:port``, ``rfc2217://host:port``). Uses mpremote's ``SerialTransport`` for the
  raw-REPL protocol (raw-paste flow control included) rather than a protocol of our own; we only
  add what tests and the ``micronn`` CLI need on top: an overall timeout that never hangs, crash
  detection, recovery, and verified file transfers.
* ``QemuBoard(spec)``: a ``qemu.QemuProcess`` plus a ``SerialBoard`` on its pty; a hard reset
  restarts the emulator.
* ``UnixBoard(spec)``: MicroPython's unix port (``boards/UNIX``), which has no raw REPL: each
  ``exec`` runs a fresh ``micropython`` process on a temporary script (so, unlike serial boards,
  globals do NOT survive between ``exec`` calls), and the "board filesystem" is a temporary
  directory that is the process's working directory.

``open_board(name=None, port=None)`` picks the right one.

Errors (all subclasses of ``BoardError``): ``BoardExecError`` (the code raised; carries the device
traceback), ``BoardTimeout`` (the timeout passed; the board was interrupted and is usable again),
``BoardCrash`` (the board faulted/reset or the link died during the call), ``TransferError``
(a put/get could not be completed or verified). Remote paths should be relative (or start with
``/``) so that the same test works on every kind of board.
"""
import ast
import base64
import contextlib
import hashlib
import io
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from . import boards

try:  # mpremote and pyserial are only needed for serial/QEMU boards
    import serial
    from mpremote.transport import TransportError
    from mpremote.transport_serial import SerialTransport
except ImportError:  # pragma: no cover - reported when a serial board is opened
    serial = SerialTransport = None
    TransportError = Exception

try:  # pyserial's POSIX backend lets termios.error (not an OSError) out of a dead pty or tty
    import termios
    _TERMIOS_ERRORS = (termios.error,)
except ImportError:  # pragma: no cover - Windows
    _TERMIOS_ERRORS = ()

#: What a serial link raises when the board or its QEMU goes away (every except clause of the
#: serial code uses it, so none of them lets a link failure escape as a bare OS error).
LINK_ERRORS = (OSError, *_TERMIOS_ERRORS) + ((serial.SerialException,) if serial else ())

DEFAULT_TIMEOUT = 30.0


class BoardError(Exception):
    """Base class of everything that can go wrong talking to a board."""


class BoardExecError(BoardError):
    """The code raised on the board. ``traceback`` is the device's traceback text,
    ``exc_type`` the exception's name (e.g. ``"ValueError"``), ``output`` what it printed first."""

    def __init__(self, output, traceback, board_name="board"):
        self.output = output
        self.traceback = traceback
        last = traceback.strip().splitlines()[-1] if traceback.strip() else ""
        self.exc_type = last.split(":", 1)[0].strip() if last else ""
        msg = f"{board_name} raised {last or 'an exception'}\n--- device traceback ---\n{traceback.rstrip()}"
        if output:
            msg += f"\n--- device output before it ---\n{output.rstrip()}"
        super().__init__(msg)


class BoardTimeout(BoardError):
    """The timeout passed before the code finished. ``output`` is what it printed so far;
    ``recovered`` says how the board was made usable again (``"interrupt"`` = Ctrl-C,
    ``"hard reset"``, or ``None`` when it could not be recovered)."""

    def __init__(self, msg, output="", recovered=None):
        self.output = output
        self.recovered = recovered
        super().__init__(f"{msg} (recovered by: {recovered or 'nothing; board needs a reset'})")


class BoardCrash(BoardError):
    """The board faulted, reset, or its link went away while running code. ``output`` has
    what it printed (e.g. a ``FATAL`` line and the boot banner)."""

    def __init__(self, msg, output=""):
        self.output = output
        super().__init__(f"{msg}\n--- board output ---\n{output.rstrip()}" if output else msg)


class TransferError(BoardError):
    """A put/get failed or the board's sha256 did not match the host's."""


class StreamStallError(TransferError):
    """A streamed put to an emulated board stopped: the board took no byte for the timeout."""


class NoSpaceError(TransferError):
    """The file does not fit the board's filesystem. ``size`` bytes to write, ``free`` bytes
    free (os.statvfs on the board), ``needed`` the estimate with the filesystem's overhead.
    Raised before anything is written when the board reports too little space, or when the
    board ran out of space (ENOSPC) during the transfer."""

    def __init__(self, msg, size, free, needed):
        self.size, self.free, self.needed = size, free, needed
        super().__init__(msg)


def _text(b):
    return b.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _check_remote(remote):
    if not remote or not isinstance(remote, str):
        raise ValueError(f"remote path must be a non-empty str, not {remote!r}")
    return remote


#: put() writes ``remote + TMP_SUFFIX`` and renames it only once its sha256 checked out, so the
#: final name only ever holds a complete, verified file.
TMP_SUFFIX = ".mn-tmp"


def _remote_dir(remote):
    d = remote.rsplit("/", 1)[0] if "/" in remote.strip("/") else ""
    return d or ("/" if remote.startswith("/") else ".")


def space_needed(size, block_size):
    """Bytes of free space a ``size``-byte file needs on a filesystem with ``block_size`` blocks:
    whole blocks, minus littlefs's per-block skip-list pointers, plus two blocks of slack for
    metadata (the old version of the file stays until the verified copy replaces it)."""
    bs = max(block_size, 64)
    return (-(-size // (bs - 16)) + 2) * bs


# Device-side helper for put/get/sha256 (_mn_board.py: one class, the REPL global `_mn`). The
# test firmware freezes it; elsewhere it is pasted once per connection and again after any reset.
_HELPER = (Path(__file__).resolve().parent / "_mn_board.py").read_text()
_HELPER_V = re.compile(r"^    V = '([0-9a-f]*)'$", re.M)


def helper_id(text=_HELPER):
    """The helper's version: sha256 (12 hex digits) of its source with V's value left empty."""
    return hashlib.sha256(_HELPER_V.sub("    V = ''", text, count=1).encode()).hexdigest()[:12]


# One exec after each reset: the frozen helper when the firmware has this version of it.
_HELPER_IMPORT = (f"try:\n from _mn_board import _mn\n if _mn.V != {helper_id()!r}:\n  raise ImportError\n"
                  "except ImportError:\n print('paste')")


#: Bytes the streamed put never sends as they are: ESC (the escape itself) and the REPL's control
#: characters Ctrl-A..Ctrl-E. Ctrl-C would interrupt the transfer; and when the board resets in
#: the middle, the data still on its way lands in the rebooted board's REPL, where a Ctrl-A/B/D/E
#: would switch modes or soft-reset it instead of being harmless junk on a line.
_STREAM_SPECIAL = b"\x1b\x01\x02\x03\x04\x05"


def _escape(data):
    """Stream encoding for _mn.recv: each byte of _STREAM_SPECIAL is sent as ESC followed by
    '@', 'A', ... (its index + 0x40). Every ESC in the result starts a pair and no pair's second
    byte is special, which is what lets the board decode any block with plain replaces."""
    for i, c in enumerate(_STREAM_SPECIAL):
        data = data.replace(bytes([c]), bytes([0x1b, 0x40 + i]))
    return data


class Board:
    """Common interface. Subclasses implement ``exec``, ``_put_data``/``_get_data`` (the raw
    transfer; verification is done here), ``soft_reset``, ``hard_reset`` and ``close``."""

    spec = None  # boards.BoardSpec when known (emulated boards, or --port with --board)

    @property
    def name(self):
        return self.spec.name if self.spec else getattr(self, "url", "board")

    # -- code execution --------------------------------------------------------------------
    def exec(self, code, timeout=DEFAULT_TIMEOUT):
        """Run ``code`` (str or bytes) on the board and return what it printed (str, ``\\n``
        line ends). Raises BoardExecError (device traceback included), BoardTimeout, BoardCrash."""
        raise NotImplementedError

    def eval(self, expr, timeout=DEFAULT_TIMEOUT, pre=""):
        """Evaluate a Python expression on the board and return its value (must have a literal
        repr: numbers, str, bytes, tuples, lists, dicts, None, bools). ``pre`` is code run first
        in the same exec (e.g. imports: on UnixBoard nothing persists between calls)."""
        out = self.exec(f"{pre}\nprint(repr({expr}))", timeout=timeout)
        try:
            return ast.literal_eval(out.strip().splitlines()[-1])
        except (ValueError, SyntaxError, IndexError):
            raise BoardError(f"cannot parse the board's repr of {expr!r}: {out!r}") from None

    # -- files -----------------------------------------------------------------------------
    def sha256(self, remote, timeout=DEFAULT_TIMEOUT):
        """``(size, hexdigest)`` of a file, computed ON THE BOARD with hashlib.sha256."""
        self._ensure_helper()
        try:
            out = self.exec(f"_mn.sha({_check_remote(remote)!r})", timeout=timeout)
        except BoardExecError as e:
            raise TransferError(f"{self.name}: cannot hash {remote} on the board: {e}") from e
        size, digest = out.split()
        return int(size), digest

    def put(self, src, remote, progress=None, chunk_size=4096, timeout=DEFAULT_TIMEOUT,
            check_space=True, settle=False):
        """Write ``src`` (bytes-like, or a local file path) to ``remote`` on the board, atomically:
        first any handle an interrupted transfer left open is closed and its temporary file
        removed; the data goes to ``remote + TMP_SUFFIX``, whose sha256 is computed on the board;
        only a matching file is renamed to ``remote``, which is then hashed again. So ``remote``
        is never a partial file: it is absent, its previous version, or the verified new one.
        ``settle=True`` also soft-resets the board (every file handle finalised, buffers
        flushed) and checks ``remote`` once more. ``check_space`` refuses, before writing
        anything, a file larger than the free space (NoSpaceError). ``progress(done, total)`` is
        called after each chunk. Returns the hex digest; raises TransferError on any failure."""
        data = bytes(src) if isinstance(src, (bytes, bytearray, memoryview)) else Path(src).read_bytes()
        _check_remote(remote)
        want = hashlib.sha256(data).hexdigest()
        tmp = remote + TMP_SUFFIX
        self._put_begin(tmp, remote, len(data), check_space)
        try:
            self._put_data(data, tmp, progress, chunk_size, timeout)
            self._put_commit(tmp, remote, data, want, timeout)
        except BoardExecError as e:
            self._remove_quietly(tmp)
            raise TransferError(f"{self.name}: put {remote}: {e}") from e
        except TransferError:
            self._remove_quietly(tmp)
            raise
        if settle:
            self.soft_reset()
            self._check_hash(remote, data, want, timeout, "file")
        return want

    def _put_begin(self, tmp, remote, size, check_space):
        """Before the data: stale leftovers removed (_discard_stale), the space checked."""
        self._discard_stale(tmp)
        if check_space:
            self.check_space(remote, size)

    def _put_commit(self, tmp, remote, data, want, timeout):
        """After the data: ``tmp`` verified, renamed to ``remote``, which is verified again."""
        self._check_hash(tmp, data, want, timeout, "temporary file")
        self._rename(tmp, remote)
        self._check_hash(remote, data, want, timeout, "file")

    def _check_hash(self, remote, data, want, timeout, what, got=None):
        size, got = got or self.sha256(remote, timeout=max(timeout, len(data) / 20000))
        if size != len(data) or got != want:
            raise TransferError(
                f"{self.name}: put {remote}: board has {size} bytes sha256 {got}, host sent "
                f"{len(data)} bytes sha256 {want} ({what} does not verify)")

    def free_space(self, remote="."):
        """``(block_size, free_bytes)`` of the board filesystem holding ``remote``."""
        d = _remote_dir(remote)
        return tuple(self.eval("(_s[0], _s[0] * _s[4])", pre=f"import os\n_s = os.statvfs({d!r})"))

    def check_space(self, remote, size):
        """NoSpaceError unless a ``size``-byte file fits next to what ``remote``'s filesystem
        already holds (estimate: space_needed)."""
        bsize, free = self.free_space(remote)
        need = space_needed(size, bsize)
        if need > free:
            raise NoSpaceError(
                f"{self.name}: {remote} ({size} bytes) does not fit: the filesystem has {free} "
                f"bytes free, the file needs about {need} (ENOSPC)", size, free, need)

    def _discard_stale(self, tmp):
        # this transfer's own leftover, then those of interrupted copies into the same directory
        # (and one level below) that a dead link or a killed host left
        self._ensure_helper()
        self.exec(f"_mn.clean({tmp!r}, {_remote_dir(tmp)!r})", timeout=30)

    def _rename(self, tmp, remote):
        self.exec(f"_mn.mv({tmp!r}, {remote!r})", timeout=30)

    def get(self, remote, progress=None, chunk_size=4096, timeout=None):
        """Read ``remote`` from the board; verified against a sha256 computed on the board."""
        _check_remote(remote)
        size, want = self.sha256(remote, timeout=timeout or 120)
        data = self._get_data(remote, size, progress, chunk_size,
                              timeout or max(DEFAULT_TIMEOUT, size / 5000))
        got = hashlib.sha256(data).hexdigest()
        if len(data) != size or got != want:
            raise TransferError(
                f"{self.name}: get {remote}: received {len(data)} bytes sha256 {got}, board has "
                f"{size} bytes sha256 {want}")
        return bytes(data)

    def remove(self, remote):
        self.exec(f"import os\nos.remove({_check_remote(remote)!r})")

    # -- ROMFS -----------------------------------------------------------------------------
    def romfs_size(self):
        """Bytes of the board's ROMFS region (``vfs.rom_ioctl``), 0 when it has none."""
        return self.eval("len(vfs.rom_ioctl(2, 0)) if hasattr(vfs, 'rom_ioctl') and "
                         "vfs.rom_ioctl(1) > 0 else 0", pre="import vfs")

    def romfs_deploy(self, image, progress=None, timeout=DEFAULT_TIMEOUT):
        """Write a ROMFS ``image`` (romfs.build_image) to the board's ROMFS region and mount it
        at /rom, as ``mpremote romfs deploy`` does, then check its sha256 computed on the board.
        The board is soft-reset first: a Model still referencing the old image would otherwise
        see its bytes change under it. Returns the hex digest; TransferError on any failure."""
        image = bytes(image)
        image += bytes(-len(image) % 16)  # whole flash words on boards with a minimum write
        size = self.romfs_size()
        if not size:
            raise TransferError(f"{self.name}: this firmware has no ROMFS region")
        if len(image) > size:
            raise NoSpaceError(f"{self.name}: ROMFS image of {len(image)} bytes does not fit "
                               f"the {size}-byte ROMFS region", len(image), size, len(image))
        self.soft_reset()
        self._ensure_helper()
        e = self.eval("_e", pre="import vfs\ntry:\n vfs.umount('/rom')\nexcept OSError:\n pass\n"
                                f"_e = vfs.rom_ioctl(3, 0, {len(image)})")
        if e < 0:
            raise TransferError(f"{self.name}: ROMFS erase failed (rom_ioctl error {e})")
        try:
            self._rom_write(image, progress, timeout)
        except BoardExecError as e:
            raise TransferError(f"{self.name}: writing ROMFS failed: {e}") from e
        self.exec("import vfs\nvfs.rom_ioctl(5, 0)\nvfs.mount(vfs.VfsRom(vfs.rom_ioctl(2, 0)), '/rom')")
        want = hashlib.sha256(image).hexdigest()
        got = self.eval(f"''.join('%02x' % x for x in hashlib.sha256("
                        f"memoryview(vfs.rom_ioctl(2, 0))[:{len(image)}]).digest())",
                        pre="import hashlib, vfs")
        if got != want:
            raise TransferError(f"{self.name}: ROMFS holds sha256 {got}, host sent {want}")
        return want

    def _rom_write(self, image, progress, timeout):
        """Acknowledged chunks (one exec each): safe on any serial link."""
        chunk = 4096
        for off in range(0, len(image), chunk):
            lit = base64.b64encode(image[off:off + chunk])
            self.exec(f"import vfs\n_e = vfs.rom_ioctl(4, 0, {off}, _mn.a2b({lit!r}))\n"
                      "if _e < 0:\n raise OSError(-_e)", timeout=timeout)
            if progress:
                progress(min(off + chunk, len(image)), len(image))

    def _remove_quietly(self, remote):
        try:
            self.exec(f"import os\ntry:\n os.remove({remote!r})\nexcept OSError:\n pass",
                      timeout=10)
        except BoardError:
            pass

    # -- resets ----------------------------------------------------------------------------
    def soft_reset(self):
        raise NotImplementedError

    def hard_reset(self):
        raise NotImplementedError

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


#: Seconds mpremote may wait for one protocol byte. An emulated board on a loaded 2-core host was
#: seen to take over 5 s to acknowledge a raw-paste window (the old value): that desynchronised
#: the protocol ("unexpected read during raw paste: b''"). A dead board is still caught by the
#: overall timeout of each call.
PROTOCOL_READ_TIMEOUT = 30.0


class _PushbackSerial:
    """Wraps the pyserial object inside mpremote's transport so bytes we read in bulk past the
    end of a reply (typically the raw REPL's next ``>`` prompt) can be handed back to it."""

    def __init__(self, ser):
        self._ser = ser
        self._back = bytearray()

    def unread(self, data):
        self._back[:0] = data

    @property
    def in_waiting(self):
        return len(self._back) + self._ser.in_waiting

    def inWaiting(self):
        return self.in_waiting

    def read(self, n=1):
        if not self._back:
            return self._ser.read(n)
        data = bytes(self._back[:n])
        del self._back[:n]
        if len(data) < n:  # keep pyserial's semantics: wait (up to its timeout) for the rest
            data += self._ser.read(n - len(data))
        return data

    def reset_input_buffer(self):
        self._back.clear()
        self._ser.reset_input_buffer()

    def wait_readable(self, timeout):
        """Return when a byte can be read or ``timeout`` seconds passed: at once on a link with a
        file descriptor (ptys, tty devices), else after a short poll interval. Polling with
        mpremote's fixed 10 ms sleeps made every raw-REPL exchange wait 10 ms or more."""
        if self._back or timeout <= 0:
            return
        try:
            fd = self._ser.fileno()
        except (AttributeError, ValueError, *LINK_ERRORS):
            fd = None
        if fd is None:
            time.sleep(min(timeout, 0.002))
            return
        try:
            select.select([fd], [], [], timeout)
        except (OSError, ValueError):
            time.sleep(min(timeout, 0.002))

    def __getattr__(self, name):
        return getattr(self._ser, name)

    def __setattr__(self, name, value):
        if name in ("_ser", "_back"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._ser, name, value)


class SerialBoard(Board):
    """A board reached over a pyserial URL, spoken to through mpremote's raw REPL transport."""

    def __init__(self, url, spec=None, baudrate=115200, connect_timeout=10.0):
        if SerialTransport is None:
            raise BoardError("mpremote/pyserial are not installed (run `make setup`)")
        self.url = str(url)
        self.spec = spec
        self.baudrate = baudrate
        self.connect_timeout = connect_timeout
        self.transport = None
        self.in_raw = False
        self.helper_loaded = False
        #: True when a call was interrupted mid-protocol (KeyboardInterrupt, pytest-timeout, an
        #: unrecovered timeout): the link state is unknown and the next call resynchronises.
        self.dirty = False
        self._open()

    # -- link ------------------------------------------------------------------------------
    def _open(self, wait=0):
        deadline = time.monotonic() + max(wait, 0)
        while True:
            try:
                # The serial timeout bounds mpremote's fixed-size reads (raw-paste window
                # acknowledgements among them); our own reads poll with their own deadlines.
                self.transport = SerialTransport(self.url, baudrate=self.baudrate, timeout=PROTOCOL_READ_TIMEOUT)
                break
            except (TransportError, *LINK_ERRORS) as e:
                if time.monotonic() >= deadline:
                    raise BoardError(f"cannot open {self.url}: {e}") from None
                time.sleep(0.25)
        # mpremote blocks in read(1) on ptys; polling in_waiting keeps every timeout honoured.
        self.transport.is_pty = False
        self.transport.serial = _PushbackSerial(self.transport.serial)
        self.transport.read_until = self._transport_read_until
        self.in_raw = False
        self.helper_loaded = False

    def close(self):
        if self.transport is not None:
            try:
                if self.in_raw:
                    self.transport.exit_raw_repl()
                self.transport.close()
            except Exception:
                pass
            self.transport = None
        self.in_raw = False

    @property
    def _ser(self):
        return self.transport.serial

    def _transport_read_until(self, min_num_bytes, ending, timeout=10, data_consumer=None,
                              timeout_overall=None):
        """mpremote's SerialTransport.read_until (same arguments and result: the data up to and
        including ``ending``, or what came before a timeout), waiting for input with
        wait_readable instead of 10 ms sleeps."""
        ser = self._ser
        data = b""
        begin_overall = begin_char = time.monotonic()
        while not data.endswith(ending):
            n = ser.in_waiting
            if n:
                # byte by byte: what follows ``ending`` stays unread for the next call
                new = ser.read(1)
                data = new if data_consumer else data + new
                if data_consumer:
                    data_consumer(new)
                begin_char = time.monotonic()
                continue
            now = time.monotonic()
            limits = []
            if timeout is not None:
                limits.append(begin_char + timeout - now)
            if timeout_overall is not None:
                limits.append(begin_overall + timeout_overall - now)
            left = min(limits) if limits else 0.05
            if left <= 0:
                break
            ser.wait_readable(min(left, 0.05))
        return data

    def _read_available(self):
        try:
            n = self._ser.in_waiting
            return self._ser.read(n) if n else b""
        except LINK_ERRORS as e:
            self.dirty = True
            raise BoardCrash(f"{self.name}: serial link lost ({e})") from None

    def _enter_raw(self, timeout=None):
        """Get the board into the raw REPL (Ctrl-C, Ctrl-A), retrying while it boots, and check
        the link is in step (see _sync)."""
        last = None
        deadline = time.monotonic() + (timeout or self.connect_timeout)
        quiesce = self.dirty
        while True:
            try:
                if quiesce:
                    self._quiesce(deadline)
                with contextlib.redirect_stdout(io.StringIO()):  # mpremote prints on failure
                    self.transport.enter_raw_repl(soft_reset=False, timeout_overall=3)
                self._sync(min(10.0, max(1.0, deadline - time.monotonic())))
                self.in_raw, self.dirty, self.helper_loaded = True, False, False
                return
            except (TransportError, *LINK_ERRORS) as e:
                last = e
                quiesce = True
            if time.monotonic() >= deadline:
                raise BoardCrash(f"{self.name}: no raw REPL on {self.url} after "
                                 f"{timeout or self.connect_timeout:.0f} s ({last})")
            time.sleep(0.2)

    #: How long the board must stay silent before the link counts as drained (it echoes what it
    #: reads in the friendly REPL, so leftover input keeps it talking).
    QUIET_SECONDS = 0.3

    def _quiesce(self, deadline):
        """Drop what the host wrote but the board has not read yet (an interrupted transfer's
        data: on a pty this empties the board's side), then read until the board is quiet."""
        try:
            self._ser.reset_output_buffer()
        except (AttributeError, *LINK_ERRORS):
            pass
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            if self._read_available():
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= self.QUIET_SECONDS:
                return
            time.sleep(0.01)

    _sync_count = 0

    def _sync(self, timeout):
        """Prove the raw REPL is in step: run a numbered print and read up to its end.

        After a reset or an interrupted call the line can still carry answers to earlier requests
        (a second "raw REPL" banner, a late raw-paste ``R\x01``) or leftover input that would be
        prepended to the next code. Ctrl-C clears the board's pending line first; everything the
        board sends before this exchange's own reply is discarded, so the next call starts clean.
        Raises TransportError when the reply does not come (the caller retries)."""
        SerialBoard._sync_count += 1
        tag = b"mn-sync-%d-%d" % (os.getpid(), SerialBoard._sync_count)
        self._ser.write(b"\x03print('" + tag + b"')\x04")
        want = b"OK" + tag + b"\r\n\x04\x04>"
        buf = bytearray()
        deadline = time.monotonic() + timeout
        while want not in buf:
            chunk = self._read_available()
            if chunk:
                buf += chunk
            elif time.monotonic() >= deadline:
                raise TransportError(f"raw REPL out of step (no reply to a sync: {bytes(buf[-80:])!r})")
            else:
                self._ser.wait_readable(min(0.05, deadline - time.monotonic()))
        end = buf.index(want) + len(want)
        if end < len(buf):
            raise TransportError(f"raw REPL out of step (unexpected {bytes(buf[end:end + 40])!r})")
        # The prompt was consumed here; give it back for mpremote's next exec, which expects it.
        self._ser.unread(b">")
        self.transport.use_raw_paste = True

    def _ensure_raw(self):
        if self.transport is None:
            self._open()
        if not self.in_raw or self.dirty:
            self._enter_raw()

    def _ensure_helper(self):
        if not self.helper_loaded:
            if "paste" in self.exec(_HELPER_IMPORT, timeout=15):
                self.exec(_HELPER, timeout=15)
            self.helper_loaded = True

    # -- exec ------------------------------------------------------------------------------
    # A reboot shows up as the banner followed by the friendly prompt, which raw REPL never
    # prints during an exec (the prompt may be followed by the echo of input that was on its way,
    # e.g. an interrupted transfer's data); a FATAL line is what our port prints on a fault
    # before resetting.
    _BANNER = re.compile(rb"MicroPython \S+ on [^\n]*\n(?:[^\n]*\n)?>>> ")
    _FATAL = re.compile(rb"(?:^|\n)\s*FATAL")

    def _follow(self, timeout, on_data=None):
        """Read the two ``\\x04``-terminated parts (output, traceback) of a raw-REPL reply.

        Gives up at ``timeout`` (raising _PendingTimeout), or raises BoardCrash when the board
        prints its boot banner / a FATAL line instead of finishing. ``on_data`` receives the
        output in complete lines as it arrives (used by get() for progress)."""
        parts, buf, streamed = [], bytearray(), bytearray()
        deadline = time.monotonic() + timeout
        fatal_seen = False
        while len(parts) < 2:
            chunk = self._read_available()
            if not chunk:
                if time.monotonic() >= deadline:
                    out = _text(bytes(streamed) + (parts[0] if parts else bytes(buf)))
                    if fatal_seen:
                        self.in_raw, self.dirty = False, True
                        raise BoardCrash(f"{self.name}: board printed FATAL and did not "
                                         "come back", out)
                    raise _PendingTimeout(out)
                self._ser.wait_readable(min(0.05, deadline - time.monotonic()))
                continue
            buf += chunk
            while len(parts) < 2 and b"\x04" in buf:
                i = buf.index(b"\x04")
                if not parts and on_data:
                    on_data(bytes(buf[:i]))
                parts.append(bytes(streamed) + bytes(buf[:i]) if not parts else bytes(buf[:i]))
                del buf[:i + 1]
            if parts:
                if len(parts) == 2 and buf:
                    self._ser.unread(buf)  # the next prompt belongs to the next call
                continue
            if on_data and b"\n" in buf:
                i = buf.rindex(b"\n") + 1
                on_data(bytes(buf[:i]))
                streamed += buf[:i]
                del buf[:i]
            tail = bytes(streamed[-2048:]) + bytes(buf[-4096:])
            if self._BANNER.search(tail) or (fatal_seen and tail.endswith(b">>> ")):
                self.in_raw = False
                raise BoardCrash(f"{self.name}: board reset while running code",
                                 _text(bytes(streamed) + bytes(buf)))
            if not fatal_seen and self._FATAL.search(tail):
                fatal_seen = True  # give it a moment to reboot and print its banner
                deadline = min(deadline, time.monotonic() + 15)
        return parts[0], parts[1]

    def exec(self, code, timeout=DEFAULT_TIMEOUT, on_data=None):
        try:
            try:
                self._ensure_raw()
                self.transport.exec_raw_no_follow(code)
                out, err = self._follow(timeout, on_data)
            except (TransportError, *LINK_ERRORS) as e:
                self.dirty = True
                raise BoardCrash(f"{self.name}: raw REPL protocol failed: {e}") from None
        except _PendingTimeout as t:
            recovered = self._recover_after_timeout()
            raise BoardTimeout(f"{self.name}: code did not finish within {timeout} s",
                               t.output, recovered) from None
        except BoardCrash:
            self.helper_loaded = False
            raise
        except BaseException:
            # Interrupted mid-protocol (Ctrl-C, pytest-timeout): resync before the next call.
            self.dirty = True
            raise
        if err:
            raise BoardExecError(_text(out), _text(err), self.name)
        return _text(out)

    def _recover_after_timeout(self):
        """Interrupt the running code; fall back to a hard reset when it does not stop."""
        try:
            self._ser.write(b"\x03")
            time.sleep(0.05)
            self._ser.write(b"\x03")
            self._follow(3)  # the KeyboardInterrupt ends the exec normally: "\x04tb\x04"
            return "interrupt"
        except (_PendingTimeout, BoardCrash, *LINK_ERRORS):
            pass
        try:
            self.in_raw = False
            self._enter_raw(timeout=3)
            return "interrupt"
        except BoardError:
            pass
        try:
            self.hard_reset()
            return "hard reset"
        except BoardError:
            self.dirty = True
            return None

    def ping(self, timeout=5.0):
        """True when the board answers a trivial exec (used to check health after a failure);
        False too when the link itself is gone (QEMU died, the cable was pulled)."""
        try:
            return self.exec("print(1+1)", timeout=timeout).strip() == "2"
        except (BoardError, *LINK_ERRORS):
            self.dirty = True
            return False

    # -- transfers -------------------------------------------------------------------------
    def _put_begin(self, tmp, remote, size, check_space):
        # one exec: _mn.clean, then the filesystem's block size and free bytes
        self._ensure_helper()
        bsize, free = (int(v) for v in self.exec(
            f"_mn.prep({tmp!r}, {_remote_dir(tmp)!r})", timeout=30).split())
        if check_space and not bsize:   # no filesystem answered there: the usual error
            self.check_space(remote, size)
        need = space_needed(size, bsize)
        if check_space and need > free:
            raise NoSpaceError(
                f"{self.name}: {remote} ({size} bytes) does not fit: the filesystem has {free} "
                f"bytes free, the file needs about {need} (ENOSPC)", size, free, need)

    def _put_commit(self, tmp, remote, data, want, timeout):
        # one exec: the board hashes tmp, renames it only when it matches, and hashes remote
        lines = self.exec(f"_mn.commit({tmp!r}, {remote!r}, '{len(data)} {want}')",
                          timeout=max(timeout, len(data) / 10000)).split("\n")
        lines = [ln.split() for ln in lines if ln.strip()]
        try:
            first = (int(lines[0][0]), lines[0][1])
            final = (int(lines[1][0]), lines[1][1]) if len(lines) > 1 else None
        except (IndexError, ValueError):
            raise TransferError(f"{self.name}: put {remote}: cannot parse the board's hashes "
                                f"{lines!r}") from None
        self._check_hash(tmp, data, want, timeout, "temporary file", got=first)
        if final is None:
            raise TransferError(f"{self.name}: put {remote}: the board did not rename {tmp}")
        self._check_hash(remote, data, want, timeout, "file", got=final)

    def _put_data(self, data, remote, progress, chunk_size, timeout):
        self._ensure_helper()
        b64 = self.eval("_mn.a2b is not None")
        self.exec(f"_mn.open({remote!r})", timeout=timeout)
        done = 0
        try:
            for off in range(0, len(data), chunk_size):
                chunk = data[off:off + chunk_size]
                lit = f"_mn.a2b({base64.b64encode(chunk)!r})" if b64 else repr(chunk)
                self.exec(f"_mn.write({lit})", timeout=timeout)
                done += len(chunk)
                if progress:
                    progress(done, len(data))
            self.exec("_mn.close()", timeout=timeout)
        except BoardExecError as e:
            self._close_and_remove(remote)
            last = e.traceback.strip().splitlines()[-1] if e.traceback.strip() else ""
            self._raise_put_error(e, remote, len(data), f"after {done} of {len(data)} bytes", last)
        if progress and not data:
            progress(0, 0)

    def _close_and_remove(self, remote):
        try:
            self.exec("_mn.close()", timeout=10)
        except BoardError:
            pass
        self._remove_quietly(remote)

    def _raise_put_error(self, e, remote, size, when, last):
        if re.search(r"\b(28|ENOSPC)\b", last):
            try:
                bsize, free = self.free_space(remote)
            except BoardError:
                bsize, free = 0, -1
            raise NoSpaceError(
                f"{self.name}: {remote}: the filesystem filled up {when} ({last}); partial file "
                f"removed", size, free, space_needed(size, bsize)) from e
        raise TransferError(f"{self.name}: put {remote} failed {when}; partial file removed. "
                            f"{e}") from e

    def _get_data(self, remote, size, progress, chunk_size, timeout):
        self._ensure_helper()
        b64 = self.eval("_mn.b2a is not None")
        data = bytearray()

        def consume(lines):
            for line in lines.split(b"\n"):
                line = line.strip()
                if line:
                    data.extend(base64.b64decode(line) if b64 else ast.literal_eval(line.decode()))
            if progress:
                progress(len(data), size)

        try:
            self.exec(f"_mn.dump({remote!r}, {chunk_size})", timeout=timeout, on_data=consume)
        except BoardExecError as e:
            raise TransferError(f"{self.name}: get {remote} failed: {e}") from e
        return data

    # -- resets ----------------------------------------------------------------------------
    def soft_reset(self, timeout=10.0):
        """Ctrl-D in the raw REPL: MicroPython restarts its VM (heap and globals cleared)."""
        self._ensure_raw()
        try:
            self.transport.enter_raw_repl(soft_reset=True, timeout_overall=timeout)
        except (TransportError, *LINK_ERRORS) as e:
            self.dirty = True
            raise BoardCrash(f"{self.name}: soft reset failed: {e}") from None
        self.helper_loaded = False

    def hard_reset(self, timeout=None):
        """``machine.reset()``, then reconnect (USB ports may disappear for a while)."""
        timeout = timeout or self.connect_timeout
        try:
            self._ensure_raw()
            self.transport.exec_raw_no_follow("import machine\nmachine.reset()")
        except (BoardError, TransportError, *LINK_ERRORS):
            pass  # the board may be wedged; try reconnecting anyway
        self.close()
        time.sleep(0.5)
        self._open(wait=timeout)
        self._enter_raw()


class _PendingTimeout(Exception):
    """Internal: _follow ran out of time (converted to BoardTimeout after recovery)."""

    def __init__(self, output):
        self.output = output


class QemuBoard(SerialBoard):
    """An emulated board: QEMU (started here) plus a SerialBoard on its pty."""

    def __init__(self, spec, connect_timeout=15.0, extra_qemu_args=(), storage=True):
        from .qemu import QemuProcess
        if isinstance(spec, str):
            spec = boards.get(spec)
        self.qemu = QemuProcess(spec, extra_args=extra_qemu_args, storage=storage)
        self.qemu.start()
        #: how many times the emulator was restarted (tests use it to tell a board that
        #: recovered by itself from one the harness had to restart)
        self.restarts = 0
        try:
            super().__init__(self.qemu.pty, spec=spec, connect_timeout=connect_timeout)
            self._enter_raw()
        except BaseException:
            self.qemu.stop()
            raise

    def _enter_raw(self, timeout=None):
        try:
            super()._enter_raw(timeout)
        except BoardCrash as e:
            if not self.qemu.alive():
                raise BoardCrash(f"{e}\nQEMU is not running; its output:\n{self.qemu.output()}")
            raise

    def _ensure_raw(self):
        self.qemu.resume()   # every exchange with the board starts here
        super()._ensure_raw()

    def suspend(self):
        """Stop the emulator until the next exchange (QemuProcess.suspend): the test harness
        does so when the next tests use other boards."""
        self.qemu.suspend()

    def exec(self, code, timeout=DEFAULT_TIMEOUT, on_data=None):
        try:
            return super().exec(code, timeout=timeout, on_data=on_data)
        except BoardCrash as e:
            if self.qemu.alive():
                raise
            raise BoardCrash(f"{e}\nQEMU exited; its output:\n{self.qemu.output()}",
                             e.output) from None

    #: bytes the board decodes per block of a streamed put, and the host writes per progress step
    STREAM_BLOCK = 2048
    STREAM_WRITE = 4096

    def _put_data(self, data, remote, progress, chunk_size, timeout):
        """Stream the file in one exec: the board reads it from stdin while the host writes.

        No acknowledgements are needed: when the board's input ring is full its UART leaves the
        next byte unread, QEMU stops reading the pty and the host's write waits (port/mphalport.c).
        A real UART has no such back-pressure (bytes arriving at a full ring would be lost),
        so SerialBoard keeps its acknowledged chunks."""
        self._stream(data, remote, progress, timeout)

    def _stream(self, data, remote, progress, timeout):
        """_mn.recv(remote, ...) fed with ``data``; remote None: the ROMFS region."""
        self._ensure_helper()
        enc = _escape(bytes(data))
        self._ensure_raw()
        what = remote or "ROMFS"
        ser = self._ser
        off = 0
        try:
            self.transport.exec_raw_no_follow(
                f"_mn.recv({remote!r}, {len(enc)}, {self.STREAM_BLOCK})")
            # ``timeout`` bounds a stall (no byte taken for that long), not the whole transfer,
            # whose speed depends on the host's load
            ser.write_timeout = timeout
            for off in range(0, len(enc), self.STREAM_WRITE):
                if ser.in_waiting:
                    break  # the board never talks while receiving: it reset or failed
                ser.write(enc[off:off + self.STREAM_WRITE])
                if progress:
                    sent = min(len(enc), off + self.STREAM_WRITE)
                    progress(sent * len(data) // len(enc), len(data))
            out, err = self._follow(max(timeout, 10))
        except serial.SerialTimeoutException:
            seen = self._stall_report(enc, off)
            recovered = self._recover_after_timeout()
            if remote:
                self._remove_quietly(remote)
            raise StreamStallError(f"{self.name}: put {what}: the board took no data for "
                                   f"{timeout} s ({seen}; recovered by: {recovered})") from None
        except (TransportError, *LINK_ERRORS) as e:
            self.dirty = True
            raise TransferError(f"{self.name}: put {what}: link failed: {e}") from None
        except _PendingTimeout:
            recovered = self._recover_after_timeout()
            if remote:
                self._remove_quietly(remote)
            raise TransferError(f"{self.name}: put {what}: no answer within the timeout "
                                f"(recovered by: {recovered})") from None
        except BaseException:
            self.dirty = True
            raise
        finally:
            if self.transport is not None:
                ser.write_timeout = None
        if err:
            e = BoardExecError(_text(out), _text(err), self.name)
            if remote is None:
                raise TransferError(f"{self.name}: writing ROMFS failed: {e}") from e
            self._close_and_remove(remote)
            last = e.traceback.strip().splitlines()[-1] if e.traceback.strip() else ""
            self._raise_put_error(e, remote, len(data), "during the transfer", last)
        if progress and not data:
            progress(0, 0)

    def _stall_report(self, enc, off):
        """What the host knows when a stream stalls: how far it got, where the board is (its pc
        and return address, in the firmware's functions) and anything it printed."""
        ser = self._ser
        try:
            said = ser.read(ser.in_waiting) if ser.in_waiting else b""
        except LINK_ERRORS:
            said = b""
        state = f"board at {self.qemu.describe_where()}" if self.qemu.alive() else "QEMU exited"
        return (f"{off} of {len(enc)} stream bytes written, {state}"
                + (f", board said {said[-200:]!r}" if said else ""))

    def _rom_write(self, image, progress, timeout):
        self._stream(image, None, progress, timeout)

    def hard_reset(self, timeout=None):
        """Restart the emulator process (a power cycle) and reconnect to the new pty."""
        super().close()
        self.qemu.restart()
        self.restarts += 1
        self.url = self.qemu.pty
        self._open()
        self._enter_raw()

    def close(self):
        super().close()
        self.qemu.stop()


class UnixBoard(Board):
    """MicroPython's unix port as a board: one process per exec, a temp dir as filesystem."""

    def __init__(self, spec=None, executable=None):
        if isinstance(spec, str):
            spec = boards.get(spec)
        self.spec = spec
        if executable is None:
            if spec is None:
                spec = self.spec = boards.get("UNIX")
            executable = spec.require_firmware()
        self.executable = str(executable)
        self._tmp = Path(tempfile.mkdtemp(prefix="micronn-unix-"))
        self.fs = self._tmp / "fs"
        self.fs.mkdir()
        self.dirty = False

    def _argv(self, script):
        argv = [self.executable]
        if self.spec and self.spec.heap_bytes:
            argv += ["-X", f"heapsize={self.spec.heap_bytes}"]
        return argv + [str(script)]

    def exec(self, code, timeout=DEFAULT_TIMEOUT, on_data=None):
        script = self._tmp / "_exec.py"
        script.write_bytes(code if isinstance(code, bytes) else code.encode())
        proc = subprocess.Popen(self._argv(script), cwd=self.fs, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise BoardTimeout(f"{self.name}: code did not finish within {timeout} s",
                               _text(out), "killed process") from None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        if on_data and out:
            on_data(out)
        if proc.returncode < 0:
            raise BoardCrash(f"{self.name}: micropython died with signal {-proc.returncode}",
                             _text(out + err))
        if proc.returncode != 0:
            raise BoardExecError(_text(out), _text(err) or f"exit status {proc.returncode}",
                                 self.name)
        return _text(out)

    def _ensure_helper(self):
        pass  # every exec is a fresh process: the helper is prepended where needed

    def sha256(self, remote, timeout=DEFAULT_TIMEOUT):
        try:
            out = self.exec(_HELPER + f"_mn.sha({_check_remote(remote).lstrip('/') or '.'!r})",
                            timeout=timeout)
        except BoardExecError as e:
            raise TransferError(f"{self.name}: cannot hash {remote} on the board: {e}") from e
        size, digest = out.split()
        return int(size), digest

    def _discard_stale(self, tmp):
        self._remove_quietly(tmp)  # one process per exec: no handle survives a call

    def _rename(self, tmp, remote):
        os.replace(self._local(tmp), self._local(remote))

    def free_space(self, remote="."):
        st = os.statvfs(self._local(remote).parent)
        return st.f_bsize, st.f_bsize * st.f_bavail

    def _local(self, remote):
        path = (self.fs / remote.lstrip("/")).resolve()
        if self.fs.resolve() not in path.parents:
            raise ValueError(f"{remote!r} is outside the board filesystem")
        return path

    def _put_data(self, data, remote, progress, chunk_size, timeout):
        path = self._local(remote)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if progress:
            progress(len(data), len(data))

    def _get_data(self, remote, size, progress, chunk_size, timeout):
        data = self._local(remote).read_bytes()
        if progress:
            progress(len(data), size)
        return data

    def _remove_quietly(self, remote):
        try:
            self._local(remote).unlink()
        except (OSError, ValueError):
            pass

    def remove(self, remote):
        self._local(remote).unlink()

    def ping(self, timeout=5.0):
        try:
            return self.exec("print(1+1)", timeout=timeout).strip() == "2"
        except BoardError:
            return False

    def soft_reset(self):
        """Nothing persists between execs already; kept for interface parity."""

    def hard_reset(self):
        """Wipe the board filesystem (the closest thing to a power cycle with a fresh image)."""
        shutil.rmtree(self.fs, ignore_errors=True)
        self.fs.mkdir()

    def close(self):
        shutil.rmtree(self._tmp, ignore_errors=True)


def open_board(name=None, port=None, **kwargs):
    """The CLI's and tests' entry point: ``port`` (any pyserial URL) → SerialBoard, described
    by board ``name`` when given; otherwise board ``name`` (default: the default board)
    → QemuBoard or UnixBoard. Raises boards.FirmwareMissing with the build command."""
    spec = boards.get(name) if name else (None if port else boards.default())
    if port:
        return SerialBoard(port, spec=spec, **kwargs)
    if spec.emulated:
        return QemuBoard(spec, **kwargs)
    return UnixBoard(spec, **kwargs)
