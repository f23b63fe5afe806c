"""micro_speech from raw audio on the board: micronn.audio.Speech (py_lib/micronn/audio.py) runs
TFLM's audio front end (audio/audio_preprocessor_int8.tflite) on every 30 ms window of 16 kHz
int16 samples, 20 ms apart, and micro_speech_quantized on the last 49 feature frames, both
Interpreters in one micronn.Arena. The oracle is TFLM itself (tflite-micro on the host: the front
end's signal ops are TFLM custom ops): the four shared 1000 ms clips give TFLM's scores
(../shared/models/README.md), the streaming helper gives what the two plain Interpreters give on
the whole clip, any chunk size gives the same scores, a 2 s stream is scored on every 20 ms frame
as TFLM scores the same sliding windows, and feed() allocates nothing (micropython.heap_lock())."""
import wave

import numpy as np
import pytest

import oracle

FRONTEND = "audio/audio_preprocessor_int8.tflite"
CLASSIFIER = "micro_speech_quantized.tflite"
WINDOW, STEP, FRAMES = 480, 320, 49
#: TFLM's scores and labels ([silence, unknown, yes, no]), as ../shared/models/README.md lists them.
README = {"yes_1000ms": ([-128, -128, 127, -128], "yes"), "no_1000ms": ([-128, -114, -128, 114], "no"),
          "silence_1000ms": ([-42, -68, -68, -78], "silence"),
          "noise_1000ms": ([120, -125, -126, -125], "silence")}
LABELS = ("silence", "unknown", "yes", "no")


def clip(name):
    with wave.open(oracle.model_path(f"audio/{name}.wav")) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (16000, 2, 1)
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


def tflm_frames(x):
    """TFLM's front end over every window of the stream x (state carried, from reset)."""
    it = oracle.tflm_interpreter(oracle.read_model(FRONTEND))
    out = []
    for s in range(0, len(x) - WINDOW + 1, STEP):
        it.set_input(x[s:s + WINDOW].reshape(1, WINDOW), 0)
        it.invoke()
        out.append(it.get_output(0).copy())
    return np.array(out, dtype=np.int8)


def tflm_scores(frames):
    """TFLM's classifier on every run of 49 consecutive frames: [[4 scores], ...]."""
    it = oracle.tflm_interpreter(oracle.read_model(CLASSIFIER))
    res = []
    for k in range(FRAMES, len(frames) + 1):
        it.set_input(frames[k - FRAMES:k].reshape(1, FRAMES * 40), 0)
        it.invoke()
        res.append(it.get_output(0).ravel().tolist())
    return res


@pytest.fixture(autouse=True)
def _room_for_the_clips(request):
    """The four 1 s clips (32 KB each) and both models go to the board's filesystem: boards with
    less than 256 KB of it (NETDUINOPLUS2: 64 KB) cannot hold them."""
    if "dev" not in request.fixturenames:
        return   # (the host-only oracle check runs everywhere)
    spec = request.getfixturevalue("board_spec")
    if spec.fs_bytes is not None and spec.fs_bytes < 256 * 1024:
        pytest.skip(f"{spec.name}: {spec.fs_bytes}-byte filesystem, the clips and models need 256 KB")


@pytest.fixture(scope="module")
def oracle_scores():
    """TFLM's scores of each clip (its one full window of 49 frames)."""
    got = {}
    for name in README:
        s = tflm_scores(tflm_frames(clip(name)))
        assert len(s) == 1
        got[name] = s[0]
    return got


def test_oracle_gives_readme_scores(oracle_scores):
    for name, (scores, label) in README.items():
        assert oracle_scores[name] == scores, name
        assert LABELS[int(np.argmax(scores))] == label


def _setup(dev, clips):
    """Device code making `S` (the Speech class) and `sp` (an instance with both models), with
    each clip copied to the board as its .wav file and read back into `clips[name]` (array('h'))."""
    frozen = dev.frozen()
    if "audio_preprocessor_int8" in frozen:
        fe = "'audio_preprocessor_int8'"
    else:
        dev.put(oracle.read_model(FRONTEND), "audio_preprocessor_int8.tflite")
        fe = "'audio_preprocessor_int8.tflite'"
    if "micro_speech_quantized" in frozen:
        cl = "'micro_speech_quantized'"
    else:
        dev.put(oracle.read_model(CLASSIFIER), "micro_speech_quantized.tflite")
        cl = "'micro_speech_quantized.tflite'"
    for name in clips:
        dev.put(oracle.model_path(f"audio/{name}.wav"), f"{name}.wav")
    return (f"import micronn, micropython\nfrom micronn.audio import Speech, read_wav\n"
            f"FE, CL = {fe}, {cl}\n"
            f"clips = {{n: read_wav(n + '.wav') for n in {list(clips)!r}}}\n"
            "sp = Speech(FE, CL)\n")


def test_clips_scores_equal_tflm(dev, oracle_scores):
    """Each clip in 320-sample chunks: TFLM's scores and the README's label; the same as the two
    plain Interpreters (separate arenas) on the clip's 49 windows at once."""
    r = dev.eval_last(_setup(dev, README) + """
def whole(x):
    fe = micronn.Interpreter(micronn.load(FE))
    cl = micronn.Interpreter(micronn.load(CL))
    feats = bytearray()
    s = 0
    while s + 480 <= len(x):
        fe.input(0)[:] = x[s:s + 480]
        fe.invoke()
        feats += bytes(fe.output(0))
        s += 320
    cl.input(0)[:] = feats[:1960]
    cl.invoke()
    return list(cl.output(0))
res = {}
for n, x in clips.items():
    sp.reset()
    i = 0
    while i < len(x):
        sp.feed(x, i, min(i + 320, len(x)))
        i += 320
    res[n] = (list(sp.scores), sp.label(), sp.frames, sp.runs, whole(x))
print(res)
""", timeout=600)
    for name, (scores, label) in README.items():
        got, lab, frames, runs, whole = r[name]
        assert (frames, runs) == (49, 1), name
        assert got == oracle_scores[name] == scores, name
        assert lab == label, name
        assert whole == got, name


def test_chunk_sizes_give_the_same_scores(dev, oracle_scores):
    """160, 320, 1000 and an odd 77 samples per feed(), slices or start/stop ranges, and
    classify() on the whole clip at once: the same scores."""
    names = ["yes_1000ms", "noise_1000ms"]
    r = dev.eval_last(_setup(dev, names) + """
res = {}
for n, x in clips.items():
    per = []
    for c in (160, 320, 1000, 77):
        sp.reset()
        i = 0
        while i < len(x):
            if c == 1000:
                sp.feed(x[i:i + c])
            else:
                sp.feed(x, i, min(i + c, len(x)))
            i += c
        per.append(list(sp.scores))
    per.append(sp.classify(x))
    res[n] = per
print(res)
""", timeout=600)
    for name in names:
        assert r[name] == [oracle_scores[name]] * 5, name


def test_stream_scored_every_frame(dev):
    """yes then no as one 2 s stream (99 windows): a score every 20 ms once 49 frames exist (51
    runs), each equal to TFLM's classifier on the same 49 frames of TFLM's front end (state
    carried through the whole stream); the ring slides by one frame per run."""
    x = np.concatenate([clip("yes_1000ms"), clip("no_1000ms")])
    want = tflm_scores(tflm_frames(x))
    assert len(want) == 51
    r = dev.eval_last(_setup(dev, ["yes_1000ms", "no_1000ms"]) + """
from array import array
x = array('h', bytes(clips['yes_1000ms']) + bytes(clips['no_1000ms']))
got = []
sp = Speech(FE, CL, on_scores=lambda s: got.append(list(s.scores)))
runs = 0
i = 0
while i < len(x):
    runs += sp.feed(x, i, min(i + 320, len(x)))
    i += 320
print((runs, sp.frames, got))
""", timeout=600)
    runs, frames, got = r
    assert (runs, frames) == (51, 99)
    assert got == want
    assert len({tuple(g) for g in got}) > 5   # the scores move as the window slides
    assert got[0] == README["yes_1000ms"][0]


def test_feed_allocates_nothing(dev, oracle_scores):
    """reset() and feed() in 320- and 1000-sample ranges under micropython.heap_lock(): the
    clips' scores, with no MemoryError."""
    names = ["no_1000ms", "silence_1000ms"]
    r = dev.eval_last(_setup(dev, names) + """
out = {n: [bytearray(4), bytearray(4)] for n in clips}
jobs = [(x, out[n][k], c) for n, x in clips.items() for k, c in enumerate((320, 1000))]
def run(jobs):   # locals live on the stack: new module globals would grow the globals dict
    for x, o, c in jobs:   # list iteration, tuple unpacking: no heap
        sp.reset()
        i = 0
        while i < len(x):
            e = i + c
            if e > len(x):
                e = len(x)
            sp.feed(x, i, e)
            i = e
        for j in range(4):
            o[j] = sp.scores[j] & 0xff
err = None
control = None
micropython.heap_lock()
try:
    run(jobs)
except MemoryError:
    err = 'MemoryError'
try:
    sp.feed(jobs[0][0][0:320])   # the lock is on: a slice is a new array
except MemoryError:
    control = 'MemoryError'
micropython.heap_unlock()
print((err, control, {n: [list(v) for v in o] for n, o in out.items()}))
""", timeout=600)
    err, control, out = r
    assert err is None
    assert control == "MemoryError"
    for name in names:
        want = [(v & 0xff) for v in oracle_scores[name]]
        assert out[name] == [want, want], name


def test_bad_input_is_a_clear_error(dev):
    r = dev.eval_last(_setup(dev, []) + """
res = []
for args in ((b'\\x00\\x01' * 10,), ([0] * 4 + [40000],), ([0] * 4, 2, 9), ([0] * 4, 3, 1)):
    try:
        sp.feed(*args)
        res.append(None)
    except Exception as e:
        res.append((type(e).__name__, str(e)))
sp.reset()
try:
    sp.classify([0] * 1000)
    res.append(None)
except ValueError as e:
    res.append(('ValueError', str(e)))
try:
    read_wav('audio_preprocessor_int8.tflite' if FE.endswith('.tflite') else 'boot.py')
    res.append(None)
except (ValueError, OSError) as e:
    res.append((type(e).__name__, str(e)))
print(res)
""")
    assert r[0][0] == "TypeError" and "raw bytes" in r[0][1]
    assert r[1] == ("ValueError", "sample 40000 out of int16 range")
    assert r[2][0] == "ValueError" and "2:9 of 4" in r[2][1]
    assert r[3][0] == "ValueError"
    assert r[4][0] == "ValueError" and "needs 49" in r[4][1]
    assert r[5] is not None
