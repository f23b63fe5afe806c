"""An int8 ResNet-8 shaped like MLPerf Tiny's image classifier (32x32x3 input, three residual stacks
of 16 / 32 / 64 channels, 1x1 strided shortcuts, ADD + ReLU after each stack, 8x8 average pool,
FULLY_CONNECTED 10, SOFTMAX), with random weights and post-training quantization calibrated on a
random image in float (numpy): every activation's scale covers its calibrated range, so the int8
model's values are spread over the range, not saturated. ADD-heavy: its three residual ADDs are
28,672 elements per inference.

    python tests/resnet_models.py OUT.tflite    # writes the model (e.g. for `micronn bench`)
"""
import sys

import numpy as np

from graphmodels import BO, Graph, S

STACKS = [(16, 1), (32, 2), (64, 2)]   # (channels, stride of the stack's first convolution)


def _same_pads(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return out, total // 2, total - total // 2


def _conv_f(x, w, b, stride, relu):
    """x [H, W, C] float, w [OC, KH, KW, C]: TFLite CONV_2D with SAME padding."""
    h, wd, c = x.shape
    oc, kh, kw, _ = w.shape
    oh, pt, pb = _same_pads(h, kh, stride)
    ow, pl, pr = _same_pads(wd, kw, stride)
    xp = np.pad(x, ((pt, pb), (pl, pr), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(0, 1))[::stride, ::stride][:oh, :ow]
    y = np.einsum("hwcij,oijc->hwo", win, w) + b
    return np.maximum(y, 0) if relu else y


def resnet8(seed=0, size=32):
    """The int8 model (bytes) and a calibration-like input image (int8 [1, size, size, 3])."""
    rng = np.random.default_rng(seed)
    img = rng.uniform(-1, 1, (size, size, 3)).astype(np.float32)
    layers = []   # (name, kind, params) in graph order, float forward to get the ranges

    def conv_p(name, cin, cout, k):
        w = rng.normal(0, np.sqrt(2.0 / (k * k * cin)), (cout, k, k, cin)).astype(np.float32)
        b = rng.normal(0, 0.05, cout).astype(np.float32)
        return w, b

    P = {}
    P["c0"] = conv_p("c0", 3, 16, 3)
    cin = 16
    for i, (c, s) in enumerate(STACKS):
        P[f"s{i}a"] = conv_p(f"s{i}a", cin, c, 3)
        P[f"s{i}b"] = conv_p(f"s{i}b", c, c, 3)
        if s != 1 or cin != c:
            P[f"s{i}k"] = conv_p(f"s{i}k", cin, c, 1)
        cin = c
    fc_w = rng.normal(0, np.sqrt(1.0 / cin), (10, cin)).astype(np.float32)
    fc_b = rng.normal(0, 0.05, 10).astype(np.float32)

    # float forward: ranges of every activation
    rng_of = {"image": (-1.0, 1.0)}

    def note(name, y):
        rng_of[name] = (float(min(y.min(), 0.0)), float(max(y.max(), 1e-3)))
        return y

    x = note("c0", _conv_f(img, *P["c0"], 1, True))
    for i, (c, s) in enumerate(STACKS):
        a = note(f"s{i}a", _conv_f(x, *P[f"s{i}a"], s, True))
        bb = note(f"s{i}b", _conv_f(a, *P[f"s{i}b"], 1, False))
        sc = note(f"s{i}k", _conv_f(x, *P[f"s{i}k"], s, False)) if f"s{i}k" in P else x
        x = note(f"s{i}add", np.maximum(bb + sc, 0))
    pooled = note("pool", x.mean(axis=(0, 1)))
    note("fc", pooled @ fc_w.T + fc_b)

    def q(name):
        lo, hi = rng_of[name]
        scale = (hi - lo) / 255.0
        zp = int(np.clip(round(-128 - lo / scale), -128, 127))
        return dict(scale=scale, zp=zp)

    g = Graph()
    t_img = g.input("image", np.int8, (1, size, size, 3), **q("image"))
    scale_of = {t_img: q("image")["scale"]}

    def conv(name, inp, stride, relu, out_hw):
        w, b = P[name]
        ws = np.maximum(np.abs(w).reshape(w.shape[0], -1).max(axis=1), 1e-8) / 127.0
        bs = scale_of[inp] * ws
        wt = g.const(name + "_w", np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8),
                     scale=ws.astype(np.float32), zp=0, qdim=0)
        bt = g.const(name + "_b", np.round(b / bs).astype(np.int32), scale=bs.astype(np.float32), zp=0, qdim=0)
        o = S.Conv2DOptionsT()
        o.padding, o.strideW, o.strideH = S.Padding.SAME, stride, stride
        o.fusedActivationFunction = 1 if relu else 0
        o.dilationWFactor = o.dilationHFactor = 1
        t = g.op(BO.CONV_2D, [inp, wt, bt], np.int8, (1, out_hw, out_hw, w.shape[0]), S.BuiltinOptions.Conv2DOptions,
                 o, name=name, **q(name))
        scale_of[t] = q(name)["scale"]
        return t

    hw = size
    x = conv("c0", t_img, 1, True, hw)
    for i, (c, s) in enumerate(STACKS):
        hw = -(-hw // s)
        a = conv(f"s{i}a", x, s, True, hw)
        bb = conv(f"s{i}b", a, 1, False, hw)
        sc = conv(f"s{i}k", x, s, False, hw) if f"s{i}k" in P else x
        o = S.AddOptionsT()
        o.fusedActivationFunction = 1
        x = g.op(BO.ADD, [bb, sc], np.int8, (1, hw, hw, c), S.BuiltinOptions.AddOptions, o, name=f"s{i}add",
                 **q(f"s{i}add"))
        scale_of[x] = q(f"s{i}add")["scale"]
    po = S.Pool2DOptionsT()
    po.padding, po.strideW, po.strideH, po.filterWidth, po.filterHeight = S.Padding.VALID, hw, hw, hw, hw
    # AVERAGE_POOL_2D keeps its input's quantization (TFLite requires it)
    p = g.op(BO.AVERAGE_POOL_2D, [x], np.int8, (1, 1, 1, cin), S.BuiltinOptions.Pool2DOptions, po, name="pool",
             **q(f"s{len(STACKS) - 1}add"))
    ro = S.ReshapeOptionsT()
    ro.newShape = np.array([1, cin], np.int32)
    flat = g.op(BO.RESHAPE, [p, g.const("flat_shape", np.array([1, cin], np.int32))], np.int8, (1, cin),
                S.BuiltinOptions.ReshapeOptions, ro, name="flat", **q(f"s{len(STACKS) - 1}add"))
    in_s = q(f"s{len(STACKS) - 1}add")["scale"]
    fws = float(np.abs(fc_w).max() / 127.0)
    fw = g.const("fc_w", np.clip(np.round(fc_w / fws), -127, 127).astype(np.int8), scale=fws, zp=0)
    fb = g.const("fc_b", np.round(fc_b / (in_s * fws)).astype(np.int32), scale=in_s * fws, zp=0)
    fo = S.FullyConnectedOptionsT()
    logits = g.op(BO.FULLY_CONNECTED, [flat, fw, fb], np.int8, (1, 10), S.BuiltinOptions.FullyConnectedOptions, fo,
                  name="fc", **q("fc"))
    so = S.SoftmaxOptionsT()
    so.beta = 1.0
    g.output(g.op(BO.SOFTMAX, [logits], np.int8, (1, 10), S.BuiltinOptions.SoftmaxOptions, so, name="softmax",
                  scale=1.0 / 256, zp=-128))
    qi = q("image")
    x_q = np.clip(np.round(img / qi["scale"]) + qi["zp"], -128, 127).astype(np.int8).reshape(1, size, size, 3)
    return g.tflite(), x_q


if __name__ == "__main__":
    data, _ = resnet8()
    with open(sys.argv[1], "wb") as f:
        f.write(data)
    print(f"{sys.argv[1]}: {len(data)} bytes")
