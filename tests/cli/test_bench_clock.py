"""The run clock that bench and run send to emulated boards (cmd_bench.CLOCK_CODE): ticks_cpu in
the window, whole 2^30-tick periods from the 64-bit counter read around it. Checked here with the
board's arithmetic (time.ticks_diff over a 2^30 period) on spans below and far above 2^30."""
import types

import pytest

from micronn_tools.cmd_bench import CLOCK_CODE

PERIOD = 1 << 30


def _clock(now, profile_clock="cpu"):
    time = types.SimpleNamespace(
        ticks_cpu=lambda: now[0] % PERIOD,
        ticks_us=lambda: (now[0] // 25) % PERIOD,
        ticks_diff=lambda b, a: ((b - a + PERIOD // 2) % PERIOD) - PERIOD // 2)
    micronn = types.SimpleNamespace(ticks=lambda: now[0], PROFILE_CLOCK=profile_clock)
    g = {"time": time, "micronn": micronn}
    exec(CLOCK_CODE[True], g)
    return g


@pytest.mark.parametrize("span", [0, 40, 12345, PERIOD - 1, PERIOD, PERIOD + 7, 3 * PERIOD // 2, 1_520_000_000,
                                  5 * PERIOD + 123])
@pytest.mark.parametrize("start", [0, 987_654_321, (1 << 33) + 5])
def test_span_counts_whole_periods(span, start):
    now = [start]
    g = _clock(now)
    T0 = g["_wide"]()
    now[0] += 17            # the sync and the read of t0
    t0 = g["_clk"]()
    now[0] += span
    t1 = g["_clk"]()
    now[0] += 23
    T1 = g["_wide"]()
    assert g["_span"](t0, t1, T0, T1) == span


def test_without_a_64bit_counter_the_span_is_ticks_cpu_modulo_the_period():
    now = [100]
    g = _clock(now, profile_clock="ns")
    T0, t0 = g["_wide"](), g["_clk"]()
    now[0] += 5000
    assert g["_span"](t0, g["_clk"](), T0, g["_wide"]()) == 5000
