"""Small multi-op .tflite models for the custom-op and delegation tests, built with the TFLite
schema's Python object API (ai_edge_litert.schema_py_generated).

    g = Graph()
    y = g.input("y", np.float32, (2, 8)); x = g.input("x", np.float32, (2, 8))
    a = g.custom("Atan2", [y, x], np.float32, (2, 8))
    g.output(g.op(BO.MUL, [a, g.const("two", np.full((1,), 2, np.float32))], np.float32, (2, 8),
                  S.BuiltinOptions.MulOptions, S.MulOptionsT()))
    data = g.tflite()
"""
import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

BO = S.BuiltinOperator
_TT = {
    np.dtype(np.float32): S.TensorType.FLOAT32,
    np.dtype(np.int64): S.TensorType.INT64,
    np.dtype(np.int32): S.TensorType.INT32,
    np.dtype(np.int16): S.TensorType.INT16,
    np.dtype(np.int8): S.TensorType.INT8,
    np.dtype(np.uint8): S.TensorType.UINT8,
}


class Graph:
    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [S.BufferT()], [], []
        self.inputs, self.outputs = [], []

    def tensor(self, name, dtype, shape, data=None, scale=None, zp=0, qdim=0, variable=False):
        """scale/zp: a number each (per-tensor) or sequences (per-channel along qdim)."""
        t = S.TensorT()
        t.name = name.encode()
        t.shape = np.array(shape, dtype=np.int32)
        t.type = _TT[np.dtype(dtype)]
        t.buffer = 0
        if data is not None:
            b = S.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(data, dtype=dtype).tobytes(), dtype=np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if scale is not None:
            q = S.QuantizationParametersT()
            q.scale = np.array(scale, dtype=np.float32).reshape(-1)
            q.zeroPoint = np.array(zp, dtype=np.int64).reshape(-1)
            if q.zeroPoint.size == 1 and q.scale.size > 1:
                q.zeroPoint = np.repeat(q.zeroPoint, q.scale.size)
            q.quantizedDimension = int(qdim)
            t.quantization = q
        t.isVariable = bool(variable)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, name, dtype, shape, **q):
        i = self.tensor(name, dtype, shape, **q)
        self.inputs.append(i)
        return i

    def const(self, name, data, **q):
        data = np.asarray(data)
        return self.tensor(name, data.dtype, data.shape, data=data, **q)

    def output(self, t):
        self.outputs.append(t)
        return t

    def _code(self, builtin, custom=None):
        for k, (b, c) in enumerate(self.codes):
            if b == builtin and c == custom:
                return k
        self.codes.append((builtin, custom))
        return len(self.codes) - 1

    def op(self, builtin, inputs, dtype, shape, options_type=0, options=None, custom=None,
           custom_options=b"", name=None, **q):
        """Append an operator; returns its (new) output tensor."""
        out = self.tensor(name or f"t{len(self.tensors)}", dtype, shape, **q)
        o = S.OperatorT()
        o.opcodeIndex = self._code(builtin, custom)
        o.inputs = np.array(inputs, dtype=np.int32)
        o.outputs = np.array([out], dtype=np.int32)
        o.builtinOptionsType = options_type
        o.builtinOptions = options
        if custom_options:
            o.customOptions = np.frombuffer(custom_options, dtype=np.uint8)
        self.ops.append(o)
        return out

    def custom(self, code, inputs, dtype, shape, **kw):
        return self.op(BO.CUSTOM, inputs, dtype, shape, custom=code, **kw)

    def model(self):
        m = S.ModelT()
        m.version = 3
        m.operatorCodes = []
        for b, c in self.codes:
            oc = S.OperatorCodeT()
            oc.builtinCode = b
            oc.deprecatedBuiltinCode = min(b, 127)
            oc.version = 1
            if c is not None:
                oc.customCode = c.encode()
            m.operatorCodes.append(oc)
        sg = S.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = np.array(self.inputs, dtype=np.int32)
        sg.outputs = np.array(self.outputs, dtype=np.int32)
        sg.operators = self.ops
        sg.name = b"main"
        m.subgraphs = [sg]
        m.buffers = self.buffers
        m.description = b"micronn graph test"
        return m

    def tflite(self):
        return serialize(self.model())


def serialize(model):
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def atan2_model(shape=(2, 8)):
    """y, x float32 -> out = 2 * Atan2(y, x) (custom op "Atan2"), and its numpy reference."""
    g = Graph()
    y = g.input("y", np.float32, shape)
    x = g.input("x", np.float32, shape)
    a = g.custom("Atan2", [y, x], np.float32, shape, name="angle")
    two = g.const("two", np.full((1,), 2, np.float32))
    g.output(g.op(BO.MUL, [a, two], np.float32, shape, S.BuiltinOptions.MulOptions, S.MulOptionsT(),
                  name="out"))
    return g.tflite(), lambda yv, xv: (2 * np.arctan2(yv, xv)).astype(np.float32)


def custom_model(code, shape=(4,), dtype=np.float32, n_inputs=1, scale=None):
    """in -> RELU -> custom op `code` -> RELU -> out: a custom op between two builtin ones."""
    g = Graph()
    q = {} if scale is None else {"scale": scale, "zp": 0}
    ins = [g.input(f"in{i}", dtype, shape, **q) for i in range(n_inputs)]
    r = [g.op(BO.RELU, [i], dtype, shape, **q) for i in ins]
    c = g.custom(code, r, dtype, shape, name="custom_out", **q)
    g.output(g.op(BO.RELU, [c], dtype, shape, name="out", **q))
    return g.tflite()


def conversions_model(shared_quantize=False):
    """float in -> QUANTIZE -> FC int8 -> DEQUANTIZE -> RELU (float) -> out, as a converter writes a
    float-interface int8 model. shared_quantize: the quantized input also feeds an int8 RELU (a CPU
    op), so the QUANTIZE is not a boundary of the subgraph alone. Op 4 (that RELU) comes last."""
    rng = np.random.default_rng(8)
    g = Graph()
    x = g.input("in", np.float32, (1, 8))
    q = g.op(BO.QUANTIZE, [x], np.int8, (1, 8), S.BuiltinOptions.QuantizeOptions, S.QuantizeOptionsT(),
             name="q", scale=0.05, zp=3)
    w = g.const("w", rng.integers(-127, 128, (4, 8)).astype(np.int8), scale=0.02, zp=0)
    b = g.const("b", rng.integers(-500, 500, (4,)).astype(np.int32), scale=0.05 * 0.02, zp=0)
    fc = g.op(BO.FULLY_CONNECTED, [q, w, b], np.int8, (1, 4), S.BuiltinOptions.FullyConnectedOptions,
              S.FullyConnectedOptionsT(), name="fc", scale=0.1, zp=-2)
    dq = g.op(BO.DEQUANTIZE, [fc], np.float32, (1, 4), S.BuiltinOptions.DequantizeOptions,
              S.DequantizeOptionsT(), name="dq")
    g.output(g.op(BO.RELU, [dq], np.float32, (1, 4), name="relu"))
    if shared_quantize:
        g.output(g.op(BO.RELU, [q], np.int8, (1, 8), name="relu_q", scale=0.05, zp=3))
    return g.tflite()



HOTWORD_LAYERS = (("svdf", 40, 32, 2, 8), ("fc", 32, 24, True), ("svdf", 24, 16, 1, 10), ("fc", 16, 4, False))
# Without FULLY_CONNECTED: TFLM's int8 FULLY_CONNECTED rounds twice where LiteRT's rounds once
# (mn_quant.h), so a model with one is no bit-exact check of TFLM's SVDF.
HOTWORD_SVDF_LAYERS = (("svdf", 40, 32, 2, 8), ("svdf", 32, 16, 1, 10), ("svdf", 16, 4, 2, 4))


def hotword_model(time_dtype=np.int8, seed=0, steps=40, softmax=True, layers=HOTWORD_LAYERS):
    """A keyword-spotter of the class TFLM's hotword benchmark is (its scrambled weights saturate
    every layer, so this one has its own): int16 features [1,40] -> QUANTIZE -> SVDF (32 units, rank
    2, memory 8) -> FULLY_CONNECTED 24 (RELU) -> SVDF (16 units, rank 1, memory 10) ->
    FULLY_CONNECTED 4 -> SOFTMAX (or `layers`), all int8, the SVDFs' weights_time and state of time_dtype (int8:
    what TFLM's converter emits; int16: TFLite's). Random float weights, quantized post-training:
    each activation's scale is its range over a simulated run of `steps` frames (hotword_frames),
    so no layer saturates. Returns (model bytes, frames)."""
    rng = np.random.default_rng(seed)
    frames = hotword_frames(seed, steps)
    weights = []
    for L in layers:
        if L[0] == "svdf":
            _, ni, units, rank, mem = L
            weights.append((rng.normal(0, 1 / np.sqrt(ni), (units * rank, ni)),
                            rng.normal(0, 1 / np.sqrt(mem), (units * rank, mem)), rng.normal(0, 0.1, units)))
        else:
            _, ni, no, _relu = L
            weights.append((rng.normal(0, 1.5 / np.sqrt(ni), (no, ni)), rng.normal(0, 0.1, no)))
    # float run: every activation's range (the SVDF state is the feature stage's output)
    ranges = {}
    states = [np.zeros((L[2] * L[3], L[4])) for L in layers if L[0] == "svdf"]

    def seen(key, v):
        ranges[key] = max(ranges.get(key, 1e-6), float(np.abs(v).max()))
    for x in frames:
        h, si = x.reshape(-1).astype(np.float64) * (4 / 32767), 0
        seen("in", h)
        for k, (L, W) in enumerate(zip(layers, weights)):
            if L[0] == "svdf":
                wf, wt, b = W
                st = states[si]
                st[:, :-1] = st[:, 1:]
                st[:, -1] = wf @ h
                seen(("state", k), st[:, -1])
                h = (wt * st).sum(1).reshape(L[2], L[3]).sum(1) + b   # the integer kernel applies no activation
                si += 1
            else:
                w, b = W
                h = w @ h + b
                h = np.maximum(h, 0) if L[3] else h
            seen(("out", k), h)
    g = Graph()
    x = g.input("features", np.int16, (1, 40), scale=4 / 32767)
    sc = ranges["in"] / 127
    h = g.op(BO.QUANTIZE, [x], np.int8, (1, 40), S.BuiltinOptions.QuantizeOptions, S.QuantizeOptionsT(),
             scale=sc, zp=0)
    tmax = np.iinfo(time_dtype).max
    for k, (L, W) in enumerate(zip(layers, weights)):
        if L[0] == "svdf":
            _, ni, units, rank, mem = L
            wf, wt, b = W
            wf_s, wt_s = np.abs(wf).max() / 127, np.abs(wt).max() / 127
            st_s = ranges[("state", k)] / tmax
            b_s = float(np.float32(st_s) * np.float32(wt_s))
            ins = [h, g.const(f"wf{k}", np.round(wf / wf_s).astype(np.int8), scale=wf_s),
                   g.const(f"wt{k}", np.round(wt / wt_s).astype(time_dtype), scale=wt_s),
                   g.const(f"b{k}", np.round(b / b_s).astype(np.int32), scale=b_s)]
            ins.append(g.tensor(f"state{k}", time_dtype, (1, units * rank * mem), scale=st_s))
            g.tensors[ins[-1]].isVariable = True
            o = S.SVDFOptionsT()
            o.rank, o.fusedActivationFunction = rank, 1   # RELU, as TFLite demands (not applied)
            out_s = ranges[("out", k)] / 127
            h = g.op(BO.SVDF, ins, np.int8, (1, units), S.BuiltinOptions.SVDFOptions, o, scale=out_s, zp=0)
            sc = out_s
        else:
            _, ni, no, relu = L
            w, b = W
            w_s = np.abs(w).max() / 127
            b_s = float(np.float32(sc) * np.float32(w_s))
            ins = [h, g.const(f"w{k}", np.round(w / w_s).astype(np.int8), scale=w_s),
                   g.const(f"fb{k}", np.round(b / b_s).astype(np.int32), scale=b_s)]
            o = S.FullyConnectedOptionsT()
            o.fusedActivationFunction = 1 if relu else 0
            out_s = ranges[("out", k)] / (255 if relu else 127)
            h = g.op(BO.FULLY_CONNECTED, ins, np.int8, (1, no), S.BuiltinOptions.FullyConnectedOptions, o,
                     scale=out_s, zp=-128 if relu else 0)
            sc = out_s
    if softmax:
        so = S.SoftmaxOptionsT()
        so.beta = 1.0
        h = g.op(BO.SOFTMAX, [h], np.int8, (1, layers[-1][2]), S.BuiltinOptions.SoftmaxOptions, so, scale=1 / 256, zp=-128)
    g.output(h)
    return g.tflite(), frames


def hotword_frames(seed=0, steps=40):
    """int16 feature frames [1,40] that drift from frame to frame (as a spectrogram's do)."""
    rng = np.random.default_rng(seed + 1)
    base = rng.normal(0, 0.8, 40)
    out = []
    for _ in range(steps):
        base = 0.8 * base + 0.45 * rng.normal(0, 0.8, 40)
        out.append(np.clip(np.round(base * 32767 / 4), -32768, 32767).astype(np.int16).reshape(1, 40))
    return out


SSD_CLASSES = 3
SSD_OPTIONS = dict(max_detections=8, max_classes_per_detection=1, detections_per_class=4, use_regular_nms=False,
                   nms_score_threshold=0.7, nms_iou_threshold=0.45, num_classes=SSD_CLASSES,
                   y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)


def ssd_anchors():
    """2 anchors per cell of a 4x4 and a 2x2 feature map (y, x, h, w): 40 anchors, in the order the
    heads' reshapes put the boxes (row, column, anchor)."""
    out = []
    for n, sizes in ((4, (0.3, 0.45)), (2, (0.6, 0.8))):
        for i in range(n):
            for j in range(n):
                out += [((i + 0.5) / n, (j + 0.5) / n, s, s * 0.8) for s in sizes]
    return np.array(out, np.float32)


def ssd_images(seed=0, n=4):
    """float32 [1, 8, 8, 3] test images in [0, 1]: smooth blobs on noise."""
    rng = np.random.default_rng(seed + 100)
    yy, xx = np.mgrid[0:8, 0:8] / 7.0
    out = []
    for _ in range(n):
        img = rng.uniform(0, 0.3, (8, 8, 3))
        for _ in range(2):
            cy, cx, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.15, 0.35)
            img += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / r ** 2)[..., None] * rng.uniform(0.3, 0.7, 3)
        out.append(np.clip(img, 0, 1)[None].astype(np.float32))
    return out


def ssd_model(dtype="float32", seed=2, options=None):
    """An SSD-style detector: image [1,8,8,3] -> CONV 3x3/2 (RELU) [1,4,4,8] -> CONV 3x3/2 (RELU)
    [1,2,2,8]; on each feature map a 1x1 box head (2 anchors x 4) and class head (2 x (1 + 3)) ->
    RESHAPE [1,K,4] / [1,K,4] -> CONCATENATION (40 anchors) -> LOGISTIC on the class logits ->
    TFLite_Detection_PostProcess with constant anchors (ssd_anchors). dtype "int8": the same float
    weights quantized post-training (each activation's range from a float run over ssd_images), the
    int8 box encodings and scores QUANTIZEd to uint8 for the post-processing (uint8 anchors), as
    LiteRT runs it (TFLM's kernel is float only). Returns the model bytes."""
    import flatbuffers.flexbuffers as fx
    import oracle
    rng = np.random.default_rng(seed)
    nc1 = SSD_CLASSES + 1
    W = {"c1": (rng.normal(0, 0.4, (8, 3, 3, 3)), rng.normal(0, 0.1, 8)),
         "c2": (rng.normal(0, 0.25, (8, 3, 3, 8)), rng.normal(0, 0.1, 8)),
         "b1": (rng.normal(0, 0.35, (8, 1, 1, 8)), rng.normal(0, 0.1, 8)),
         "b2": (rng.normal(0, 0.35, (8, 1, 1, 8)), rng.normal(0, 0.1, 8)),
         "k1": (rng.normal(0, 0.7, (2 * nc1, 1, 1, 8)), rng.normal(-0.5, 0.5, 2 * nc1)),
         "k2": (rng.normal(0, 0.7, (2 * nc1, 1, 1, 8)), rng.normal(-0.5, 0.5, 2 * nc1))}
    opts = dict(SSD_OPTIONS, **(options or {}))

    def build(q):
        """q: None (float) or {tensor name: (scale, zp)} of the activations."""
        g = Graph()
        f32 = q is None
        act = (lambda n: {}) if f32 else (lambda n: dict(scale=q[n][0], zp=q[n][1]))
        dt = np.float32 if f32 else np.int8
        x = g.input("image", dt, (1, 8, 8, 3), **act("image"))

        def conv(name, inp, in_name, shape, stride, relu):
            w, b = W[name]
            if f32:
                wt, bt = g.const(name + "_w", w.astype(np.float32)), g.const(name + "_b", b.astype(np.float32))
            else:
                ws = float(np.abs(w).max() / 127)
                bs = float(np.float32(q[in_name][0]) * np.float32(ws))
                wt = g.const(name + "_w", np.round(w / ws).astype(np.int8), scale=ws)
                bt = g.const(name + "_b", np.round(b / bs).astype(np.int32), scale=bs)
            o = S.Conv2DOptionsT()
            o.padding, o.strideW, o.strideH = 0, stride, stride
            o.fusedActivationFunction = 1 if relu else 0
            o.dilationWFactor = o.dilationHFactor = 1
            return g.op(BO.CONV_2D, [inp, wt, bt], dt, shape, S.BuiltinOptions.Conv2DOptions, o, name=name,
                        **act(name))

        def reshape(inp, name, shape, qname):
            o = S.ReshapeOptionsT()
            o.newShape = np.array(shape, np.int32)
            return g.op(BO.RESHAPE, [inp], dt, shape, S.BuiltinOptions.ReshapeOptions, o, name=name, **act(qname))

        def concat(ins, name, shape):
            o = S.ConcatenationOptionsT()
            o.axis = 1
            return g.op(BO.CONCATENATION, ins, dt, shape, S.BuiltinOptions.ConcatenationOptions, o, name=name,
                        **act(name))
        c1 = conv("c1", x, "image", (1, 4, 4, 8), 2, True)
        c2 = conv("c2", c1, "c1", (1, 2, 2, 8), 2, True)
        b1, b2 = conv("b1", c1, "c1", (1, 4, 4, 8), 1, False), conv("b2", c2, "c2", (1, 2, 2, 8), 1, False)
        k1, k2 = conv("k1", c1, "c1", (1, 4, 4, 2 * nc1), 1, False), conv("k2", c2, "c2", (1, 2, 2, 2 * nc1), 1, False)
        boxes = concat([reshape(b1, "rb1", (1, 32, 4), "b1"), reshape(b2, "rb2", (1, 8, 4), "b2")], "boxes",
                       (1, 40, 4))
        logits = concat([reshape(k1, "rk1", (1, 32, nc1), "k1"), reshape(k2, "rk2", (1, 8, nc1), "k2")], "logits",
                        (1, 40, nc1))
        scores = g.op(BO.LOGISTIC, [logits], dt, (1, 40, nc1), name="scores",
                      **({} if f32 else dict(scale=1 / 256, zp=-128)))
        a = ssd_anchors()
        if f32:
            anchors = g.const("anchors", a)
        else:
            qz = S.QuantizeOptionsT()
            boxes = g.op(BO.QUANTIZE, [boxes], np.uint8, (1, 40, 4), S.BuiltinOptions.QuantizeOptions, qz,
                         name="boxes_u8", scale=q["boxes"][0], zp=q["boxes"][1] + 128)
            scores = g.op(BO.QUANTIZE, [scores], np.uint8, (1, 40, nc1), S.BuiltinOptions.QuantizeOptions, qz,
                          name="scores_u8", scale=1 / 256, zp=0)
            anchors = g.const("anchors", np.clip(np.round(a * 255), 0, 255).astype(np.uint8), scale=1 / 255, zp=0)
        det = opts["max_detections"] * opts["max_classes_per_detection"]
        outs = [g.tensor(n, np.float32, s) for n, s in (("detection_boxes", (1, det, 4)),
                ("detection_classes", (1, det)), ("detection_scores", (1, det)), ("num_detections", (1,)))]
        op = S.OperatorT()
        op.opcodeIndex = g._code(BO.CUSTOM, "TFLite_Detection_PostProcess")
        op.inputs, op.outputs = np.array([boxes, scores, anchors], np.int32), np.array(outs, np.int32)
        op.customOptions = np.frombuffer(bytes(fx.Dumps(opts)), np.uint8)
        g.ops.append(op)
        for t in outs:
            g.output(t)
        return g
    g = build(None)
    data = g.tflite()
    if dtype == "float32":
        return data
    names = {t.name.decode(): i for i, t in enumerate(g.tensors)}
    lo, hi = {}, {}
    for img in ssd_images(seed):
        _, ts = oracle.run(data, [img], all_tensors=True)
        for n, i in names.items():
            if i in ts:
                lo[n] = min(lo.get(n, 0.0), float(ts[i].min()))
                hi[n] = max(hi.get(n, 0.0), float(ts[i].max()))
    for a, b in (("b1", "b2"), ("k1", "k2"), ("b1", "boxes"), ("k1", "logits")):   # shared by reshape/concat
        lo[a] = lo[b] = min(lo[a], lo[b])
        hi[a] = hi[b] = max(hi[a], hi[b])
    lo["b2"], hi["b2"], lo["k2"], hi["k2"] = lo["b1"], hi["b1"], lo["k1"], hi["k1"]
    q = {}
    for n in lo:
        s = max(hi[n] - lo[n], 1e-3) * 1.1 / 255
        q[n] = (s, int(np.clip(np.round(-128 - lo[n] * 1.05 / s), -128, 127)))
    q["image"] = (1 / 255, -128)
    return build(q).tflite()
