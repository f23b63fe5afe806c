"""Single-op models of the int16x8 forms of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (int16
activations, int8 weights, int64 or int32 bias), TRANSPOSE_CONV and BATCH_MATMUL, built like
opmodels.py's: quantization chosen from the expected accumulator spread, so outputs use their range
without saturating.

CASES maps (op, dtype combination as in engine/mn_ops.h) to a builder rng -> (OpModel, input
generator); tools/gen_op_models.py and test_op_matrix.py use it.
"""
from __future__ import annotations

import math

import numpy as np

import opmodels as M
from opmodels import BO, S, T, OpModel, rand_q

IN16_STD = 20000 / math.sqrt(3)      # spread of opmodels.random_input's int16 values
W8_STD = 73.3                        # of uniform int8 weights in [-127, 127]


def to_16x8(m, rng, taps, bias_dtype=np.int64, weights_zp=0):
    """The int16x8 form of an int8 conv / depthwise / fully-connected model `m` (tensors input,
    weights, bias, output at 0..3) whose output sums `taps` products: int16 input and output with
    zero point 0, the same int8 weights, a bias of `bias_dtype` at scale input * weight scale."""
    inp, w, b, out = m.tensors[:4]
    in_scale = float(rng.uniform(1e-4, 8e-4))
    inp.dtype, inp.scale, inp.zp = np.dtype(np.int16), [in_scale], [0]
    if weights_zp:
        w.zp = [weights_zp] * len(w.zp)
    w_scales = [float(np.float32(s)) for s in w.scale]
    n = b.shape[0]
    b_scales = [in_scale * (w_scales[c] if len(w_scales) > 1 else w_scales[0]) for c in range(n)]
    acc_std = math.sqrt(taps) * IN16_STD * W8_STD * in_scale * float(np.mean(w_scales))
    b.dtype = np.dtype(bias_dtype)
    b.data = np.round(rng.normal(0, acc_std, n) / np.array(b_scales)).astype(bias_dtype)
    b.scale, b.zp, b.qdim = (b_scales, [0] * n, 0) if len(w_scales) > 1 else ([b_scales[0]], [0], 0)
    out.dtype, out.zp = np.dtype(np.int16), [0]
    out.scale = [acc_std * 1.4 * 8.0 / 65535]
    if bias_dtype == np.int32:
        m.options.quantizedBiasType = S.TensorType.INT32
    m.desc = m.desc.replace("int8", f"int16x8 b{np.dtype(bias_dtype).name}" + (f" wzp{weights_zp}" if weights_zp else ""), 1)
    return m


def conv2d_16x8(rng, bias_dtype=np.int64, **kw):
    m = M.conv2d(rng, "int8", **kw)
    f = m.tensors[1].shape
    return to_16x8(m, rng, f[1] * f[2] * f[3], bias_dtype)


def depthwise_16x8(rng, bias_dtype=np.int64, **kw):
    m = M.depthwise(rng, "int8", **kw)
    f = m.tensors[1].shape
    return to_16x8(m, rng, f[1] * f[2], bias_dtype)


def fully_connected_16x8(rng, bias_dtype=np.int64, weights_zp=0, **kw):
    m = M.fully_connected(rng, "int8", **kw)
    return to_16x8(m, rng, m.tensors[1].shape[1], bias_dtype, weights_zp)


def _cases():
    c = {}
    c[("CONV_2D", "int16x8")] = lambda rng: (conv2d_16x8(rng, n=2, h=6, w=5, cin=3, cout=4), None)
    c[("DEPTHWISE_CONV_2D", "int16x8")] = lambda rng: (depthwise_16x8(rng, n=2, h=6, w=5, cin=3, mult=2), None)
    c[("FULLY_CONNECTED", "int16x8")] = lambda rng: (fully_connected_16x8(rng, in_shape=(3, 10), units=4), None)
    return c


CASES = _cases()
