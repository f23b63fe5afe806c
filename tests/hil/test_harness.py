"""The board harness itself: timeouts, device tracebacks, transfer verification."""
import time

import pytest

from micronn_tools.board import BoardExecError, BoardTimeout, TransferError


def test_timeout_raises_and_board_is_usable_after(board):
    t0 = time.monotonic()
    with pytest.raises(BoardTimeout) as e:
        board.exec("print('started')\nwhile True:\n    pass", timeout=2)
    assert time.monotonic() - t0 < 30
    assert "started" in e.value.output
    assert e.value.recovered
    assert board.exec("print(6 * 7)").strip() == "42"


def test_exception_surfaces_with_device_traceback(board):
    code = "def inner():\n    raise ValueError('hil-boom')\nprint('before')\ninner()\n"
    with pytest.raises(BoardExecError) as e:
        board.exec(code)
    err = e.value
    assert err.exc_type == "ValueError"
    assert "hil-boom" in err.traceback and "Traceback" in err.traceback
    assert "line 2" in err.traceback and "line 4" in err.traceback
    assert err.output.strip() == "before"
    assert "hil-boom" in str(err) and "device traceback" in str(err)


def test_get_detects_corruption(board, monkeypatch):
    board.put(b"0123456789" * 100, "hil_small.bin")
    real = board._get_data

    def corrupt(*args, **kwargs):
        data = bytearray(real(*args, **kwargs))
        data[5] ^= 1
        return data

    monkeypatch.setattr(board, "_get_data", corrupt)
    with pytest.raises(TransferError, match="sha256"):
        board.get("hil_small.bin")
    monkeypatch.undo()
    assert board.get("hil_small.bin") == b"0123456789" * 100
    board.remove("hil_small.bin")


def test_put_detects_short_file(board, monkeypatch):
    real = board._put_data

    def short(data, *args, **kwargs):
        return real(data[:-1], *args, **kwargs)

    monkeypatch.setattr(board, "_put_data", short)
    with pytest.raises(TransferError, match="sha256"):
        board.put(b"x" * 5000, "hil_short.bin")
    monkeypatch.undo()
    with pytest.raises(TransferError):  # and the bad file was removed
        board.sha256("hil_short.bin")


def test_get_of_missing_file_is_an_error(board):
    with pytest.raises(TransferError, match="ENOENT|No such file|Errno 2"):
        board.get("hil_no_such_file.bin")


@pytest.mark.emulated_only
def test_wedged_board_is_restarted(board):
    """Code that cannot be interrupted (Ctrl-C disabled) still cannot hang the harness: the
    emulator is restarted and the board answers again."""
    restarts = board.restarts
    with pytest.raises(BoardTimeout) as e:
        board.exec("import micropython\nmicropython.kbd_intr(-1)\nwhile True:\n    pass",
                   timeout=2)
    assert e.value.recovered == "hard reset"
    assert board.restarts == restarts + 1
    assert board.exec("print(6 * 7)").strip() == "42"
