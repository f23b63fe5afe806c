"""A streaming 1-D depthwise-separable net, int8 (the wake-word shape: features in time x channels
as 1xTx1xC, Kx1 depthwise convolutions along time, each followed by a 1x1 convolution), for the
depthwise kernels' benchmark (`micronn bench`) and bit-exactness checks.

    python tests/engine/stream1d_model.py OUT.tflite
"""
import sys

import numpy as np
from ai_edge_litert import schema_py_generated as S

from graphmodels import BO, Graph

# (kind, K or channels, stride, padding): input 1x49x1x40
LAYERS = [("dw", 9, 1, S.Padding.SAME), ("pw", 64), ("dw", 9, 2, S.Padding.VALID), ("pw", 64),
          ("dw", 5, 1, S.Padding.SAME), ("pw", 64), ("dw", 5, 1, S.Padding.SAME), ("pw", 48),
          ("dw", 3, 1, S.Padding.VALID), ("pw", 32)]


def model(seed=0, t=49, c=40, layers=LAYERS):
    rng = np.random.default_rng(seed)
    g = Graph()
    scale = 0.05
    x = g.input("in", np.int8, (1, t, 1, c), scale=scale, zp=-3)
    h = t
    x_std = 74 * scale   # real-valued RMS of the activations, tracked to pick each output scale
    for i, L in enumerate(layers):
        if L[0] == "dw":
            _, k, s, pad = L
            oc = c
            w = np.clip(rng.normal(0, 45, (1, k, 1, oc)), -127, 127).astype(np.int8)
            ws = rng.uniform(0.6, 1.4, oc) * 0.02 / np.sqrt(k)
            o = S.DepthwiseConv2DOptionsT()
            o.depthMultiplier = 1
            code, otype = BO.DEPTHWISE_CONV_2D, S.BuiltinOptions.DepthwiseConv2DOptions
            oh = (h + s - 1) // s if pad == S.Padding.SAME else (h - k) // s + 1
            fan = k
        else:
            _, oc = L
            s, pad = 1, S.Padding.VALID
            w = np.clip(rng.normal(0, 45, (oc, 1, 1, c)), -127, 127).astype(np.int8)
            ws = rng.uniform(0.6, 1.4, oc) * 0.02 / np.sqrt(c)
            o = S.Conv2DOptionsT()
            code, otype = BO.CONV_2D, S.BuiltinOptions.Conv2DOptions
            oh = h
            fan = c
        o.padding, o.strideH, o.strideW = pad, s, 1
        o.fusedActivationFunction = S.ActivationFunctionType.RELU
        qdim = 3 if L[0] == "dw" else 0
        wc = g.const(f"w{i}", w, scale=list(ws), zp=[0] * oc, qdim=qdim)
        bs = [scale * float(np.float32(v)) for v in ws]
        b = g.const(f"b{i}", rng.integers(-2000, 2000, (oc,), dtype=np.int32), scale=bs, zp=[0] * oc)
        acc_std = 45 * 0.02 * x_std   # sqrt(fan) taps of weight RMS 45 * 0.02 / sqrt(fan)
        out_scale = acc_std * 2.5 / 127
        x_std = acc_std / np.sqrt(2)   # after the ReLU
        x = g.op(code, [x, wc, b], np.int8, (1, oh, 1, oc), otype, o, scale=out_scale, zp=-128)
        h, c, scale = oh, oc, out_scale
    g.output(x)
    return g.tflite()


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as f:
        f.write(model())
