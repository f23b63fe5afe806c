"""trained_lstm_int8.tflite (TFLM's mnist_lstm example: UNIDIRECTIONAL_SEQUENCE_LSTM over the 28 rows
of a 28x28 image, then RESHAPE, FULLY_CONNECTED, SOFTMAX) through the engine, bit-exact with LiteRT's
reference kernels, on digit-like images quantized with the input's scale / zero point."""
import numpy as np
import pytest

import oracle

NAME = "trained_lstm_int8.tflite"
LSTM_OUT = 23        # the LSTM's output tensor in this model

# Seven-segment strokes (row0, col0, row1, col1) on a 28x28 canvas, plus a few diagonals.
_SEG = {"a": (5, 9, 5, 19), "b": (5, 19, 14, 19), "c": (14, 19, 23, 19), "d": (23, 9, 23, 19),
        "e": (14, 9, 23, 9), "f": (5, 9, 14, 9), "g": (14, 9, 14, 19)}
_DIGITS = {0: "abcdef", 1: "bc", 2: "abged", 3: "abgcd", 4: "fgbc", 5: "afgcd", 6: "afgedc", 7: "abc",
           8: "abcdefg", 9: "abcdfg"}


def _line(img, r0, c0, r1, c1, width):
    n = int(max(abs(r1 - r0), abs(c1 - c0)) * 4) + 1
    y, x = np.mgrid[0:28, 0:28]
    for t in np.linspace(0.0, 1.0, n):
        r, c = r0 + (r1 - r0) * t, c0 + (c1 - c0) * t
        img[:] = np.maximum(img, np.clip(width - np.hypot(y - r, x - c), 0.0, 1.0))


def digit_image(d, rng):
    """A handwriting-like digit: seven-segment strokes, jittered, random stroke width and shift,
    values in [0, 1] like MNIST (white strokes on black)."""
    img = np.zeros((28, 28))
    dy, dx = rng.integers(-2, 3, 2)
    width = float(rng.uniform(1.3, 2.2))
    for s in _DIGITS[d]:
        r0, c0, r1, c1 = _SEG[s]
        j = rng.normal(0, 0.7, 4)
        _line(img, r0 + dy + j[0], c0 + dx + j[1], r1 + dy + j[2], c1 + dx + j[3], width)
    return img


def quantize(x, d):
    scale, zp = d["quantization"]
    q = np.round(np.asarray(x) / scale) + zp
    info = np.iinfo(d["dtype"])
    return np.clip(q, info.min, info.max).astype(d["dtype"]).reshape(d["shape"])


def images(md, n_per_digit=2, seed=28):
    d = oracle.input_details(md)[0]
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_per_digit):
        for digit in range(10):
            out.append((f"digit{digit}_{k}", quantize(digit_image(digit, rng), d)))
    out.append(("blank", quantize(np.zeros((28, 28)), d)))
    out.append(("full", quantize(np.ones((28, 28)), d)))
    out.append(("noise", quantize(rng.uniform(0, 1, (28, 28)), d)))
    return out


@pytest.fixture(scope="module")
def model_bytes():
    return oracle.read_model(NAME)


def _same(a, b, what):
    a = np.asarray(a).reshape(b.shape)
    if not np.array_equal(a, b):
        bad = np.argwhere(a != b)
        raise AssertionError("%s: %d of %d differ, first at %s: %s vs %s" % (
            what, len(bad), b.size, bad[0], a[tuple(bad[0])], b[tuple(bad[0])]))


def test_lstm_model_digits(engine, model_bytes):
    it = engine.Interpreter(engine.Model(model_bytes))
    correct = 0
    for name, x in images(model_bytes):
        it.reset()
        it.set_input(0, x)
        it.invoke()
        want = oracle.run(model_bytes, [x])[0]
        _same(it.output(0), want, name)
        if name.startswith("digit"):
            correct += int(np.argmax(want)) == int(name[5])
    # the inputs are meaningful: most of the 20 synthetic digits are recognised (17 with LiteRT)
    assert correct >= 14, correct


@pytest.mark.parametrize("planner", ["no_reuse", "greedy"])
def test_lstm_model_lstm_output(engine, model_bytes, planner):
    """The LSTM's own int8 output sequence [1, 28, 20] (no-reuse planner: readable after invoke),
    and the final output with the default planner."""
    it = engine.Interpreter(engine.Model(model_bytes), planner=planner)
    for name, x in images(model_bytes, n_per_digit=1)[:6]:
        it.reset()
        it.set_input(0, x)
        it.invoke()
        outs, tensors = oracle.run(model_bytes, [x], all_tensors=True)
        _same(it.output(0), outs[0], name)
        if planner == "no_reuse":
            seq = tensors[LSTM_OUT]
            assert seq.shape == (1, 28, 20)
            assert len(np.unique(seq)) > 40, "LSTM output barely varies"
            _same(it.tensor(LSTM_OUT), seq, name + " lstm output")


def test_lstm_model_state_carries_over(engine, model_bytes):
    """Without reset, output_state / cell_state carry from one invoke to the next, as in LiteRT."""
    it = engine.Interpreter(engine.Model(model_bytes))
    ref = oracle.interpreter(model_bytes)
    ref.reset_all_variables()
    din = ref.get_input_details()[0]
    dout = ref.get_output_details()[0]
    it.reset()
    differs = False
    first = None
    for name, x in images(model_bytes, n_per_digit=1, seed=5)[:8]:
        it.set_input(0, x)
        it.invoke()
        ref.set_tensor(din["index"], x)
        ref.invoke()
        want = ref.get_tensor(dout["index"])
        _same(it.output(0), want, "chained " + name)
        if first is None:
            first = (x, want.copy())
    # the same input again gives another result, because the state changed
    it.set_input(0, first[0])
    it.invoke()
    ref.set_tensor(din["index"], first[0])
    ref.invoke()
    want = ref.get_tensor(dout["index"])
    _same(it.output(0), want, "repeat")
    differs = not np.array_equal(want, first[1])
    assert differs
    # and reset() restores the initial state
    it.reset()
    it.set_input(0, first[0])
    it.invoke()
    _same(it.output(0), first[1], "after reset")
