"""Randomised sweep beyond the option grid: many seeded random configurations per op (shapes,
batch, strides, dilations, filter sizes, quantization, activations), compared with the oracle."""
import numpy as np
import pytest

import opmodels as M
from test_op_kernels import check

N = 24
# Random configurations must still produce meaningful outputs: at most this share of an integer
# output may sit at its type's limits (sweeps whose data only saturate would compare clamps).
MAX_SAT = 0.3


def _hw(rng, f, d):
    eff = (f - 1) * d + 1
    return int(rng.integers(eff, eff + 9))


@pytest.mark.parametrize("seed", range(N))
def test_random_conv(runner, seed):
    rng = np.random.default_rng(1000 + seed)
    dtype = ["int8", "float32"][seed % 2]
    fh, fw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dh, dw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    groups = int(rng.choice([1, 1, 2]))
    cin = groups * int(rng.integers(1, 5))
    m = M.conv2d(rng, dtype, n=int(rng.integers(1, 3)), h=_hw(rng, fh, dh), w=_hw(rng, fw, dw), cin=cin,
                 cout=groups * int(rng.integers(1, 4)), fh=fh, fw=fw,
                 stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))), dil=(dh, dw),
                 padding=int(rng.integers(0, 2)), act=int(rng.choice(M.ACTS)),
                 per_channel=bool(rng.integers(0, 2)), groups=groups)
    check(runner, rng, m, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_depthwise(runner, seed):
    rng = np.random.default_rng(2000 + seed)
    dtype = ["int8", "float32"][seed % 2]
    fh, fw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dh, dw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    m = M.depthwise(rng, dtype, n=int(rng.integers(1, 3)), h=_hw(rng, fh, dh), w=_hw(rng, fw, dw),
                    cin=int(rng.integers(1, 6)), mult=int(rng.integers(1, 4)), fh=fh, fw=fw,
                    stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))), dil=(dh, dw),
                    padding=int(rng.integers(0, 2)), act=int(rng.choice(M.ACTS)),
                    per_channel=bool(rng.integers(0, 2)))
    check(runner, rng, m, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_fully_connected(runner, seed):
    rng = np.random.default_rng(3000 + seed)
    dtype = ["int8", "float32"][seed % 2]
    lead = tuple(int(x) for x in rng.integers(1, 4, int(rng.integers(1, 3))))
    depth = int(rng.integers(1, 80))
    m = M.fully_connected(rng, dtype, in_shape=lead + (depth,), units=int(rng.integers(1, 20)),
                          act=int(rng.choice(M.ACTS)), per_channel=dtype == "int8" and bool(rng.integers(0, 2)),
                          bias=bool(rng.integers(0, 4)))
    check(runner, rng, m, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_pool(runner, seed):
    rng = np.random.default_rng(4000 + seed)
    dtype = ["int8", "int16", "float32"][seed % 3]
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    m = M.pool(rng, ["avg", "max"][(seed // 3) % 2], dtype, n=int(rng.integers(1, 3)),
               h=int(rng.integers(fh, fh + 8)), w=int(rng.integers(fw, fw + 8)), c=int(rng.integers(1, 6)),
               fh=fh, fw=fw, stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
               padding=int(rng.integers(0, 2)), act=int(rng.choice(M.ACTS)))
    check(runner, rng, m, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_add(runner, seed):
    rng = np.random.default_rng(5000 + seed)
    dtype = ["int8", "float32"][seed % 2]
    nd = int(rng.integers(1, 6))
    full = [int(x) for x in rng.integers(1, 5, nd)]
    s1 = [d if rng.random() < 0.7 else 1 for d in full]
    s2 = [d if rng.random() < 0.7 else 1 for d in full]
    s2 = s2[int(rng.integers(0, nd)):] or [1]
    m = M.add(rng, dtype, tuple(s1), tuple(s2), act=int(rng.choice(M.ACTS)))
    check(runner, rng, m, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_softmax(runner, seed):
    rng = np.random.default_rng(6000 + seed)
    types = [("int8", "int8"), ("int8", "int16"), ("float32", "float32")][seed % 3]
    shape = tuple(int(x) for x in rng.integers(1, 6, int(rng.integers(0, 3)))) + (int(rng.integers(1, 100)),)
    m = M.softmax(rng, types[0], types[1], shape=shape, beta=float(rng.uniform(0.1, 3.0)))
    if types[0] == "int8":
        m.tensors[0].scale = [float(rng.uniform(0.002, 0.5))]
    beta = m.options.beta

    def gen(rng_, t):
        # Logits spread over ~4/beta real units: probabilities differ by up to e^4, so most are
        # neither 0 nor 1 after quantization, whatever the row length.
        if t.dtype == np.float32:
            return rng_.uniform(-2 / beta, 2 / beta, t.shape).astype(np.float32)
        half = int(min(63, max(1, 2 / beta / t.scale[0])))
        center = int(rng_.integers(-128 + half, 128 - half))
        return (center + rng_.integers(-half, half + 1, t.shape)).astype(np.int8)
    check(runner, rng, m, gen=gen, max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_svdf(runner, seed):
    rng = np.random.default_rng(7000 + seed)
    dtype = ["int8", "float32"][seed % 2]
    rank = int(rng.integers(1, 4))
    m = M.svdf(rng, dtype, batches=int(rng.integers(1, 4)), input_size=int(rng.integers(1, 40)),
               units=int(rng.integers(1, 10)), rank=rank, memory=int(rng.integers(1, 12)),
               act=M.ACT_RELU if dtype == "int8" else int(rng.choice(M.ACTS)), bias=bool(rng.integers(0, 3)))
    check(runner, rng, m, invokes=int(rng.integers(2, 6)), max_saturated=MAX_SAT)


@pytest.mark.parametrize("seed", range(N))
def test_random_requantize(runner, seed):
    rng = np.random.default_rng(8000 + seed)
    combos = [("int8", "int8"), ("int16", "int8"), ("int16", "int16"), ("int16", "int32"), ("float32", "int8"),
              ("float32", "int16"), ("uint8", "int8"), ("int8", "uint8")]
    i, o = combos[seed % len(combos)]

    def q(dt):
        if dt == "int8":
            return (float(rng.uniform(0.005, 0.2)), int(rng.integers(-128, 128)))
        if dt == "uint8":
            return (float(rng.uniform(0.005, 0.2)), int(rng.integers(0, 256)))
        if dt == "int16":
            return (float(rng.uniform(1e-5, 1e-3)), 0)
        return (float(rng.uniform(1e-6, 1e-4)), int(rng.integers(-1000, 1000)))
    in_q = None if i == "float32" else q(i)
    out_q = q(o)
    m = M.quantize(rng, i, o, shape=(int(rng.integers(1, 4)), int(rng.integers(1, 50))), in_q=in_q, out_q=out_q)

    def gen(rng_, t):
        # Real values over 110% of what the output type can represent: a few saturate, most not.
        oinfo = np.iinfo(np.dtype(o))
        lo, hi = (oinfo.min - out_q[1]) * out_q[0], (oinfo.max - out_q[1]) * out_q[0]
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * 1.1
        real = rng_.uniform(mid - half, mid + half, t.shape)
        if t.dtype == np.float32:
            return real.astype(np.float32)
        info = np.iinfo(t.dtype)
        return np.clip(np.round(real / in_q[0]) + in_q[1], info.min, info.max).astype(t.dtype)
    check(runner, rng, m, gen=gen, max_saturated=MAX_SAT)
