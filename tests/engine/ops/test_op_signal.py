"""TFLM's signal-library ops (engine/kernels/signal/) one at a time, against TFLM (tflite-micro;
LiteRT has none of them), over their parameter space (models_signal.py): window sizes and
shifts, FFT lengths 4..1024 with padded and multi-frame inputs in int16 and int32, energy ranges,
filter banks of 1..64 channels over 33..513 bins, square roots over the whole 64-bit range, the
spectral subtraction's state over sequences of invokes (with and without clamping, alternate
smoothing) and its reset, PCAN gains over every interval of the table, logs of every magnitude.
Outputs bit-exact. Then bad options (missing, malformed, fuzzed, out of range), dtypes and shapes:
clean errors at Interpreter() time."""
import numpy as np
import pytest

import models_custom as C
import models_signal as G
import runners

E = pytest.importorskip("micronn_tools.engine")


@pytest.fixture(scope="module")
def engine_run():
    run = runners.engine_runner()
    if not run:
        pytest.fail("engine ctypes wrapper / libmicronn.so not available: make -C tests/engine lib", pytrace=False)
    return run


def _check(engine_run, rng, m, gen, trials=6, invokes=1, cut=None):
    for _ in range(trials):
        ins = [[gen(rng, m.tensors[i]) for i in m.graph_inputs] for _ in range(invokes)]
        feed = ins if invokes > 1 else ins[0]
        want = runners.run_tflm(m, feed, invokes=invokes)
        got = engine_run(m, feed, invokes=invokes)
        if invokes == 1:
            want, got = [want], [got]
        for k, (w, g) in enumerate(zip(want, got)):
            for j, (a, b) in enumerate(zip(w, g)):
                if cut:
                    a, b = cut(a), cut(b)
                assert a.dtype == b.dtype and a.shape == b.shape, m.desc
                np.testing.assert_array_equal(b, a, err_msg=f"{m.desc} invoke {k} output {j}")


def _error(m):
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(E.Model(m.tflite()))
    return str(e.value)


# ---- bit-exact sweeps -----------------------------------------------------------------------------

@pytest.mark.parametrize("n,frames,shift", [(480, None, 12), (400, None, 14), (512, 3, 12), (64, 2, 0), (31, None, 15),
                                            (256, None, 8)])
def test_window(engine_run, rng, n, frames, shift):
    _check(engine_run, rng, *G.window(rng, n=n, frames=frames, shift=shift))


@pytest.mark.parametrize("n", [1, 7, 256, 480, 1000])
def test_fft_auto_scale(engine_run, rng, n):
    _check(engine_run, rng, *G.fft_auto_scale(rng, n=n), trials=10)


def test_fft_auto_scale_extremes(engine_run, rng):
    m, _ = G.fft_auto_scale(rng, n=8)
    for x in ([0] * 8, [-32768] + [5] * 7, [5] * 7 + [-32768], [1, -1] * 4, [32767] * 8, [-1] * 8):
        _check(engine_run, rng, m, lambda rng, t, x=x: np.array(x, dtype=np.int16), trials=1)


@pytest.mark.parametrize("dtype", [np.int16, np.int32])
@pytest.mark.parametrize("length,in_len,frames", [(4, None, None), (8, 5, None), (16, None, 2), (32, None, None),
                                                  (64, 48, None), (128, None, None), (256, 200, 2),
                                                  (512, 480, None), (512, None, None), (1024, 1000, None)])
def test_rfft(engine_run, rng, dtype, length, in_len, frames):
    _check(engine_run, rng, *G.rfft(rng, fft_length=length, in_len=in_len, frames=frames, dtype=dtype), trials=4)


@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_rfft_full_scale(engine_run, rng, dtype):
    """Full-scale and extreme inputs: the butterflies' divisions and wrapping sums as TFLM's."""
    m, _ = G.rfft(rng, fft_length=64, dtype=dtype)
    info = np.iinfo(dtype)
    for x in (np.full(64, info.max), np.full(64, info.min), np.tile([info.max, info.min], 32),
              rng.integers(info.min, info.max, 64, endpoint=True)):
        _check(engine_run, rng, m, lambda rng, t, x=x: x.astype(dtype), trials=1)


@pytest.mark.parametrize("bins,start,end", [(257, 5, 241), (257, 0, 257), (33, 3, 4), (129, 10, 10), (513, 1, 500)])
def test_energy(engine_run, rng, bins, start, end):
    m, gen = G.energy(rng, bins=bins, start=start, end=end)
    _check(engine_run, rng, m, gen, cut=lambda a: a[start:end])   # TFLM leaves the other bins unwritten
    got = runners.engine_runner()(m, [gen(rng, m.tensors[0])])[0]
    assert not got[:start].any() and not got[end:].any()


def test_energy_extremes(engine_run, rng):
    m, _ = G.energy(rng, bins=4, start=0, end=4)
    x = np.array([-32768, -32768, 32767, -32768, 0, -32768, 1, 1], dtype=np.int16)
    _check(engine_run, rng, m, lambda rng, t: x, trials=1)


@pytest.mark.parametrize("bins,channels", [(257, 40), (257, 1), (129, 32), (513, 64), (33, 10)])
def test_filter_bank(engine_run, rng, bins, channels):
    _check(engine_run, rng, *G.filter_bank(rng, bins=bins, channels=channels))


@pytest.mark.parametrize("channels", [1, 40, 64])
def test_filter_bank_square_root(engine_run, rng, channels):
    _check(engine_run, rng, *G.filter_bank_square_root(rng, channels=channels), trials=20)


def test_filter_bank_square_root_edges(engine_run, rng):
    m, _ = G.filter_bank_square_root(rng, channels=12)
    edge = np.array([0, 1, 2, 3, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, (1 << 64) - 1, (1 << 62), (1 << 63) - 1,
                     4294836225, 4294967295 * 4294967295 >> 1], dtype=np.uint64)
    for bits in (0, 3, 31):
        _check(engine_run, rng, m, lambda rng, t, b=bits: edge if t.dtype == np.uint64 else np.array(b, np.int32), trials=1)


def test_filter_bank_square_root_bad_scale(rng):
    m, _ = G.filter_bank_square_root(rng, channels=4)
    it = E.Interpreter(E.Model(m.tflite()))
    it.set_input(0, np.ones(4, np.uint64))
    it.set_input(1, np.array(40, np.int32))
    with pytest.raises(E.MicronnError, match="scale bits 40 outside"):
        it.invoke()


@pytest.mark.parametrize("kw", [{}, {"clamping": True}, {"alternate_smoothing": 409, "alternate_one_minus_smoothing": 15975},
                                {"smoothing_bits": 0, "spectral_subtraction_bits": 10, "smoothing": 100,
                                 "one_minus_smoothing": 924, "min_signal_remaining": 0},
                                {"min_signal_remaining": 16384, "clamping": True}])
@pytest.mark.parametrize("channels", [1, 40])
def test_spectral_subtraction(engine_run, rng, kw, channels):
    """Sequences of invokes: the noise estimate (second output) is the state TFLM carries."""
    _check(engine_run, rng, *G.spectral_subtraction(rng, channels=channels, **kw), trials=2, invokes=25)


def test_spectral_subtraction_reset(rng):
    m, gen = G.spectral_subtraction(rng, channels=8)
    it = E.Interpreter(E.Model(m.tflite()))
    seq = [gen(rng, m.tensors[0]) for _ in range(12)]

    def run(xs):
        res = []
        for x in xs:
            it.set_input(0, x)
            it.invoke()
            res.append([it.get_output(0).copy(), it.get_output(1).copy()])
        return res
    run(seq[:7])
    it.reset()
    got = run(seq[7:])
    want = runners.run_tflm(m, [[x] for x in seq[7:]], invokes=5)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0], w[0])
        np.testing.assert_array_equal(g[1], w[1])


@pytest.mark.parametrize("channels,snr_shift", [(40, 6), (1, 0), (64, 12), (40, 20)])
def test_pcan(engine_run, rng, channels, snr_shift):
    _check(engine_run, rng, *G.pcan(rng, channels=channels, snr_shift=snr_shift), trials=10)


def test_pcan_model_table(engine_run, rng):
    """The gain table of TFLM's own front end (its strength and offset), with random-signed entries too."""
    m, gen = G.pcan(rng, channels=40, lut=G.pcan_lut(strength=0.95, offset=80.0))
    _check(engine_run, rng, m, gen, trials=5)
    m, gen = G.pcan(rng, channels=40, lut=rng.integers(-32768, 32768, 125).astype(np.int16))
    _check(engine_run, rng, m, gen, trials=5)


@pytest.mark.parametrize("channels,correction,scale", [(40, 3, 64), (1, 0, 1), (64, 0, 65535), (40, 8, 1000),
                                                       (40, 0, 1 << 20)])
def test_filter_bank_log(engine_run, rng, channels, correction, scale):
    _check(engine_run, rng, *G.filter_bank_log(rng, channels=channels, correction=correction, scale=scale), trials=10)


def test_filter_bank_log_edges(engine_run, rng):
    m, _ = G.filter_bank_log(rng, channels=10, correction=0, scale=64)
    x = np.array([0, 1, 2, 3, 65535, 65536, 65537, (1 << 31) - 1, 1 << 31, (1 << 32) - 1], dtype=np.uint32)
    _check(engine_run, rng, m, lambda rng, t: x, trials=1)


# ---- bad options, dtypes, shapes ------------------------------------------------------------------

def _builders(rng):
    return {
        "SignalWindow": (G.window(rng, n=16), {"shift": 12}),
        "SignalRfft": (G.rfft(rng, fft_length=16), {"T": 7, "fft_length": 16}),
        "SignalEnergy": (G.energy(rng, bins=9, start=1, end=8), {"end_index": 8, "start_index": 1}),
        "SignalFilterBank": (G.filter_bank(rng, bins=33, channels=4), {"num_channels": 4}),
        "SignalFilterBankSpectralSubtraction": (G.spectral_subtraction(rng, channels=4), dict(G.SS_DEFAULT, num_channels=4)),
        "SignalPCAN": (G.pcan(rng, channels=4), {"snr_shift": 6}),
        "SignalFilterBankLog": (G.filter_bank_log(rng, channels=4), {"input_correction_bits": 3, "output_scale": 64}),
    }


def _with_options(m, blob):
    m.custom_options = blob
    return m


@pytest.mark.parametrize("op", ["SignalWindow", "SignalRfft", "SignalEnergy", "SignalFilterBank",
                                "SignalFilterBankSpectralSubtraction", "SignalPCAN", "SignalFilterBankLog"])
def test_bad_options(rng, op):
    (m, _), good = _builders(rng)[op]
    E.Interpreter(E.Model(m.tflite()))                       # the valid blob works
    assert "custom options missing" in _error(_with_options(m, b""))
    assert "custom options: malformed flexbuffer" in _error(_with_options(m, b"\x01\x02"))
    assert "custom options: wrong type" in _error(_with_options(m, C.flex([1, 2, 3])))
    for key in good:                                         # every key is required
        rest = {k: v for k, v in good.items() if k != key}
        assert f"custom option '{key}': absent" in _error(_with_options(m, C.flex(rest))), key
        if not isinstance(good[key], bool):
            assert f"custom option '{key}'" in _error(_with_options(m, C.flex(dict(good, **{key: -1})))), key
            assert f"custom option '{key}'" in _error(_with_options(m, C.flex(dict(good, **{key: "x"})))), key


@pytest.mark.parametrize("op", ["SignalWindow", "SignalRfft", "SignalFilterBankSpectralSubtraction", "SignalFilterBankLog"])
def test_fuzzed_options(rng, op):
    """Truncated and bit-flipped option blobs: a clean error or a valid interpreter, never a crash."""
    (m, _), good = _builders(rng)[op]
    blob = C.flex(good)
    cases = [blob[:k] for k in range(len(blob))] + [blob[k:] for k in range(1, len(blob))]
    for _ in range(300):
        b = bytearray(blob)
        for _ in range(int(rng.integers(1, 4))):
            b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
        cases.append(bytes(b))
    for b in cases:
        try:
            E.Interpreter(E.Model(_with_options(m, b).tflite()))
        except E.MicronnError as e:
            assert f"op 0 {op}:" in str(e)


@pytest.mark.parametrize("opts,msg", [({"T": 7, "fft_length": 12}, "fft_length 12 not supported (powers of two only)"),
                                      ({"T": 0, "fft_length": 16}, "type T=0 not supported"),
                                      ({"T": 2, "fft_length": 16}, "do not match option T"),
                                      ({"T": 7, "fft_length": 8}, "input [..., N <= fft_length]"),
                                      ({"T": 7, "fft_length": 2}, "'fft_length' = 2 outside")])
def test_rfft_bad(rng, opts, msg):
    m, _ = G.rfft(rng, fft_length=16, options=C.flex(opts))
    assert msg in _error(m)


def test_bad_operands(rng):
    m, _ = G.window(rng, n=16)
    m.tensors[1] = G.M.T("window", np.int16, (5,), data=np.ones(5, np.int16))
    assert "its length dividing the input's" in _error(m)
    m, _ = G.energy(rng, bins=9, options=C.flex({"end_index": 10, "start_index": 0}))
    assert "'end_index' = 10 outside [0, 9]" in _error(m)
    m, _ = G.energy(rng, bins=9, options=C.flex({"end_index": 5, "start_index": 6}))
    assert "'start_index' = 6 outside [0, 5]" in _error(m)
    m, _ = G.filter_bank(rng, bins=33, channels=4)
    m.tensors[5].data = m.tensors[5].data.copy()
    m.tensors[5].data[2] = 30                                # channel 2's width runs past the spectrum
    assert "channel 2: bins" in _error(m)
    m, _ = G.filter_bank(rng, bins=33, channels=4, options=C.flex({"num_channels": 5}))
    assert "output has 4 channels, num_channels says 5" in _error(m)
    m, _ = G.pcan(rng, channels=4, lut=np.zeros(100, np.int16))
    assert "gain table has 100 entries, needs at least 125" in _error(m)
    m, _ = G.spectral_subtraction(rng, channels=4, options=C.flex(dict(G.SS_DEFAULT, num_channels=5)))
    assert "must be [num_channels] (5)" in _error(m)
    m, _ = G.fft_auto_scale(rng, n=8)
    m.tensors[2] = G.M.T("scale_bits", np.int16, ())
    assert "SignalFftAutoScale: dtypes int16 -> int16, int16 not supported" in _error(m)


def test_arena_exact(rng):
    """The dry run's size is what a prepared interpreter needs (persistent twiddles and state, FFT scratch)."""
    for m, _ in (G.rfft(rng, fft_length=512, in_len=480), G.spectral_subtraction(rng, channels=40),
                 G.filter_bank(rng)):
        model = E.Model(m.tflite())
        need = model.arena_needed()
        assert E.Interpreter(model, arena_size=need).stats()["needed"] == need
        with pytest.raises(E.MicronnError, match="arena too small"):
            E.Interpreter(model, arena_size=need - 16)


# ---- streaming ops ------------------------------------------------------------------------------

def _stream(engine_run, rng, m, gen, invokes, valid_out=None):
    """Sequences of invokes; outputs compared where TFLM writes them (every invoke, or with a
    valid flag, those it says are valid; the flags themselves always)."""
    ins = [[gen(rng, m.tensors[i]) for i in m.graph_inputs] for _ in range(invokes)]
    want, got = runners.run_tflm(m, ins, invokes=invokes), engine_run(m, ins, invokes=invokes)
    for k, (w, g) in enumerate(zip(want, got)):
        if valid_out is not None:
            assert bool(g[valid_out]) == bool(w[valid_out]), (m.desc, k)
            if not bool(w[valid_out]):
                continue
        for a, b in zip(w, g):
            np.testing.assert_array_equal(b, a, err_msg=f"{m.desc} invoke {k}")
    return got


@pytest.mark.parametrize("frame,rows,d", [(160, None, 17), (16, 3, 40), (32, None, 0), (10, 2, 10), (1, None, 3)])
def test_delay(engine_run, rng, frame, rows, d):
    _stream(engine_run, rng, *G.delay(rng, frame=frame, rows=rows, delay_length=d), invokes=12)


@pytest.mark.parametrize("size,step,frames,rows,prefill", [(400, 160, 1, None, False), (400, 160, 1, None, True),
                                                           (480, 320, 2, None, True), (64, 16, 3, 2, False),
                                                           (10, 20, 1, None, False), (48, 16, 1, 3, True)])
def test_framer(engine_run, rng, size, step, frames, rows, prefill):
    got = _stream(engine_run, rng, *G.framer(rng, size, step, frames, rows, prefill), invokes=14, valid_out=1)
    assert any(bool(g[1]) for g in got)


@pytest.mark.parametrize("c,left,right,step", [(40, 2, 1, 1), (8, 0, 0, 1), (16, 3, 2, 3), (4, 0, 5, 2), (5, 4, 0, 5)])
def test_stacker(engine_run, rng, c, left, right, step):
    got = _stream(engine_run, rng, *G.stacker(rng, c, left, right, step), invokes=15, valid_out=1)
    assert any(bool(g[1]) for g in got)


@pytest.mark.parametrize("build", [lambda rng: G.delay(rng, frame=8, delay_length=5),
                                   lambda rng: G.overlap_add(rng, 8, 4, 1),
                                   lambda rng: G.framer(rng, 12, 4, 1, None, True),
                                   lambda rng: G.stacker(rng, 4, 2, 1, 1)])
def test_streaming_reset(rng, build):
    """Interpreter.reset() starts a new stream: what a fresh TFLM interpreter gives."""
    m, gen = build(rng)
    it = E.Interpreter(E.Model(m.tflite()))
    seq = [gen(rng, m.tensors[0]) for _ in range(10)]

    def run(xs):
        res = []
        for x in xs:
            it.set_input(0, x)
            it.invoke()
            res.append([it.get_output(j).copy() for j in range(len(m.outputs))])
        return res
    run(seq[:4])
    it.reset()
    got = run(seq[4:])
    want = runners.run_tflm(m, [[x] for x in seq[4:]], invokes=6)
    for g, w in zip(got, want):
        if len(w) > 1 and not bool(w[1]):
            assert not bool(g[1])
            continue
        for a, b in zip(w, g):
            np.testing.assert_array_equal(b, a)


def test_streaming_bad_options(rng):
    m, _ = G.stacker(rng, 4, 1, 1, options=C.flex({"num_channels": 4, "stacker_left_context": 1,
                                                   "stacker_right_context": 1, "stacker_step": 4}))
    assert "'stacker_step' = 4 outside [1, 3]" in _error(m)
    m, _ = G.framer(rng, 12, 5, 1, options=C.flex({"frame_size": 12, "frame_step": 5, "prefill": False}))
    m.tensors[0] = G.M.T("input", np.int16, (7,))
    assert "input [..., F * frame_step]" in _error(m)
    m, _ = G.delay(rng, options=C.flex({"delay_length": -2}))
    assert "'delay_length' = -2 outside [0, 65535]" in _error(m)
    m, _ = G.framer(rng, 12, 4, 1, options=C.flex({"frame_size": 12, "frame_step": 4}))
    assert "custom option 'prefill': absent" in _error(m)


@pytest.mark.parametrize("dtype", [np.int16, np.float32])
@pytest.mark.parametrize("size,step,frames,rows", [(512, 256, 1, None), (400, 160, 2, None), (16, 16, 1, 2),
                                                   (30, 7, 3, None), (8, 1, 2, 3)])
def test_overlap_add(engine_run, rng, dtype, size, step, frames, rows):
    """float32: the same sums in the same order, so equal too."""
    _stream(engine_run, rng, *G.overlap_add(rng, size, step, frames, rows, dtype), invokes=10)


def test_overlap_add_bad(rng):
    m, _ = G.overlap_add(rng, 16, 8, options=C.flex({"T": 7, "frame_step": 17}))
    assert "'frame_step' = 17 outside [1, 16]" in _error(m)
    m, _ = G.overlap_add(rng, 16, 8, options=C.flex({"T": 2, "frame_step": 8}))
    assert "type T=2 not supported" in _error(m)
