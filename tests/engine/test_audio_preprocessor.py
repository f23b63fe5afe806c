"""TFLM's audio front end, audio/audio_preprocessor_int8.tflite (the signal-library custom ops of
engine/kernels/signal/ plus CAST uint32 <-> int32, STRIDED_SLICE, CONCATENATION and int32
arithmetic), through the whole engine against TFLM itself (tflite-micro: LiteRT has no signal
ops), as TFLM's micro_speech example runs it: every 30 ms window (480 samples) of each shared
16 kHz clip, stepped by 20 ms, state (the spectral subtraction's noise estimate) carried from
window to window and reset between clips. All 40 int8 features of every window bit-exact; then
the first 49 windows' features through micro_speech_quantized give TFLM's scores
(../shared/models/README.md)."""
import wave

import numpy as np
import pytest

import oracle

MODEL = "audio/audio_preprocessor_int8.tflite"
CLIPS = {"yes_1000ms": ([-128, -128, 127, -128], 2), "no_1000ms": ([-128, -114, -128, 114], 3),
         "silence_1000ms": ([-42, -68, -68, -78], 0), "noise_1000ms": ([120, -125, -126, -125], 0)}
WINDOW, STEP = 480, 320


def clip(name):
    with wave.open(oracle.model_path(f"audio/{name}.wav")) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (16000, 2, 1)
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


def windows(x):
    return [x[s:s + WINDOW].reshape(1, WINDOW) for s in range(0, len(x) - WINDOW + 1, STEP)]


def features(it, frames, set_input, get_output):
    out = []
    for f in frames:
        set_input(f)
        it.invoke()
        out.append(get_output().copy())
    return np.array(out)


@pytest.fixture(scope="module")
def pre(engine):
    return engine.Interpreter(engine.Model(oracle.read_model(MODEL)))


@pytest.fixture(scope="module")
def tflm():
    return oracle.tflm_interpreter(oracle.read_model(MODEL))


def _ours(it, frames):
    it.reset()
    return features(it, frames, lambda f: it.set_input(0, f), lambda: it.get_output(0))


def _tflm(it, frames):
    it.reset()
    return features(it, frames, lambda f: it.set_input(f, 0), lambda: it.get_output(0))


def test_inspect_supported(engine):
    m = engine.Model(oracle.read_model(MODEL))
    it = engine.Interpreter(m)
    assert it.get_output(0).shape == (40,) and it.get_output(0).dtype == np.int8


@pytest.mark.parametrize("name", sorted(CLIPS) + ["yes_30ms", "no_30ms"])
def test_features_bit_exact(pre, tflm, name):
    frames = windows(clip(name))
    got, want = _ours(pre, frames), _tflm(tflm, frames)
    assert got.shape == want.shape == (len(frames), 40)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 20   # real features, not a saturated constant


def test_reset_restarts_state(pre, tflm):
    """The noise estimate is state: the same window gives other features later in a clip, and the
    first ones again after reset() (TFLM: the same)."""
    frames = windows(clip("yes_1000ms"))
    first = _ours(pre, frames[:1])[0]
    for f in frames[:10]:
        pre.set_input(0, f)
        pre.invoke()
    pre.set_input(0, frames[0])
    pre.invoke()
    later = pre.get_output(0).copy()
    assert not np.array_equal(first, later)
    np.testing.assert_array_equal(_ours(pre, frames[:1])[0], first)
    np.testing.assert_array_equal(first, _tflm(tflm, frames[:1])[0])


@pytest.mark.parametrize("name", sorted(CLIPS))
def test_micro_speech_scores(engine, pre, name):
    """The front end's 49 windows through micro_speech_quantized on the engine: TFLM's scores."""
    feats = _ours(pre, windows(clip(name))[:49])
    ms = engine.Interpreter(engine.Model(oracle.read_model("micro_speech_quantized.tflite")))
    ms.set_input(0, feats.reshape(1, 1960))
    ms.invoke()
    scores, label = CLIPS[name]
    assert ms.get_output(0).ravel().tolist() == scores
    assert int(np.argmax(ms.get_output(0))) == label
