"""Single-op models of the hybrid ("dynamic range") kernels: float32 activations, int8 symmetric
weights (per-tensor or per-channel scales), float32 bias and output, as the TFLite converter makes
them from a float model with optimizations and no representative data. The kernel quantizes its
input on the fly, so the input generator here gives every batch row its own range and offset.

CASES maps (op, dtype combination as in engine/mn_ops.h) to a builder rng -> (OpModel, input
generator); tools/gen_op_models.py and test_op_matrix.py use it.
"""
from __future__ import annotations

import numpy as np

import opmodels as M
from opmodels import BO, S, T, OpModel, rand_q


def hybrid_input(rng, t, rows=None):
    """Float input whose rows (the leading `rows` dims; default: all but the last) have ranges from
    1e-2 to 1e2 and some an offset, so that symmetric and asymmetric quantization differ."""
    shape = t.shape
    lead = shape[:rows if rows is not None else len(shape) - 1]
    n = int(np.prod(lead)) if lead else 1
    x = rng.normal(0, 1.0, (n, int(np.prod(shape)) // n))
    x *= 10.0 ** rng.uniform(-2, 2, (n, 1))
    x += rng.choice([0.0, 1.0], (n, 1)) * np.abs(x).max(axis=1, keepdims=True) * rng.uniform(-1.5, 1.5, (n, 1))
    return x.reshape(shape).astype(np.float32)


def _int8_weights(rng, shape, n_scales, qdim):
    scales = list(rng.uniform(0.002, 0.02, n_scales))
    return T("weights", np.int8, shape, data=rand_q(rng, np.int8, shape, -127, 127), scale=scales,
             zp=[0] * n_scales, qdim=qdim)


def fully_connected_hybrid(rng, in_shape=(3, 16), units=5, act=M.ACT_NONE, bias=True, per_channel=False,
                           asymmetric=False, keep_num_dims=False):
    depth = in_shape[-1]
    batches = int(np.prod(in_shape)) // depth
    out_shape = tuple(in_shape[:-1]) + (units,) if keep_num_dims else (batches, units)
    w = _int8_weights(rng, (units, depth), units if per_channel else 1, 0)
    tensors = [T("input", np.float32, in_shape), w,
               T("bias", np.float32, (units,), data=rng.normal(0, 0.5, (units,))),
               T("output", np.float32, out_shape)]
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = act
    opts.keepNumDims = keep_num_dims
    opts.asymmetricQuantizeInputs = asymmetric
    fields = {0: act, 1: 0, 2: int(keep_num_dims), 3: int(asymmetric)}
    return OpModel(BO.FULLY_CONNECTED, tensors, [0, 1, 2 if bias else -1], [3],
                   S.BuiltinOptions.FullyConnectedOptions, opts, fields,
                   desc=f"fc hybrid {in_shape}->{units} a{act} pc{per_channel} asym{asymmetric} bias{bias}")


def _hybrid_filter(rng, m, per_channel, qdim, equal_scales=False):
    """Replace float model m's filter (input 1) by int8 weights with per-tensor or per-channel
    (along qdim) scales."""
    f = m.tensors[1]
    n = f.shape[qdim] if per_channel else 1
    w = _int8_weights(rng, f.shape, n, qdim if per_channel else 0)
    if equal_scales:
        w.scale = [w.scale[0]] * n
    w.name = f.name
    m.tensors[1] = w
    m.desc = m.desc.replace("float32", f"hybrid pc{int(per_channel)}{'=' if equal_scales else ''}")
    return m


def conv2d_hybrid(rng, per_channel=True, equal_scales=False, **kw):
    return _hybrid_filter(rng, M.conv2d(rng, "float32", **kw), per_channel, 0, equal_scales)


def depthwise_hybrid(rng, per_channel=True, equal_scales=False, **kw):
    return _hybrid_filter(rng, M.depthwise(rng, "float32", **kw), per_channel, 3, equal_scales)


def image_input(rng, t):
    """hybrid_input with one range per batch image (the conv kernels quantize whole images)."""
    return hybrid_input(rng, t, rows=1)


def svdf_hybrid(rng, asymmetric=False, **kw):
    """SVDF with int8 weights_feature and weights_time (per-tensor), float32 input/state/bias/output."""
    m = M.svdf(rng, "float32", **kw)
    for i, sc in ((1, float(rng.uniform(0.004, 0.02))), (2, float(rng.uniform(0.004, 0.02)))):
        t = m.tensors[i]
        m.tensors[i] = T(t.name, np.int8, t.shape, data=rand_q(rng, np.int8, t.shape, -127, 127), scale=[sc])
    m.options.asymmetricQuantizeInputs = asymmetric
    m.fields[2] = int(asymmetric)
    m.desc = m.desc.replace("float32", f"hybrid asym{int(asymmetric)}")
    return m


def batch_matmul_hybrid(rng, lhs=(2, 3, 6), rhs=(6, 4), adj_x=False, adj_y=False, asymmetric=False):
    """float32 lhs, constant int8 rhs (per-tensor scale)."""
    import models_conv as MC
    m = MC.batch_matmul(rng, "float32", lhs, rhs, adj_x=adj_x, adj_y=adj_y, rhs_const=True)
    r = m.tensors[1]
    m.tensors[1] = T(r.name, np.int8, r.shape, data=rand_q(rng, np.int8, r.shape, -127, 127),
                     scale=[float(rng.uniform(0.004, 0.02))])
    m.options.asymmetricQuantizeInputs = asymmetric
    m.fields[2] = int(asymmetric)
    m.desc = m.desc.replace("float32", f"hybrid asym{int(asymmetric)}")
    return m


def lstm_hybrid(rng, asymmetric=False, **kw):
    """UNIDIRECTIONAL_SEQUENCE_LSTM with int8 weights (input, recurrent, peephole, projection; per-tensor
    scales sized to the float weights they replace), float32 input, states, biases and output."""
    m = M.lstm(rng, "float32", **kw)
    for i in list(range(1, 12)) + [16]:
        k = m.inputs[i]
        if k < 0:
            continue
        t = m.tensors[k]
        sc = float(np.abs(t.data).max()) / 127 or 1.0
        m.tensors[k] = T(t.name, np.int8, t.shape, data=np.clip(np.round(t.data / sc), -127, 127), scale=[sc])
    m.options.asymmetricQuantizeInputs = asymmetric
    m.fields[4] = int(asymmetric)
    m.desc = m.desc.replace("float32", f"hybrid asym{int(asymmetric)}")
    return m


def _cases():
    c = {}
    c[("FULLY_CONNECTED", "float32x8")] = lambda rng: (
        fully_connected_hybrid(rng, in_shape=(4, 12), units=6, per_channel=True, asymmetric=True), hybrid_input)
    c[("CONV_2D", "float32x8")] = lambda rng: (conv2d_hybrid(rng, n=2, h=6, w=5, cin=3, cout=4), image_input)
    c[("DEPTHWISE_CONV_2D", "float32x8")] = lambda rng: (
        depthwise_hybrid(rng, n=2, h=6, w=5, cin=3, mult=2), image_input)
    c[("SVDF", "float32x8")] = lambda rng: (svdf_hybrid(rng, True, batches=3, act=M.ACT_RELU), hybrid_input)
    c[("UNIDIRECTIONAL_SEQUENCE_LSTM", "float32x8")] = lambda rng: (
        lstm_hybrid(rng, True, batches=2, time=1, n_input=5, n_cell=4, peephole=True), hybrid_input)
    c[("BATCH_MATMUL", "float32x8")] = lambda rng: (batch_matmul_hybrid(rng, asymmetric=True), hybrid_input)
    return c


CASES = _cases()
