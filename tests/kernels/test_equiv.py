"""Kernel equivalence: every optimized kernel variant against the reference compute function.

Builds tests/kernels/equiv.c for each instruction set with the backends that exist for it (host:
generic under ASan/UBSan; Cortex-M4 on QEMU mps2-an386: dsp + generic; Cortex-M55 on mps3-an547:
mve + dsp + generic; RV32 on QEMU virt: generic) and runs it. The harness exits non-zero and
prints "N passed, M failed" with M > 0 on any bit difference, or names a variant that ran no case.
"""
import os
import re
import subprocess

import pytest

import cpu_limit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build", "kernels")

QEMU_ARM = ["qemu-system-arm", "-nographic", "-monitor", "null", "-semihosting"]
TARGETS = {
    "host": (os.path.join(BUILD, "host", "equiv"), []),
    "an386": (os.path.join(BUILD, "an386", "equiv.elf"), QEMU_ARM + ["-machine", "mps2-an386", "-kernel"]),
    "an547": (os.path.join(BUILD, "an547", "equiv.elf"), QEMU_ARM + ["-machine", "mps3-an547", "-kernel"]),
    "rv32": (
        os.path.join(BUILD, "rv32", "equiv.elf"),
        ["qemu-system-riscv32", "-machine", "virt", "-bios", "none", "-nographic", "-monitor", "null",
         "-semihosting-config", "enable=on,target=native", "-kernel"],
    ),
}


# Limits are on CPU time (tests/cpu_limit.py): a loaded machine makes QEMU slower, not wrong.
@pytest.mark.timeout(cpu_limit.WALL_BACKSTOP)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_equiv(target):
    exe, runner = TARGETS[target]
    build = cpu_limit.run(["make", "-s", "-C", HERE, target], 600, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    env.pop("LD_PRELOAD", None)
    run = cpu_limit.run(runner + [exe], 280, capture_output=True, text=True, env=env,
                        stdin=subprocess.DEVNULL)
    out = run.stdout + run.stderr
    print(out)
    # (semihosting on RISC-V prints to QEMU's stderr)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines, out
    m = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip())
    assert m, out
    assert int(m.group(2)) == 0, out
    assert int(m.group(1)) > 0, out
    assert "never ran" not in out, out
    assert run.returncode == 0, out
