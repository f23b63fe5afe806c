"""Stock mpremote (the venv's, as a user runs it) against every emulated board: fs ls/cp/rm,
run, mount (needs the select module) and romfs (needs vfs.rom_ioctl).

Each board gets a QEMU of its own here (the session's board keeps its pty open); it runs on a
private copy of the session's storage image, so nothing done here reaches other tests."""
import os
import subprocess
import sys

import pytest

from micronn_tools.qemu import QemuProcess

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "..", "shared", "models")
MODEL = "hello_world_int8.tflite"


@pytest.fixture(scope="module")
def pty(board_target):
    if board_target.kind != "qemu":
        pytest.skip("needs an emulated board")
    q = QemuProcess(board_target.spec, storage=_private_copy(board_target.spec))
    q.start()
    try:
        yield q.pty
    finally:
        q.stop()
        try:
            os.unlink(q.storage)
        except (OSError, TypeError):
            pass


def _private_copy(spec):
    """A fresh, empty storage image for this module's QEMU (None: the board has none)."""
    if spec.storage_bytes is None:
        return None
    path = f"{spec.storage_path}.mpremote-{os.getpid()}"
    with open(path, "wb"):
        pass
    return path


def mpremote(pty, *args, cwd=None, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "mpremote", "connect", pty, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"mpremote {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_cp_ls_rm(pty, tmp_path):
    src = tmp_path / "hello.bin"
    data = os.urandom(3000)
    src.write_bytes(data)
    mpremote(pty, "fs", "cp", str(src), ":mpr.bin")
    assert "mpr.bin" in mpremote(pty, "fs", "ls", ":")
    back = tmp_path / "back.bin"
    mpremote(pty, "fs", "cp", ":mpr.bin", str(back))
    assert back.read_bytes() == data
    mpremote(pty, "fs", "rm", ":mpr.bin")
    assert "mpr.bin" not in mpremote(pty, "fs", "ls", ":")


def test_run(pty, tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint('ran on', sys.platform, 6 * 7)\n")
    assert "ran on micronn 42" in mpremote(pty, "run", str(script))


def test_mount(pty, tmp_path):
    """`mount DIR`: the board imports and reads the host's files (mpremote's remote filesystem
    protocol polls stdin with select.poll)."""
    (tmp_path / "hostmod.py").write_text("VALUE = 'from the host'\n")
    (tmp_path / "data.txt").write_text("mounted file\n")
    out = mpremote(pty, "mount", ".", "exec",
                   "import hostmod, os; print(hostmod.VALUE); print(open('data.txt').read()); "
                   "print(sorted(os.listdir()))", cwd=tmp_path)
    assert "from the host" in out and "mounted file" in out and "'hostmod.py'" in out


def test_romfs(pty, board_target, tmp_path):
    """`romfs deploy DIR` then `romfs query`; the model on /rom loads and runs (on a board
    without a ROMFS region mpremote says so)."""
    src = tmp_path / "romdir"
    src.mkdir()
    with open(os.path.join(MODELS, MODEL), "rb") as f:
        (src / MODEL).write_bytes(f.read())
    if not board_target.spec.raw.get("romfs_bytes"):
        assert "ROMFS is not enabled" in mpremote(pty, "romfs", "query")
        return
    mpremote(pty, "romfs", "deploy", str(src))
    assert "ROMFS image size" in mpremote(pty, "romfs", "query")
    out = mpremote(pty, "exec", "import os, micronn\nprint(os.listdir('/rom'))\n"
                                f"it = micronn.Interpreter(micronn.load('/rom/{MODEL}'))\n"
                                "it.invoke()\nprint('invoked', len(bytes(it.output(0))))")
    assert f"['{MODEL}']" in out and "invoked" in out
