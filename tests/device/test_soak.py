"""Soak: thousands of invokes of a real model under micropython.heap_lock().

Each invoke must allocate nothing (heap_lock turns any allocation into MemoryError), leave
gc.mem_free() exactly where it was, and give the same output bytes as the first one, which in
turn must be LiteRT's (tests/oracle.py). On an emulated board every invoke also starts at the same
phase of the cycle counter (board.sync_cycles()), so every invoke must count the same ticks: the
whole stack, not just the outputs, is repeatable. 10,000 invokes on the UNIX build, 1,000 on
MPS2_AN386 (the other boards run the same code in the other suites; one emulated soak keeps CI
short)."""
import numpy as np
import pytest

import oracle
from devhelp import model_bytes

# board -> (invokes, models). trained_lstm_int8 (MNIST LSTM, state kept between invokes unless
# reset) reads a hand-drawn 7, which it classifies as 7, with one score off the rails (so a
# state carried over shows); micro_speech (DEPTHWISE_CONV_2D, FULLY_CONNECTED, SOFTMAX) reads a
# fixed pseudo-random spectrogram. person_detect (85 M instructions per invoke) would take half
# an hour on the emulated board; the LSTM (1.9 M) keeps that soak near ten seconds.
SOAK = {"UNIX": (10_000, ["trained_lstm_int8", "micro_speech_quantized"]),
        "MPS2_AN386": (1_000, ["trained_lstm_int8"])}
MODELS = ["trained_lstm_int8", "micro_speech_quantized"]

CODE = """
import array, gc, micropython, time
try:
    import board
    _sync = board.sync_cycles
except ImportError:
    _sync = None
class _Slicer:
    def __getitem__(self, k):
        return k
def soak(n):
    it = micronn.Interpreter(m)
    with open('soak_in.bin', 'rb') as f:
        assert f.readinto(it.input(0)) == it.input(0).nbytes
    it.invoke()
    out = it.output(0)
    ref = bytes(out)
    mv = memoryview(out)
    want = array.array(out.typecode, mv)
    cur = array.array(out.typecode, mv)
    whole = _Slicer()[:]  # `cur[:] = ...` would build this slice object each time: an allocation
    # Locals only inside the timed span: global lookups cost what the module dict's layout says.
    sync, cpu, diff, invoke, reset = _sync, time.ticks_cpu, time.ticks_diff, it.invoke, it.reset
    gc.collect()
    free0, alloc0 = gc.mem_free(), gc.mem_alloc()
    bad = 0
    tmin = tmax = -1
    i = 0
    micropython.heap_lock()
    try:
        while i < n:
            reset()
            if sync:
                sync()
            t0 = cpu()
            invoke()
            t1 = cpu()
            t = diff(t1, t0)
            cur[whole] = mv  # same length: copied in place
            if cur != want:
                bad += 1
            if tmin < 0 or t < tmin:
                tmin = t
            if t > tmax:
                tmax = t
            i += 1
    finally:
        micropython.heap_unlock()
    free1, alloc1 = gc.mem_free(), gc.mem_alloc()
    return (i, bad, free0, free1, alloc0, alloc1, tmin, tmax, it.invokes, ref)
"""


def soak_input(name):
    d = oracle.input_details(model_bytes(name))[0]
    if name == "trained_lstm_int8":
        img = np.zeros((28, 28))
        img[5:8, 7:21] = 1.0  # the bar of a 7
        for r in range(8, 24):  # its stem, slanting left
            c = 20 - (r - 8) // 2
            img[r, c:c + 3] = 1.0
        scale, zp = d["quantization"]
        return np.clip(np.round(img / scale + zp), -128, 127).astype(np.int8).reshape(d["shape"])
    rng = np.random.default_rng(9)
    info = np.iinfo(d["dtype"])
    return rng.integers(info.min // 2, info.max // 2, size=d["shape"]).astype(d["dtype"])


@pytest.mark.parametrize("name", MODELS)
def test_soak_heap_locked(dev, board, name):
    n, names = SOAK.get(board.name, (0, []))
    if name not in names:
        pytest.skip(f"{name} soaks on {', '.join(b for b, (_, m) in SOAK.items() if name in m)}")
    x = soak_input(name)
    want = oracle.run(model_bytes(name), [x])[0]
    dev.put(x.tobytes(), "soak_in.bin")
    r = dev.eval_last(dev.load_code(name) + CODE + f"\nprint(soak({n}))", timeout=600)
    done, bad, free0, free1, alloc0, alloc1, tmin, tmax, invokes, ref = r
    assert done == n and invokes == n + 1
    got = np.frombuffer(ref, want.dtype).reshape(want.shape)
    assert np.array_equal(got, want), f"first output {got.ravel().tolist()} != LiteRT's {want.ravel().tolist()}"
    if name == "trained_lstm_int8":
        assert got.ravel().argmax() == 7 and sorted(got.ravel().tolist())[-2] > -128
    assert bad == 0, f"{bad} of {n} invokes gave an output different from the first one"
    assert (free0, alloc0) == (free1, alloc1), \
        f"heap changed over {n} invokes: free {free0} -> {free1}, allocated {alloc0} -> {alloc1}"
    if board.spec is not None and board.spec.emulated:
        assert tmin == tmax, f"ticks per invoke vary from {tmin} to {tmax} across {n} synced invokes"
