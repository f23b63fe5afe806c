"""Single-op .tflite models for kernel tests, built with the TFLite schema's
Python object API (ai_edge_litert.schema_py_generated).

Each builder returns an OpModel: the tensors (with quantization and constant
data), the operator and its options.  ``OpModel.tflite()`` serialises it;
``OpModel.kshim_fields()`` gives the same options as the flat field list the
kernel shim understands.  Weights, biases and quantization parameters are
random but realistic: the output scale is chosen from the expected spread of
the accumulator so outputs use the int8 range without saturating.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

BO = S.BuiltinOperator
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
ACTS = (ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6)
SAME, VALID = 0, 1

_TT = {
    np.dtype(np.float32): S.TensorType.FLOAT32,
    np.dtype(np.float16): S.TensorType.FLOAT16,
    np.dtype(np.int32): S.TensorType.INT32,
    np.dtype(np.uint8): S.TensorType.UINT8,
    np.dtype(np.int64): S.TensorType.INT64,
    np.dtype(np.int16): S.TensorType.INT16,
    np.dtype(np.int8): S.TensorType.INT8,
    np.dtype(np.uint32): S.TensorType.UINT32,
    np.dtype(np.uint64): S.TensorType.UINT64,
}


@dataclasses.dataclass
class T:
    """A tensor of a single-op model."""
    name: str
    dtype: np.dtype
    shape: tuple
    data: Optional[np.ndarray] = None   # constant data
    scale: Optional[list] = None        # quantization scales (1 or per channel)
    zp: Optional[list] = None
    qdim: int = 0
    variable: bool = False

    def __post_init__(self):
        self.dtype = np.dtype(self.dtype)
        self.shape = tuple(int(d) for d in self.shape)
        if self.data is not None:
            self.data = np.ascontiguousarray(self.data, dtype=self.dtype).reshape(self.shape)
        if self.scale is not None and self.zp is None:
            self.zp = [0] * len(self.scale)

    @property
    def quantized(self):
        return self.scale is not None

    @property
    def const(self):
        return self.data is not None


@dataclasses.dataclass
class OpModel:
    builtin: int
    tensors: list
    inputs: list            # tensor indices, -1 = omitted optional input
    outputs: list
    options_type: int = 0
    options: object = None
    fields: dict = dataclasses.field(default_factory=dict)   # field id -> int/float/list
    desc: str = ""
    intermediates: list = dataclasses.field(default_factory=list)
    custom: Optional[str] = None    # custom code (builtin is then CUSTOM) and its options bytes
    custom_options: bytes = b""

    @property
    def graph_inputs(self):
        return [i for i in self.inputs
                if i >= 0 and not self.tensors[i].const and not self.tensors[i].variable]

    def tflite(self) -> bytes:
        m = S.ModelT()
        m.version = 3
        oc = S.OperatorCodeT()
        oc.builtinCode = self.builtin
        oc.deprecatedBuiltinCode = min(self.builtin, 127)
        oc.version = 1
        if self.custom is not None:
            oc.customCode = self.custom.encode()
        m.operatorCodes = [oc]
        bufs = [S.BufferT()]
        tensors = []
        for t in self.tensors:
            tt = S.TensorT()
            tt.name = t.name.encode()
            tt.shape = np.array(t.shape, dtype=np.int32)
            tt.type = _TT[t.dtype]
            tt.isVariable = t.variable
            if t.const:
                b = S.BufferT()
                b.data = np.frombuffer(t.data.tobytes(), dtype=np.uint8)
                bufs.append(b)
                tt.buffer = len(bufs) - 1
            else:
                tt.buffer = 0
            if t.quantized:
                q = S.QuantizationParametersT()
                q.scale = np.array(t.scale, dtype=np.float32)
                q.zeroPoint = np.array(t.zp, dtype=np.int64)
                q.quantizedDimension = t.qdim
                tt.quantization = q
            tensors.append(tt)
        op = S.OperatorT()
        op.opcodeIndex = 0
        op.inputs = np.array(self.inputs, dtype=np.int32)
        op.outputs = np.array(self.outputs, dtype=np.int32)
        if self.intermediates:
            op.intermediates = np.array(self.intermediates, dtype=np.int32)
        op.builtinOptionsType = self.options_type
        op.builtinOptions = self.options
        if self.custom_options:
            op.customOptions = np.frombuffer(self.custom_options, dtype=np.uint8)
        sg = S.SubGraphT()
        sg.tensors = tensors
        sg.inputs = np.array(self.graph_inputs, dtype=np.int32)
        sg.outputs = np.array(self.outputs, dtype=np.int32)
        sg.operators = [op]
        sg.name = b"main"
        m.subgraphs = [sg]
        m.buffers = bufs
        m.description = b"micronn single-op test"
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


# ---- helpers ------------------------------------------------------------------------------------

def out_size(padding, n, f, stride, dil=1):
    eff = (f - 1) * dil + 1
    return (n + stride - 1) // stride if padding == SAME else (n + stride - eff) // stride


def rand_q(rng, dtype, shape, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def _s8_act(rng):
    return float(rng.uniform(0.01, 0.1)), int(rng.integers(-30, 31))


def _out_quant(rng, acc_std_real, dtype=np.int8):
    """Output scale so that +-4 sigma spans the type's range; random zero point near 0."""
    info = np.iinfo(dtype)
    scale = max(acc_std_real, 1e-6) * 8.0 / (info.max - info.min)
    zp = int(rng.integers(-20, 21)) if dtype == np.int8 else 0
    return float(scale), zp


# ---- CONV_2D / DEPTHWISE_CONV_2D -------------------------------------------------------------------

def conv2d(rng, dtype="int8", n=1, h=7, w=6, cin=3, cout=4, fh=3, fw=3, stride=(1, 1), dil=(1, 1),
           padding=SAME, act=ACT_NONE, per_channel=True, bias=True, groups=1):
    sh, sw = stride
    dh, dw = dil
    oh, ow = out_size(padding, h, fh, sh, dh), out_size(padding, w, fw, sw, dw)
    fin = cin // groups
    tensors = []
    if dtype == "float32":
        tensors.append(T("input", np.float32, (n, h, w, cin)))
        tensors.append(T("filter", np.float32, (cout, fh, fw, fin),
                         data=rng.normal(0, 0.5, (cout, fh, fw, fin))))
        tensors.append(T("bias", np.float32, (cout,), data=rng.normal(0, 0.5, (cout,))))
        tensors.append(T("output", np.float32, (n, oh, ow, cout)))
    else:
        in_scale, in_zp = _s8_act(rng)
        nsc = cout if per_channel else 1
        w_scales = rng.uniform(0.002, 0.02, nsc)
        tensors.append(T("input", np.int8, (n, h, w, cin), scale=[in_scale], zp=[in_zp]))
        tensors.append(T("filter", np.int8, (cout, fh, fw, fin), data=rand_q(rng, np.int8, (cout, fh, fw, fin), -127, 127),
                         scale=list(w_scales), zp=[0] * nsc, qdim=0))
        b_scales = [in_scale * float(np.float32(s)) for s in (w_scales if per_channel else [w_scales[0]] * cout)]
        acc_std = math.sqrt(fh * fw * fin) * 73 * 73 * in_scale * float(np.mean(w_scales))
        bias_real = rng.normal(0, acc_std, cout)
        bias_q = np.round(bias_real / np.array(b_scales)).astype(np.int32)
        tensors.append(T("bias", np.int32, (cout,), data=bias_q, scale=list(b_scales) if per_channel else [b_scales[0]],
                         zp=[0] * (cout if per_channel else 1), qdim=0))
        out_scale, out_zp = _out_quant(rng, acc_std * 1.4)
        tensors.append(T("output", np.int8, (n, oh, ow, cout), scale=[out_scale], zp=[out_zp]))
    opts = S.Conv2DOptionsT()
    opts.padding, opts.strideW, opts.strideH = padding, sw, sh
    opts.fusedActivationFunction = act
    opts.dilationWFactor, opts.dilationHFactor = dw, dh
    fields = {0: padding, 1: sw, 2: sh, 3: act, 4: dw, 5: dh}
    return OpModel(BO.CONV_2D, tensors, [0, 1, 2] if bias else [0, 1], [3],
                   S.BuiltinOptions.Conv2DOptions, opts, fields,
                   desc=f"conv {dtype} {n}x{h}x{w}x{cin}->{cout} f{fh}x{fw} s{stride} d{dil} p{padding} a{act} pc{per_channel} g{groups}")


def depthwise(rng, dtype="int8", n=1, h=7, w=6, cin=3, mult=2, fh=3, fw=3, stride=(1, 1), dil=(1, 1),
              padding=SAME, act=ACT_NONE, per_channel=True, bias=True):
    sh, sw = stride
    dh, dw = dil
    cout = cin * mult
    oh, ow = out_size(padding, h, fh, sh, dh), out_size(padding, w, fw, sw, dw)
    tensors = []
    if dtype == "float32":
        tensors.append(T("input", np.float32, (n, h, w, cin)))
        tensors.append(T("filter", np.float32, (1, fh, fw, cout), data=rng.normal(0, 0.5, (1, fh, fw, cout))))
        tensors.append(T("bias", np.float32, (cout,), data=rng.normal(0, 0.5, (cout,))))
        tensors.append(T("output", np.float32, (n, oh, ow, cout)))
    else:
        in_scale, in_zp = _s8_act(rng)
        nsc = cout if per_channel else 1
        w_scales = rng.uniform(0.002, 0.02, nsc)
        tensors.append(T("input", np.int8, (n, h, w, cin), scale=[in_scale], zp=[in_zp]))
        tensors.append(T("filter", np.int8, (1, fh, fw, cout), data=rand_q(rng, np.int8, (1, fh, fw, cout), -127, 127),
                         scale=list(w_scales), zp=[0] * nsc, qdim=3))
        b_scales = [in_scale * float(np.float32(s)) for s in (w_scales if per_channel else [w_scales[0]] * cout)]
        acc_std = math.sqrt(fh * fw) * 73 * 73 * in_scale * float(np.mean(w_scales))
        bias_q = np.round(rng.normal(0, acc_std, cout) / np.array(b_scales)).astype(np.int32)
        tensors.append(T("bias", np.int32, (cout,), data=bias_q, scale=list(b_scales) if per_channel else [b_scales[0]],
                         zp=[0] * (cout if per_channel else 1), qdim=0))
        out_scale, out_zp = _out_quant(rng, acc_std * 1.4)
        tensors.append(T("output", np.int8, (n, oh, ow, cout), scale=[out_scale], zp=[out_zp]))
    opts = S.DepthwiseConv2DOptionsT()
    opts.padding, opts.strideW, opts.strideH = padding, sw, sh
    opts.depthMultiplier = mult
    opts.fusedActivationFunction = act
    opts.dilationWFactor, opts.dilationHFactor = dw, dh
    fields = {0: padding, 1: sw, 2: sh, 3: mult, 4: act, 5: dw, 6: dh}
    return OpModel(BO.DEPTHWISE_CONV_2D, tensors, [0, 1, 2] if bias else [0, 1], [3],
                   S.BuiltinOptions.DepthwiseConv2DOptions, opts, fields,
                   desc=f"dw {dtype} {n}x{h}x{w}x{cin}*{mult} f{fh}x{fw} s{stride} d{dil} p{padding} a{act} pc{per_channel}")


# ---- FULLY_CONNECTED ----------------------------------------------------------------------------

def fully_connected(rng, dtype="int8", in_shape=(2, 16), units=5, act=ACT_NONE, bias=True,
                    per_channel=False, weights_zp=0, keep_num_dims=False):
    depth = in_shape[-1]
    batches = int(np.prod(in_shape)) // depth
    out_shape = tuple(in_shape[:-1]) + (units,) if keep_num_dims else (batches, units)
    tensors = []
    if dtype == "float32":
        tensors.append(T("input", np.float32, in_shape))
        tensors.append(T("weights", np.float32, (units, depth), data=rng.normal(0, 0.5, (units, depth))))
        tensors.append(T("bias", np.float32, (units,), data=rng.normal(0, 0.5, (units,))))
        tensors.append(T("output", np.float32, out_shape))
    else:
        in_scale, in_zp = _s8_act(rng)
        nsc = units if per_channel else 1
        w_scales = rng.uniform(0.002, 0.02, nsc)
        tensors.append(T("input", np.int8, in_shape, scale=[in_scale], zp=[in_zp]))
        tensors.append(T("weights", np.int8, (units, depth), data=rand_q(rng, np.int8, (units, depth), -127, 127),
                         scale=list(w_scales), zp=[weights_zp] * nsc, qdim=0))
        b_scale = in_scale * float(np.mean(w_scales))
        acc_std = math.sqrt(depth) * 73 * 73 * in_scale * float(np.mean(w_scales))
        bias_q = np.round(rng.normal(0, acc_std, units) / b_scale).astype(np.int32)
        tensors.append(T("bias", np.int32, (units,), data=bias_q, scale=[b_scale], zp=[0]))
        out_scale, out_zp = _out_quant(rng, acc_std * 1.4)
        tensors.append(T("output", np.int8, out_shape, scale=[out_scale], zp=[out_zp]))
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = act
    opts.keepNumDims = keep_num_dims
    fields = {0: act, 1: 0, 2: int(keep_num_dims)}
    return OpModel(BO.FULLY_CONNECTED, tensors, [0, 1, 2 if bias else -1], [3],
                   S.BuiltinOptions.FullyConnectedOptions, opts, fields,
                   desc=f"fc {dtype} {in_shape}->{units} a{act} pc{per_channel} wzp{weights_zp}")


# ---- pooling ------------------------------------------------------------------------------------

def pool(rng, kind, dtype="int8", n=1, h=9, w=8, c=3, fh=3, fw=3, stride=(2, 2), padding=SAME, act=ACT_NONE):
    sh, sw = stride
    oh, ow = out_size(padding, h, fh, sh), out_size(padding, w, fw, sw)
    if dtype == "float32":
        tin = T("input", np.float32, (n, h, w, c))
        tout = T("output", np.float32, (n, oh, ow, c))
    else:
        npd = np.int8 if dtype == "int8" else np.int16
        scale = float(rng.uniform(0.01, 0.1)) if dtype == "int8" else float(rng.uniform(1e-4, 1e-3))
        zp = int(rng.integers(-20, 21)) if dtype == "int8" else 0
        tin = T("input", npd, (n, h, w, c), scale=[scale], zp=[zp])
        tout = T("output", npd, (n, oh, ow, c), scale=[scale], zp=[zp])
    opts = S.Pool2DOptionsT()
    opts.padding, opts.strideW, opts.strideH = padding, sw, sh
    opts.filterWidth, opts.filterHeight = fw, fh
    opts.fusedActivationFunction = act
    fields = {0: padding, 1: sw, 2: sh, 3: fw, 4: fh, 5: act}
    code = {"avg": BO.AVERAGE_POOL_2D, "max": BO.MAX_POOL_2D, "l2": BO.L2_POOL_2D}[kind]
    return OpModel(code, [tin, tout], [0], [1], S.BuiltinOptions.Pool2DOptions, opts, fields,
                   desc=f"{kind}pool {dtype} {n}x{h}x{w}x{c} f{fh}x{fw} s{stride} p{padding} a{act}")


# ---- SOFTMAX ------------------------------------------------------------------------------------

def softmax(rng, in_dtype="int8", out_dtype="int8", shape=(3, 10), beta=1.0):
    if in_dtype == "float32":
        tin = T("input", np.float32, shape)
        tout = T("output", np.float32, shape)
    else:
        in_scale = float(rng.uniform(0.02, 0.3))
        tin = T("input", np.int8, shape, scale=[in_scale], zp=[int(rng.integers(-20, 21))])
        if out_dtype == "int8":
            tout = T("output", np.int8, shape, scale=[1.0 / 256], zp=[-128])
        else:
            tout = T("output", np.int16, shape, scale=[1.0 / 65536], zp=[-32768])
    opts = S.SoftmaxOptionsT()
    opts.beta = beta
    return OpModel(BO.SOFTMAX, [tin, tout], [0], [1], S.BuiltinOptions.SoftmaxOptions, opts, {0: float(beta)},
                   desc=f"softmax {in_dtype}->{out_dtype} {shape} beta{beta}")


# ---- ADD ----------------------------------------------------------------------------------------

def add(rng, dtype="int8", shape1=(1, 4, 5, 3), shape2=(1, 4, 5, 3), act=ACT_NONE):
    oshape = tuple(np.broadcast_shapes(shape1, shape2))
    if dtype == "float32":
        ts = [T("input1", np.float32, shape1), T("input2", np.float32, shape2), T("output", np.float32, oshape)]
    else:
        s1, z1 = _s8_act(rng)
        s2, z2 = _s8_act(rng)
        so = (s1 + s2) * float(rng.uniform(0.9, 1.3))
        ts = [T("input1", np.int8, shape1, scale=[s1], zp=[z1]), T("input2", np.int8, shape2, scale=[s2], zp=[z2]),
              T("output", np.int8, oshape, scale=[so], zp=[int(rng.integers(-20, 21))])]
    opts = S.AddOptionsT()
    opts.fusedActivationFunction = act
    return OpModel(BO.ADD, ts, [0, 1], [2], S.BuiltinOptions.AddOptions, opts, {0: act},
                   desc=f"add {dtype} {shape1}+{shape2} a{act}")


# ---- RESHAPE / QUANTIZE / DEQUANTIZE ------------------------------------------------------------

def reshape(rng, dtype="int8", in_shape=(1, 4, 6), out_shape=(2, 12), shape_input=True):
    q = dict(scale=[0.05], zp=[3]) if dtype != "float32" else {}
    ts = [T("input", np.dtype(dtype), in_shape, **q), T("output", np.dtype(dtype), out_shape, **q)]
    inputs = [0]
    if shape_input:
        ts.append(T("shape", np.int32, (len(out_shape),), data=np.array(out_shape, dtype=np.int32)))
        inputs.append(2)
    opts = S.ReshapeOptionsT()
    opts.newShape = np.array(out_shape, dtype=np.int32)
    return OpModel(BO.RESHAPE, ts, inputs, [1], S.BuiltinOptions.ReshapeOptions, opts, {0: list(out_shape)},
                   desc=f"reshape {dtype} {in_shape}->{out_shape}")


def quantize(rng, in_dtype, out_dtype, shape=(2, 33), in_q=None, out_q=None):
    tin = T("input", np.dtype(in_dtype), shape,
            **({} if in_dtype == "float32" else dict(scale=[in_q[0]], zp=[in_q[1]])))
    tout = T("output", np.dtype(out_dtype), shape, scale=[out_q[0]], zp=[out_q[1]])
    ts = [tin, tout]
    return OpModel(BO.QUANTIZE, ts, [0], [1], S.BuiltinOptions.QuantizeOptions, S.QuantizeOptionsT(), {},
                   desc=f"quantize {in_dtype}->{out_dtype} {in_q}->{out_q}")


def dequantize(rng, in_dtype, shape=(2, 33), in_q=None, per_channel_dim=None):
    if in_dtype == "float16":
        tin = T("input", np.float16, shape)
    elif per_channel_dim is not None:
        nch = shape[per_channel_dim]
        tin = T("input", np.dtype(in_dtype), shape, scale=list(rng.uniform(0.001, 0.1, nch)),
                zp=[int(z) for z in rng.integers(-10, 11, nch)], qdim=per_channel_dim)
    else:
        tin = T("input", np.dtype(in_dtype), shape, scale=[in_q[0]], zp=[in_q[1]])
    tout = T("output", np.float32, shape)
    return OpModel(BO.DEQUANTIZE, [tin, tout], [0], [1], S.BuiltinOptions.DequantizeOptions,
                   S.DequantizeOptionsT(), {}, desc=f"dequantize {in_dtype} {shape} {in_q} pc{per_channel_dim}")


# ---- SVDF ---------------------------------------------------------------------------------------

def svdf(rng, dtype="int8", batches=2, input_size=12, units=4, rank=2, memory=5, act=ACT_RELU, bias=True,
         out_zp=None, time_dtype=np.int16):
    """int8: time_dtype is weights_time's and the state's type (int16: TFLite; int8: TFLM only)."""
    filters = units * rank
    if dtype == "float32":
        ts = [T("input", np.float32, (batches, input_size)),
              T("weights_feature", np.float32, (filters, input_size), data=rng.normal(0, 0.3, (filters, input_size))),
              T("weights_time", np.float32, (filters, memory), data=rng.normal(0, 0.3, (filters, memory))),
              T("bias", np.float32, (units,), data=rng.normal(0, 0.3, (units,))),
              T("state", np.float32, (batches, filters * memory), variable=True),
              T("output", np.float32, (batches, units))]
    else:
        in_scale, in_zp = _s8_act(rng)
        wf_scale = float(rng.uniform(0.004, 0.01))
        wt_scale = float(rng.uniform(0.001, 0.004))
        # state holds the feature activations: std ~ sqrt(input)*73*73*in*wf
        feat_std = math.sqrt(input_size) * 73 * 73 * in_scale * wf_scale
        # one standard deviation of the feature activations: 1024 int16 or 32 int8 state steps
        state_scale = feat_std / (1024 if np.dtype(time_dtype) == np.int16 else 32)
        time_std = math.sqrt(memory * rank) * feat_std * 0.5 * 73 * wt_scale * 1.5
        bias_scale = float(np.float32(state_scale) * np.float32(wt_scale))
        out_scale = time_std * 8 / 256
        ts = [T("input", np.int8, (batches, input_size), scale=[in_scale], zp=[in_zp]),
              T("weights_feature", np.int8, (filters, input_size),
                data=rand_q(rng, np.int8, (filters, input_size), -127, 127), scale=[wf_scale]),
              T("weights_time", time_dtype, (filters, memory),
                data=rand_q(rng, time_dtype, (filters, memory), -127, 127), scale=[wt_scale]),
              T("bias", np.int32, (units,), data=np.round(rng.normal(0, time_std, units) / bias_scale).astype(np.int32),
                scale=[bias_scale]),
              T("state", time_dtype, (batches, filters * memory), scale=[state_scale], variable=True),
              T("output", np.int8, (batches, units), scale=[out_scale],
                zp=[int(rng.integers(-20, 21)) if out_zp is None else out_zp])]
    opts = S.SVDFOptionsT()
    opts.rank = rank
    opts.fusedActivationFunction = act
    return OpModel(BO.SVDF, ts, [0, 1, 2, 3 if bias else -1, 4], [5], S.BuiltinOptions.SVDFOptions, opts,
                   {0: rank, 1: act}, desc=f"svdf {dtype} b{batches} i{input_size} u{units} r{rank} m{memory} a{act}")


# ---- UNIDIRECTIONAL_SEQUENCE_LSTM ---------------------------------------------------------------

ACT_TANH = 4


def lstm(rng, dtype="int8", batches=1, time=5, n_input=6, n_cell=8, n_output=None, cifg=False, peephole=False,
         proj=False, proj_bias=True, time_major=False, cell_clip=0.0, proj_clip=0.0, act=ACT_TANH,
         cell_scale_exp=-12, input_zp=None, state_zp=0, hidden_zp=0, layer_norm=False):
    """24-input LSTM.  Weight scales are chosen so gate pre-activations are O(1): the integer gates
    (Q3.12, sigmoid/tanh) and the cell state are exercised over their useful range."""
    n_output = n_cell if n_output is None else n_output
    proj = proj or n_output != n_cell
    shape_in = (time, batches, n_input) if time_major else (batches, time, n_input)
    shape_out = (time, batches, n_output) if time_major else (batches, time, n_output)
    gates = ["input", "forget", "cell", "output"]
    ts, idx = [], [-1] * 24

    def add(i, t):
        if i is not None:
            idx[i] = len(ts)
        ts.append(t)
        return len(ts) - 1

    if dtype == "float32":
        add(0, T("input", np.float32, shape_in))
        for g, name in enumerate(gates):
            if g == 0 and cifg:
                continue
            add(1 + g, T(f"w_x_{name}", np.float32, (n_cell, n_input),
                         data=rng.normal(0, 1.2 / math.sqrt(n_input), (n_cell, n_input))))
            add(5 + g, T(f"w_h_{name}", np.float32, (n_cell, n_output),
                         data=rng.normal(0, 1.2 / math.sqrt(n_output), (n_cell, n_output))))
            if peephole and g != 2:
                add(9 + (0 if g == 0 else 1 if g == 1 else 2), T(f"w_c_{name}", np.float32, (n_cell,),
                                                                data=rng.normal(0, 0.5, (n_cell,))))
            add(12 + g, T(f"bias_{name}", np.float32, (n_cell,), data=rng.normal(0, 0.5, (n_cell,))))
            if layer_norm:
                add(20 + g, T(f"ln_{name}", np.float32, (n_cell,), data=rng.uniform(0.5, 1.5, (n_cell,))))
        if proj:
            add(16, T("proj_w", np.float32, (n_output, n_cell),
                      data=rng.normal(0, 1.0 / math.sqrt(n_cell), (n_output, n_cell))))
            if proj_bias:
                add(17, T("proj_b", np.float32, (n_output,), data=rng.normal(0, 0.2, (n_output,))))
        add(18, T("output_state", np.float32, (batches, n_output), variable=True))
        add(19, T("cell_state", np.float32, (batches, n_cell), variable=True))
        out = add(None, T("output", np.float32, shape_out))
        inter = []
    else:
        in_scale = float(rng.uniform(0.005, 0.05))
        in_zp = int(rng.integers(-30, 31)) if input_zp is None else input_zp
        x_std = 73.0 * in_scale  # uniform int8 input
        h_scale = 1.0 / 128       # output_state holds values in [-1, 1]
        add(0, T("input", np.int8, shape_in, scale=[in_scale], zp=[in_zp]))
        for g, name in enumerate(gates):
            if g == 0 and cifg:
                continue
            wx_scale = 2.0 / (math.sqrt(n_input) * x_std) * 3 / 127
            wh_scale = 2.0 / (math.sqrt(n_output) * 0.5) * 3 / 127
            add(1 + g, T(f"w_x_{name}", np.int8, (n_cell, n_input),
                         data=np.clip(np.round(rng.normal(0, 127 / 3, (n_cell, n_input))), -127, 127),
                         scale=[wx_scale]))
            add(5 + g, T(f"w_h_{name}", np.int8, (n_cell, n_output),
                         data=np.clip(np.round(rng.normal(0, 127 / 3, (n_cell, n_output))), -127, 127),
                         scale=[wh_scale]))
            if peephole and g != 2:
                wc_scale = 0.5 * 3 / 32767
                add(9 + (0 if g == 0 else 1 if g == 1 else 2),
                    T(f"w_c_{name}", np.int16, (n_cell,),
                      data=np.clip(np.round(rng.normal(0, 32767 / 3, (n_cell,))), -32767, 32767),
                      scale=[wc_scale]))
            b_scale = float(np.float32(in_scale) * np.float32(wx_scale))
            add(12 + g, T(f"bias_{name}", np.int32, (n_cell,),
                          data=np.round(rng.normal(0, 0.7, (n_cell,)) / b_scale), scale=[b_scale]))
        hid_scale = 1.0 / 128
        if proj:
            pw_scale = 1.5 / math.sqrt(n_cell) * 3 / 127
            add(16, T("proj_w", np.int8, (n_output, n_cell),
                      data=np.clip(np.round(rng.normal(0, 127 / 3, (n_output, n_cell))), -127, 127),
                      scale=[pw_scale]))
            if proj_bias:
                pb_scale = float(np.float32(hid_scale) * np.float32(pw_scale))
                add(17, T("proj_b", np.int32, (n_output,), data=np.round(rng.normal(0, 0.2, (n_output,)) / pb_scale),
                          scale=[pb_scale]))
        add(18, T("output_state", np.int8, (batches, n_output), scale=[h_scale], zp=[state_zp], variable=True))
        add(19, T("cell_state", np.int16, (batches, n_cell), scale=[2.0 ** cell_scale_exp], variable=True))
        out = add(None, T("output", np.int8, shape_out, scale=[h_scale], zp=[state_zp]))
        inter = [add(None, T(f"intermediate_{k}", np.float32, (0,))) for k in range(4)]
        inter.append(add(None, T("effective_hidden", np.int8, (0,), scale=[hid_scale], zp=[hidden_zp])))
    opts = S.UnidirectionalSequenceLSTMOptionsT()
    opts.fusedActivationFunction = act
    opts.cellClip = float(cell_clip)
    opts.projClip = float(proj_clip)
    opts.timeMajor = bool(time_major)
    fields = {0: act, 1: float(cell_clip), 2: float(proj_clip), 3: int(bool(time_major))}
    return OpModel(BO.UNIDIRECTIONAL_SEQUENCE_LSTM, ts, idx, [out],
                   S.BuiltinOptions.UnidirectionalSequenceLSTMOptions, opts, fields,
                   desc=f"lstm {dtype} b{batches} t{time} i{n_input} c{n_cell} o{n_output} cifg{cifg} "
                        f"peep{peephole} proj{proj} tm{time_major} clip{cell_clip}/{proj_clip} a{act} "
                        f"cs{cell_scale_exp} ln{layer_norm}",
                   intermediates=inter)


# ---- inputs -------------------------------------------------------------------------------------

def random_input(rng, t: T):
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    info = np.iinfo(t.dtype)
    if t.dtype == np.int16:
        return rng.integers(-20000, 20001, t.shape).astype(np.int16)
    return rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype)


# bool tensors (comparisons, logical ops, SELECT conditions)
_TT[np.dtype(np.bool_)] = S.TensorType.BOOL


# ---- generic helpers ----------------------------------------------------------------------------

def single_op(builtin, ins, outs, options_type=0, options=None, fields=None, desc=""):
    """An OpModel whose operator takes the tensors `ins` (in order) and produces `outs`."""
    return OpModel(builtin, list(ins) + list(outs), list(range(len(ins))),
                   list(range(len(ins), len(ins) + len(outs))), options_type, options, fields or {}, desc=desc)
