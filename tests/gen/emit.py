"""IR -> .tflite, as a converter writes it, with tests/graphmodels.py's Graph as the flatbuffer writer.

Quantized families are quantized post-training, as the TFLite converter does:
  1. weights: symmetric int8 (per-channel or per-tensor: the node's `pc`), the float graph then
     runs with the dequantized weights;
  2. calibration: that float graph runs in LiteRT on the test inputs; every value's observed range
     (and every SVDF state's) is recorded (`calibrate`);
  3. activations: int8 asymmetric / int16 symmetric scales from those ranges with a 10% margin, so
     values do not saturate; ops with fixed output quantization (SOFTMAX, LOGISTIC, TANH) get theirs,
     data-movement ops and pools keep their input's, MAXIMUM / MINIMUM (and int16 CONCATENATION, or
     CONCATENATION put every input in one quantization, inserting a requantizing
     QUANTIZE where an input's differs;
  4. biases: int32 (int16 activations: int64) at input scale x weight scale per channel.
Models with a float interface get QUANTIZE after each input and DEQUANTIZE before each output.
"""
from __future__ import annotations

import numpy as np
from ai_edge_litert import schema_py_generated as S

import graphmodels
from .ir import ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1

BO = S.BuiltinOperator
BOPT = S.BuiltinOptions
MARGIN = 1.1


def _sym_q(w, axis=None):
    """Symmetric int8 weights: (int8 array, scales list)."""
    if axis is None:
        m = float(np.abs(w).max())
        s = np.array([m / 127 if m > 0 else 1.0])
        return np.clip(np.round(w / s[0]), -127, 127).astype(np.int8), s
    red = tuple(i for i in range(w.ndim) if i != axis)
    m = np.abs(w).max(axis=red)
    s = np.where(m > 0, m / 127, 1.0)
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8), s


def quantize_weights(ir):
    """{node index: {"w": (q, scales, qdim), ...}} and a copy of ir whose float weights are the
    dequantized ones (the calibration graph)."""
    wq = {}
    deq = ir.clone()
    if ir.family == "float32":
        return wq, deq
    for i, n in enumerate(ir.nodes):
        d = deq.nodes[i]
        if n.kind in ("conv", "dw", "fc"):
            qdim = 3 if n.kind == "dw" else 0
            # (int16 FULLY_CONNECTED per tensor; hybrid DEPTHWISE_CONV_2D per channel, as LiteRT takes them)
            pc = (n.a.get("pc", False) and not (n.kind == "fc" and ir.family == "int16")) or \
                (n.kind == "dw" and ir.family == "hybrid")
            q, s = _sym_q(n.w["w"], qdim if pc else None)
            wq[i] = {"w": (q, s, qdim if pc else 0)}
            shape = [1] * q.ndim
            shape[qdim] = -1
            d.w["w"] = q * (s.reshape(shape) if pc else s[0])
        elif n.kind == "svdf":
            qf, sf = _sym_q(n.w["wf"])
            wt = n.w["wt"]
            if ir.family == "hybrid" or n.a.get("time8"):
                qt, st = _sym_q(wt)
            else:   # int16 weights_time
                m = float(np.abs(wt).max()) or 1.0
                st = np.array([m / 32767])
                qt = np.clip(np.round(wt / st[0]), -32767, 32767).astype(np.int16)
            wq[i] = {"wf": (qf, sf, 0), "wt": (qt, st, 0)}
            d.w["wf"] = qf * sf[0]
            d.w["wt"] = qt * st[0]
    return wq, deq


# ---- activation quantization -----------------------------------------------------------------------

def act_q(lo, hi, dtype):
    lo, hi = min(float(lo), 0.0) * MARGIN, max(float(hi), 0.0) * MARGIN
    if dtype == np.int16:
        m = max(-lo, hi)
        return (m / 32767 if m > 1e-6 else 1e-4, 0)
    if hi - lo < 1e-6:
        hi = lo + 1e-3
    s = (hi - lo) / 255
    zp = int(np.clip(np.round(-128 - lo / s), -128, 127))
    return (float(np.float32(s)), zp)


FIXED = {("softmax", np.int8): (1 / 256, -128), ("logistic", np.int8): (1 / 256, -128),
         ("tanh", np.int8): (1 / 128, 0), ("softmax", np.int16): (1 / 32768, 0),
         ("logistic", np.int16): (1 / 32768, 0), ("tanh", np.int16): (1 / 32768, 0)}
PASS = ("reshape", "transpose", "sslice", "pad", "maxpool", "avgpool")


def assign_quant(ir, ranges):
    """{value: (scale, zp)} for every value, and {node index: common (scale, zp)} for the nodes
    whose inputs must share one quantization."""
    dt = np.int16 if ir.family == "int16" else np.int8
    qp, common = {}, {}
    for v in ir.inputs:
        qp[v] = act_q(*ranges[v], dt)
    for i, n in enumerate(ir.nodes):
        k = n.kind
        if (k, dt) in FIXED:
            qp[n.out] = FIXED[(k, dt)]
        elif k in PASS or (k in ("relu", "relu6") and ir.oracle == "tflm"):
            # (TFLM's int8 RELU / RELU6 clamp the raw values without requantizing: with TFLM as
            # the oracle they keep their input's quantization, as converters write them)
            qp[n.out] = qp[n.ins[0]]
        elif k in ("max", "min", "concat"):   # (LiteRT's CONCATENATION demands one quantization too)
            lo = min([ranges[v][0] for v in n.ins if v is not None] + [ranges[n.out][0]] +
                     ([float(n.w["c"].min())] if "c" in n.w else []))
            hi = max([ranges[v][1] for v in n.ins if v is not None] + [ranges[n.out][1]] +
                     ([float(n.w["c"].max())] if "c" in n.w else []))
            common[i] = qp[n.out] = act_q(lo, hi, dt)
        elif k == "requant":
            lo, hi = ranges[n.ins[0]]
            qp[n.out] = act_q(lo * n.a["gain"], hi * n.a["gain"], dt)
        else:
            qp[n.out] = act_q(*ranges[n.out], dt)
    return qp, common


# ---- emission ---------------------------------------------------------------------------------------

def _opts(cls, **kw):
    o = getattr(S, cls)()
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def build(ir, wq=None, qp=None, common=None, calib=False):
    """The model bytes and {value: tensor index} (and ("state", svdf value): its state). calib: the float calibration graph of a quantized
    family (dequantized weights, no requantizing ops, int SVDF without activation)."""
    fam = ir.family
    quant = fam in ("int8", "int16") and not calib
    adt = np.int16 if fam == "int16" else np.int8
    g = graphmodels.Graph()
    vt = {}

    def q(v):
        s, z = qp[v]
        return dict(scale=s, zp=z)

    for v in ir.inputs:
        shape = ir.shapes[v]
        if quant and not ir.float_io:
            vt[v] = g.input(f"in{v}", adt, shape, **q(v))
        else:
            t = g.input(f"in{v}", np.float32, shape)
            if quant:
                t = g.op(BO.QUANTIZE, [t], adt, shape, BOPT.QuantizeOptions, S.QuantizeOptionsT(),
                         name=f"in{v}_q", **q(v))
            vt[v] = t

    def const_i32(name, vals):
        return g.const(name, np.asarray(vals, dtype=np.int32))

    def requant(t, v, target, name):
        if qp[v] == target:
            return t
        return g.op(BO.QUANTIZE, [t], adt, ir.shapes[v], BOPT.QuantizeOptions, S.QuantizeOptionsT(),
                    name=name, scale=target[0], zp=target[1])

    for i, n in enumerate(ir.nodes):
        k, a, w = n.kind, n.a, n.w
        ins = [None if v is None else vt[v] for v in n.ins]
        oshape = ir.shapes[n.out]
        name = f"v{n.out}_{k}"
        oq = q(n.out) if quant else {}
        odt = adt if quant else np.float32
        x = ins[0]
        xq = qp[n.ins[0]] if quant else None

        def op(code, inputs, otype=0, opts=None, dtype=odt, **qq):
            return g.op(code, inputs, dtype, oshape, otype, opts, name=name, **(qq if qq else oq))

        if k in ("conv", "dw", "fc"):
            if i in wq and fam != "float32" and not calib:
                qw, sw, qdim = wq[i]["w"]
                wt = g.const(f"{name}_w", qw, scale=list(map(float, sw)), zp=[0] * len(sw), qdim=qdim)
            else:
                wt = g.const(f"{name}_w", np.asarray(w["w"], np.float32))
            bt = -1
            if w.get("b") is not None:
                if quant:
                    bs = np.float32(xq[0]) * sw.astype(np.float32)
                    bs = np.broadcast_to(bs, (len(w["b"]),)) if len(sw) == 1 else bs
                    bdt = np.int64 if fam == "int16" else np.int32
                    lim = 2 ** 31 - 1
                    bq = np.clip(np.round(w["b"] / bs.astype(np.float64)), -lim, lim).astype(bdt)
                    per = len(sw) > 1
                    bt = g.const(f"{name}_b", bq, scale=list(map(float, bs)) if per else float(bs[0]),
                                 zp=[0] * len(sw) if per else 0, qdim=0)
                else:
                    bt = g.const(f"{name}_b", np.asarray(w["b"], np.float32))
            if k == "conv":
                o = _opts("Conv2DOptionsT", padding=a["pad"], strideH=a["s"][0], strideW=a["s"][1],
                          dilationHFactor=a["d"][0], dilationWFactor=a["d"][1], fusedActivationFunction=a["act"])
                # (a convolution without bias has two inputs: LiteRT refuses an omitted third)
                t = op(BO.CONV_2D, [x, wt] + ([bt] if bt != -1 else []), BOPT.Conv2DOptions, o)
            elif k == "dw":
                o = _opts("DepthwiseConv2DOptionsT", padding=a["pad"], strideH=a["s"][0], strideW=a["s"][1],
                          dilationHFactor=a["d"][0], dilationWFactor=a["d"][1], depthMultiplier=a["mult"],
                          fusedActivationFunction=a["act"])
                t = op(BO.DEPTHWISE_CONV_2D, [x, wt] + ([bt] if bt != -1 else []), BOPT.DepthwiseConv2DOptions, o)
            else:
                o = _opts("FullyConnectedOptionsT", fusedActivationFunction=a["act"], keepNumDims=bool(a["keep"]),
                          asymmetricQuantizeInputs=bool(a.get("asym")) and fam == "hybrid")
                t = op(BO.FULLY_CONNECTED, [x, wt, bt], BOPT.FullyConnectedOptions, o)
        elif k in ("add", "sub", "mul", "sqdiff", "max", "min"):
            cq = common.get(i) if quant else None
            if cq is not None:
                ins = [None if v is None else requant(tv, v, cq, f"{name}_rq{j}")
                       for j, (v, tv) in enumerate(zip(n.ins, ins))]
            if n.ins[1] is None:
                c = w["c"]
                if quant:
                    s, z = cq if cq is not None else act_q(c.min(), c.max(), adt)
                    info = np.iinfo(adt)
                    cv = np.clip(np.round(c / s) + z, info.min, info.max).astype(adt)
                    ins[1] = g.const(f"{name}_c", cv, scale=s, zp=z)
                else:
                    ins[1] = g.const(f"{name}_c", np.asarray(c, np.float32))
            if k == "add":
                t = op(BO.ADD, ins, BOPT.AddOptions, _opts("AddOptionsT", fusedActivationFunction=a["act"],
                                                           potScaleInt16=False))
            elif k == "sub":
                t = op(BO.SUB, ins, BOPT.SubOptions, _opts("SubOptionsT", fusedActivationFunction=a["act"],
                                                           potScaleInt16=False))
            elif k == "mul":
                t = op(BO.MUL, ins, BOPT.MulOptions, _opts("MulOptionsT", fusedActivationFunction=a["act"]))
            elif k == "sqdiff":
                t = op(BO.SQUARED_DIFFERENCE, ins, BOPT.SquaredDifferenceOptions, S.SquaredDifferenceOptionsT())
            else:
                t = op(BO.MAXIMUM if k == "max" else BO.MINIMUM, ins, BOPT.MaximumMinimumOptions,
                       S.MaximumMinimumOptionsT())
        elif k in ("avgpool", "maxpool", "l2pool"):
            o = _opts("Pool2DOptionsT", padding=a["pad"], strideH=a["s"][0], strideW=a["s"][1],
                      filterHeight=a["f"][0], filterWidth=a["f"][1], fusedActivationFunction=a["act"])
            code = {"avgpool": BO.AVERAGE_POOL_2D, "maxpool": BO.MAX_POOL_2D, "l2pool": BO.L2_POOL_2D}[k]
            t = op(code, [x], BOPT.Pool2DOptions, o)
        elif k == "mean":
            t = op(BO.MEAN, [x, const_i32(f"{name}_axes", a["axes"])], BOPT.ReducerOptions,
                   _opts("ReducerOptionsT", keepDims=bool(a["keep"])))
        elif k == "softmax":
            t = op(BO.SOFTMAX, [x], BOPT.SoftmaxOptions, _opts("SoftmaxOptionsT", beta=a["beta"]))
        elif k in ("relu", "relu6", "relun1", "logistic", "tanh"):
            code = {"relu": BO.RELU, "relu6": BO.RELU6, "relun1": BO.RELU_N1_TO_1, "logistic": BO.LOGISTIC,
                    "tanh": BO.TANH}[k]
            t = op(code, [x])
        elif k == "hswish":
            t = op(BO.HARD_SWISH, [x], BOPT.HardSwishOptions, S.HardSwishOptionsT())
        elif k == "leaky":
            t = op(BO.LEAKY_RELU, [x], BOPT.LeakyReluOptions, _opts("LeakyReluOptionsT", alpha=a["alpha"]))
        elif k == "requant":
            if not quant:
                vt[n.out] = x   # identity in float
                continue
            t = op(BO.QUANTIZE, [x], BOPT.QuantizeOptions, S.QuantizeOptionsT())
        elif k == "reshape":
            t = op(BO.RESHAPE, [x, const_i32(f"{name}_shape", oshape)], BOPT.ReshapeOptions,
                   _opts("ReshapeOptionsT", newShape=np.array(oshape, np.int32)))
        elif k == "concat":
            cq = common.get(i) if quant else None
            if cq is not None:
                ins = [requant(tv, v, cq, f"{name}_rq{j}") for j, (v, tv) in enumerate(zip(n.ins, ins))]
            t = op(BO.CONCATENATION, ins, BOPT.ConcatenationOptions,
                   _opts("ConcatenationOptionsT", axis=a["axis"], fusedActivationFunction=a["act"]))
        elif k == "pad":
            t = op(BO.PAD, [x, const_i32(f"{name}_pads", a["pads"])], BOPT.PadOptions, S.PadOptionsT())
        elif k == "transpose":
            t = op(BO.TRANSPOSE, [x, const_i32(f"{name}_perm", a["perm"])], BOPT.TransposeOptions,
                   S.TransposeOptionsT())
        elif k == "sslice":
            o = _opts("StridedSliceOptionsT", beginMask=a["bmask"], endMask=a["emask"])
            t = op(BO.STRIDED_SLICE, [x, const_i32(f"{name}_b", a["begin"]), const_i32(f"{name}_e", a["end"]),
                                      const_i32(f"{name}_s", a["strides"])], BOPT.StridedSliceOptions, o)
        elif k == "svdf":
            t, vt[("state", n.out)] = _svdf(g, ir, i, n, x, wq, qp, quant, calib, name, oshape)
        else:
            raise ValueError(k)
        vt[n.out] = t
    for v in ir.outputs:
        t = vt[v]
        if quant and ir.float_io:
            t = g.op(BO.DEQUANTIZE, [t], np.float32, ir.shapes[v], BOPT.DequantizeOptions,
                     S.DequantizeOptionsT(), name=f"out{v}")
        g.output(t)
    return g.tflite(), vt


def _svdf(g, ir, i, n, x, wq, qp, quant, calib, name, oshape):
    fam, a, w = ir.family, n.a, n.w
    filters, ni = w["wf"].shape
    mem = w["wt"].shape[1]
    batch = ir.shapes[n.ins[0]][0]
    units = filters // a["rank"]
    if quant:
        qf, sf, _ = wq[i]["wf"]
        qt, st, _ = wq[i]["wt"]
        tdt = qt.dtype.type
        state_s = qp[("state", n.out)][0]
        ins = [x, g.const(f"{name}_wf", qf, scale=float(sf[0])), g.const(f"{name}_wt", qt, scale=float(st[0]))]
        bs = float(np.float32(state_s) * np.float32(st[0]))
        if w.get("b") is not None:
            ins.append(g.const(f"{name}_b", np.round(w["b"] / bs).astype(np.int32), scale=bs))
        else:
            ins.append(-1)
        ins.append(g.tensor(f"{name}_state", tdt, (batch, filters * mem), scale=state_s, variable=True))
        # RELU, as TFLite demands; the integer kernels apply no activation (README, SVDF)
        o = _opts("SVDFOptionsT", rank=a["rank"], fusedActivationFunction=ACT_RELU)
        s, z = qp[n.out]
        return g.op(BO.SVDF, ins, np.int8, oshape, BOPT.SVDFOptions, o, name=name, scale=s, zp=z), ins[-1]
    if fam == "hybrid":
        qf, sf, _ = wq[i]["wf"]
        qt, st, _ = wq[i]["wt"]
        ins = [x, g.const(f"{name}_wf", qf, scale=float(sf[0])), g.const(f"{name}_wt", qt, scale=float(st[0]))]
    else:
        ins = [x, g.const(f"{name}_wf", np.asarray(w["wf"], np.float32)),
               g.const(f"{name}_wt", np.asarray(w["wt"], np.float32))]
    ins.append(g.const(f"{name}_b", np.asarray(w["b"], np.float32)) if w.get("b") is not None else -1)
    ins.append(g.tensor(f"{name}_state", np.float32, (batch, filters * mem), variable=True))
    act = ACT_NONE if calib and fam == "int8" else a["act"]
    o = _opts("SVDFOptionsT", rank=a["rank"], fusedActivationFunction=act,
              asymmetricQuantizeInputs=bool(a.get("asym")) and fam == "hybrid")
    return g.op(BO.SVDF, ins, np.float32, oshape, BOPT.SVDFOptions, o, name=name), ins[-1]

