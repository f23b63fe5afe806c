"""FULLY_CONNECTED requantization where rounding is decided: exact ties and values within a 31-bit
multiplier's error of a tie, against LiteRT, int8 and int16x8, per-tensor and per-channel, on the
reference kernel and the host's optimized variant (generic.fc_s8).

LiteRT rounds acc * R to nearest with ties away from zero, R = in_scale * w_scale / out_scale in
double (mn_fc_round_fast). Probes that pinned it (and that a fixed-point rule fails): power-of-two
scales give exact ties, -5.5 -> -6 (single-rounding MultiplyByQuantizedMultiplier gives -5); biases
chosen at (n + 1/2) / R with a tiny R put the value within 1e-8 of a tie, where a 31-bit multiplier
and the float32 product of the scales (TFLite's GetQuantizedConvolutionMultipler) both misround
(the generator's int16-fc-offbyone regressions were the second). The weights are zero, so the
accumulator is the bias and every output is such a case; a second input makes the dot product
count too.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import oracle

sys.path.insert(0, str(Path(__file__).parent.parent))
import graphmodels as gm  # noqa: E402
from gen.run import run_micronn  # noqa: E402
from ai_edge_litert import schema_py_generated as S  # noqa: E402

FAMILIES = {"int8": (np.int8, np.int32, -128, 127), "int16": (np.int16, np.int64, -32768, 32767)}


def fc_model(dt, bt, s_in, s_w, s_out, bias, weights, per_channel, zp_out=0):
    units, depth = weights.shape
    g = gm.Graph()
    x = g.input("x", dt, (1, depth), scale=s_in, zp=0)
    w = g.const("w", weights.astype(np.int8), scale=[s_w] * units if per_channel else s_w, zp=0)
    b = g.const("b", bias.astype(bt), scale=[s_in * s_w] * units if per_channel else float(np.float32(s_in * s_w)),
                zp=0)
    g.output(g.op(gm.BO.FULLY_CONNECTED, [x, w, b], dt, (1, units), S.BuiltinOptions.FullyConnectedOptions,
                  S.FullyConnectedOptionsT(), scale=s_out, zp=zp_out))
    return g.tflite()


def near_ties(rng, dt, lo, hi, n=96):
    """Scales with a small ratio R and biases that put acc * R next to n + 1/2."""
    s_in = float(np.float32(rng.uniform(1e-3, 1e-1) if dt == np.int8 else rng.uniform(1e-5, 1e-3)))
    s_w = float(np.float32(rng.uniform(1e-3, 2e-2)))
    s_out = float(np.float32(rng.uniform(0.5, 4) * s_in * s_w * (2e6 if dt == np.int8 else 500)))
    r = s_in * s_w / s_out
    bias = []
    for k in rng.integers(lo // 2, hi // 2, size=n // 3):
        b0 = int(round((k + 0.5) / r))
        bias += [b0 - 1, b0, b0 + 1]
    return s_in, s_w, s_out, np.array(bias)


def check(model, x, configs=("reference", "greedy")):
    want = oracle.run(model, [x])[0]
    for c in configs:
        got = run_micronn(model, [[x]], c)[0][0].reshape(want.shape)
        bad = np.argwhere(got != want)
        assert not len(bad), f"{c}: {len(bad)} of {want.size} differ, e.g. {got.flat[bad[0][-1]]} vs {want.flat[bad[0][-1]]}"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_exact_ties_round_away_from_zero(engine, family, per_channel):
    dt, bt, lo, hi = FAMILIES[family]
    bias = np.array([256 * n + 128 for n in range(-40, 40)])
    model = fc_model(dt, bt, 2.0 ** -12, 2.0 ** -6, 2.0 ** -10, bias, np.zeros((bias.size, 4)), per_channel)
    check(model, np.zeros((1, 4), dt))
    want = oracle.run(model, [np.zeros((1, 4), dt)])[0].reshape(-1)
    assert want[0] == -40 and want[39] == -1 and want[40] == 1   # the rule itself: -39.5 -> -40, 0.5 -> 1


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_near_ties_follow_the_double_ratio(engine, family, per_channel):
    dt, bt, lo, hi = FAMILIES[family]
    rng = np.random.default_rng(7 + per_channel)
    for _ in range(12):
        s_in, s_w, s_out, bias = near_ties(rng, dt, lo, hi)
        check(fc_model(dt, bt, s_in, s_w, s_out, bias, np.zeros((bias.size, 4)), per_channel),
              np.zeros((1, 4), dt))


@pytest.mark.parametrize("family", FAMILIES)
def test_near_ties_with_a_dot_product(engine, family):
    """The same, with the accumulator from real weights and inputs (bias shifted to compensate)."""
    dt, bt, lo, hi = FAMILIES[family]
    rng = np.random.default_rng(11)
    for _ in range(8):
        s_in, s_w, s_out, bias = near_ties(rng, dt, lo, hi)
        depth = 16
        w = rng.integers(-127, 128, size=(bias.size, depth))
        x = rng.integers(lo // 4, hi // 4, size=(1, depth)).astype(dt)
        model = fc_model(dt, bt, s_in, s_w, s_out, bias - (w @ x[0].astype(np.int64)), w, per_channel=False)
        check(model, x)


def test_int16_accumulator_past_int32(engine):
    """int64 accumulators beyond int32 take R itself (LiteRT does not truncate them)."""
    dt, bt = np.int16, np.int64
    bias = np.array([(1 << 33) + 12345, -(1 << 33) - 777, (1 << 40), 3 << 31])
    model = fc_model(dt, bt, 2.0 ** -12, 2.0 ** -6, 2.0 ** 10, bias, np.zeros((bias.size, 4)), False)
    check(model, np.zeros((1, 4), dt), configs=("reference",))
