"""The firmware says which board it is, and reports the sizes board.json promises."""
import pytest

pytestmark = pytest.mark.serial_only


def test_implementation_names_the_board(board, board_spec):
    name, machine, build = board.eval(
        "(sys.implementation.name, sys.implementation._machine, sys.implementation._build)",
        pre="import sys")
    assert name == "micropython"
    # "<board> with <MCU>", as upstream ports do; the MCU may be a chip (STM32F405RG), not a core.
    assert board_spec.name in machine, f"_machine {machine!r} does not mention {board_spec.name}"
    assert build == board_spec.name


def _info(board):
    return board.eval("board.info()", pre="import board")


@pytest.mark.parametrize("key", ["ram_bytes", "flash_bytes", "fs_bytes", "romfs_bytes",
                                 "heap_bytes", "cpu_hz", "fault_address"])
def test_reported_size_matches_board_json(board, board_spec, key):
    claimed = getattr(board_spec, key)
    if claimed is None:
        pytest.skip(f"board.json has no {key}")
    assert _info(board)[key] == claimed, f"board reports {key} != board.json"


def test_gc_heap_is_the_reported_heap(board, board_spec):
    info = _info(board)
    total = board.eval("gc.mem_free() + gc.mem_alloc()", pre="import gc")
    # The GC keeps its allocation table inside the region: ~1/17 of it is not allocatable.
    assert 0.9 * info["heap_bytes"] <= total <= info["heap_bytes"]


def test_filesystem_spans_the_fs_region(board, board_spec):
    if not board_spec.fs_bytes:
        pytest.skip("board.json claims no filesystem")
    bsize, _, blocks = board.eval("os.statvfs('/')[:3]", pre="import os")
    assert bsize * blocks == board_spec.fs_bytes
