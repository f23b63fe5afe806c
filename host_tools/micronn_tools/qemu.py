"""Start and stop emulated boards under QEMU.

The board's UART goes to a pseudo-terminal (``-serial pty``) so the host talks to an emulated board
exactly as to a USB one (pyserial, mpremote). Stopping must be reliable: QEMU runs in its own
process group (so a Ctrl-C aimed at pytest does not kill it half-way, and we can kill it with
everything it spawned), it is killed at interpreter exit, and on Linux it is also told to die with
its parent (``PR_SET_PDEATHSIG``) so that even a SIGKILLed test run leaves no orphans.

Boards whose ``board.json`` has ``qemu.storage`` get their machine RAM (which holds littlefs and
ROMFS) from a file, the storage image (``BoardSpec.storage_path``): the board writes straight
into it, so files survive restarts of QEMU, even a SIGKILL. One QEMU at a time owns an image (an
exclusive ``flock``); a second QEMU of the same board, started while the first runs, gets a
private copy of the image as it is at that moment, deleted when it stops, and its writes do not
persist (``QemuProcess.storage_note`` says so). Boards with ``qemu.storage.region`` instead
(machines whose RAM cannot be file-backed) start paused; the image is written into the region
through QEMU's gdbstub before the board runs, and read back from it when ``stop()`` ends QEMU.

CLI (used by the Makefile)::

    python -m micronn_tools.qemu run BOARD    # first line of stdout: the pty path; runs until killed
    python -m micronn_tools.qemu repl BOARD   # interactive REPL on this terminal (Ctrl-A x quits)
    python -m micronn_tools.qemu argv BOARD   # print the QEMU command line
"""
import atexit
import collections
import ctypes
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref

from . import boards

_PTY_RE = re.compile(rb"char device redirected to (/dev/pts/\d+)")
_live = weakref.WeakSet()


class QemuError(Exception):
    """QEMU could not be started or died; the message carries its last output."""


def _die_with_parent():
    """preexec_fn: ask Linux to SIGKILL QEMU when the process that started it dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:  # not Linux: the atexit hook and process groups still apply
        pass


class QemuProcess:
    """One running QEMU instance for one board.

    ``start()`` returns once QEMU has announced its pty. QEMU's own output (stdout+stderr, not
    the UART) is drained by a thread into ``log`` (last lines kept) so its pipe never fills up.

    ``die_with_parent``: Linux delivers the death signal when the *thread* that started QEMU
    exits, so pass False when starting it from a short-lived worker thread.
    """

    def __init__(self, spec, serial="pty", extra_args=(), firmware=None, die_with_parent=True,
                 storage=True):
        self.spec = spec
        self.serial = serial
        self.die_with_parent = die_with_parent
        self.firmware = firmware or spec.require_firmware()
        self.extra_args = extra_args
        #: True: the board's storage image; a path: that image; False: volatile RAM
        self.storage = storage
        self.storage_file = None  # the image QEMU maps while running
        self.storage_note = None  # why it is not the board's own image, when it is not
        self._lock_fd = None
        self._snapshot = None
        self._gdb_dir = None
        self.argv = spec.qemu_argv(serial=serial, firmware=self.firmware, extra=extra_args)
        self.proc = None
        self.suspended = False
        self.pty = None
        self.log = collections.deque(maxlen=200)
        self._pty_seen = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, timeout=10.0, keep_snapshot=False):
        if self.proc is not None and self.proc.poll() is None:
            return self
        self.pty = None
        self._pty_seen.clear()
        self._open_storage(keep_snapshot)
        extra = list(self.extra_args)
        # Every board gets a gdbstub (idle until connected): where() reads the registers of a
        # board that stopped answering. A storage region is loaded through it before the board
        # runs (-S holds it at reset).
        self._gdb_dir = tempfile.mkdtemp(prefix="micronn-gdb-")
        extra += ["-gdb", f"unix:{self._gdb_dir}/gdb.sock,server=on,wait=off"]
        if self._has_region():
            extra.append("-S")
        self.argv = self.spec.qemu_argv(serial=self.serial, firmware=self.firmware,
                                        extra=extra, storage=self.storage_file)
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_parent if self.die_with_parent else None)
        except FileNotFoundError:
            self._release_storage()
            raise QemuError(f"{self.spec.name}: {self.argv[0]} not found (run `make setup`)")
        _live.add(self)
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True,
                         name=f"qemu-{self.spec.name}-output").start()
        if self.serial == "pty":
            deadline = time.monotonic() + timeout
            while not self._pty_seen.wait(0.05):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    why = ("exited with status %d" % self.proc.returncode
                           if self.proc.poll() is not None else "did not announce a pty")
                    argv = self.argv
                    self.stop()
                    raise QemuError(f"{self.spec.name}: QEMU {why}.\ncommand: "
                                    f"{' '.join(argv)}\noutput:\n{self.output()}")
        if self._has_region():
            try:
                self._region_restore(timeout)
            except (OSError, QemuError) as e:
                self.stop(save=False)
                raise QemuError(f"{self.spec.name}: cannot load the storage image: {e}") from None
        return self

    def where(self, timeout=3.0):
        """Where the guest is: ``{"pc": ..., "lr"/"ra": ..., "sp": ...}`` read through the gdbstub
        (the machine pauses for the read and runs on), or None when it cannot be read."""
        if not self._gdb_dir or not self.alive():
            return None
        try:
            with self._gdb(timeout) as g:
                regs = g.command(b"g")
                g.detach()
            words = [int.from_bytes(bytes.fromhex(regs[i:i + 8].decode()), "little")
                     for i in range(0, len(regs) - 7, 8)]
        except (OSError, ValueError, QemuError):
            return None
        # GDB's register order: Arm r0-r15 (sp r13, lr r14, pc r15); RISC-V x0-x31 then pc
        index = ({"pc": 32, "ra": 1, "sp": 2} if self.argv[0].endswith("riscv32")
                 else {"pc": 15, "lr": 14, "sp": 13})
        return {k: words[i] for k, i in index.items() if i < len(words)}

    def describe_where(self, timeout=3.0):
        """where() as text, each address with its function and source line in the firmware
        (the toolchain's addr2line), for reports of a board that stopped answering."""
        regs = self.where(timeout)
        if not regs:
            return "registers not readable"
        names = _addr2line(self.argv[0], self.firmware, list(regs.values()))
        return ", ".join(f"{k} 0x{v:08x}" + (f" ({names[i]})" if names[i] else "")
                         for i, (k, v) in enumerate(regs.items()))

    def _has_region(self):
        return bool(self.storage_file and self.spec.storage_region)

    # -- storage region (machines without file-backed RAM) ----------------------------------
    def _gdb(self, timeout):
        path = os.path.join(self._gdb_dir, "gdb.sock")
        deadline = time.monotonic() + timeout
        while True:
            try:
                return _GdbLink(path, timeout)
            except OSError:
                if time.monotonic() > deadline or not self.alive():
                    raise
                time.sleep(0.05)

    def _region_restore(self, timeout):
        """Write the image into the region while the board is held at reset (-S), then let it
        run (gdb detach resumes the machine). An empty image leaves the region as it is."""
        addr, size = self.spec.storage_region
        with open(self.storage_file, "rb") as f:
            image = f.read()
        with self._gdb(timeout) as g:
            if len(image) == size:
                for off in range(0, size, _GdbLink.CHUNK):
                    g.write(addr + off, image[off:off + _GdbLink.CHUNK])
            g.detach()

    def _region_save(self):
        """Read the region into the image (connecting the gdbstub pauses the machine)."""
        addr, size = self.spec.storage_region
        with self._gdb(5.0) as g:
            image = b"".join(g.read(addr + off, min(_GdbLink.CHUNK, size - off))
                             for off in range(0, size, _GdbLink.CHUNK))
        if self._lock_fd is not None:
            os.pwrite(self._lock_fd, image, 0)
            os.ftruncate(self._lock_fd, size)
        else:  # a private snapshot, kept across a restart
            with open(self._snapshot, "r+b") as f:
                f.write(image)
                f.truncate(size)

    def _open_storage(self, keep_snapshot=False):
        """Lock the storage image for this QEMU, or fall back to a private snapshot of it
        (``keep_snapshot``: a restart goes on with the snapshot it already has)."""
        if keep_snapshot and self._snapshot and os.path.exists(self._snapshot):
            self.storage_file = self._snapshot
            return
        self._release_storage()
        path = self.spec.storage_path if self.storage is True else self.storage
        if not path or self.spec.storage_bytes is None:
            return
        path = os.path.abspath(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            snap = f"{path}.{os.getpid()}.{id(self):x}.snapshot"
            # --sparse: the images are mostly holes (2 GiB of DDR on MPS3_AN547)
            subprocess.run(["cp", "--sparse=always", path, snap], check=True)
            self._snapshot = self.storage_file = snap
            self.storage_note = (f"{path} is in use by another QEMU: this one runs on a "
                                 "private copy; its file changes will not persist")
            return
        self._lock_fd, self.storage_file = fd, path

    def _release_storage(self, keep_snapshot=False):
        if self._gdb_dir:
            shutil.rmtree(self._gdb_dir, ignore_errors=True)
            self._gdb_dir = None
        if keep_snapshot and self._snapshot:
            return
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # drops the flock
            self._lock_fd = None
        if self._snapshot:
            try:
                os.unlink(self._snapshot)
            except OSError:
                pass
        self._snapshot = self.storage_file = self.storage_note = None

    def _drain(self, proc):
        for line in iter(proc.stdout.readline, b""):
            self.log.append(line.decode(errors="replace").rstrip("\n"))
            m = _PTY_RE.search(line)
            if m and self.pty is None:
                self.pty = m.group(1).decode()
                self._pty_seen.set()
        proc.stdout.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def suspend(self):
        """Stop the emulator process (SIGSTOP) while nobody talks to the board: an idle board
        spins in its REPL (-icount, sleep=off), a core's worth of host CPU otherwise. The guest
        cannot tell: its clock is its instruction count. Bytes sent meanwhile wait in the pty."""
        if self.alive() and not self.suspended:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.suspended = True

    def resume(self):
        if self.suspended:
            self.suspended = False
            if self.alive():
                os.kill(self.proc.pid, signal.SIGCONT)

    def output(self):
        """QEMU's recent own output (errors, pty notice), for error messages."""
        return "\n".join(self.log)

    def stop(self, grace=2.0, save=True, keep_snapshot=False):
        """Terminate QEMU and its process group; SIGKILL after ``grace`` seconds. Idempotent.
        A board with a storage region has it saved to its image first (``save``); a private
        snapshot is deleted unless ``keep_snapshot`` (a restart: a power cycle keeps the files)."""
        self.resume()
        if save and self._has_region() and (self._snapshot is None or keep_snapshot) and self.alive():
            try:
                self._region_save()
            except (OSError, QemuError) as e:
                self.log.append(f"micronn: storage region not saved: {e}")
        proc, self.proc = self.proc, None
        _live.discard(self)
        if proc is None:
            self._release_storage(keep_snapshot)
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        # A process group may outlive its leader; make sure nothing in it remains.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(1)
        except subprocess.TimeoutExpired:
            pass
        self._release_storage(keep_snapshot)

    def restart(self, timeout=10.0):
        self.stop(keep_snapshot=True)
        return self.start(timeout, keep_snapshot=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def __del__(self):
        try:
            self.stop()
        except Exception:
            pass


def _addr2line(qemu, elf, addrs):
    """Function and file:line of each address, "" where unknown (no toolchain, no symbols)."""
    tool = "riscv64-unknown-elf-addr2line" if qemu.endswith("riscv32") else "arm-none-eabi-addr2line"
    try:
        out = subprocess.run([tool, "-f", "-e", str(elf)] + [hex(a) for a in addrs],
                             capture_output=True, text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return [""] * len(addrs)
    names = []
    for i in range(len(addrs)):
        fn, line = (out[2 * i:2 * i + 2] + ["??", "??"])[:2]
        names.append("" if fn == "??" else f"{fn} {os.path.basename(line)}")
    return names


class _GdbLink:
    """The few GDB remote-protocol packets the storage region needs (memory read/write,
    detach), over QEMU's gdbstub socket."""

    CHUNK = 1024  # bytes per packet: 2 KiB of hex, well inside QEMU's packet buffer

    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def _packet(self):
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i + 1) if i >= 0 else -1
            if j >= 0 and len(self.buf) >= j + 3:
                data, self.buf = self.buf[i + 1:j], self.buf[j + 3:]
                self.sock.sendall(b"+")
                return data
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QemuError("gdbstub closed the connection")
            self.buf += chunk

    def command(self, data):
        self.sock.sendall(b"$%s#%02x" % (data, sum(data) & 0xFF))
        while True:
            reply = self._packet()
            # connecting stops the machine and QEMU may report it ("T02thread:01;") at any
            # point: not the answer (which is OK, Exx or hex digits)
            if not reply.startswith((b"T", b"S")):
                return reply

    def write(self, addr, data):
        reply = self.command(b"M%x,%x:%s" % (addr, len(data), data.hex().encode()))
        if reply != b"OK":
            raise QemuError(f"gdbstub refused a write at 0x{addr:x}: {reply!r}")

    def read(self, addr, n):
        reply = self.command(b"m%x,%x" % (addr, n))
        if len(reply) != 2 * n or reply.startswith(b"E"):
            raise QemuError(f"gdbstub refused a read at 0x{addr:x}: {reply[:20]!r}")
        return bytes.fromhex(reply.decode())

    def detach(self):
        self.sock.sendall(b"$D#44")
        self.sock.recv(16)  # "+" and "$OK#9a"; the machine runs from here


@atexit.register
def stop_all():
    """Kill every QEMU this process started (also run at interpreter exit)."""
    for q in list(_live):
        q.stop(grace=0.5)


# -- CLI ---------------------------------------------------------------------------------------
class _Stop(Exception):
    """Raised by the signal handler so cleanup runs in normal code, not inside the handler
    (Popen.wait() holds a lock while it blocks; waiting again inside a handler would stall)."""


def _raise_stop(signum, frame):
    raise _Stop(signum)


def _cmd_run(spec):
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _raise_stop)
    q = QemuProcess(spec)
    try:
        q.start()
        print(q.pty, flush=True)
        print(f"{spec.name}: UART on {q.pty}; try `mpremote connect {q.pty} repl`. "
              "Stop with Ctrl-C.", file=sys.stderr, flush=True)
        if q.storage_file:
            print(f"{spec.name}: storage (littlefs, ROMFS): {q.storage_note or q.storage_file}",
                  file=sys.stderr, flush=True)
        rc = q.proc.wait()
        print(f"QEMU exited with status {rc}:\n{q.output()}", file=sys.stderr)
        return rc or 1
    except _Stop as e:
        return 128 + e.args[0]
    finally:
        q.stop(grace=1.0)


def _cmd_repl(spec):
    # QEMU replaces this process: a storage region (saved by the launcher) cannot be kept here
    storage = spec.storage_path if spec.storage_region is None else None
    if storage is not None:
        # exec keeps this open file, and with it the lock, for QEMU's lifetime
        os.makedirs(storage.parent, exist_ok=True)
        fd = os.open(storage, os.O_RDWR | os.O_CREAT, 0o644)
        os.set_inheritable(fd, True)  # Python opens with O_CLOEXEC
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise QemuError(f"{storage} is in use by another QEMU of {spec.name}; stop it first")
    argv = spec.qemu_argv(serial="mon:stdio", firmware=spec.require_firmware(), storage=storage)
    print(f"{spec.name}: MicroPython REPL on this terminal. Ctrl-A x quits QEMU, "
          "Ctrl-A Ctrl-A sends Ctrl-A (raw REPL).", file=sys.stderr, flush=True)
    os.execvp(argv[0], argv)


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m micronn_tools.qemu",
                                description="Run an emulated micronn board under QEMU.")
    p.add_argument("command", choices=["run", "repl", "argv"],
                   help="run: UART on a pty (path printed first); repl: UART on this terminal; "
                        "argv: print the QEMU command line")
    p.add_argument("board", nargs="?", help="board name (default: the default board)")
    args = p.parse_args(argv)
    try:
        spec = boards.get(args.board) if args.board else boards.default()
        if not spec.emulated:
            raise boards.BoardConfigError(f"{spec.name} is not an emulated board")
        if args.command == "argv":
            print(" ".join(spec.qemu_argv(storage=spec.storage_path)))
            return 0
        return _cmd_run(spec) if args.command == "run" else _cmd_repl(spec)
    except (boards.BoardConfigError, QemuError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
