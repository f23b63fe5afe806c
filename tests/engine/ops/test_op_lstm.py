"""UNIDIRECTIONAL_SEQUENCE_LSTM against LiteRT's BUILTIN_REF kernel (the oracle).

int8 (TFLite's 8x8_16 integer LSTM: int8 activations/weights, int16 cell state) must match bit for
bit, float32 within 1e-5 relative.  Every case invokes several times without a reset, so the
output_state / cell_state variables carried between invokes are checked too.  Models come from
opmodels.lstm (weight scales chosen so gate pre-activations are O(1), i.e. the sigmoid/tanh
fixed-point code is exercised over its useful range rather than saturated).
"""
import numpy as np
import pytest

import models_hybrid as MH
import opmodels as M
from runners import run_oracle
from test_op_kernels import _expect_reject, _inputs, check

DTYPES = ["int8", "float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("dims", [dict(batches=1, time=1, n_input=3, n_cell=4),
                                  dict(batches=1, time=7, n_input=6, n_cell=8),
                                  dict(batches=2, time=4, n_input=5, n_cell=3),
                                  dict(batches=3, time=2, n_input=16, n_cell=12),
                                  dict(batches=1, time=28, n_input=28, n_cell=20)])   # trained_lstm shape
def test_lstm_shapes(runner, rng, dtype, time_major, dims):
    m = M.lstm(rng, dtype, time_major=time_major, **dims)
    check(runner, rng, m, invokes=3, max_saturated=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cifg", [False, True])
@pytest.mark.parametrize("peephole", [False, True])
@pytest.mark.parametrize("proj", [None, 5, 11])        # None: no projection; else n_output
def test_lstm_variants(runner, rng, dtype, cifg, peephole, proj):
    m = M.lstm(rng, dtype, batches=2, time=5, n_input=7, n_cell=9, n_output=proj, cifg=cifg, peephole=peephole,
               proj=proj is not None)
    if dtype == "int8" and peephole and proj is not None:
        # TFLite's integer peephole loops over n_output, not n_cell (misses cells, or reads past the
        # cell state): rejected rather than reproduced.
        _expect_reject(runner, m, "peephole", "projection", "int8")
        return
    check(runner, rng, m, invokes=3, max_saturated=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("time_major", [False, True])
def test_lstm_peephole_projection_same_size(runner, rng, dtype, time_major):
    m = M.lstm(rng, dtype, batches=2, time=5, n_input=7, n_cell=9, proj=True, peephole=True, time_major=time_major)
    check(runner, rng, m, invokes=3, max_saturated=None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cell_clip,proj_clip", [(0.0, 0.0), (0.6, 0.0), (10.0, 0.0), (0.0, 0.25), (1.5, 0.5)])
def test_lstm_clips(runner, rng, dtype, cell_clip, proj_clip):
    m = M.lstm(rng, dtype, batches=2, time=6, n_input=5, n_cell=8, n_output=6 if proj_clip else None,
               cell_clip=cell_clip, proj_clip=proj_clip)
    check(runner, rng, m, invokes=2, max_saturated=None)


@pytest.mark.parametrize("cell_scale_exp", [-9, -10, -11, -12, -13, -15])
def test_lstm_int8_cell_scales(runner, rng, cell_scale_exp):
    # The output tanh reads the cell state as Q(15 + exp): every supported integer-bit count.
    m = M.lstm(rng, "int8", batches=2, time=6, n_input=6, n_cell=10, cell_scale_exp=cell_scale_exp)
    check(runner, rng, m, invokes=3, max_saturated=None)


@pytest.mark.parametrize("input_zp,state_zp,hidden_zp,proj", [
    (-128, 0, 0, False),     # trained_lstm: input zp -128
    (17, 0, 0, False),
    (0, 6, 0, False),        # output_state zero point (LiteRT resets int8 state to it)
    (0, 0, 5, False),        # hidden zero point, no projection: added
    (0, 0, 5, True),         # ... with projection: subtracted, folded back into the projection bias
    (-40, -3, -7, True),
])
def test_lstm_int8_zero_points(runner, rng, input_zp, state_zp, hidden_zp, proj):
    m = M.lstm(rng, "int8", batches=2, time=5, n_input=6, n_cell=8, n_output=7 if proj else None,
               input_zp=input_zp, state_zp=state_zp, hidden_zp=hidden_zp)
    check(runner, rng, m, invokes=3, max_saturated=None)


@pytest.mark.parametrize("act", [M.ACT_RELU, M.ACT_RELU6, M.ACT_NONE])
def test_lstm_int8_ignores_activation(runner, rng, act):
    # TFLite's integer LSTM always uses tanh for the cell gate and the output.
    m = M.lstm(rng, "int8", batches=1, time=5, n_input=4, n_cell=6, act=act)
    check(runner, rng, m, invokes=2, max_saturated=None)


@pytest.mark.parametrize("act", [M.ACT_RELU, M.ACT_RELU_N1_TO_1, M.ACT_RELU6, M.ACT_TANH])
def test_lstm_float_activations(runner, rng, act):
    m = M.lstm(rng, "float32", batches=2, time=4, n_input=5, n_cell=6, act=act)
    check(runner, rng, m, invokes=2)


@pytest.mark.parametrize("cifg", [False, True])
@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_float_layer_norm(runner, rng, cifg, peephole):
    m = M.lstm(rng, "float32", batches=2, time=4, n_input=5, n_cell=8, n_output=6, cifg=cifg, peephole=peephole,
               layer_norm=True)
    check(runner, rng, m, invokes=2)


def test_lstm_int8_trained_like_inputs(runner, rng):
    # Inputs shaped like trained_lstm's: 28 rows of 28 pixels, scale 1/255, zero point -128,
    # mostly background with bright strokes (saturating inputs at both ends).
    m = M.lstm(rng, "int8", batches=1, time=28, n_input=28, n_cell=20, input_zp=-128, cell_clip=10.0)
    m.tensors[0].scale = [1.0 / 255]

    def gen(rng_, t):
        img = np.full(t.shape, -128, dtype=np.int16)
        for _ in range(3):
            r, c = rng_.integers(2, 26, 2)
            img[0, max(r - 6, 0):r + 6, max(c - 1, 0):c + 2] = 127
        img += rng_.integers(0, 30, t.shape).astype(np.int16) * (img < 0)
        return np.clip(img, -128, 127).astype(np.int8)
    check(runner, rng, m, invokes=3, gen=gen, max_saturated=None)


@pytest.mark.parametrize("seed", range(24))
def test_lstm_random(runner, seed):
    rng = np.random.default_rng(9000 + seed)
    dtype = DTYPES[seed % 2]
    n_cell = int(rng.integers(1, 24))
    proj = bool(rng.integers(0, 3) == 0)
    kw = dict(batches=int(rng.integers(1, 4)), time=int(rng.integers(1, 12)), n_input=int(rng.integers(1, 30)),
              n_cell=n_cell, n_output=int(rng.integers(1, 24)) if proj else None, proj=proj,
              proj_bias=bool(rng.integers(0, 2)), cifg=bool(rng.integers(0, 3) == 0),
              peephole=bool(rng.integers(0, 3) == 0) and (not proj or dtype == "float32"),
              time_major=bool(rng.integers(0, 2)),
              cell_clip=float(rng.choice([0.0, 0.0, 0.8, 3.0, 10.0])),
              proj_clip=float(rng.choice([0.0, 0.0, 0.4])) if proj else 0.0)
    if dtype == "int8":
        kw.update(cell_scale_exp=int(rng.integers(-15, -8)), input_zp=int(rng.integers(-128, 128)),
                  state_zp=int(rng.integers(-10, 11)), hidden_zp=int(rng.integers(-10, 11)))
    else:
        kw.update(act=int(rng.choice([M.ACT_TANH, M.ACT_RELU, M.ACT_RELU6])), layer_norm=bool(rng.integers(0, 3) == 0))
    m = M.lstm(rng, dtype, **kw)
    check(runner, rng, m, invokes=int(rng.integers(1, 4)), max_saturated=0.3)


# ---- hybrid: float32 activations, int8 weights (TFLite's EvalHybrid) ---------------------------
#
# The hybrid LSTM quantizes its recurrent state (output_state, and the hidden row before the
# projection) to int8 at every step. A one-ulp difference in a float state (LiteRT's libm and its
# compiler's contractions are not ours) then moves a value across a rounding boundary now and then,
# and the sequences drift apart by a quantization step. So each step is checked on its own
# ("teacher forcing"): both sides start every invoke from the same, non-zero, state (LiteRT's
# after the previous step), and one invoke must match within 1e-5 relative: outputs and new
# states. Whole free-running sequences are checked against TFLite's own hybrid LSTM test
# tolerance (unidirectional_sequence_lstm_test.cc: 0.0157651 absolute), their first step exactly.

def check_hybrid_steps(runner, rng, m, steps=4, gen=MH.hybrid_input, zero_rows=False):
    assert steps > 1
    assert m.tensors[m.graph_inputs[0]].shape[1 if not m.fields.get(3) else 0] == 1, "one time step"
    hs, cs = m.inputs[18], m.inputs[19]
    ins = [_inputs(rng, m, gen) for _ in range(steps)]
    h = rng.normal(0, 0.6, m.tensors[hs].shape).astype(np.float32)
    c = rng.normal(0, 1.5, m.tensors[cs].shape).astype(np.float32)
    if zero_rows:
        h[0] = 0.0           # a zero output_state row: its quantization and product are skipped
    presets = []
    for k in range(steps):
        presets.append({hs: h, cs: c})
        want = run_oracle(m, ins[k], 1, presets=[presets[-1]], read=(hs, cs))
        h, c = want[-2], want[-1]
    want = run_oracle(m, ins, steps, presets=presets, read=(hs, cs))
    got = runner(m, ins, steps, presets=presets, read=(hs, cs))
    for step, (ws, gs) in enumerate(zip(want, got)):
        for what, w, g in zip(("output", "output_state", "cell_state"), ws, gs):
            np.testing.assert_allclose(np.asarray(g).reshape(w.shape), w, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{m.desc} step {step} {what}")


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
@pytest.mark.parametrize("cifg", [False, True])
@pytest.mark.parametrize("peephole", [False, True])
@pytest.mark.parametrize("proj", [None, 5, 9])
@pytest.mark.parametrize("layer_norm", [False, True])
def test_lstm_hybrid_step(runner, rng, asymmetric, cifg, peephole, proj, layer_norm):
    m = MH.lstm_hybrid(rng, asymmetric, batches=3, time=1, n_input=7, n_cell=9, n_output=proj, cifg=cifg,
                       peephole=peephole, proj=proj is not None, proj_bias=bool(rng.integers(0, 2)),
                       layer_norm=layer_norm, time_major=bool(rng.integers(0, 2)))
    check_hybrid_steps(runner, rng, m)


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
def test_lstm_hybrid_zero_rows(runner, rng, asymmetric):
    """All-zero input and state rows (skipped by TFLite), constant and one-signed rows (the
    quantizer's edge cases)."""
    m = MH.lstm_hybrid(rng, asymmetric, batches=4, time=1, n_input=6, n_cell=5, proj=True, n_output=4)

    def gen(rng_, t):
        x = MH.hybrid_input(rng_, t)
        x[1] = 0.0
        x[2] = 2.5
        x[3] = np.abs(x[3]) + 0.25
        return x
    check_hybrid_steps(runner, rng, m, gen=gen, zero_rows=True)
    x0 = MH.lstm_hybrid(rng, asymmetric, batches=2, time=1, n_input=3, n_cell=4)
    check_hybrid_steps(runner, rng, x0, gen=lambda rng_, t: np.zeros(t.shape, np.float32))


@pytest.mark.parametrize("seed", range(24))
def test_lstm_hybrid_random(runner, seed):
    rng = np.random.default_rng(9500 + seed)
    n_cell = int(rng.integers(1, 24))
    proj = bool(rng.integers(0, 3) == 0)
    m = MH.lstm_hybrid(rng, bool(rng.integers(0, 2)), batches=int(rng.integers(1, 4)), time=1,
                       n_input=int(rng.integers(1, 40)), n_cell=n_cell,
                       n_output=int(rng.integers(1, 24)) if proj else None, proj=proj,
                       proj_bias=bool(rng.integers(0, 2)), cifg=bool(rng.integers(0, 3) == 0),
                       peephole=bool(rng.integers(0, 2)), time_major=bool(rng.integers(0, 2)),
                       layer_norm=bool(rng.integers(0, 3) == 0),
                       act=int(rng.choice([M.ACT_TANH, M.ACT_RELU, M.ACT_RELU6])),
                       cell_clip=float(rng.choice([0.0, 0.0, 0.8, 3.0])),
                       proj_clip=float(rng.choice([0.0, 0.0, 0.4])) if proj else 0.0)
    check_hybrid_steps(runner, rng, m, steps=int(rng.integers(2, 5)))


@pytest.mark.parametrize("asymmetric", [False, True], ids=["sym", "asym"])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("dims", [dict(batches=1, time=12, n_input=7, n_cell=9),
                                  dict(batches=3, time=5, n_input=20, n_cell=12, n_output=6, proj=True,
                                       peephole=True)])
def test_lstm_hybrid_sequence(runner, rng, asymmetric, time_major, dims):
    m = MH.lstm_hybrid(rng, asymmetric, time_major=time_major, **dims)
    ins = [_inputs(rng, m, MH.hybrid_input) for _ in range(3)]
    want = run_oracle(m, ins, 3)
    got = runner(m, ins, 3)
    first = (0, slice(None)) if time_major else (slice(None), 0)
    np.testing.assert_allclose(np.asarray(got[0][0]).reshape(want[0][0].shape)[first], want[0][0][first],
                               rtol=1e-5, atol=1e-6, err_msg=m.desc)
    for step, (w, g) in enumerate(zip(want, got)):
        np.testing.assert_allclose(np.asarray(g[0]).reshape(w[0].shape), w[0], rtol=0, atol=0.0157651,
                                   err_msg=f"{m.desc} invoke {step}")


# ---- rejected combinations ----------------------------------------------------------------------

def test_reject_lstm_int8_layer_norm(runner, rng):
    m = M.lstm(rng, "int8", n_cell=4, n_input=3)
    # int16 layer norm coefficients on every gate
    for g in range(4):
        m.tensors.append(M.T(f"ln{g}", np.int16, (4,), data=np.full(4, 1000), scale=[1e-4]))
        m.inputs[20 + g] = len(m.tensors) - 1
    _expect_reject(runner, m, "layer normalization", "int8")


def test_reject_lstm_float_no_activation(runner, rng):
    # TFLite's float LSTM then multiplies the output gate with a stale buffer; not reproduced.
    _expect_reject(runner, M.lstm(rng, "float32", act=M.ACT_NONE), "activation", "NONE")


def test_reject_lstm_hybrid_per_channel_weights(runner, rng):
    m = MH.lstm_hybrid(rng, n_cell=4, n_input=3)
    w = m.tensors[m.inputs[3]]
    w.scale, w.zp = [w.scale[0]] * 4, [0] * 4
    _expect_reject(runner, m, "per-channel", "input weights")


def test_reject_lstm_hybrid_weights_zero_point(runner, rng):
    m = MH.lstm_hybrid(rng, n_cell=4, n_input=3)
    m.tensors[m.inputs[6]].zp = [5]
    _expect_reject(runner, m, "recurrent weights", "zero point 5")


def test_reject_lstm_hybrid_float_peephole(runner, rng):
    m = MH.lstm_hybrid(rng, n_cell=4, n_input=3, peephole=True)
    t = m.tensors[m.inputs[10]]
    m.tensors[m.inputs[10]] = M.T(t.name, np.float32, t.shape, data=t.data.astype(np.float32) * t.scale[0])
    _expect_reject(runner, m, "peephole weights", "float32")


def test_reject_lstm_int8_per_channel_weights(runner, rng):
    m = M.lstm(rng, "int8", n_cell=4, n_input=3)
    w = m.tensors[m.inputs[2]]
    w.scale, w.zp = [w.scale[0]] * 4, [0] * 4
    _expect_reject(runner, m, "per-channel", "input weights")


def test_reject_lstm_int8_cell_scale(runner, rng):
    m = M.lstm(rng, "int8", n_cell=4, n_input=3)
    m.tensors[m.inputs[19]].scale = [3e-4]      # not a power of two
    _expect_reject(runner, m, "cell_state", "power of two")


# ---- the int16 fixed-point activations (mn_quant) -----------------------------------------------

def _int16_fn(name):
    import ctypes
    from runners import kshim_lib
    f = getattr(kshim_lib(), name)
    f.restype = ctypes.c_int16
    return f


def test_int16_logistic_accuracy():
    # gemmlowp's int16 logistic on Q3.12: within a few LSBs of the real function, exactly
    # 1/2 at 0, and logistic(-x) == 1 - logistic(x) in Q0.15 (1 = 32767).
    import ctypes
    f = _int16_fn("mn_logistic_s16_q3")
    f.argtypes = [ctypes.c_int16]
    x = np.arange(-32768, 32768)
    y = np.array([f(int(v)) for v in x])
    ref = 1.0 / (1.0 + np.exp(-x / 4096.0))
    assert np.max(np.abs(y / 32768.0 - ref)) < 8 / 32768
    assert y[x == 0][0] == 16384
    pos = x > 0
    assert np.array_equal(y[np.isin(x, -x[pos])][::-1], 32767 - y[pos])


@pytest.mark.parametrize("integer_bits", range(7))
def test_int16_tanh_accuracy(integer_bits):
    import ctypes
    f = _int16_fn("mn_tanh_s16")
    f.argtypes = [ctypes.c_int16, ctypes.c_int]
    x = np.arange(-32768, 32768)
    y = np.array([f(int(v), integer_bits) for v in x])
    ref = np.tanh(x / float(1 << (15 - integer_bits)))
    assert np.max(np.abs(y / 32768.0 - ref)) < 13 / 32768
    inner = x[(x > -32768)]
    assert np.array_equal(y[np.isin(x, -inner)], -y[np.isin(x, inner)][::-1])
