"""Every test model on the board, compared with the LiteRT reference kernels (oracle)."""
import math

import numpy as np
import pytest

import oracle
from devhelp import MODELS_DIR, assert_matches, bmp_pixels_top_down, model_bytes
import os


def _check(dev, name, input_sets, **kw):
    mb = model_bytes(name)
    got = dev.run(name, input_sets, **kw)
    for k, (inputs, outs) in enumerate(zip(input_sets, got)):
        want = oracle.run(mb, inputs)
        for i, (g, w) in enumerate(zip(outs, want)):
            assert_matches(g, w, f"{name} input set {k} output {i}")
    return got


def _quant(mb, x):
    d = oracle.input_details(mb)[0]
    scale, zp = d["quantization"]
    info = np.iinfo(d["dtype"])
    return np.clip(np.round(np.asarray(x) / scale) + zp, info.min, info.max).astype(d["dtype"])


def test_hello_world_int8(dev):
    mb = model_bytes("hello_world_int8")
    xs = [0.0, math.pi / 2, math.pi, 3 * math.pi / 2, 2 * math.pi, 1.0]
    sets = [[_quant(mb, [[x]])] for x in xs] + [[np.array([[-128]], np.int8)], [np.array([[127]], np.int8)]]
    got = _check(dev, "hello_world_int8", sets)
    # Sanity: it approximates sin(x).
    d = oracle.output_details(mb)[0]
    scale, zp = d["quantization"]
    y = (int(got[1][0][0, 0]) - zp) * scale
    assert abs(y - 1.0) < 0.2


def test_hello_world_float(dev):
    xs = [0.0, 0.5, math.pi / 2, math.pi, 4.7, 2 * math.pi, -1.0, 100.0]
    got = _check(dev, "hello_world_float", [[np.array([[x]], np.float32)] for x in xs])
    assert abs(float(got[2][0][0, 0]) - 1.0) < 0.2


def _bmp(name):
    return np.frombuffer(bmp_pixels_top_down(os.path.join(MODELS_DIR, name))[0], np.uint8).view(np.int8)


def test_person_detect(dev):
    rng = np.random.default_rng(1)
    sets = [[_bmp("person.bmp")], [_bmp("no_person.bmp")],
            [rng.integers(-128, 128, 9216, dtype=np.int8)], [np.zeros(9216, np.int8)]]
    got = _check(dev, "person_detect", sets, timeout=600, extra_args=", reuse_inputs=True")
    assert np.argmax(got[0][0]) == 1, got[0][0]   # person
    assert np.argmax(got[1][0]) == 0, got[1][0]   # notperson
    assert got[0][0].ravel().tolist() == [-113, 113]
    assert got[1][0].ravel().tolist() == [57, -57]


def test_person_detect_bmp_on_device(dev):
    """The board parses the BMP itself and copies the pixel rows (top-down) into the int8 input
    by slice assignment of raw bytes; person.bmp -> index 1 wins, no_person.bmp -> index 0."""
    for fn in ("person.bmp", "no_person.bmp"):
        dev.put(os.path.join(MODELS_DIR, fn), fn)
    dev.clean()
    code = dev.load_code("person_detect") + """
import struct
def run():
    it = micronn.Interpreter(m, reuse_inputs=True)
    t = it.input(0)
    row = bytearray(96)
    res = []
    for fn in ('person.bmp', 'no_person.bmp'):
        with open(fn, 'rb') as f:
            hdr = f.read(30)
            off = struct.unpack_from('<I', hdr, 10)[0]
            w, h = struct.unpack_from('<ii', hdr, 18)
            assert w == 96 and abs(h) == 96
            stride = (w + 3) & ~3
            for r in range(abs(h)):
                f.seek(off + r * stride)
                f.readinto(row)
                dst = (abs(h) - 1 - r) if h > 0 else r
                t[dst * w:(dst + 1) * w] = row
        it.invoke()
        out = it.output(0)
        res.append((micronn.argmax(out), out.tolist()))
    return res
print(run())
"""
    res = dev.eval_last(code, timeout=600)
    assert res[0] == (1, [-113, 113])
    assert res[1] == (0, [57, -57])


def test_micro_speech_quantized(dev):
    rng = np.random.default_rng(2)
    sets = [[rng.integers(-128, 128, (1, 1960), dtype=np.int8)] for _ in range(3)]
    sets += [[np.full((1, 1960), -128, np.int8)], [np.full((1, 1960), 127, np.int8)]]
    _check(dev, "micro_speech_quantized", sets)


def test_keyword_scrambled(dev):
    rng = np.random.default_rng(3)
    sets = [[rng.integers(-32768, 32768, (1, 96), dtype=np.int16)] for _ in range(3)]
    sets += [[np.zeros((1, 96), np.int16)], [np.full((1, 96), 32767, np.int16)]]
    _check(dev, "keyword_scrambled", sets)


def test_keyword_scrambled_state_sequence(dev):
    """SVDF state carries over between invokes (no reset), exactly as in the oracle."""
    name = "keyword_scrambled"
    mb = model_bytes(name)
    rng = np.random.default_rng(4)
    seq = [[rng.integers(-32768, 32768, (1, 96), dtype=np.int16)] for _ in range(4)]
    got = dev.run(name, seq, reset_each=False)
    it = oracle.interpreter(mb)
    it.reset_all_variables()
    d_in = it.get_input_details()[0]
    d_out = it.get_output_details()[0]
    for k, (x,) in enumerate(seq):
        it.set_tensor(d_in["index"], x)
        it.invoke()
        assert_matches(got[k][0], it.get_tensor(d_out["index"]), f"sequence step {k}")


def test_simple_add_model(dev):
    rng = np.random.default_rng(5)
    shape = (1, 128, 128, 1)
    sets = [[rng.integers(-128, 128, shape, dtype=np.int8), rng.integers(-128, 128, shape, dtype=np.int8)]]
    # both saturations in one invoke: 127 + 127 and -128 + -128 in alternate elements
    ext = np.where(np.arange(128 * 128).reshape(shape) % 2 == 0, 127, -128).astype(np.int8)
    sets += [[ext, ext.copy()]]
    _check(dev, "simple_add_model", sets, extra_args=", reuse_inputs=True")


def test_trained_lstm_int8(dev):
    if "UNIDIRECTIONAL_SEQUENCE_LSTM" not in dev.eval_last("import micronn\nprint(micronn.ops())"):
        pytest.skip("this firmware has no UNIDIRECTIONAL_SEQUENCE_LSTM kernel")
    rng = np.random.default_rng(6)
    sets = [[rng.integers(-128, 128, (1, 28, 28), dtype=np.int8)] for _ in range(3)]
    sets += [[np.full((1, 28, 28), -128, np.int8)]]
    _check(dev, "trained_lstm_int8", sets)


@pytest.mark.needs_firmware(patches=True)
def test_person_detect_patches(dev):
    """Interpreter(m, patches=True): the early layers run in a patch stage on the board too,
    bit-exact, and Model.arena_needed(patches=True) is the smaller arena it prepares in."""
    rng = np.random.default_rng(3)
    sets = [[_bmp("person.bmp")], [rng.integers(-128, 128, 9216, dtype=np.int8)]]
    got = _check(dev, "person_detect", sets, timeout=600, extra_args=", reuse_inputs=True, patches=True")
    assert got[0][0].ravel().tolist() == [-113, 113]
    dev.clean()   # a fresh heap (NETDUINOPLUS2: 110 KB)
    code = dev.load_code("person_detect") + """
plain = m.arena_needed(reuse_inputs=True, detail=True)
it = micronn.Interpreter(m, reuse_inputs=True, patches=True)
s = it.stats()
print((plain['needed'], m.arena_needed(reuse_inputs=True, patches=True), s['arena_size'], plain['nonpersistent'],
       s['nonpersistent']))
"""
    without, patched, size, act_without, act_patched = dev.eval_last(code, timeout=600)
    assert size == patched < without, (without, patched, size)
    # the activations shrink (55,296 -> 24,144 B with the generic and dsp kernels, 32,864 with
    # MVE's larger scratch buffers); the persistent part grows by the stage's own records
    assert act_patched < 0.7 * act_without, (act_without, act_patched)
