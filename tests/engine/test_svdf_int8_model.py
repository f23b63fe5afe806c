"""Hotword models with int8 SVDF weights_time and state, as TFLM's converter emits them
(graphmodels.hotword_model, quantized from a simulated float run so that no layer saturates).
LiteRT reads int8 weights_time and state as int16 (and overruns the int8 state buffer), so TFLM
(`tflite-micro`) is the oracle: the engine must match it bit for bit on every frame of a sequence
(the state carries over) and again after reset(). TFLM's int8 FULLY_CONNECTED rounds twice where
LiteRT's (and the engine's) rounds once, so the TFLM models chain SVDFs only
(HOTWORD_SVDF_LAYERS); the keyword-spotter with FULLY_CONNECTED layers is checked in its int16
form against LiteRT, and the SVDF-only int16 form against both oracles."""
import numpy as np
import pytest

import oracle
from graphmodels import HOTWORD_SVDF_LAYERS, hotword_model


def _run_both(engine, md, frames, reset_at=None):
    ref, it = oracle.tflm_interpreter(md), engine.Interpreter(engine.Model(md))
    outs = []
    for step, x in enumerate(frames):
        if step == reset_at:
            it.reset()
            ref.reset()
        it.set_input(0, x)
        it.invoke()
        ref.set_input(x, 0)
        ref.invoke()
        want = ref.get_output(0)
        got = it.output(0).reshape(want.shape)
        assert got.dtype == want.dtype and np.array_equal(got, want), (step, got, want)
        outs.append(want.copy())
    return np.concatenate(outs)


def _litert(md, frames):
    it = oracle.interpreter(md)
    it.reset_all_variables()
    outs = []
    for x in frames:
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
    return np.concatenate(outs)


def _meaningful(outs, n):
    """The scores move from frame to frame and do not sit at the int8 limits."""
    assert len({o.tobytes() for o in outs}) > n // 2
    assert np.mean(outs == 127) < 0.05 and np.mean(outs == -128) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_int8_time_hotword_model_bit_exact_with_tflm(engine, seed):
    md, frames = hotword_model(np.int8, seed=seed, layers=HOTWORD_SVDF_LAYERS)
    _meaningful(_run_both(engine, md, frames, reset_at=25), len(frames))


def test_int16_time_svdf_model_both_oracles(engine):
    md, frames = hotword_model(np.int16, layers=HOTWORD_SVDF_LAYERS)
    np.testing.assert_array_equal(_run_both(engine, md, frames), _litert(md, frames))


@pytest.mark.parametrize("seed", [0, 1])
def test_int16_time_keyword_spotter_bit_exact_with_litert(engine, seed):
    md, frames = hotword_model(np.int16, seed=seed)
    want = _litert(md, frames)
    it = engine.Interpreter(engine.Model(md))
    for x, w in zip(frames, want):
        it.set_input(0, x)
        it.invoke()
        np.testing.assert_array_equal(it.output(0).reshape(w.shape), w)
    _meaningful(want, len(frames))
