"""time.ticks_* behave, and under -icount ticks_cpu() is a deterministic instruction counter."""
import pytest

MONOTONIC = """
import time
prev = (time.ticks_ms(), time.ticks_us(), time.ticks_cpu())
bad = []
x = 0
for i in range(300):
    for j in range(20):
        x += j
    now = (time.ticks_ms(), time.ticks_us(), time.ticks_cpu())
    for k in range(3):
        if time.ticks_diff(now[k], prev[k]) < 0:
            bad.append((k, prev[k], now[k]))
    prev = now
print(repr(bad))
"""


def test_ticks_are_monotonic(board):
    assert board.eval("bad", pre=MONOTONIC) == []


@pytest.mark.serial_only  # on a loaded host a unix process may sleep much longer
def test_sleep_ms_advances_ticks(board):
    dms, dus = board.eval(
        "(time.ticks_diff(t1, t0), time.ticks_diff(u1, u0))",
        pre="import time\nt0 = time.ticks_ms(); u0 = time.ticks_us()\ntime.sleep_ms(50)\n"
            "t1 = time.ticks_ms(); u1 = time.ticks_us()")
    assert 50 <= dms <= 60
    assert 50_000 <= dus <= 60_000


WORKLOAD = """
import gc, time
def work(n):
    s = 0
    for i in range(n):
        s = (s + i * 7) & 0xffff  # small ints only: no heap allocation, no GC
    return s
def measure(n):
    gc.collect()
    gc.disable()
    u0 = time.ticks_us()
    t0 = time.ticks_cpu()
    work(n)
    t1 = time.ticks_cpu()
    u1 = time.ticks_us()
    gc.enable()
    return time.ticks_diff(t1, t0), time.ticks_diff(u1, u0)
measure(10)
"""
N = 20_000


@pytest.mark.emulated_only
def test_ticks_cpu_counts_deterministically(board, board_spec):
    # Under -icount the guest executes the same instructions every time. What can differ is only
    # where the measured span starts within a tick (ticks_cpu counts the CPU clock: one tick is
    # instructions_per_tick instructions, and the phase at the start depends on when the code
    # arrived over the UART), so two runs may differ by at most one tick.
    runs = [board.eval(f"(measure({N}), measure({N}))", pre=WORKLOAD) for _ in range(3)]
    counts = [t for run in runs for t, _ in run]
    assert max(counts) - min(counts) <= 1, f"ticks_cpu differ between identical runs: {counts}"


@pytest.mark.emulated_only
def test_ticks_cpu_is_plausible(board, board_spec):
    ipt = board_spec.instructions_per_tick
    assert ipt and board_spec.cpu_hz, "board.json needs cpu_hz and instructions_per_tick"
    # -icount shift=0: 1 ns of guest time per instruction, so ticks/s * instructions/tick = 1e9.
    assert board_spec.cpu_hz * ipt == pytest.approx(1e9, rel=1e-9)
    ticks, us = board.eval(f"measure({N})", pre=WORKLOAD)
    instructions = board_spec.instructions(ticks)
    # The same span measured with ticks_us: 1000 instructions per microsecond.
    assert instructions == pytest.approx(us * 1000, rel=0.01, abs=2000)
    # A bytecode loop iteration costs tens to hundreds of instructions, not 1 or 10,000.
    assert 20 * N < instructions < 2000 * N
