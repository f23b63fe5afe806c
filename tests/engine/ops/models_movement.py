"""Single-op models for the data-movement, shape and reduction kernels (issue 8, ops-c).

Builders return opmodels.OpModel; tensors are built with opmodels.T. Quantized tensors get random
but realistic scales and zero points; data-movement ops keep input and output quantization equal
(they copy raw values, as TFLite does).
"""
from __future__ import annotations

import numpy as np

from opmodels import BO, S, T, single_op

DTYPES_ALL = ("int8", "int16", "float32", "int32", "int64", "uint8", "bool")


def qkw(dtype, scale=0.05, zp=3):
    """Quantization keywords for T: int8/int16/uint8 are quantized (int16 symmetric)."""
    if dtype == "int8":
        return dict(scale=[scale], zp=[zp])
    if dtype == "int16":
        return dict(scale=[scale / 256], zp=[0])
    if dtype == "uint8":
        return dict(scale=[scale], zp=[128 + zp])
    return {}


def rand_any(rng, t):
    """Random data covering the whole range of t's dtype (bool: coin flips)."""
    if t.dtype == np.bool_:
        return rng.integers(0, 2, t.shape).astype(np.bool_)
    if t.dtype == np.float32:
        return rng.normal(0, 1.0, t.shape).astype(np.float32)
    info = np.iinfo(t.dtype)
    lo, hi = max(info.min, -2**40), min(info.max, 2**40)
    return rng.integers(lo, hi, t.shape, endpoint=True).astype(t.dtype)


def const(name, values, dtype=np.int32):
    a = np.asarray(values, dtype=dtype)
    return T(name, dtype, a.shape, data=a)


# ---- TRANSPOSE ----------------------------------------------------------------------------------

def transpose(dtype, shape, perm, perm_dtype=np.int32):
    q = qkw(dtype)
    out_shape = tuple(shape[p] for p in perm)
    return single_op(BO.TRANSPOSE, [T("input", dtype, shape, **q), const("perm", perm, perm_dtype)],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.TransposeOptions,
                     S.TransposeOptionsT(), {}, desc=f"transpose {dtype} {shape} {perm}")


# ---- CONCATENATION / PACK / SPLIT / SPLIT_V / UNPACK -------------------------------------------

def concatenation(dtype, shapes, axis, in_q=None, out_q=None, act=0):
    rank = len(shapes[0])
    a = axis % rank
    out_shape = list(shapes[0])
    out_shape[a] = sum(s[a] for s in shapes)
    ins = [T(f"input{i}", dtype, s, **(in_q[i] if in_q else qkw(dtype))) for i, s in enumerate(shapes)]
    out = T("output", dtype, out_shape, **(out_q if out_q else qkw(dtype)))
    o = S.ConcatenationOptionsT()
    o.axis, o.fusedActivationFunction = axis, act
    return single_op(BO.CONCATENATION, ins, [out], S.BuiltinOptions.ConcatenationOptions, o, {0: axis, 1: act},
                     desc=f"concat {dtype} {shapes} axis {axis}")


def pack(dtype, shape, n, axis):
    rank = len(shape) + 1
    out_shape = list(shape)
    out_shape.insert(axis % rank, n)
    q = qkw(dtype)
    o = S.PackOptionsT()
    o.valuesCount, o.axis = n, axis
    return single_op(BO.PACK, [T(f"input{i}", dtype, shape, **q) for i in range(n)],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.PackOptions, o, {0: n, 1: axis},
                     desc=f"pack {dtype} {n}x{shape} axis {axis}")


def unpack(dtype, shape, axis):
    q = qkw(dtype)
    a = axis % len(shape)
    out_shape = [d for k, d in enumerate(shape) if k != a]
    n = shape[a]
    o = S.UnpackOptionsT()
    o.num, o.axis = n, axis
    return single_op(BO.UNPACK, [T("input", dtype, shape, **q)],
                     [T(f"output{i}", dtype, out_shape, **q) for i in range(n)], S.BuiltinOptions.UnpackOptions, o,
                     {0: n, 1: axis}, desc=f"unpack {dtype} {shape} axis {axis}")


def split(dtype, shape, n, axis):
    q = qkw(dtype)
    a = axis % len(shape)
    out_shape = list(shape)
    out_shape[a] //= n
    o = S.SplitOptionsT()
    o.numSplits = n
    return single_op(BO.SPLIT, [T("axis", np.int32, (), data=np.int32(axis)),
                                T("input", dtype, shape, **q)],
                     [T(f"output{i}", dtype, out_shape, **q) for i in range(n)], S.BuiltinOptions.SplitOptions, o,
                     {0: n}, desc=f"split {dtype} {shape} /{n} axis {axis}")


def split_v(dtype, shape, sizes, axis):
    q = qkw(dtype)
    a = axis % len(shape)
    real = [s if s >= 0 else shape[a] - sum(x for x in sizes if x >= 0) for s in sizes]
    outs = []
    for i, s in enumerate(real):
        os_ = list(shape)
        os_[a] = s
        outs.append(T(f"output{i}", dtype, os_, **q))
    o = S.SplitVOptionsT()
    o.numSplits = len(sizes)
    return single_op(BO.SPLIT_V, [T("input", dtype, shape, **q), const("size_splits", sizes),
                                  T("axis", np.int32, (), data=np.int32(axis))],
                     outs, S.BuiltinOptions.SplitVOptions, o, {0: len(sizes)},
                     desc=f"split_v {dtype} {shape} {sizes} axis {axis}")


# ---- SQUEEZE / EXPAND_DIMS / PAD / PADV2 --------------------------------------------------------

def squeeze(dtype, shape, dims):
    q = qkw(dtype)
    rank = len(shape)
    drop = {d % rank for d in dims} if dims else {k for k, v in enumerate(shape) if v == 1}
    out_shape = [v for k, v in enumerate(shape) if k not in drop]
    o = S.SqueezeOptionsT()
    o.squeezeDims = list(dims)
    return single_op(BO.SQUEEZE, [T("input", dtype, shape, **q)], [T("output", dtype, out_shape, **q)],
                     S.BuiltinOptions.SqueezeOptions, o, {0: list(dims)}, desc=f"squeeze {dtype} {shape} {dims}")


def expand_dims(dtype, shape, axis):
    q = qkw(dtype)
    out_shape = list(shape)
    out_shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
    return single_op(BO.EXPAND_DIMS, [T("input", dtype, shape, **q), T("axis", np.int32, (), data=np.int32(axis))],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.ExpandDimsOptions,
                     S.ExpandDimsOptionsT(), {}, desc=f"expand_dims {dtype} {shape} {axis}")


def pad(dtype, shape, pads, v2=False, value=None, pad_dtype=np.int32):
    q = qkw(dtype)
    out_shape = [d + a + b for d, (a, b) in zip(shape, pads)]
    ins = [T("input", dtype, shape, **q), const("paddings", pads, pad_dtype)]
    if v2:
        ins.append(T("constant_values", dtype, (), data=np.array(value, dtype=dtype), **q) if value is not None
                   else T("constant_values", dtype, (), **q))
        return single_op(BO.PADV2, ins, [T("output", dtype, out_shape, **q)], S.BuiltinOptions.PadV2Options,
                         S.PadV2OptionsT(), {}, desc=f"padv2 {dtype} {shape} {pads} {value}")
    return single_op(BO.PAD, ins, [T("output", dtype, out_shape, **q)], S.BuiltinOptions.PadOptions,
                     S.PadOptionsT(), {}, desc=f"pad {dtype} {shape} {pads}")


def oracle_shapes(model):
    """Output shapes LiteRT computes for `model` (its stored output shapes are placeholders)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model.tflite(), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    return [tuple(int(v) for v in d["shape"]) for d in it.get_output_details()]


def with_oracle_shapes(model):
    for i, s in zip(model.outputs, oracle_shapes(model)):
        model.tensors[i].shape = s
    return model


# ---- STRIDED_SLICE / SLICE ----------------------------------------------------------------------

def strided_slice(dtype, shape, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, offset=False):
    q = qkw(dtype)
    o = S.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.ellipsisMask = begin_mask, end_mask, ellipsis_mask
    o.newAxisMask, o.shrinkAxisMask, o.offset = new_axis_mask, shrink_axis_mask, offset
    m = single_op(BO.STRIDED_SLICE, [T("input", dtype, shape, **q), const("begin", begin), const("end", end),
                                      const("strides", strides)],
                  [T("output", dtype, (1,), **q)], S.BuiltinOptions.StridedSliceOptions, o,
                  {0: begin_mask, 1: end_mask, 2: ellipsis_mask, 3: new_axis_mask, 4: shrink_axis_mask,
                   5: int(offset)},
                  desc=f"strided_slice {dtype} {shape} {begin}:{end}:{strides} m{begin_mask},{end_mask},"
                       f"{ellipsis_mask},{new_axis_mask},{shrink_axis_mask} off{offset}")
    return with_oracle_shapes(m)


def slice_(dtype, shape, begin, size, idx_dtype=np.int32):
    q = qkw(dtype)
    out_shape = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
    return single_op(BO.SLICE, [T("input", dtype, shape, **q), const("begin", begin, idx_dtype),
                                const("size", size, idx_dtype)],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.SliceOptions, S.SliceOptionsT(), {},
                     desc=f"slice {dtype} {shape} {begin} {size}")


# ---- GATHER / GATHER_ND -------------------------------------------------------------------------

def gather(dtype, params_shape, indices_shape, axis=0, batch_dims=0, idx_dtype=np.int32, const_params=False,
           rng=None):
    q = qkw(dtype)
    a = axis % len(params_shape)
    bd = batch_dims % len(indices_shape) if batch_dims < 0 else batch_dims
    out_shape = list(params_shape[:a]) + list(indices_shape[bd:]) + list(params_shape[a + 1:])
    p = T("params", dtype, params_shape, **q)
    if const_params:
        p.data = rand_any(rng, p)
    o = S.GatherOptionsT()
    o.axis, o.batchDims = axis, batch_dims
    m = single_op(BO.GATHER, [p, T("indices", idx_dtype, indices_shape)], [T("output", dtype, out_shape, **q)],
                  S.BuiltinOptions.GatherOptions, o, {0: axis, 1: batch_dims},
                  desc=f"gather {dtype} {params_shape}[{indices_shape}] axis {axis} bd {batch_dims}")
    m.index_limit = params_shape[a]
    return m


def gather_nd(dtype, params_shape, indices_shape, idx_dtype=np.int32):
    q = qkw(dtype)
    k = indices_shape[-1]
    out_shape = list(indices_shape[:-1]) + list(params_shape[k:])
    m = single_op(BO.GATHER_ND, [T("params", dtype, params_shape, **q), T("indices", idx_dtype, indices_shape)],
                  [T("output", dtype, out_shape, **q)], S.BuiltinOptions.GatherNdOptions, S.GatherNdOptionsT(), {},
                  desc=f"gather_nd {dtype} {params_shape}[{indices_shape}]")
    m.index_limit = np.array(params_shape[:k])
    return m


def index_gen(model):
    """Input generator: random data, and indices within model.index_limit (per last index dim)."""
    def gen(rng, t):
        if t.name in ("indices", "ids"):
            return np.asarray(rng.integers(0, 2**31 - 1, t.shape) % model.index_limit).astype(t.dtype)
        return rand_any(rng, t)
    return gen


# ---- MEAN / SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD -----------------------------------------

REDUCE_OPS = {"mean": BO.MEAN, "sum": BO.SUM, "max": BO.REDUCE_MAX, "min": BO.REDUCE_MIN, "prod": BO.REDUCE_PROD,
              "all": BO.REDUCE_ALL, "any": BO.REDUCE_ANY}


def reduce(kind, dtype, shape, axes, keep_dims=False, in_q=None, out_q=None):
    rank = len(shape)
    red = {a % rank for a in axes}
    out_shape = [1 if k in red else d for k, d in enumerate(shape) if keep_dims or k not in red]
    o = S.ReducerOptionsT()
    o.keepDims = keep_dims
    return single_op(REDUCE_OPS[kind], [T("input", dtype, shape, **(in_q or qkw(dtype))), const("axis", axes)],
                     [T("output", dtype, out_shape, **(out_q or in_q or qkw(dtype)))],
                     S.BuiltinOptions.ReducerOptions, o, {0: int(keep_dims)},
                     desc=f"{kind} {dtype} {shape} axes {axes} keep {keep_dims} {in_q} {out_q}")


# ---- REVERSE_V2 / DYNAMIC_UPDATE_SLICE -----------------------------------------------------------

def reverse(dtype, shape, axes):
    q = qkw(dtype)
    return single_op(BO.REVERSE_V2, [T("input", dtype, shape, **q), const("axis", axes)],
                     [T("output", dtype, shape, **q)], S.BuiltinOptions.ReverseV2Options, S.ReverseV2OptionsT(),
                     desc=f"reverse {dtype} {shape} axes {axes}")


def dynamic_update_slice(dtype, shape, update_shape, index_dtype=np.int32):
    """Operand and update are graph inputs, the start indices too (a run-time input, clamped)."""
    q = qkw(dtype)
    return single_op(BO.DYNAMIC_UPDATE_SLICE, [T("operand", dtype, shape, **q), T("update", dtype, update_shape, **q),
                                               T("start_indices", index_dtype, (len(shape),))],
                     [T("output", dtype, shape, **q)], S.BuiltinOptions.DynamicUpdateSliceOptions,
                     S.DynamicUpdateSliceOptionsT(), desc=f"dus {dtype} {shape} <- {update_shape} {np.dtype(index_dtype)}")


def dus_gen(starts):
    """Inputs of dynamic_update_slice: random operand and update, these start indices."""
    def gen(rng, t):
        if t.name == "start_indices":
            return np.asarray(starts, dtype=t.dtype)
        return rand_any(rng, t)
    return gen


# ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR --------------------------------------------------

def resize(kind, dtype, in_shape, size, align_corners=False, half_pixel=False):
    q = qkw(dtype)
    out_shape = (in_shape[0], size[0], size[1], in_shape[3])
    if kind == "bilinear":
        o = S.ResizeBilinearOptionsT()
        code, ot, fields = BO.RESIZE_BILINEAR, S.BuiltinOptions.ResizeBilinearOptions, {2: int(align_corners),
                                                                                        3: int(half_pixel)}
    else:
        o = S.ResizeNearestNeighborOptionsT()
        code, ot, fields = BO.RESIZE_NEAREST_NEIGHBOR, S.BuiltinOptions.ResizeNearestNeighborOptions, {
            0: int(align_corners), 1: int(half_pixel)}
    o.alignCorners, o.halfPixelCenters = align_corners, half_pixel
    return single_op(code, [T("input", dtype, in_shape, **q), const("size", size)],
                     [T("output", dtype, out_shape, **q)], ot, o, fields,
                     desc=f"resize_{kind} {dtype} {in_shape}->{size} ac{align_corners} hp{half_pixel}")


# ---- SPACE_TO_DEPTH / DEPTH_TO_SPACE / SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND -------------------

def space_to_depth(dtype, shape, block, inverse=False):
    q = qkw(dtype)
    n, h, w, c = shape
    if inverse:
        out_shape, code = (n, h * block, w * block, c // (block * block)), BO.DEPTH_TO_SPACE
        o, ot = S.DepthToSpaceOptionsT(), S.BuiltinOptions.DepthToSpaceOptions
    else:
        out_shape, code = (n, h // block, w // block, c * block * block), BO.SPACE_TO_DEPTH
        o, ot = S.SpaceToDepthOptionsT(), S.BuiltinOptions.SpaceToDepthOptions
    o.blockSize = block
    return single_op(code, [T("input", dtype, shape, **q)], [T("output", dtype, out_shape, **q)], ot, o,
                     {0: block}, desc=f"{'d2s' if inverse else 's2d'} {dtype} {shape} b{block}")


def space_to_batch(dtype, shape, block, pads, inverse=False):
    q = qkw(dtype)
    if inverse:
        code, o, ot, name = BO.BATCH_TO_SPACE_ND, S.BatchToSpaceNDOptionsT(), S.BuiltinOptions.BatchToSpaceNDOptions, \
            "crops"
    else:
        code, o, ot, name = BO.SPACE_TO_BATCH_ND, S.SpaceToBatchNDOptionsT(), \
            S.BuiltinOptions.SpaceToBatchNDOptions, "paddings"
    m = single_op(code, [T("input", dtype, shape, **q), const("block_shape", block), const(name, pads)],
                  [T("output", dtype, (1,), **q)], ot, o, {},
                  desc=f"{'b2s' if inverse else 's2b'} {dtype} {shape} {block} {pads}")
    return with_oracle_shapes(m)


# ---- MIRROR_PAD / FILL / ZEROS_LIKE / BROADCAST_TO / BROADCAST_ARGS / SHAPE ---------------------

def mirror_pad(dtype, shape, pads, mode):
    q = qkw(dtype)
    out_shape = [d + a + b for d, (a, b) in zip(shape, pads)]
    o = S.MirrorPadOptionsT()
    o.mode = mode
    return single_op(BO.MIRROR_PAD, [T("input", dtype, shape, **q), const("paddings", pads)],
                     [T("output", dtype, out_shape, **q)], S.BuiltinOptions.MirrorPadOptions, o, {0: mode},
                     desc=f"mirror_pad {dtype} {shape} {pads} mode {mode}")


def fill(dtype, shape, const_dims=True):
    q = qkw(dtype)
    dims = const("dims", shape) if const_dims else T("dims", np.int32, (len(shape),))
    return single_op(BO.FILL, [dims, T("value", dtype, (), **q)], [T("output", dtype, shape, **q)],
                     S.BuiltinOptions.FillOptions, S.FillOptionsT(), {}, desc=f"fill {dtype} {shape}")


def zeros_like(dtype, shape):
    q = qkw(dtype)
    return single_op(BO.ZEROS_LIKE, [T("input", dtype, shape, **q)], [T("output", dtype, shape, **q)],
                     S.BuiltinOptions.ZerosLikeOptions, S.ZerosLikeOptionsT(), {}, desc=f"zeros_like {dtype} {shape}")


def with_version(model, version):
    """Serialise `model` with opcode version `version` (opmodels writes 1; BROADCAST_TO starts at 2)."""
    import flatbuffers

    from opmodels import OpModel

    def tflite():
        mt = S.ModelT.InitFromPackedBuf(OpModel.tflite(model), 0)
        mt.operatorCodes[0].version = version
        b = flatbuffers.Builder(1024)
        b.Finish(mt.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())
    model.tflite = tflite
    return model


def broadcast_to(dtype, shape, target):
    q = qkw(dtype)
    return with_version(single_op(BO.BROADCAST_TO, [T("input", dtype, shape, **q), const("shape", target)],
                     [T("output", dtype, target, **q)], S.BuiltinOptions.BroadcastToOptions,
                     S.BroadcastToOptionsT(), {}, desc=f"broadcast_to {dtype} {shape}->{target}"), 2)


def broadcast_args(dtype, n0, n1):
    dt = np.dtype(dtype)
    return single_op(BO.BROADCAST_ARGS, [T("shape0", dt, (n0,)), T("shape1", dt, (n1,))],
                     [T("output", dt, (max(n0, n1),))], 0, None, {}, desc=f"broadcast_args {dtype} {n0} {n1}")


def rand_broadcastable(rng, t):
    """A random shape vector that broadcasts with any other one drawn here: counted from the right,
    dimension i is 1 or _BCAST_DIMS[i] (LiteRT aborts the process on incompatible shapes)."""
    n = t.shape[0]
    dims = np.array(_BCAST_DIMS[:n][::-1])
    return np.where(rng.integers(0, 2, n) == 1, dims, 1).astype(t.dtype)


_BCAST_DIMS = (3, 5, 2, 4)


def shape_op(dtype, shape, out_dtype):
    o = S.ShapeOptionsT()
    o.outType = S.TensorType.INT64 if out_dtype == "int64" else S.TensorType.INT32
    return single_op(BO.SHAPE, [T("input", dtype, shape, **qkw(dtype))], [T("output", out_dtype, (len(shape),))],
                     S.BuiltinOptions.ShapeOptions, o, {0: o.outType}, desc=f"shape {dtype} {shape} {out_dtype}")


# ---- ARG_MAX / ARG_MIN / CUMSUM / EMBEDDING_LOOKUP ----------------------------------------------

def arg_min_max(kind, dtype, shape, axis, out_dtype="int32"):
    a = axis % len(shape)
    out_shape = [d for k, d in enumerate(shape) if k != a]
    tt = S.TensorType.INT64 if out_dtype == "int64" else S.TensorType.INT32
    if kind == "max":
        o, ot, code = S.ArgMaxOptionsT(), S.BuiltinOptions.ArgMaxOptions, BO.ARG_MAX
    else:
        o, ot, code = S.ArgMinOptionsT(), S.BuiltinOptions.ArgMinOptions, BO.ARG_MIN
    o.outputType = tt
    return single_op(code, [T("input", dtype, shape, **qkw(dtype)), const("axis", [axis])],
                     [T("output", out_dtype, out_shape)], ot, o, {0: tt},
                     desc=f"arg_{kind} {dtype} {shape} axis {axis} -> {out_dtype}")


def cumsum(dtype, shape, axis, exclusive=False, reverse=False):
    o = S.CumsumOptionsT()
    o.exclusive, o.reverse = exclusive, reverse
    return single_op(BO.CUMSUM, [T("input", dtype, shape), T("axis", np.int32, (), data=np.int32(axis))],
                     [T("output", dtype, shape)], S.BuiltinOptions.CumsumOptions, o,
                     {0: int(exclusive), 1: int(reverse)},
                     desc=f"cumsum {dtype} {shape} axis {axis} ex{exclusive} rev{reverse}")


def embedding_lookup(rng, dtype, out_dtype, rows, row_shape, n_ids, per_row=False):
    shape = (rows,) + tuple(row_shape)
    if dtype in ("int8", "uint8") and out_dtype == "float32":
        scales = list(rng.uniform(0.01, 0.1, rows)) if per_row else [float(rng.uniform(0.01, 0.1))]
        value = T("value", dtype, shape, scale=scales, zp=[0] * len(scales), qdim=0)
    else:
        value = T("value", dtype, shape, **qkw(dtype))
    value.data = rand_any(rng, value)
    m = single_op(BO.EMBEDDING_LOOKUP, [T("ids", np.int32, (n_ids,)), value],
                  [T("output", out_dtype, (n_ids,) + tuple(row_shape), **({} if out_dtype == "float32"
                                                                          else qkw(out_dtype)))],
                  0, None, {}, desc=f"embedding_lookup {dtype}->{out_dtype} {shape} ids {n_ids} pr{per_row}")
    m.index_limit = rows
    return m


# ---- support matrix cases (engine/mn_ops.h; tools/gen_op_models.py, test_op_matrix.py) ----------

def _bools(p_true):
    """Random bools, mostly True (for ALL) or mostly False (for ANY), so that both outcomes occur."""
    def gen(rng, t):
        return rng.random(t.shape) < p_true
    return gen


def _reduce_case(kind, dtype):
    def build(rng):
        if kind in ("all", "any"):
            return reduce(kind, dtype, (2, 3, 4), [0, 2], keep_dims=True), _bools(0.9 if kind == "all" else 0.1)
        if dtype in ("int8", "uint8", "int16") and kind in ("mean", "sum"):
            s_in = 0.05
            s_out = s_in * 0.5 * (1.0 if kind == "mean" else 6.0)
            if dtype == "int16":
                in_q, out_q = dict(scale=[s_in / 256], zp=[0]), dict(scale=[s_out / 256], zp=[0])
            else:
                base = 128 if dtype == "uint8" else 0
                in_q, out_q = dict(scale=[s_in], zp=[base + 5]), dict(scale=[s_out], zp=[base - 3])
            return reduce(kind, dtype, (2, 3, 4), [1], in_q=in_q, out_q=out_q), rand_any
        return reduce(kind, dtype, (2, 3, 4), [0, 2], keep_dims=True), rand_any
    return build


def _idx(model):
    return model, index_gen(model)


def _plain(f):
    return lambda rng: (f(), rand_any)


# EMBEDDING_LOOKUP's and SPLIT's input 0 is int32 (ids, axis): the combination is "int32->data dtype"
# (the int8 -> float32 hybrid lookup has the signature of the float32 one: test_op_movement covers it).
_EMBED = {"int32->float32": ("float32", "float32"), "int32->int8": ("int8", "int8"), "int32": ("int32", "int32")}
_SPLIT = tuple(d if d == "int32" else f"int32->{d}" for d in DTYPES_ALL if d != "bool")
_NUM = ("int8", "int16", "float32", "int32", "int64", "uint8")
_MATRIX = {  # op -> (dtype combinations, builder(dtype combination) -> rng -> (OpModel, generator))
    "ARG_MAX": (("float32->int32", "int8->int32", "uint8->int32", "int32"),
                lambda c: _plain(lambda: arg_min_max("max", c.split("->")[0], (4, 5, 6), 1))),
    "ARG_MIN": (("float32->int32", "int8->int32", "uint8->int32", "int32"),
                lambda c: _plain(lambda: arg_min_max("min", c.split("->")[0], (4, 5, 6), 1))),
    "BATCH_TO_SPACE_ND": (_NUM, lambda d: _plain(lambda: space_to_batch(d, (4, 2, 2, 3), [2, 2], [[0, 0], [0, 0]],
                                                                        inverse=True))),
    "BROADCAST_ARGS": (("int32", "int64"), lambda d: lambda rng: (broadcast_args(d, 3, 2), rand_broadcastable)),
    "BROADCAST_TO": (DTYPES_ALL, lambda d: _plain(lambda: broadcast_to(d, (2, 1, 3), (2, 4, 3)))),
    "CONCATENATION": (DTYPES_ALL, lambda d: _plain(lambda: concatenation(d, [(2, 3), (2, 5)], 1))),
    "CUMSUM": (("float32", "int32", "int64"), lambda d: _plain(lambda: cumsum(d, (4, 5, 6), 1, True, True))),
    "DEPTH_TO_SPACE": (("int8", "float32", "int32", "int64", "uint8"),
                       lambda d: _plain(lambda: space_to_depth(d, (1, 2, 3, 12), 2, inverse=True))),
    "EMBEDDING_LOOKUP": (tuple(_EMBED), lambda c: lambda rng: _idx(embedding_lookup(rng, *_EMBED[c], 10, (4,), 3))),
    "EXPAND_DIMS": (DTYPES_ALL, lambda d: _plain(lambda: expand_dims(d, (2, 3, 4), -1))),
    # FILL's input 0 is its int32 dims: the combination is "int32->value dtype"
    "FILL": (("int32->int8", "int32->int16", "int32->float32", "int32", "int32->int64", "int32->bool"),
             lambda c: _plain(lambda: fill(c.split("->")[-1], (2, 1, 5)))),
    "GATHER": (DTYPES_ALL, lambda d: lambda rng: _idx(gather(d, (3, 5, 2), (3, 4), axis=1, batch_dims=1))),
    "GATHER_ND": (DTYPES_ALL, lambda d: lambda rng: _idx(gather_nd(d, (2, 3, 4), (2, 2, 2)))),
    "MEAN": (("float32", "int32", "int64", "int8", "uint8", "int16"), lambda d: _reduce_case("mean", d)),
    "MIRROR_PAD": (_NUM, lambda d: _plain(lambda: mirror_pad(d, (3, 4), [[1, 2], [3, 0]], 1))),
    "PACK": (tuple(d for d in DTYPES_ALL if d != "bool"), lambda d: _plain(lambda: pack(d, (3, 4), 3, 1))),
    "PAD": (_NUM, lambda d: _plain(lambda: pad(d, (1, 4, 5, 3), [[0, 0], [1, 1], [2, 0], [0, 0]]))),
    "PADV2": (_NUM, lambda d: _plain(lambda: pad(d, (2, 3), [[1, 0], [2, 3]], v2=True, value=True))),
    "REVERSE_V2": (DTYPES_ALL, lambda d: _plain(lambda: reverse(d, (2, 3, 4), [1]))),
    "DYNAMIC_UPDATE_SLICE": (DTYPES_ALL, lambda d: lambda rng: (dynamic_update_slice(d, (3, 5, 4), (2, 2, 4)),
                                                               dus_gen([2, 1, 0]))),
    "REDUCE_ALL": (("bool",), lambda d: _reduce_case("all", d)),
    "REDUCE_ANY": (("bool",), lambda d: _reduce_case("any", d)),
    "REDUCE_MAX": (("float32", "int32", "int64", "int8", "uint8", "int16"), lambda d: _reduce_case("max", d)),
    "REDUCE_MIN": (("float32", "int32", "int64", "int8", "uint8", "int16"), lambda d: _reduce_case("min", d)),
    "REDUCE_PROD": (("float32", "int32", "int64", "int8", "int16"), lambda d: _reduce_case("prod", d)),
    "RESIZE_BILINEAR": (("float32", "int8", "int16", "uint8"),
                        lambda d: _plain(lambda: resize("bilinear", d, (1, 4, 5, 3), (8, 10), half_pixel=True))),
    "RESIZE_NEAREST_NEIGHBOR": (("float32", "int8", "int16", "uint8", "int32"),
                                lambda d: _plain(lambda: resize("nearest", d, (2, 5, 3, 2), (3, 7), align_corners=True))),
    "SHAPE": (("int8->int32", "float32->int64"),
              lambda c: _plain(lambda: shape_op(c.split("->")[0], (3, 4), c.split("->")[1]))),
    "SLICE": (DTYPES_ALL, lambda d: _plain(lambda: slice_(d, (4, 6), [1, 2], [2, 3]))),
    "SPACE_TO_BATCH_ND": (_NUM, lambda d: _plain(lambda: space_to_batch(d, (1, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]))),
    "SPACE_TO_DEPTH": (("int8", "float32", "int32", "int64", "uint8"),
                       lambda d: _plain(lambda: space_to_depth(d, (1, 4, 6, 3), 2))),
    "SPLIT": (_SPLIT, lambda c: _plain(lambda: split(c.split("->")[-1], (4, 6), 3, 1))),
    "SPLIT_V": (tuple(d for d in DTYPES_ALL if d != "bool"), lambda d: _plain(lambda: split_v(d, (4, 6), [1, 2, 3], 1))),
    "SQUEEZE": (DTYPES_ALL, lambda d: _plain(lambda: squeeze(d, (1, 3, 1, 4), (0,)))),
    "STRIDED_SLICE": (DTYPES_ALL, lambda d: _plain(lambda: strided_slice(d, (4, 6), [3, 1], [0, 6], [-1, 2]))),
    "SUM": (("float32", "int32", "int64", "uint8"), lambda d: _reduce_case("sum", d)),
    "TRANSPOSE": (DTYPES_ALL, lambda d: _plain(lambda: transpose(d, (2, 3, 4), (2, 0, 1)))),
    "UNPACK": (tuple(d for d in DTYPES_ALL if d != "int64"), lambda d: _plain(lambda: unpack(d, (3, 4), 1))),
    "ZEROS_LIKE": (("float32", "int32", "int64"), lambda d: _plain(lambda: zeros_like(d, (3, 4)))),
}
CASES = {(op, c): build(c) for op, (combos, build) in _MATRIX.items() for c in combos}
