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


def to_16x8(m, rng, taps, bias_dtype=np.int64, weights_zp=0, idx=(0, 1, 2, 3)):
    """The int16x8 form of an int8 conv-like model `m` (tensors input, weights, bias, output at
    `idx`) whose output sums `taps` products: int16 input and output with zero point 0, the same
    int8 weights, a bias of `bias_dtype` at scale input * weight scale."""
    inp, w, b, out = (m.tensors[i] for i in idx)
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
        if m.builtin in (BO.CONV_2D, BO.TRANSPOSE_CONV):   # kshim field id of quantized_bias_type
            m.fields[6 if m.builtin == BO.CONV_2D else 4] = S.TensorType.INT32
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


def transpose_conv(rng, dtype="int8", n=1, h=5, w=4, cin=3, cout=4, fh=3, fw=3, stride=(2, 2), padding=M.SAME,
                   act=M.ACT_NONE, per_channel=True, bias=True, bias_dtype=np.int64, out_hw=None):
    """TRANSPOSE_CONV: inputs output shape, filter [cout, fh, fw, cin], input, bias; output size by
    default what a forward conv with this padding would shrink back to the input size."""
    sh, sw = stride
    if out_hw is None:
        out_hw = (h * sh, w * sw) if padding == M.SAME else ((h - 1) * sh + fh, (w - 1) * sw + fw)
    oh, ow = out_hw
    taps = max(1.0, fh / sh) * max(1.0, fw / sw) * cin
    ts = [T("output_shape", np.int32, (4,), data=np.array([n, oh, ow, cout]))]
    if dtype == "float32":
        ts.append(T("filter", np.float32, (cout, fh, fw, cin), data=rng.normal(0, 0.5, (cout, fh, fw, cin))))
        ts.append(T("input", np.float32, (n, h, w, cin)))
        ts.append(T("bias", np.float32, (cout,), data=rng.normal(0, 0.5, (cout,))))
        ts.append(T("output", np.float32, (n, oh, ow, cout)))
    else:
        in_scale, in_zp = M._s8_act(rng)
        nsc = cout if per_channel else 1
        w_scales = rng.uniform(0.002, 0.02, nsc)
        ts.append(T("filter", np.int8, (cout, fh, fw, cin), data=rand_q(rng, np.int8, (cout, fh, fw, cin), -127, 127),
                    scale=list(w_scales), zp=[0] * nsc, qdim=0))
        ts.append(T("input", np.int8, (n, h, w, cin), scale=[in_scale], zp=[in_zp]))
        b_scales = [in_scale * float(np.float32(w_scales[c if per_channel else 0])) for c in range(cout)]
        acc_std = math.sqrt(taps) * 73 * 73 * in_scale * float(np.mean(w_scales))
        bias_q = np.round(rng.normal(0, acc_std, cout) / np.array(b_scales)).astype(np.int32)
        ts.append(T("bias", np.int32, (cout,), data=bias_q, scale=b_scales if per_channel else [b_scales[0]],
                    zp=[0] * (cout if per_channel else 1), qdim=0))
        out_scale, out_zp = M._out_quant(rng, acc_std * 1.4)
        ts.append(T("output", np.int8, (n, oh, ow, cout), scale=[out_scale], zp=[out_zp]))
    opts = S.TransposeConvOptionsT()
    opts.padding, opts.strideW, opts.strideH = padding, sw, sh
    opts.fusedActivationFunction = act
    fields = {0: padding, 1: sw, 2: sh, 3: act}
    m = OpModel(BO.TRANSPOSE_CONV, ts, [0, 1, 2, 3] if bias else [0, 1, 2], [4],
                S.BuiltinOptions.TransposeConvOptions, opts, fields,
                desc=f"tconv {dtype} {n}x{h}x{w}x{cin}->{oh}x{ow}x{cout} f{fh}x{fw} s{stride} p{padding} a{act} "
                     f"pc{per_channel} b{bias}")
    return m


def transpose_conv_16x8(rng, bias_dtype=np.int64, **kw):
    m = transpose_conv(rng, "int8", **kw)
    f = m.tensors[1].shape
    sh, sw = kw.get("stride", (2, 2))
    taps = max(1.0, f[1] / sh) * max(1.0, f[2] / sw) * f[3]
    return to_16x8(m, rng, taps, bias_dtype, idx=(2, 1, 3, 4))


def batch_matmul(rng, dtype="int8", lhs=(2, 3, 4), rhs=(2, 4, 5), adj_x=False, adj_y=False, rhs_const=False):
    """BATCH_MATMUL of lhs [..., M, K] (adj_x: [..., K, M]) and rhs [..., K, N] (adj_y: [..., N, K]),
    batch dimensions broadcast; rhs_const: the rhs is a constant of the model."""
    M_, K = (lhs[-1], lhs[-2]) if adj_x else (lhs[-2], lhs[-1])
    N = rhs[-2] if adj_y else rhs[-1]
    lb, rb = list(lhs[:-2]), list(rhs[:-2])
    r = max(len(lb), len(rb))
    lb, rb = [1] * (r - len(lb)) + lb, [1] * (r - len(rb)) + rb
    out = tuple(max(a, b) for a, b in zip(lb, rb)) + (M_, N)
    dt = np.dtype(dtype)
    if dt == np.float32:
        ts = [T("lhs", dt, lhs), T("rhs", dt, rhs), T("output", dt, out)]
        if rhs_const:
            ts[1].data = rng.normal(0, 1, rhs).astype(np.float32)
    else:
        wide = dt == np.int16
        sl, sr = (float(rng.uniform(1e-4, 8e-4)), float(rng.uniform(1e-4, 8e-4))) if wide else \
            (float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.01, 0.1)))
        zl, zr = (0, 0) if wide else (int(rng.integers(-30, 31)), int(rng.integers(-30, 31)))
        std = IN16_STD if wide else 74.0
        acc_std = math.sqrt(K) * std * std * sl * sr
        info = np.iinfo(dt)
        out_scale = acc_std * 1.4 * 8.0 / (info.max - info.min)
        ts = [T("lhs", dt, lhs, scale=[sl], zp=[zl]), T("rhs", dt, rhs, scale=[sr], zp=[zr]),
              T("output", dt, out, scale=[out_scale], zp=[0 if wide else int(rng.integers(-20, 21))])]
        if rhs_const:
            ts[1].data = M.random_input(rng, ts[1])
    opts = S.BatchMatMulOptionsT()
    opts.adjX, opts.adjY = adj_x, adj_y
    return OpModel(BO.BATCH_MATMUL, ts, [0, 1], [2], S.BuiltinOptions.BatchMatMulOptions, opts,
                   {0: int(adj_x), 1: int(adj_y)},
                   desc=f"bmm {dtype} {lhs}x{rhs} adj{int(adj_x)}{int(adj_y)} const{int(rhs_const)}")


def _cases():
    c = {}
    c[("CONV_2D", "int16x8")] = lambda rng: (conv2d_16x8(rng, n=2, h=6, w=5, cin=3, cout=4), None)
    c[("DEPTHWISE_CONV_2D", "int16x8")] = lambda rng: (depthwise_16x8(rng, n=2, h=6, w=5, cin=3, mult=2), None)
    c[("FULLY_CONNECTED", "int16x8")] = lambda rng: (fully_connected_16x8(rng, in_shape=(3, 10), units=4), None)
    c[("TRANSPOSE_CONV", "int8")] = lambda rng: (transpose_conv(rng, "int8", n=2), None)
    c[("TRANSPOSE_CONV", "float32")] = lambda rng: (transpose_conv(rng, "float32", n=2), None)
    c[("TRANSPOSE_CONV", "int16x8")] = lambda rng: (transpose_conv_16x8(rng, n=2), None)
    for dt in ("int8", "int16", "float32"):
        c[("BATCH_MATMUL", dt)] = lambda rng, dt=dt: (batch_matmul(rng, dt, (2, 3, 6), (1, 6, 4)), None)
    return c


CASES = _cases()
