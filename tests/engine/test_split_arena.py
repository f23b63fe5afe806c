"""Split arenas (mn_interp_set_persistent): persistent data in one buffer, activations in
another. Outputs are identical to a single arena, the two sizes the dry run reports are exact,
and every record lands in the buffer meant for it."""
import ctypes

import numpy as np
import pytest

import oracle

MODELS = ["person_detect.tflite", "keyword_scrambled.tflite", "micro_speech_quantized.tflite",
          "trained_lstm_int8.tflite", "hello_world_float.tflite"]


def _input(it, seed=5):
    d = it.input_details(0)
    rng = np.random.default_rng(seed)
    if np.dtype(d["dtype"]).kind == "f":
        return rng.normal(0, 1, size=d["shape"]).astype(np.float32)
    info = np.iinfo(d["dtype"])
    return rng.integers(max(info.min, -3000), min(info.max, 3000) + 1, size=d["shape"]).astype(d["dtype"])


def _run(it, x):
    it.set_input(0, x)
    it.invoke()
    it.invoke()   # twice: variable tensors (SVDF, LSTM state) live in the persistent buffer
    return it.output(0)


@pytest.mark.parametrize("name", MODELS)
def test_split_matches_single_arena(engine, name):
    m = engine.Model(oracle.read_model(name))
    pers, act = m.arena_split()
    single = engine.Interpreter(m)
    x = _input(single)
    want = _run(single, x)
    it = engine.Interpreter(m, arena_size=act, persistent_size=pers)
    np.testing.assert_array_equal(_run(it, x), want)
    st, st1 = it.stats(), single.stats()
    assert st["persistent"] == st1["persistent"]
    assert st["nonpersistent"] == st1["nonpersistent"]
    # together no more than the single arena (+ one alignment slack each)
    assert pers + act <= single.arena_size + 15
    lo, plo = ctypes.addressof(it._arena), ctypes.addressof(it._pers)
    # the tensor records are in the persistent buffer
    rec = ctypes.cast(it._L.mn_interp_input(it._it, 0), ctypes.c_void_p).value
    assert plo <= rec < plo + pers
    # activations (inputs/outputs) are in the arena, not in the persistent buffer
    for t in (it._input(0), it._output(0)):
        assert lo <= t.data < lo + act + 1


@pytest.mark.parametrize("name", ["person_detect.tflite", "keyword_scrambled.tflite"])
def test_split_sizes_are_exact(engine, name):
    m = engine.Model(oracle.read_model(name))
    pers, act = m.arena_split()
    engine.Interpreter(m, arena_size=act, persistent_size=pers)
    with pytest.raises(engine.MicronnError, match="persistent arena too small"):
        engine.Interpreter(m, arena_size=act, persistent_size=pers - 16)
    with pytest.raises(engine.MicronnError, match=r"^arena too small: need %d bytes" % act):
        engine.Interpreter(m, arena_size=act - 16, persistent_size=pers)
