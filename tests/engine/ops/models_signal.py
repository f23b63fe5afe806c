"""Single-op models of TFLM's signal-library custom ops (engine/kernels/signal/), the audio
front end of micro_speech, over their parameter space, for comparison with TFLM (tflite-micro:
LiteRT has none of them). Options are flexbuffer maps as TFLM's signal ops' Python wrappers
write them (keys in sorted order, read by TFLM by position).

    m, gen = window(rng, n=480, shift=12)
    m, gen = rfft(rng, fft_length=512, in_len=480, dtype=np.int16)

`gen(rng, tensor)` gives realistic inputs for a graph input: speech-like int16 frames (a few
sinusoids plus noise at a random level, sometimes near full scale), spectra and energies of the
magnitudes the front end produces, and noise estimates spanning the gain table's intervals.
"""
import numpy as np

import models_custom as C
import opmodels as M

CUSTOM = C.CUSTOM
I16_T, I32_T, F32_T = 7, 2, 0   # TFLite TensorType codes (option T)


def _op(name, ts, ins, outs, options, desc):
    return M.OpModel(CUSTOM, ts, ins, outs, custom=name,
                     custom_options=C.flex(options) if isinstance(options, dict) else options, desc=desc)


def audio(rng, shape, dtype=np.int16, level=None):
    """Sinusoids + noise, peak at 2^level (level drawn from 6..15 when None)."""
    n = int(np.prod(shape))
    level = level if level is not None else int(rng.integers(6, 16))
    t = np.arange(n)
    x = sum(rng.uniform(0.2, 1) * np.sin(2 * np.pi * rng.uniform(0.001, 0.45) * t + rng.uniform(0, 6)) for _ in range(3))
    x = x + rng.normal(0, 0.3, n)
    x = x / max(np.abs(x).max(), 1e-9)
    top = (1 << level) - 1 if dtype == np.int16 else (1 << (level + 16)) - 1
    return np.clip(np.round(x * top), np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype).reshape(shape)


def hann_q(n, bits=12):
    """The int16 window TFLM's window op generator makes (Hann at `bits` fractional bits)."""
    return np.round((1 << bits) * (0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(n) + 0.5) / n))).astype(np.int16)


def window(rng, n=480, frames=None, shift=12, options=None):
    shape = (n,) if frames is None else (frames, n)
    ts = [M.T("input", np.int16, shape), M.T("window", np.int16, (n,), data=hann_q(n, shift)),
          M.T("output", np.int16, shape)]
    m = _op("SignalWindow", ts, [0, 1], [2], options if options is not None else {"shift": shift},
            f"window n{n} f{frames} s{shift}")
    return m, lambda rng, t: audio(rng, t.shape)


def fft_auto_scale(rng, n=480):
    ts = [M.T("input", np.int16, (n,)), M.T("output", np.int16, (n,)), M.T("scale_bits", np.int32, ())]
    m = _op("SignalFftAutoScale", ts, [0], [1, 2], b"", f"fft_auto_scale n{n}")
    return m, lambda rng, t: audio(rng, t.shape)


def rfft(rng, fft_length=512, in_len=None, frames=None, dtype=np.int16, options=None):
    in_len = in_len or fft_length
    lead = () if frames is None else (frames,)
    ts = [M.T("input", dtype, lead + (in_len,)), M.T("output", dtype, lead + (fft_length + 2,))]
    o = {"T": I16_T if dtype == np.int16 else I32_T, "fft_length": fft_length}
    m = _op("SignalRfft", ts, [0], [1], options if options is not None else o,
            f"rfft L{fft_length} n{in_len} f{frames} {np.dtype(dtype).name}")
    return m, lambda rng, t: audio(rng, t.shape, dtype)


def energy(rng, bins=257, start=5, end=241, options=None):
    ts = [M.T("input", np.int16, (2 * bins,)), M.T("output", np.uint32, (bins,))]
    m = _op("SignalEnergy", ts, [0], [1], options if options is not None else {"end_index": end, "start_index": start},
            f"energy k{bins} [{start},{end})")

    def gen(rng, t):
        return rng.integers(-32768, 32768, t.shape).astype(np.int16) >> int(rng.integers(0, 12))
    return m, gen


def mel_config(bins, channels, rng):
    """Triangular filter bank tables as TFLM's filter_bank_ops generator lays them out: channel 0
    is a scratch channel; channel c spans [start_c, start_c+width_c) bins."""
    edges = np.unique(np.round(np.geomspace(2, bins - 1, channels + 2)).astype(int))
    while len(edges) < channels + 2:    # too few distinct bins: spread linearly
        edges = np.linspace(1, bins - 1, channels + 2).astype(int)
    starts, wstarts, widths, w, uw = [], [], [], [], []
    for c in range(channels + 1):
        lo, hi = int(edges[c]), int(edges[c + 1])
        width = max(hi - lo, 1)
        starts.append(lo)
        wstarts.append(len(w))
        widths.append(width)
        ramp = np.round(4096 * (np.arange(width) + 0.5) / width).astype(int)
        w += list(ramp)
        uw += list(4096 - ramp)
    return [np.array(a, dtype=np.int16) for a in (w, uw, starts, wstarts, widths)]


def filter_bank(rng, bins=257, channels=40, options=None):
    w, uw, fs, ws, wd = mel_config(bins, channels, rng)
    ts = [M.T("input", np.uint32, (bins,)), M.T("weights", np.int16, w.shape, data=w),
          M.T("unweights", np.int16, uw.shape, data=uw), M.T("freq_starts", np.int16, fs.shape, data=fs),
          M.T("weight_starts", np.int16, ws.shape, data=ws), M.T("widths", np.int16, wd.shape, data=wd),
          M.T("output", np.uint64, (channels,))]
    m = _op("SignalFilterBank", ts, [0, 1, 2, 3, 4, 5], [6],
            options if options is not None else {"num_channels": channels}, f"filter_bank k{bins} c{channels}")

    def gen(rng, t):
        return (rng.integers(0, 1 << 31, t.shape, dtype=np.int64) >> int(rng.integers(0, 24))).astype(np.uint32)
    return m, gen


def filter_bank_square_root(rng, channels=40, scale_bits=None):
    ts = [M.T("input", np.uint64, (channels,)), M.T("scale_bits", np.int32, ()), M.T("output", np.uint32, (channels,))]
    m = _op("SignalFilterBankSquareRoot", ts, [0, 1], [2], b"", f"fb_sqrt c{channels}")

    def gen(rng, t):
        if t.dtype == np.int32:
            return np.array(scale_bits if scale_bits is not None else rng.integers(0, 8), dtype=np.int32).reshape(t.shape)
        hi = int(rng.integers(1, 64))
        return (rng.integers(0, 1 << 62, t.shape, dtype=np.uint64) >> np.uint64(63 - hi)).astype(np.uint64)
    return m, gen


SS_DEFAULT = dict(alternate_one_minus_smoothing=15401, alternate_smoothing=983, clamping=False,
                  min_signal_remaining=819, num_channels=40, one_minus_smoothing=15975, smoothing=409,
                  smoothing_bits=10, spectral_subtraction_bits=14)


def spectral_subtraction(rng, channels=40, options=None, **kw):
    o = dict(SS_DEFAULT, num_channels=channels, **kw)
    ts = [M.T("input", np.uint32, (channels,)), M.T("output", np.uint32, (channels,)),
          M.T("noise_estimate", np.uint32, (channels,))]
    m = _op("SignalFilterBankSpectralSubtraction", ts, [0], [1, 2], options if options is not None else o,
            f"spectral_subtraction c{channels} {kw}")

    def gen(rng, t):
        return rng.integers(0, 1 << int(rng.integers(4, 21)), t.shape).astype(np.uint32)
    return m, gen


def pcan_lut(strength=0.95, offset=80.0, gain_bits=21, input_bits=6):
    """A PCAN gain table laid out as TFLM's kernel reads it: gains for estimates 0 and 1, then for
    each power-of-two interval of the noise estimate three coefficients of a quadratic through
    gain(x) = (offset + x)^-strength at the interval's start, middle and end (and a pad)."""
    def gain(x):
        return int(round((1 << gain_bits) * (offset + float(x) / (1 << input_bits)) ** -strength)) & 0xFFFF
    lut = [gain(0), gain(1)]     # then interval b (2..32) at 4 b - 6: its value at 2^(b-1) first
    for interval in range(2, 33):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = 2 * x0
        g0, g1, g2 = (round((1 << gain_bits) * (offset + x / (1 << input_bits)) ** -strength) for x in (x0, x1, x2))
        a1 = 4 * g1 - 3 * g0 - g2
        a2 = 2 * g0 + 2 * g2 - 4 * g1
        lut += [g0, a1, a2, 0]
    return np.array([(v + 32768) % 65536 - 32768 for v in lut[:125]], dtype=np.int16)


def pcan(rng, channels=40, snr_shift=6, lut=None, options=None):
    lut = pcan_lut() if lut is None else lut
    ts = [M.T("input", np.uint32, (channels,)), M.T("noise_estimate", np.uint32, (channels,)),
          M.T("gain_lut", np.int16, lut.shape, data=lut), M.T("output", np.uint32, (channels,))]
    m = _op("SignalPCAN", ts, [0, 1, 2], [3], options if options is not None else {"snr_shift": snr_shift},
            f"pcan c{channels} s{snr_shift}")

    def gen(rng, t):
        bits = rng.integers(0, 32, t.shape)
        return (rng.integers(0, 1 << 32, t.shape, dtype=np.uint64) >> (32 - bits).astype(np.uint64)).astype(np.uint32)
    return m, gen


def filter_bank_log(rng, channels=40, correction=3, scale=64, options=None):
    ts = [M.T("input", np.uint32, (channels,)), M.T("output", np.int16, (channels,))]
    o = {"input_correction_bits": correction, "output_scale": scale}
    m = _op("SignalFilterBankLog", ts, [0], [1], options if options is not None else o,
            f"fb_log c{channels} b{correction} s{scale}")

    def gen(rng, t):
        bits = rng.integers(0, 33 - correction, t.shape)
        return (rng.integers(0, 1 << 32, t.shape, dtype=np.uint64) >> (32 - bits).astype(np.uint64)).astype(np.uint32)
    return m, gen


# ---- streaming ops (state across invokes) -----------------------------------------------------

def delay(rng, frame=160, rows=None, delay_length=17, options=None):
    shape = (frame,) if rows is None else (rows, frame)
    ts = [M.T("input", np.int16, shape), M.T("output", np.int16, shape)]
    m = _op("SignalDelay", ts, [0], [1], options if options is not None else {"delay_length": delay_length},
            f"delay n{frame} r{rows} d{delay_length}")
    return m, lambda rng, t: audio(rng, t.shape)


def framer(rng, frame_size=400, frame_step=160, frames=1, rows=None, prefill=False, options=None):
    lead = () if rows is None else (rows,)
    ts = [M.T("input", np.int16, lead + (frames * frame_step,)), M.T("output", np.int16, lead + (frames, frame_size)),
          M.T("valid", np.bool_, ())]
    o = {"frame_size": frame_size, "frame_step": frame_step, "prefill": prefill}
    m = _op("SignalFramer", ts, [0], [1, 2], options if options is not None else o,
            f"framer size{frame_size} step{frame_step} f{frames} r{rows} p{prefill}")
    return m, lambda rng, t: audio(rng, t.shape)


def stacker(rng, channels=40, left=2, right=1, step=1, options=None):
    size = channels * (left + right + 1)
    ts = [M.T("input", np.int16, (channels,)), M.T("output", np.int16, (size,)), M.T("valid", np.bool_, ())]
    o = {"num_channels": channels, "stacker_left_context": left, "stacker_right_context": right, "stacker_step": step}
    m = _op("SignalStacker", ts, [0], [1, 2], options if options is not None else o,
            f"stacker c{channels} l{left} r{right} s{step}")
    return m, lambda rng, t: rng.integers(-32768, 32768, t.shape).astype(np.int16)


def overlap_add(rng, frame_size=512, frame_step=256, frames=1, rows=None, dtype=np.int16, options=None):
    lead = () if rows is None else (rows,)
    ts = [M.T("input", dtype, lead + (frames, frame_size)), M.T("output", dtype, lead + (frames * frame_step,))]
    o = {"T": I16_T if dtype == np.int16 else F32_T, "frame_step": frame_step}
    m = _op("SignalOverlapAdd", ts, [0], [1], options if options is not None else o,
            f"overlap_add size{frame_size} step{frame_step} f{frames} r{rows} {np.dtype(dtype).name}")

    def gen(rng, t):
        if dtype == np.float32:
            return rng.normal(0, 1, t.shape).astype(np.float32)
        return audio(rng, t.shape)   # near full scale at times: the int16 sums saturate
    return m, gen
