"""Support-matrix cases (see models_binary.CASES) of the first kernels: one model per dtype
combination that engine/mn_ops.h claims, from opmodels.py's builders."""
import numpy as np

import opmodels as M


def _any_int(rng, t):
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    if t.dtype == np.float16:
        return rng.normal(0, 1.0, t.shape).astype(np.float16)
    info = np.iinfo(t.dtype)
    return rng.integers(info.min, info.max, t.shape, endpoint=True).astype(t.dtype)


def _quantize_input(in_q, out_q):
    """Inputs spanning about half of the output's range (not saturating it)."""
    def gen(rng, t):
        if t.dtype == np.float32:
            return (rng.normal(0, 1, t.shape) * out_q[0] * 60).astype(np.float32)
        info = np.iinfo(t.dtype)
        half = min(info.max - in_q[1], 100 * out_q[0] / in_q[0])
        lo, hi = max(info.min, int(in_q[1] - half)), min(info.max, int(in_q[1] + half))
        return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)
    return gen


_Q = {"int8": (0.05, 2), "uint8": (0.04, 128), "int16": (0.0002, 0), "int32": (0.00001, 0)}
# (input, output) -> (input quantization, output quantization), as test_op_kernels.QUANT_CASES
_QUANTIZE = {("float32", "int8"): (None, (0.02, 3)), ("float32", "uint8"): (None, (0.03, 128)),
             ("float32", "int16"): (None, (0.0001, 0)), ("int8", "int8"): ((0.05, 2), (0.03, -7)),
             ("int8", "uint8"): ((0.05, -3), (0.05, 125)), ("int8", "int16"): ((0.05, 2), (0.001, 0)), ("uint8", "int8"): ((0.04, 128), (0.04, 0)),
             ("int16", "int8"): ((0.001, 0), (0.01, 5)), ("int16", "int16"): ((0.0002, 0), (0.0003, 0)),
             ("int16", "int32"): ((0.001, 0), (0.00001, 0))}


def _cases():
    c = {}
    for dt in ("int8", "float32"):
        c[("CONV_2D", dt)] = lambda rng, dt=dt: (M.conv2d(rng, dt, n=2, h=6, w=5, cin=3, cout=4), None)
        c[("DEPTHWISE_CONV_2D", dt)] = lambda rng, dt=dt: (M.depthwise(rng, dt, n=2, h=6, w=5, cin=3, mult=2), None)
        c[("FULLY_CONNECTED", dt)] = lambda rng, dt=dt: (M.fully_connected(rng, dt, in_shape=(3, 10), units=4), None)
        c[("SVDF", dt)] = lambda rng, dt=dt: (M.svdf(rng, dt), None)
        c[("UNIDIRECTIONAL_SEQUENCE_LSTM", dt)] = lambda rng, dt=dt: (M.lstm(rng, dt, batches=2), None)
    for kind, op in (("avg", "AVERAGE_POOL_2D"), ("max", "MAX_POOL_2D")):
        for dt in ("int8", "int16", "float32"):
            c[(op, dt)] = lambda rng, kind=kind, dt=dt: (M.pool(rng, kind, dt, n=2), None)
    c[("L2_POOL_2D", "float32")] = lambda rng: (M.pool(rng, "l2", "float32", n=2), None)
    for dt in ("int8", "uint8", "int16", "float16"):
        c[("DEQUANTIZE", dt + "->float32")] = lambda rng, dt=dt: (M.dequantize(rng, dt, in_q=_Q.get(dt)), _any_int)
    for (i, o), (iq, oq) in _QUANTIZE.items():
        c[("QUANTIZE", f"{i}->{o}")] = lambda rng, i=i, o=o, iq=iq, oq=oq: (
            M.quantize(rng, i, o, in_q=iq, out_q=oq), _quantize_input(iq, oq))
    for dt in ("int8", "int16", "int32", "float32"):
        c[("RESHAPE", dt)] = lambda rng, dt=dt: (M.reshape(rng, dt), _any_int)
    for i, o in (("int8", "int8"), ("int8", "int16"), ("float32", "float32")):
        c[("SOFTMAX", i if i == o else f"{i}->{o}")] = lambda rng, i=i, o=o: (M.softmax(rng, i, o), None)
    return c


CASES = _cases()
