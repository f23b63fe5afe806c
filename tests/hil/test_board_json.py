"""Every boards/*/board.json is well-formed (no board needed: these run on the host)."""
import shutil

import pytest

from micronn_tools import boards

ALL = boards.all_boards()


def test_exactly_one_default_board():
    assert boards.default().emulated


@pytest.mark.parametrize("spec", ALL, ids=[b.name for b in ALL])
def test_board_json(spec):
    if not spec.emulated:
        assert spec.firmware
        return
    for key in ("ram_bytes", "flash_bytes", "fs_bytes", "romfs_bytes", "heap_bytes", "cpu_hz",
                "instructions_per_tick", "fault_address", "emulated_machine", "core"):
        assert getattr(spec, key) is not None, f"{spec.name}: board.json lacks {key}"
    assert spec.heap_bytes <= spec.ram_bytes
    # -icount shift=0: one instruction per ns, so a tick of a cpu_hz clock is 1e9/cpu_hz of them.
    assert spec.cpu_hz * spec.instructions_per_tick == pytest.approx(1e9, rel=1e-9)
    argv = spec.qemu_argv()
    assert shutil.which(argv[0]), f"{argv[0]} is not installed"
    assert spec.emulated_machine in argv, "qemu args do not select emulated_machine"
    assert argv[-2:] == ["-kernel", str(spec.firmware_path)]
