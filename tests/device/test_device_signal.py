"""TFLM's signal-library ops on the board (engine/kernels/signal/): the audio front end
audio/audio_preprocessor_int8.tflite over the first windows of a shared clip (state carried
from window to window, then reset()), and single-op samples (an int32 FFT of 1024 points, the
stacker's stream) -- all bit-exact with TFLM (tflite-micro) on the host."""
import os
import sys
import wave

import numpy as np

import oracle

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))


def _tflm_stream(model, frames):
    it = oracle.tflm_interpreter(model)
    out = []
    for f in frames:
        it.set_input(f, 0)
        it.invoke()
        out.append(it.get_output(0).copy())
    return out


def test_audio_preprocessor_on_board(dev):
    model = oracle.read_model("audio/audio_preprocessor_int8.tflite")
    with wave.open(oracle.model_path("audio/yes_1000ms.wav")) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    frames = [x[s:s + 480].reshape(1, 480) for s in range(0, 8 * 320, 320)]
    dev.put(model, "pre.tflite")
    r = dev.eval_last("import micronn\nm = micronn.load_file('pre.tflite')\nit = micronn.Interpreter(m)\n"
                      f"frames = {[f.tobytes() for f in frames]!r}\n" + """
res = []
for rep in range(2):
    feats = []
    for f in frames:
        it.input(0)[:] = f
        it.invoke()
        feats.append(list(it.output(0)))
    res.append(feats)
    it.reset()
print(res)
""")
    want = [w.tolist() for w in _tflm_stream(model, frames)]
    assert r[0] == want
    assert r[1] == want   # reset() restarted the noise estimate


def test_rfft_int32_and_stacker_on_board(dev):
    import models_signal as G
    rng = np.random.default_rng(5)
    m, gen = G.rfft(rng, fft_length=1024, in_len=1000, dtype=np.int32)
    x = gen(rng, m.tensors[0])
    want = _tflm_stream(m.tflite(), [x])[0]
    dev.put(m.tflite(), "rfft.tflite")
    got = dev.eval_last("import micronn\nit = micronn.Interpreter(micronn.load_file('rfft.tflite'))\n"
                        f"it.input(0)[:] = {x.tobytes()!r}\nit.invoke()\nprint(list(it.output(0)))\n")
    assert got == want.tolist()

    m, gen = G.stacker(rng, 8, 2, 1, 2)
    seq = [gen(rng, m.tensors[0]) for _ in range(7)]
    tf = oracle.tflm_interpreter(m.tflite())
    want = []
    for s in seq:
        tf.set_input(s, 0)
        tf.invoke()
        want.append((bool(tf.get_output(1)), tf.get_output(0).tolist() if bool(tf.get_output(1)) else None))
    dev.put(m.tflite(), "stk.tflite")
    got = dev.eval_last("import micronn\nit = micronn.Interpreter(micronn.load_file('stk.tflite'))\n"
                        f"seq = {[s.tobytes() for s in seq]!r}\n" + """
res = []
for s in seq:
    it.input(0)[:] = s
    it.invoke()
    v = bool(it.output(1)[0])
    res.append((v, list(it.output(0)) if v else None))
print(res)
""")
    assert [tuple(g) for g in got] == want
