"""Copies to the board are atomic: whatever interrupts a transfer (the host tool killed, garbage
on the line, the board reset), the destination afterwards — also after a soft reset, when the
board finalises every file handle — is absent, its previous version, or the complete new file.
Never a partial file reported (or later turned) good."""
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from micronn_tools.board import TMP_SUFFIX, BoardError, NoSpaceError, QemuBoard, SerialBoard, \
    StreamStallError, TransferError

NAME = "hil_atomic.bin"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_TOOLS = os.path.join(REPO, "host_tools")
CHUNK = 2048

# Another host process writes NAME and is SIGKILLed (no chance to clean up) once `kill_at` bytes
# are on the board: its file handle stays open on the board.
_KILLED_PUT = """
import os, signal, sys
from micronn_tools.board import SerialBoard
port, src, remote, kill_at, chunk = sys.argv[1:]
def progress(done, total):
    if done >= int(kill_at):
        os.kill(os.getpid(), signal.SIGKILL)
SerialBoard(port).put(open(src, 'rb').read(), remote, progress=progress, chunk_size=int(chunk))
"""


def _env():
    return dict(os.environ, PYTHONPATH=HOST_TOOLS + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _versions(board):
    """Two different payloads that both fit on the board next to each other."""
    bsize, free = board.free_space(NAME)
    size = max(4 * CHUNK, min(24 * 1024, (free - 16 * bsize) // 4))
    rng = random.Random(size)
    return rng.randbytes(size), rng.randbytes(size)


def _state(board):
    """sha256 of NAME on the board (None when absent) and the leftover temporary files."""
    try:
        _, digest = board.sha256(NAME)
    except TransferError:
        digest = None
    left = board.eval(f"[n for n in os.listdir() if n.endswith({TMP_SUFFIX!r})]", pre="import os")
    return digest, left


def _sha(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


def _cleanup(board):
    board.exec(f"import os\nfor _n in ({NAME!r}, {NAME + TMP_SUFFIX!r}):\n"
               " try:\n  os.remove(_n)\n except OSError:\n  pass")


@pytest.fixture(autouse=True)
def _no_leftovers(board):
    """Whatever a test leaves behind (also when it fails mid-transfer) is removed afterwards, so
    later tests on the same board (64 KB filesystem on NETDUINOPLUS2) find the space they need."""
    yield
    try:
        _cleanup(board)
    except Exception:   # noqa: BLE001 - a board that does not answer is reset by the fixture
        board.dirty = True


def _release(board):
    """Let another process open the port (mpremote locks it); the next call reconnects."""
    SerialBoard.close(board)


def _killed_put(board, tmp_path, data, kill_at=2 * CHUNK):
    _release(board)
    src = tmp_path / "payload.bin"
    src.write_bytes(data)
    p = subprocess.run([sys.executable, "-c", _KILLED_PUT, board.url, str(src), NAME,
                        str(kill_at), str(CHUNK)], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == -9, f"the transfer was not interrupted: {p.returncode} {p.stderr}"


def _cli_flash(board, path):
    _release(board)
    r = subprocess.run([sys.executable, "-m", "micronn_tools.cli", "flash", str(path), "--port",
                        board.url, "--timeout", "60"], env=_env(), capture_output=True, text=True,
                       timeout=280)
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.mark.serial_only
def test_killed_host_leaves_previous_version(board, tmp_path):
    """The host tool dies mid-transfer; the board's previous file must survive the soft reset that
    finalises the dead session's handle (it used to flush the partial data over it)."""
    _cleanup(board)
    v1, v2 = _versions(board)
    try:
        board.put(v1, NAME)
        _killed_put(board, tmp_path, v2)
        board.soft_reset()
        assert _state(board)[0] == _sha(v1), "the interrupted copy changed the existing file"
        # and the same with nothing there before: absent, never partial
        _cleanup(board)
        _killed_put(board, tmp_path, v2)
        board.soft_reset()
        assert _state(board)[0] is None
    finally:
        _cleanup(board)


@pytest.mark.serial_only
def test_copy_after_killed_host_and_garbage_stays_good(board, tmp_path):
    """Interrupted copy, garbage on the line, then `micronn flash` of the same file: "verified"
    is printed, and after a soft reset the board still has exactly that file (the interrupted
    session's handle, finalised later, used to overwrite it with its partial data)."""
    _cleanup(board)
    v1, v2 = _versions(board)
    src = tmp_path / NAME
    src.write_bytes(v2)
    restarts = getattr(board, "restarts", 0)
    try:
        board.put(v1, NAME)
        _killed_put(board, tmp_path, v2)
        board.ping()  # reconnect
        board._ser.write(random.Random(9).randbytes(3000).replace(b"\x04", b"").replace(b"\x02", b""))
        time.sleep(0.5)
        r = _cli_flash(board, src)
        assert r.returncode == 0, r.stderr
        assert f"{NAME}: {len(v2)} bytes written, sha256 verified on the board" in r.stderr
        board.soft_reset()
        board.exec("import gc\ngc.collect()")
        assert _state(board) == (_sha(v2), [])
        assert getattr(board, "restarts", 0) == restarts, "the board had to be restarted"
    finally:
        _cleanup(board)


@pytest.mark.serial_only
def test_board_reset_mid_transfer(board, tmp_path):
    """The board itself resets (QEMU system_reset: a power cycle that keeps the filesystem)
    in the middle of a transfer: the old file is intact; the next copy replaces it."""
    if not isinstance(board, QemuBoard):
        pytest.skip("needs QEMU's monitor to reset the board from outside")
    mon = tmp_path / "mon.sock"
    own = QemuBoard(board.spec, extra_qemu_args=["-monitor", f"unix:{mon},server=on,wait=off"])
    try:
        _cleanup(own)
        v1, v2 = _versions(own)
        own.put(v1, NAME)

        def reset_board(done, total):
            if done >= 2 * CHUNK:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(mon))
                    s.sendall(b"system_reset\n")
                    time.sleep(0.2)

        with pytest.raises(BoardError):
            own.put(v2, NAME, progress=reset_board, chunk_size=CHUNK)
        own.dirty = True
        assert own.eval("1 + 1", timeout=30) == 2  # back after the reboot
        assert _state(own)[0] == _sha(v1)
        own.put(v2, NAME, settle=True)
        assert _state(own) == (_sha(v2), [])
    finally:
        own.close()


@pytest.mark.serial_only
def test_put_checks_free_space_first(board):
    """A file larger than the free space is refused before anything is written."""
    _cleanup(board)
    bsize, free = board.free_space(NAME)
    with pytest.raises(NoSpaceError) as e:
        board.put(b"\0" * (free + bsize), NAME)
    assert e.value.free == free and e.value.size == free + bsize
    assert _state(board) == (None, [])
    assert board.free_space(NAME)[1] == free


def test_stalled_stream_says_where_the_board_is(board):
    """A streamed put whose board stops taking data (its QEMU stopped) for longer than the put's
    timeout fails with what the host saw: how far it got and where the board was (or that its
    registers could not be read). The board is recovered, keeps no partial file and takes the
    next put."""
    if not isinstance(board, QemuBoard) or not board.spec.default:
        pytest.skip("runs on the default emulated board (it stops a QEMU of its own)")
    own = QemuBoard(board.spec, storage=False)
    data = random.Random(4).randbytes(48 * 1024)   # more than a pty buffers (a few KB)
    timers = []

    def stop_once(done, total):
        if not timers:   # stopped 8 s after the first write; the put gives up after 5
            pid = own.qemu.proc.pid
            os.kill(pid, signal.SIGSTOP)
            timers.append(threading.Timer(8.0, os.kill, (pid, signal.SIGCONT)))
            timers[0].start()

    try:
        with pytest.raises(StreamStallError, match=r"took no data for 5 s \(\d+ of \d+ stream bytes "
                                                   r"written, board at (pc 0x|registers not read)"):
            own.put(data, NAME, progress=stop_once, timeout=5)
        timers[0].join()
        assert own.eval("1 + 1", timeout=30) == 2
        assert _state(own) == (None, [])
        own.put(data, NAME)
        assert _state(own) == (_sha(data), [])
    finally:
        for t in timers:
            t.cancel()
        own.close()


@pytest.mark.serial_only
def test_stream_into_a_busy_board_is_not_slowed(board):
    """The host streams while the board is busy elsewhere, so the board's input ring (4 KB)
    fills up and its UART holds the next byte. That must not slow the board down: it used to on
    NETDUINOPLUS2, whose UART interrupt fired without end once the ring was full (QEMU's STM32
    USART keeps its line up when the interrupt is masked in the USART), so the busy loop and then
    the reads crawled at a few bytes a second and transfers stalled."""
    if not isinstance(board, QemuBoard):
        pytest.skip("the back-pressure of an emulated board's UART")
    n = 12 * 1024
    data = bytes(32 + (i * 7) % 95 for i in range(n))   # printable: no REPL control characters
    board._ensure_raw()
    start = time.monotonic()
    board.transport.exec_raw_no_follow(
        "import sys, time\n"
        "t = time.ticks_ms()\n"
        "x = 0\n"
        "for i in range(300000):\n"
        "    x += i\n"
        "busy = time.ticks_diff(time.ticks_ms(), t)\n"
        f"d = sys.stdin.buffer.read({n})\n"
        "print(len(d), sum(d), busy)\n")
    board._ser.write(data)
    out, err = board._follow(60)
    took = time.monotonic() - start
    assert not err, err
    size, total, busy = (int(v) for v in out.split())
    assert (size, total) == (n, sum(data))
    assert took < 30, f"{n} bytes into a busy board took {took:.1f} s"


def test_where_names_the_firmware_function(board):
    """where() reads the board's registers through the gdbstub and names the firmware function
    they point into (what a stall report says); the board runs on afterwards."""
    if not isinstance(board, QemuBoard):
        pytest.skip("needs QEMU's gdbstub")
    regs = board.qemu.where()
    assert regs and set(regs) >= {"pc", "sp"}, regs
    text = board.qemu.describe_where()
    assert text.startswith("pc 0x") and "(" in text, text
    assert board.eval("1 + 1") == 2


@pytest.mark.serial_only
def test_stale_temporary_files_are_swept_on_the_next_connection(board):
    """Temporary files that interrupted copies left (in the current directory or one below) are
    removed when the host next connects, before any transfer."""
    board.exec("import os\ntry:\n os.mkdir('hil_sub')\nexcept OSError:\n pass\n"
               "for _n in ('hil_a.mn-tmp', 'hil_sub/hil_b.mn-tmp', 'hil_keep.bin'):\n"
               " open(_n, 'wb').close()")
    try:
        _release(board)   # the next call reconnects and loads the helper anew
        board.put(b"x", NAME)
        left = board.eval("[n for n in os.listdir() + ['hil_sub/' + m for m in os.listdir('hil_sub')]"
                          " if n.startswith(('hil_', 'hil_sub/'))]", pre="import os")
        assert sorted(left) == ["hil_atomic.bin", "hil_keep.bin", "hil_sub"], left
    finally:
        board.exec("import os\nfor _n in ('hil_a.mn-tmp', 'hil_sub/hil_b.mn-tmp', 'hil_keep.bin', 'hil_sub'):\n"
                   " try:\n  os.remove(_n) if not _n.endswith('sub') else os.rmdir(_n)\n except OSError:\n  pass")


def test_flash_to_a_board_whose_qemu_dies_is_one_clean_error(board, tmp_path):
    """`micronn flash` to a board whose QEMU is killed mid-transfer exits 1 with one
    `micronn: error:` line naming the board and what to do (it was an internal error: an
    uncaught termios.error from the retry's ping)."""
    if not isinstance(board, QemuBoard) or not board.spec.default:
        pytest.skip("runs on the default emulated board (it kills a QEMU of its own)")
    own = QemuBoard(board.spec, storage=False)
    src = tmp_path / "payload.bin"
    src.write_bytes(random.Random(5).randbytes(256 * 1024))
    try:
        assert own.eval("1 + 1") == 2
        url = own.url
        SerialBoard.close(own)
        p = subprocess.Popen([sys.executable, "-m", "micronn_tools.cli", "flash", str(src), "--port", url,
                              "--timeout", "20"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        time.sleep(3)   # connected, transferring (256 KB take far longer over the emulated UART)
        os.kill(own.qemu.proc.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=120)
    finally:
        own.close()
    lines = [ln for ln in err.splitlines() if ln.startswith("micronn: ")]
    assert p.returncode == 1, (p.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(lines) == 1 and lines[0].startswith("micronn: error: "), err
