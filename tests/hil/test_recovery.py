"""The REPL keeps answering after exceptions, faults and resets."""
import pytest

from micronn_tools.board import BoardCrash, BoardExecError, QemuBoard


def test_repl_answers_after_exception(board):
    with pytest.raises(BoardExecError):
        board.exec("raise RuntimeError('hil')")
    assert board.exec("print(6 * 7)").strip() == "42"


@pytest.mark.serial_only
def test_fault_prints_fatal_and_board_resets_itself(board, board_spec):
    if board_spec.fault_address is None:
        pytest.skip("board.json has no fault_address")
    restarts = getattr(board, "restarts", None)
    with pytest.raises(BoardCrash) as e:
        board.exec(f"import machine\nmachine.mem32[{board_spec.fault_address:#x}]", timeout=20)
    assert "FATAL" in e.value.output
    assert board.exec("print(6 * 7)").strip() == "42"
    # The board came back by itself: the harness did not have to restart the emulator.
    assert getattr(board, "restarts", None) == restarts
    cause = board.eval("(board.info()['reset_cause'], board.RESET_FAULT)", pre="import board")
    assert cause[0] == cause[1], "reset_cause does not say the last reset was a fault"


@pytest.mark.serial_only
def test_soft_reset_clears_state(board):
    board.exec("hil_marker = 123")
    assert board.eval("hil_marker") == 123
    board.soft_reset()
    with pytest.raises(BoardExecError) as e:
        board.exec("hil_marker")
    assert e.value.exc_type == "NameError"
    assert board.exec("print('alive')").strip() == "alive"


@pytest.mark.serial_only
def test_hard_reset(board):
    board.exec("hil_marker = 1")
    restarts = getattr(board, "restarts", 0)
    board.hard_reset()
    with pytest.raises(BoardExecError):
        board.exec("hil_marker")
    assert board.exec("print('alive')").strip() == "alive"
    if isinstance(board, QemuBoard):
        assert board.restarts == restarts + 1
