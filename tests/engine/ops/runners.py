"""Ways to run a single-op model: the LiteRT oracle (BUILTIN_REF kernels), the
kernel shim (the reference kernels' prepare/eval driven directly, see
kshim.c), and the full engine through micronn_tools.engine when present."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ENGINE = ROOT / "usermod" / "micronn" / "engine"
BUILD = ROOT / "build" / "host"

_DT = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int32): 2, np.dtype(np.uint8): 3,
       np.dtype(np.int64): 4, np.dtype(np.bool_): 6, np.dtype(np.int16): 7, np.dtype(np.int8): 9}


# ---- oracle -------------------------------------------------------------------------------------

def run_oracle(model, inputs, invokes=1, presets=None, read=()):
    """Returns a list (per invoke) of lists of output arrays. presets: per invoke, {tensor index:
    array} written before the invoke (e.g. a recurrent op's state); read: further tensor indices
    whose values after each invoke are appended to its outputs."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    # A model may name another resolver for ops BUILTIN_REF does not register (ELU, CEIL, ROUND).
    resolver = getattr(OpResolverType, getattr(model, "oracle_resolver", "BUILTIN_REF"))
    it = Interpreter(model_content=model.tflite(), experimental_op_resolver_type=resolver)
    it.allocate_tensors()
    ins = it.get_input_details()
    outs = it.get_output_details()
    res = []
    for k in range(invokes):
        for d, x in zip(ins, inputs[k] if invokes > 1 else inputs):
            it.set_tensor(d["index"], x)
        for idx, x in (presets[k] if presets else {}).items():
            it.set_tensor(idx, x)
        it.invoke()
        res.append([it.get_tensor(d["index"]).copy() for d in outs] + [it.get_tensor(i).copy() for i in read])
    return res if invokes > 1 else res[0]


def run_tflm(model, inputs, invokes=1, presets=None, read=()):
    """As run_oracle, with TFLM itself (PyPI tflite-micro, its reference kernels) as the oracle,
    for what LiteRT lacks or runs differently (int8 SVDF weights_time and state). TFLM resets
    variable tensors (int8: to the zero point) when the interpreter is made; presets and read are
    not available through its Python API."""
    import oracle
    assert not presets and not read, "TFLM's Python API neither writes nor reads inner tensors"
    it = oracle.tflm_interpreter(model.tflite())
    res = []
    for k in range(invokes):
        for i, x in enumerate(inputs[k] if invokes > 1 else inputs):
            it.set_input(x, i)
        it.invoke()
        res.append([it.get_output(i).copy() for i in range(len(model.outputs))])
    return res if invokes > 1 else res[0]


# ---- kernel shim --------------------------------------------------------------------------------

class _Opt(ctypes.Structure):
    _fields_ = [("present", ctypes.c_int32), ("i", ctypes.c_int32), ("f", ctypes.c_float),
                ("nvec", ctypes.c_int32), ("vec", ctypes.c_int32 * 8)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p),
                ("scales", ctypes.c_void_p), ("zps", ctypes.c_void_p),
                ("q_count", ctypes.c_int32), ("q_dim", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", ctypes.c_int32), ("flags", ctypes.c_int32),
                ("dims", ctypes.c_int32 * 6)]


_lib = None


def shim_kernel_sources():
    """The reference kernel files the shim links: all but those that run other subgraphs or share
    resource variables (control_*.c, resource_*.c: they need the whole engine)."""
    return sorted(p for p in (ENGINE / "kernels" / "reference").glob("*.c")
                  if not p.name.startswith(("control_", "resource_")))


def kshim_lib():
    """Build (if stale) and load the kernel shim library."""
    global _lib
    if _lib is not None:
        return _lib
    BUILD.mkdir(parents=True, exist_ok=True)
    asan = "asan" in os.environ.get("LD_PRELOAD", "")
    so = BUILD / ("kshim_asan.so" if asan else "kshim.so")
    # Reference compute functions only (no backend compiled in): the engine runner exercises the
    # optimized variants, this one the reference they must match.
    srcs = [HERE / "kshim.c", ENGINE / "mn_util.c", ENGINE / "mn_opnames.c", ENGINE / "mn_quant.c", ENGINE / "mn_registry.c",
            ENGINE / "kernels" / "mn_variants.c", *shim_kernel_sources()]
    hdrs = [*ENGINE.glob("*.h"), *(ENGINE / "kernels").glob("*.h"), *(ENGINE / "kernels" / "reference").glob("*.h")]
    newest = max(p.stat().st_mtime for p in srcs + hdrs)
    if not so.exists() or so.stat().st_mtime < newest:
        flags = ["-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-fPIC", "-shared"]
        if asan:
            flags += ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]
        tmp = so.with_suffix(".tmp%d.so" % os.getpid())
        cmd = ["gcc", *flags, f"-I{ENGINE}", f"-I{ENGINE / 'kernels' / 'reference'}", "-o", str(tmp),
               *map(str, srcs), "-lm"]
        subprocess.run(cmd, check=True)
        os.replace(tmp, so)
    lib = ctypes.CDLL(str(so))
    lib.kshim_prepare.restype = ctypes.c_void_p
    lib.kshim_prepare.argtypes = [ctypes.c_int32, ctypes.POINTER(_Tensor), ctypes.c_int32,
                                  ctypes.POINTER(ctypes.c_int32), ctypes.c_int32,
                                  ctypes.POINTER(ctypes.c_int32), ctypes.c_int32,
                                  ctypes.POINTER(_Opt), ctypes.c_int32,
                                  ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_int32]
    lib.kshim_invoke.restype = ctypes.c_int32
    lib.kshim_invoke.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32]
    lib.kshim_free.argtypes = [ctypes.c_void_p]
    lib.kshim_set_intermediates.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
    _lib = lib
    return lib


class KernelError(RuntimeError):
    def __init__(self, status, msg):
        super().__init__(f"status {status}: {msg}")
        self.status = status
        self.msg = msg


def run_kshim(model, inputs, invokes=1, presets=None, read=()):
    """As run_oracle, through the kernel shim."""
    lib = kshim_lib()
    keep = []
    arrays = {}
    ts = (_Tensor * len(model.tensors))()
    for i, t in enumerate(model.tensors):
        if t.const:
            a = np.ascontiguousarray(t.data)
        else:
            a = np.zeros(t.shape, dtype=t.dtype)
            if t.variable and t.dtype == np.int8 and t.quantized:
                a[...] = t.zp[0]   # as LiteRT and the engine reset int8 state: to the zero point
        arrays[i] = a
        ct = ts[i]
        ct.data = a.ctypes.data   # never NULL, as in the engine (zero-element tensors included)
        if t.quantized:
            sc = np.array(t.scale, dtype=np.float32)
            zp = np.array(t.zp, dtype=np.int64)
            keep += [sc, zp]
            ct.scales, ct.zps = sc.ctypes.data, zp.ctypes.data
            ct.q_count, ct.q_dim = len(t.scale), t.qdim
        ct.ndim = len(t.shape)
        ct.dtype = _DT[t.dtype]
        ct.flags = (1 if t.const else 0) | (2 if t.variable else 0)
        for d, v in enumerate(t.shape):
            ct.dims[d] = v
    nf = (max(model.fields) + 1) if model.fields else 0
    opts = (_Opt * max(nf, 1))()
    for k, v in model.fields.items():
        opts[k].present = 1
        if isinstance(v, float):
            opts[k].f = v
        elif isinstance(v, (list, tuple)):
            opts[k].nvec = len(v)
            for j, x in enumerate(v):
                opts[k].vec[j] = x
        else:
            opts[k].i = int(v)
    cin = (ctypes.c_int32 * len(model.inputs))(*model.inputs)
    cout = (ctypes.c_int32 * len(model.outputs))(*model.outputs)
    status = ctypes.c_int32(0)
    err = ctypes.create_string_buffer(256)
    inter = list(getattr(model, "intermediates", None) or [])
    lib.kshim_set_intermediates((ctypes.c_int32 * max(len(inter), 1))(*inter), len(inter))
    h = lib.kshim_prepare(model.builtin, ts, len(model.tensors), cin, len(model.inputs), cout,
                          len(model.outputs), opts, nf, ctypes.byref(status), err, 256)
    if not h:
        raise KernelError(status.value, err.value.decode())
    try:
        res = []
        for k in range(invokes):
            for idx, x in zip(model.graph_inputs, inputs[k] if invokes > 1 else inputs):
                np.copyto(arrays[idx], x.reshape(arrays[idx].shape))
            for idx, x in (presets[k] if presets else {}).items():
                np.copyto(arrays[idx], x.reshape(arrays[idx].shape))
            st = lib.kshim_invoke(h, err, 256)
            if st:
                raise KernelError(st, err.value.decode())
            res.append([arrays[o].copy() for o in list(model.outputs) + list(read)])
    finally:
        lib.kshim_free(h)
    return res if invokes > 1 else res[0]


# ---- full engine --------------------------------------------------------------------------------

def engine_runner():
    """A run(model, inputs, invokes) function using the engine's ctypes wrapper, or None when the
    wrapper / library is not available yet."""
    try:
        sys.path.insert(0, str(ROOT / "host_tools"))
        from micronn_tools import engine as E  # noqa: F401
    except Exception:
        return None
    lib = os.environ.get("MICRONN_LIB") or str(BUILD / "libmicronn.so")
    if not Path(lib).exists():
        return None

    def run(model, inputs, invokes=1, presets=None, read=()):
        return _run_engine(E, model, inputs, invokes, presets, read)
    return run


def _run_engine(E, model, inputs, invokes, presets=None, read=()):
    m = E.Model(model.tflite())
    it = E.Interpreter(m)
    res = []
    for k in range(invokes):
        for i, x in enumerate(inputs[k] if invokes > 1 else inputs):
            it.set_input(i, x)
        for idx, x in (presets[k] if presets else {}).items():
            raw = np.ascontiguousarray(x, dtype=model.tensors[idx].dtype).tobytes()
            assert len(raw) == it.tensor_details(idx)["bytes"], idx
            ctypes.memmove(it.tensor_address(idx), raw, len(raw))
        it.invoke()
        outs = []
        for i in range(len(model.outputs)):
            o = it.get_output(i)
            if o is None:   # zero-element output has no data
                d = it.output_details(i)
                o = np.zeros(d["shape"], dtype=E.DTYPES[d["dtype_code"]])
            outs.append(o.copy())
        res.append(outs + [it.tensor(i).copy() for i in read])
    return res if invokes > 1 else res[0]
