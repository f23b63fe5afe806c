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
import gc, time, board
def work(n):
    s = 0
    i = 0
    while i < n:  # small ints and locals only: no allocation, no GC, no dict lookups
        s = (s + i * 7) & 0xffff
        i += 1
    return s
# Everything the span touches is a local: a global lookup's cost depends on what else is in the
# module's dict, i.e. on what earlier code left there.
def measure(n, sync=False, work=work, cpu=time.ticks_cpu, us=time.ticks_us, align=board.sync_cycles):
    gc.collect()
    gc.disable()
    if sync:
        align()
    u0 = us()
    t0 = cpu()
    work(n)
    t1 = cpu()
    u1 = us()
    gc.enable()
    return time.ticks_diff(t1, t0), time.ticks_diff(u1, u0)
measure(10)
"""
N = 20_000


@pytest.mark.emulated_only
def test_ticks_cpu_counts_identically_after_sync(board):
    # Under -icount the guest executes the same instructions every time, and board.sync_cycles()
    # starts the code after it at the same phase of the tick (the SysTick wrap interrupt, taken at
    # an exact point of QEMU's virtual clock), so nothing is left to differ: not one tick, on any
    # board. Separate execs (fresh code objects, different heap state) and wrap interrupts that
    # may or may not fall inside the span are part of what must not matter.
    runs = [board.eval(f"(measure({N}, True), measure({N}, True))", pre=WORKLOAD) for _ in range(3)]
    counts = [t for run in runs for t, _ in run]
    assert len(set(counts)) == 1, f"ticks_cpu differ between identical runs: {counts}"


@pytest.mark.emulated_only
def test_ticks_cpu_counts_within_one_tick(board, board_spec):
    # Without sync_cycles() a span starts at an arbitrary phase within a tick; W instructions
    # then count floor(W/ipt) or ceil(W/ipt) ticks and nothing else (interrupts inside the span
    # are excluded exactly, see test_systick_wrap_handler_is_excluded), so two runs differ by at
    # most one tick, and by none where a tick is one instruction (VIRT_RV32).
    runs = [board.eval(f"(measure({N}), measure({N}))", pre=WORKLOAD) for _ in range(3)]
    counts = [t for run in runs for t, _ in run]
    limit = 0 if board_spec.instructions_per_tick == 1 else 1
    assert max(counts) - min(counts) <= limit, f"ticks_cpu differ between identical runs: {counts}"


WRAPS = """
import gc, time, board, machine
def span(k, pendstset, cpu=time.ticks_cpu, m=machine.mem32, icsr=0xe000ed04):
    gc.collect()
    gc.disable()
    board.sync_cycles()
    t0 = cpu()
    i = 0
    while i < k:
        m[icsr] = pendstset  # 1 << 26 pends the SysTick wrap handler, 0 does nothing
        i += 1
    t1 = cpu()
    gc.enable()
    return time.ticks_diff(t1, t0)
span(2, 0)
"""


@pytest.mark.emulated_only
def test_systick_wrap_handler_is_excluded(board, board_spec):
    # The SysTick wrap handler is the one periodic interrupt on Cortex-M boards, so whether a span
    # contains a wrap depends on when it started. Pending the handler K times inside a span (each
    # run counts as a wrap, +2^24 ticks) must add exactly K * 2^24: its own instructions must not
    # show. A 5-instruction handler without that accounting adds K*5/ipt ticks (13 per 16 wraps on
    # NETDUINOPLUS2), which is how a wrap inside the span turned into a 2-tick flake.
    if not (board_spec.arch or "").startswith("armv"):
        pytest.skip("no SysTick: the RISC-V cycle CSR has no wrap interrupt")
    k = 16  # 16 * 2^24 = 2^28 stays within ticks_diff's range (2^29)
    with_wraps, without = board.eval(f"(span({k}, 1 << 26), span({k}, 0))", pre=WRAPS)
    assert with_wraps - without == k << 24, \
        f"{k} wrap handler runs cost {with_wraps - without - (k << 24)} ticks inside the span"


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
