"""ctypes wrapper around the host build of the micronn engine (build/host/libmicronn.so).

Used by the engine tests and by `micronn inspect` (exact arena size, op support). Build the
library with `make -C tests/engine lib`. The library is found through $MICRONN_LIB, else
<repo>/build/host/libmicronn.so.

    from micronn_tools import engine
    m = engine.Model(open("person_detect.tflite", "rb").read())
    it = engine.Interpreter(m)                 # arena sized by a dry run
    it.set_input(0, frame)                     # numpy array (or bytes) of the input's size
    it.invoke()
    print(it.output(0), it.stats())
"""
import ctypes
import os

import numpy as np

MAX_DIMS = 6

OK, ERR_ARG, ERR_MODEL, ERR_UNSUPPORTED, ERR_ARENA, ERR_STATE, ERR_KERNEL, ERR_ABORTED = range(8)

PLANNERS = {"greedy": 0, "no_reuse": 1, "offline": 2}
CFG_REUSE_INPUTS = 0x01

# TFLite TensorType -> numpy dtype
DTYPES = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_, 7: np.int16,
    8: np.complex64, 9: np.int8, 10: np.float64, 11: np.complex128, 12: np.uint64, 15: np.uint32,
    16: np.uint16,
}


class MicronnError(Exception):
    """Engine error: .status (int code) and the engine's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dims", ctypes.POINTER(ctypes.c_int32)),
        ("quant", ctypes.c_void_p),
        ("ndim", ctypes.c_uint8),
        ("dtype", ctypes.c_uint8),
        ("flags", ctypes.c_uint8),
        ("q_dim", ctypes.c_int8),
    ]


class _Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena_size", "persistent", "nonpersistent", "temp_peak", "needed", "copied_bytes", "n_scratch",
        "kernel_persistent")]


OP_NAME_LEN = 33   # MN_OP_NAME_LEN of micronn.h


class _OpInfo(ctypes.Structure):
    _fields_ = [
        ("builtin", ctypes.c_int32),
        ("version", ctypes.c_int32),
        ("name", ctypes.c_char_p),
        ("n_inputs", ctypes.c_int32),
        ("n_outputs", ctypes.c_int32),
        ("supported", ctypes.c_int),
        ("name_buf", ctypes.c_char * OP_NAME_LEN),
    ]


class _KernelInfo(ctypes.Structure):
    _fields_ = [
        ("builtin", ctypes.c_int32),
        ("max_version", ctypes.c_int32),
        ("options_type", ctypes.c_int32),
        ("dtypes", ctypes.c_char_p),
        ("linked", ctypes.c_int),
    ]


class _Profile(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("builtin", ctypes.c_int32),
        ("calls", ctypes.c_uint32),
        ("ticks", ctypes.c_uint64),
        ("variant", ctypes.c_char_p),
        ("persistent", ctypes.c_size_t),
        ("backend", ctypes.c_char_p),
        ("subgraph", ctypes.c_int32),
        ("model_index", ctypes.c_uint32),
        ("name_buf", ctypes.c_char * OP_NAME_LEN),
    ]


class _PlanInfo(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_int32),
        ("planned", ctypes.c_int32),
        ("first", ctypes.c_int32),
        ("last", ctypes.c_int32),
        ("size", ctypes.c_size_t),
        ("offset", ctypes.c_size_t),
        ("over", ctypes.c_int32),
        ("shift", ctypes.c_int32),
    ]


class _OpCheck(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("msg", ctypes.c_char * 160)]


OP_INPUTS, OP_OUTPUTS, OP_INTERMEDIATES = 0, 1, 2


_TICKS_FN = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_STOP_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class _Config(ctypes.Structure):
    _fields_ = [
        ("planner", ctypes.c_uint8),
        ("flags", ctypes.c_uint8),
        ("ticks", _TICKS_FN),
        ("ticks_user", ctypes.c_void_p),
        ("ticks_mask", ctypes.c_uint64),
        ("ops", ctypes.c_void_p),
        ("n_ops", ctypes.c_size_t),
        ("should_stop", ctypes.c_void_p),
        ("stop_user", ctypes.c_void_p),
        ("delegate", ctypes.c_void_p),
        ("min_subgraph", ctypes.c_uint32),
        ("table_hook", ctypes.c_void_p),
        ("table_user", ctypes.c_void_p),
        ("patch_first", ctypes.c_uint16),
        ("patch_last", ctypes.c_uint16),
        ("patch_rows", ctypes.c_uint16),
    ]


class _PatchChoice(ctypes.Structure):
    _fields_ = [
        ("first", ctypes.c_uint16),
        ("last", ctypes.c_uint16),
        ("rows", ctypes.c_uint16),
        ("bands", ctypes.c_uint16),
        ("height", ctypes.c_uint16),
        ("arena", ctypes.c_size_t),
        ("arena_without", ctypes.c_size_t),
        ("macs", ctypes.c_uint64),
        ("macs_patched", ctypes.c_uint64),
    ]


PATCH_STREAM = 0xFFFF   # patches=(first, last, PATCH_STREAM): line buffers, every row computed once


def _choice_dict(c):
    d = {n: getattr(c, n) for n, _ in _PatchChoice._fields_}
    if not d["rows"]:
        return None
    d["stream"] = d["rows"] == PATCH_STREAM
    d["ops"] = list(range(d["first"], d["last"] + 1))
    d["recompute"] = (d["macs_patched"] - d["macs"]) / d["macs"] if d["macs"] else 0.0
    return d


_TABLE_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                               ctypes.c_void_p, ctypes.c_size_t)

TABLES_METADATA = "micronn_quant_v1"
# table tags (mn_kernel.h MN_TABLE_*): per-channel multipliers, a variant's data, a second
# multiplier table, the kernel data itself (pointer-free kernels)
TABLE_QUANT, TABLE_VARIANT, TABLE_QUANT2, TABLE_KDATA = 0, 1, 2, 3


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * 160)]


_lib = None


def default_lib_path():
    env = os.environ.get("MICRONN_LIB")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "host", "libmicronn.so")


def lib(path=None):
    """Load (once) and return the engine library with its prototypes declared."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    L = ctypes.CDLL(path or default_lib_path())
    P, S, I32, SZ = ctypes.c_void_p, ctypes.c_int, ctypes.c_int32, ctypes.c_size_t
    protos = {
        "mn_model_struct_size": (SZ, []),
        "mn_interp_struct_size": (SZ, []),
        "mn_model_errmsg": (ctypes.c_char_p, [P]),
        "mn_interp_errmsg": (ctypes.c_char_p, [P]),
        "mn_model_init": (S, [P, P, SZ]),
        "mn_model_num_inputs": (SZ, [P]),
        "mn_model_num_outputs": (SZ, [P]),
        "mn_model_num_ops": (SZ, [P]),
        "mn_model_num_tensors": (SZ, [P]),
        "mn_model_num_subgraphs": (SZ, [P]),
        "mn_model_op_info": (S, [P, SZ, ctypes.POINTER(_OpInfo)]),
        "mn_model_tensor": (S, [P, SZ, ctypes.POINTER(_Tensor)]),
        "mn_model_tensor_name": (ctypes.c_char_p, [P, SZ]),
        "mn_model_input_index": (I32, [P, SZ]),
        "mn_model_output_index": (I32, [P, SZ]),
        "mn_interp_init": (S, [P, P, P, SZ, ctypes.POINTER(_Config)]),
        "mn_interp_prepare": (S, [P]),
        "mn_arena_needed": (S, [P, ctypes.POINTER(_Config), P, SZ, ctypes.POINTER(SZ), ctypes.POINTER(_Error)]),
        "mn_dry_run_work_hint": (SZ, [P]),
        "mn_interp_invoke": (S, [P]),
        "mn_interp_reset": (S, [P]),
        "mn_interp_deinit": (None, [P]),
        "mn_interp_input": (ctypes.POINTER(_Tensor), [P, SZ]),
        "mn_interp_output": (ctypes.POINTER(_Tensor), [P, SZ]),
        "mn_interp_tensor": (ctypes.POINTER(_Tensor), [P, SZ]),
        "mn_interp_num_tensors": (SZ, [P]),
        "mn_interp_num_ops": (SZ, [P]),
        "mn_interp_stats": (S, [P, ctypes.POINTER(_Stats)]),
        "mn_interp_profile": (S, [P, SZ, ctypes.POINTER(_Profile)]),
        "mn_interp_profile_clear": (None, [P]),
        "mn_op_name": (ctypes.c_char_p, [I32, ctypes.c_char_p]),
        "mn_dtype_name": (ctypes.c_char_p, [I32]),
        "mn_op_supported": (S, [P, I32, ctypes.c_char_p]),
        "mn_op_kernel_state": (S, [P, I32, ctypes.c_char_p]),
        "mn_op_kernel_info": (S, [SZ, ctypes.POINTER(_KernelInfo)]),
        "mn_custom_op_info": (S, [SZ, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_KernelInfo)]),
        "mn_options_name": (ctypes.c_char_p, [I32]),
        "mn_tensor_q_count": (I32, [P]),
        "mn_tensor_bytes": (SZ, [P]),
        "mn_tensor_scales": (ctypes.c_void_p, [P]),
        "mn_tensor_zero_points": (ctypes.c_void_p, [P]),
    }
    for name, (res, args) in protos.items():
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    # Newer additions: declared when the library has them (an older build simply lacks them).
    optional = {
        "mn_model_op_tensor": (S, [P, SZ, S, SZ, ctypes.POINTER(I32)]),
        "mn_check_ops": (S, [P, ctypes.POINTER(_Config), P, SZ, ctypes.POINTER(_OpCheck), SZ,
                             ctypes.POINTER(SZ), ctypes.POINTER(SZ), ctypes.POINTER(_Error)]),
        "mn_status_str": (ctypes.c_char_p, [S]),
        "mn_tensor_struct_size": (SZ, []),
        "mn_interp_set_persistent": (S, [P, P, SZ]),
        "mn_arena_needed_stats": (S, [P, ctypes.POINTER(_Config), P, SZ, ctypes.POINTER(_Stats), ctypes.POINTER(_Error)]),
        "mn_custom_op_hint": (ctypes.c_char_p, [ctypes.c_char_p]),
        "mn_delegate_find": (P, [ctypes.c_char_p]),
        "mn_delegate_name": (ctypes.c_char_p, [ctypes.c_size_t]),
        "mn_variant_of_op": (ctypes.c_char_p, [ctypes.c_int32, ctypes.c_size_t]),
        "mn_kernel_backend": (ctypes.c_char_p, [SZ]),
        "mn_delegate_coverage_ok": (S, []),
        "mn_model_subgraph": (S, [P, SZ, P]),
        "mn_model_op_custom_options": (ctypes.POINTER(ctypes.c_uint8), [P, SZ, ctypes.POINTER(SZ)]),
        "mn_interp_plan_buffer": (S, [P, SZ, ctypes.POINTER(_PlanInfo)]),
        "mn_patch_choose": (S, [P, ctypes.POINTER(_Config), P, SZ, ctypes.POINTER(_PatchChoice),
                                ctypes.POINTER(_Error)]),
        "mn_interp_patch": (S, [P, ctypes.POINTER(_PatchChoice)]),
        "mn_variants_query_begin": (S, [ctypes.c_char_p]),
        "mn_variants_query_name": (ctypes.c_char_p, [SZ]),
        "mn_variants_query_end": (None, []),
    }
    for name, (res, args) in optional.items():
        f = getattr(L, name, None)
        if f is not None:
            f.restype = res
            f.argtypes = args
    # A library built from other sources than this wrapper's _Tensor layout would crash on first use.
    if hasattr(L, "mn_tensor_struct_size") and L.mn_tensor_struct_size() != ctypes.sizeof(_Tensor):
        raise OSError(f"{path or default_lib_path()}: mn_tensor_t is {L.mn_tensor_struct_size()} bytes in the "
                      f"library but {ctypes.sizeof(_Tensor)} in engine.py: the library is stale, rebuild it")
    if path is None:
        _lib = L
    return L


def _tensor_info(t, index=None, model=None):
    """Descriptor dict from an mn_tensor_t (no data); the name comes from the model."""
    shape = tuple(t.dims[i] for i in range(t.ndim))
    scales, zps = [], []
    L = model._L if model is not None else lib()
    n = L.mn_tensor_q_count(ctypes.byref(t))
    if n > 0:
        scales = list(np.frombuffer(ctypes.string_at(L.mn_tensor_scales(ctypes.byref(t)), 4 * n), dtype="<f4").astype(float))
        zp_raw = L.mn_tensor_zero_points(ctypes.byref(t))
        zps = list(np.frombuffer(ctypes.string_at(zp_raw, 8 * n), dtype="<i8").astype(int)) if zp_raw else [0] * n
    return {
        "index": index,
        "name": ((model._L.mn_model_tensor_name(model._m, index) or b"") if model is not None and index is not None
                 else b"").decode("utf-8", "replace"),
        "dtype": lib().mn_dtype_name(t.dtype).decode(errors="replace"),
        "dtype_code": t.dtype,
        "shape": shape,
        "bytes": L.mn_tensor_bytes(ctypes.byref(t)),
        "scale": float(scales[0]) if scales else 0.0,
        "zero_point": int(zps[0]) if zps else 0,
        "scales": scales,
        "zero_points": zps,
        "quantized_dimension": int(t.q_dim),
        "const": bool(t.flags & 0x01),
        "variable": bool(t.flags & 0x02),
    }


def _array(t):
    """Copy of a tensor's data as a numpy array of its shape."""
    if not t.data:
        return None
    dt = DTYPES.get(t.dtype)
    raw = ctypes.string_at(t.data, lib().mn_tensor_bytes(ctypes.byref(t)))
    if dt is None:
        return np.frombuffer(raw, dtype=np.uint8).copy()
    shape = tuple(t.dims[i] for i in range(t.ndim))
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


class Model:
    """Verified zero-copy model view. Raises MicronnError if the buffer is invalid."""

    def __init__(self, data, lib_path=None, offset=0):
        """offset > 0 places the model at that byte offset of a fresh buffer (alignment tests)."""
        self._L = lib(lib_path) if lib_path else lib()
        data = bytes(data)
        # Exact-size buffer (so out-of-bounds reads are caught under ASan), kept alive here.
        self._buf = ctypes.create_string_buffer(b"\0" * offset + data, offset + len(data)) \
            if (data or offset) else ctypes.create_string_buffer(1)
        self._m = ctypes.create_string_buffer(self._L.mn_model_struct_size())
        self.len = len(data)
        s = self._L.mn_model_init(self._m, ctypes.c_void_p(ctypes.addressof(self._buf) + offset), len(data))
        if s != OK:
            raise MicronnError(s, self._L.mn_model_errmsg(self._m).decode(errors="replace"))

    @property
    def num_inputs(self):
        return self._L.mn_model_num_inputs(self._m)

    @property
    def num_outputs(self):
        return self._L.mn_model_num_outputs(self._m)

    @property
    def num_tensors(self):
        return self._L.mn_model_num_tensors(self._m)

    @property
    def num_subgraphs(self):
        return self._L.mn_model_num_subgraphs(self._m)

    def ops(self):
        """List of dicts: index, name, builtin, version, inputs, outputs, supported."""
        out = []
        for i in range(self._L.mn_model_num_ops(self._m)):
            info = _OpInfo()
            self._L.mn_model_op_info(self._m, i, ctypes.byref(info))
            state = self._L.mn_op_kernel_state(None, info.builtin, info.name)
            out.append({"index": i, "name": info.name.decode(errors="replace"), "builtin": info.builtin,
                        "version": info.version, "n_inputs": info.n_inputs, "n_outputs": info.n_outputs,
                        "supported": bool(info.supported), "kernel": KERNEL_STATES[state]})
        return out

    def subgraph(self, k):
        """A Model view of subgraph k of the same buffer (its ops, tensors, inputs, outputs)."""
        sub = Model.__new__(Model)
        sub._L, sub._buf, sub.len = self._L, self._buf, self.len
        sub._m = ctypes.create_string_buffer(self._L.mn_model_struct_size())
        if self._L.mn_model_subgraph(self._m, k, sub._m) != OK:
            raise IndexError(k)
        return sub

    def custom_options(self, op):
        """The inline custom options bytes of operator ``op`` (b"" if none)."""
        n = ctypes.c_size_t(0)
        p = self._L.mn_model_op_custom_options(self._m, op, ctypes.byref(n))
        return ctypes.string_at(p, n.value) if p and n.value else b""

    def tensor(self, index):
        t = _Tensor()
        if self._L.mn_model_tensor(self._m, index, ctypes.byref(t)) != OK:
            raise IndexError(index)
        return _tensor_info(t, index, self)

    def tensors(self):
        return [self.tensor(i) for i in range(self.num_tensors)]

    def input_indices(self):
        return [self._L.mn_model_input_index(self._m, i) for i in range(self.num_inputs)]

    def output_indices(self):
        return [self._L.mn_model_output_index(self._m, i) for i in range(self.num_outputs)]

    def op_tensors(self, op, which=OP_INPUTS):
        """Tensor indices of operator ``op``'s inputs (OP_INPUTS), outputs (OP_OUTPUTS) or
        intermediates; -1 marks an omitted optional operand."""
        if not hasattr(self._L, "mn_model_op_tensor"):
            raise MicronnError(ERR_STATE, "the engine library predates mn_model_op_tensor; "
                               "rebuild it with `make -C tests/engine lib`")
        out, k, t = [], 0, ctypes.c_int32()
        while self._L.mn_model_op_tensor(self._m, op, which, k, ctypes.byref(t)) == OK:
            out.append(t.value)
            k += 1
        return out

    def check_ops(self, planner="greedy"):
        """Per-op support diagnostics from the engine (mn_check_ops): every op is looked up and
        prepared, and every failure is recorded. Returns a list with one entry per op:
        None when the op prepared, else (status, message)."""
        if not hasattr(self._L, "mn_check_ops"):
            raise MicronnError(ERR_STATE, "the engine library predates mn_check_ops; "
                               "rebuild it with `make -C tests/engine lib`")
        n = self._L.mn_model_num_ops(self._m)
        res = (_OpCheck * max(n, 1))()
        cfg = _make_config(planner, False, None)
        size = self._L.mn_dry_run_work_hint(self._m)
        for _ in range(8):
            work = ctypes.create_string_buffer(size)
            failed, need, err = ctypes.c_size_t(0), ctypes.c_size_t(0), _Error()
            s = self._L.mn_check_ops(self._m, ctypes.byref(cfg), work, size, res, n, ctypes.byref(failed),
                                     ctypes.byref(need), ctypes.byref(err))
            if s == ERR_ARENA:
                size = max(2 * size, need.value + 1024)
                continue
            if s not in (OK, ERR_UNSUPPORTED):
                raise MicronnError(s, err.msg.decode(errors="replace"))
            return [None if r.status == OK else (r.status, r.msg.decode("utf-8", "replace")) for r in res[:n]]
        raise MicronnError(ERR_ARENA, err.msg.decode(errors="replace"))

    def patch_choice(self, planner="greedy", reuse_inputs=False, profile=False, **delegation):
        """The patch stage that needs the least arena (mn_patch_choose): dict first, last, ops, rows,
        bands, height, arena, arena_without, macs, macs_patched, recompute (fraction of the stage's
        multiply-accumulates computed again), or None when no stage helps."""
        cfg = _make_config(planner, reuse_inputs, _dummy_ticks if profile else None, L=self._L, **delegation)
        size = self._L.mn_dry_run_work_hint(self._m)
        for _ in range(8):
            work = ctypes.create_string_buffer(size)
            out, err = _PatchChoice(), _Error()
            s = self._L.mn_patch_choose(self._m, ctypes.byref(cfg), work, size, ctypes.byref(out), ctypes.byref(err))
            if s == OK:
                return _choice_dict(out)
            if s != ERR_ARENA:
                raise MicronnError(s, err.msg.decode(errors="replace"))
            size = max(2 * size, out.arena + 1024)
        raise MicronnError(ERR_ARENA, err.msg.decode(errors="replace"))

    def arena_needed(self, planner="greedy", reuse_inputs=False, profile=False, patches=None, **delegation):
        """Exact arena bytes by dry run (raises MicronnError for unsupported ops etc.).
        profile=True includes the per-op profile counters. delegation, patches: as for Interpreter."""
        cfg = _make_config(planner, reuse_inputs, _dummy_ticks if profile else None, L=self._L, **delegation)
        _set_patches(cfg, self._patches(patches, planner, reuse_inputs, profile, delegation))
        size = self._L.mn_dry_run_work_hint(self._m)
        for _ in range(8):
            work = ctypes.create_string_buffer(size)
            need = ctypes.c_size_t(0)
            err = _Error()
            s = self._L.mn_arena_needed(self._m, ctypes.byref(cfg), work, size, ctypes.byref(need), ctypes.byref(err))
            if s == OK:
                return need.value
            if s != ERR_ARENA:
                raise MicronnError(s, err.msg.decode(errors="replace"))
            size = max(2 * size, need.value + 1024)
        raise MicronnError(ERR_ARENA, err.msg.decode(errors="replace"))


    def _patches(self, patches, planner, reuse_inputs, profile, delegation):
        """patches: None/False (off), True (the best stage), a patch_choice() dict or (first, last, rows)."""
        if patches is True:
            return self.patch_choice(planner, reuse_inputs, profile, **delegation)
        return patches or None

    def arena_split(self, planner="greedy", reuse_inputs=False):
        """Dry run for split arenas: (persistent buffer bytes, arena bytes), each with the slack
        for an unaligned start."""
        cfg = _make_config(planner, reuse_inputs, None)
        size = self._L.mn_dry_run_work_hint(self._m)
        for _ in range(8):
            work = ctypes.create_string_buffer(size)
            st, err = _Stats(), _Error()
            s = self._L.mn_arena_needed_stats(self._m, ctypes.byref(cfg), work, size, ctypes.byref(st),
                                              ctypes.byref(err))
            if s == OK:
                return st.persistent + 15, max(st.nonpersistent, st.temp_peak) + 15
            if s != ERR_ARENA:
                raise MicronnError(s, err.msg.decode(errors="replace"))
            size = max(2 * size, st.needed + 1024)
        raise MicronnError(ERR_ARENA, err.msg.decode(errors="replace"))


_dummy_ticks = _TICKS_FN(lambda user: 0)


# mn_op_kernel_state(): the engine has no kernel for the op / has one this build lacks / has it.
KERNEL_STATES = ("none", "not built", "linked")


def op_name(builtin, lib_path=None):
    """Name of a builtin operator code ("CONV_2D"; "?" if unknown or names compiled out)."""
    return lib(lib_path).mn_op_name(builtin, ctypes.create_string_buffer(OP_NAME_LEN)).decode(errors="replace")


def kernels(lib_path=None):
    """Every builtin kernel of the engine source (mn_ops.h), linked into this library or not: list
    of dicts name, builtin, max_version, options, dtypes (list of combination strings), linked,
    variants (the reference kernel, then the optimized variants the op's kernel selects from:
    "<backend>.<function>", over dsp, mve and generic as the host's variant query knows them)."""
    L = lib(lib_path)
    out, i = [], 0
    info = _KernelInfo()
    while L.mn_op_kernel_info(i, ctypes.byref(info)):
        out.append({"name": op_name(info.builtin, lib_path), "builtin": info.builtin,
                    "max_version": info.max_version,
                    "options": L.mn_options_name(info.options_type).decode(errors="replace"),
                    "dtypes": (info.dtypes or b"").decode(errors="replace").split(), "linked": bool(info.linked),
                    "variants": ["reference"] + _op_variants(L, info.builtin)})
        i += 1
    return out


def _op_variants(L, builtin):
    out = []
    while getattr(L, "mn_variant_of_op", None) and L.mn_variant_of_op(builtin, len(out)):
        out.append(L.mn_variant_of_op(builtin, len(out)).decode())
    return out


def custom_kernels(lib_path=None):
    """The custom-op kernels built into the engine (engine/mn_custom_ops.h), as kernels() lists
    builtins; name is the model's custom code (e.g. "Atan2")."""
    L = lib(lib_path)
    out, i = [], 0
    info, name = _KernelInfo(), ctypes.c_char_p()
    while L.mn_custom_op_info(i, ctypes.byref(name), ctypes.byref(info)):
        out.append({"name": name.value.decode(errors="replace"), "builtin": info.builtin,
                    "max_version": info.max_version, "options": "custom options",
                    "dtypes": (info.dtypes or b"").decode(errors="replace").split(), "linked": bool(info.linked),
                    "variants": ["reference"]})
        i += 1
    return out


def custom_op_hint(name, lib_path=None):
    """Why a known custom op (e.g. "ethos-u") cannot run without a registered kernel, or None."""
    f = getattr(lib(lib_path), "mn_custom_op_hint", None)
    r = f(name.encode()) if f else None
    return r.decode() if r else None


CFG_REFERENCE_KERNELS = 0x02


def _make_config(planner, reuse_inputs, ticks, delegate=None, min_subgraph=1, reference=False, L=None):
    cfg = _Config()
    cfg.planner = PLANNERS[planner] if isinstance(planner, str) else int(planner)
    cfg.flags = (CFG_REUSE_INPUTS if reuse_inputs else 0) | (CFG_REFERENCE_KERNELS if reference else 0)
    if ticks is not None:
        cfg.ticks = ticks
    if delegate is not None:
        d = (L or lib()).mn_delegate_find(delegate.encode())
        if not d:
            raise MicronnError(ERR_ARG, f"no delegate {delegate!r} (delegates: {', '.join(delegates(L)) or 'none'})")
        cfg.delegate = d
        cfg.min_subgraph = int(min_subgraph)
    return cfg


def _set_patches(cfg, patches):
    if patches:
        first, last, rows = ((patches["first"], patches["last"], patches["rows"]) if isinstance(patches, dict)
                             else patches)
        cfg.patch_first, cfg.patch_last, cfg.patch_rows = int(first), int(last), int(rows)


def delegates(L=None):
    """The delegate names the engine partitions for (every build: each backend's, compiled in or not)."""
    L = L or lib()
    out = []
    while getattr(L, "mn_delegate_name", None) and L.mn_delegate_name(len(out)):
        out.append(L.mn_delegate_name(len(out)).decode())
    return out


def backends(L=None):
    """Optimized kernel backends compiled into the library (each also usable as a delegate)."""
    L = L or lib()
    out, i = [], 0
    while True:
        f = getattr(L, "mn_kernel_backend", None)
        name = f(i) if f else None
        if not name:
            return out
        out.append(name.decode())
        i += 1


def op_tables(model, planner="greedy", reuse_inputs=False, delegate=None, min_subgraph=1, reference=False):
    """The per-op tables the engine keeps for this model (per-channel multipliers and shifts, the
    kernel variants' folded biases, ...): [(subgraph, op, tag, bytes)] in prepare order, what
    tables_metadata() stores in the model."""
    out = []

    def hook(user, sg, op, tag, data, n):
        out.append((int(sg), int(op), int(tag), ctypes.string_at(data, n)))

    cb = _TABLE_HOOK(hook)
    it = Interpreter(model, planner=planner, reuse_inputs=reuse_inputs, delegate=delegate,
                     min_subgraph=min_subgraph, reference=reference, _table_hook=cb)
    del it
    return out


def tables_metadata(tables, align=16):
    """The micronn_quant_v1 metadata buffer for op_tables() entries (mn_tables.c): u32 count, then
    per entry u16 subgraph, u16 tag, u32 op, u32 offset, u32 bytes; each table at an `align`-aligned
    offset of the buffer."""
    import struct
    seen, uniq = set(), []
    for e in tables:
        if (e[0], e[1], e[2], e[3]) not in seen:
            seen.add((e[0], e[1], e[2], e[3]))
            uniq.append(e)
    pos = 4 + 16 * len(uniq)
    head, body = [struct.pack("<I", len(uniq))], b""
    for sg, op, tag, data in uniq:
        pad = (-(pos + len(body))) % align
        body += b"\0" * pad
        head.append(struct.pack("<HHIII", sg, tag, op, pos + len(body), len(data)))
        body += data
    data = b"".join(head)
    return data + b"\0" * (pos - len(data)) + body


class Interpreter:
    """Interpreter over a Model. arena_size=None: size from a dry run.

    planner: "greedy" (default), "no_reuse" (every tensor readable after invoke), "offline".
    profile=True: per-op nanoseconds (host clock) via profile().
    delegate="generic" (a kernel backend of this build, see backends()): run the subgraphs of ops it
    covers with that backend (min_subgraph: smallest subgraph delegated); reference=True: every
    other op runs its reference compute function.
    should_stop: a callable polled before every op and WHILE iteration (mn_config_t.should_stop);
    when it returns true, invoke stops with MicronnError (status ERR_ABORTED).
    patches=True: run the patch stage (a chain of early conv / pool ops computed in bands of output
    rows, or streamed through line buffers) that needs the least arena, if one helps
    (Model.patch_choice()); or a choice dict, or (first op, last op, rows or PATCH_STREAM).
    Bit-exact; the stage's inner activations are then not readable.
    """

    def __init__(self, model, arena_size=None, planner="greedy", reuse_inputs=False, profile=False,
                 arena_offset=0, persistent_size=None, delegate=None, min_subgraph=1, reference=False,
                 _table_hook=None, should_stop=None, patches=None):
        self.model = model
        self._L = model._L
        delegation = dict(delegate=delegate, min_subgraph=min_subgraph, reference=reference)
        patches = model._patches(patches, planner, reuse_inputs, profile, delegation)
        if arena_size is None:
            arena_size = model.arena_needed(planner, reuse_inputs, profile, patches=patches, **delegation)
        self._ticks = _TICKS_FN(lambda user: __import__("time").perf_counter_ns()) if profile else None
        self._cfg = _make_config(planner, reuse_inputs, self._ticks, L=self._L, **delegation)
        _set_patches(self._cfg, patches)
        if _table_hook is not None:
            self._cfg.table_hook = ctypes.cast(_table_hook, ctypes.c_void_p)
        # should_stop: a callable polled before every op (and WHILE iteration); true stops invoke
        self._stop = _STOP_FN(lambda user: int(bool(should_stop()))) if should_stop else None
        if self._stop is not None:
            self._cfg.should_stop = ctypes.cast(self._stop, ctypes.c_void_p)
        # arena_offset lets tests place the arena at any alignment.
        self._arena = ctypes.create_string_buffer(arena_size + arena_offset + 1)
        self._it = ctypes.create_string_buffer(self._L.mn_interp_struct_size())
        self.arena_size = arena_size
        base = ctypes.addressof(self._arena) + arena_offset
        s = self._L.mn_interp_init(self._it, model._m, ctypes.c_void_p(base), arena_size, ctypes.byref(self._cfg))
        # persistent_size: split arenas, the persistent data in a buffer of its own
        self._pers = ctypes.create_string_buffer(persistent_size) if persistent_size is not None else None
        if s == OK and self._pers is not None:
            s = self._L.mn_interp_set_persistent(self._it, self._pers, persistent_size)
        if s == OK:
            s = self._L.mn_interp_prepare(self._it)
        if s != OK:
            msg = self._L.mn_interp_errmsg(self._it).decode(errors="replace")
            st = self._stats()
            self._L.mn_interp_deinit(self._it)
            e = MicronnError(s, msg)
            e.needed = st["needed"]
            raise e

    def __del__(self):
        try:
            self._L.mn_interp_deinit(self._it)
        except Exception:
            pass

    def _err(self, s):
        return MicronnError(s, self._L.mn_interp_errmsg(self._it).decode(errors="replace"))

    def _stats(self):
        st = _Stats()
        self._L.mn_interp_stats(self._it, ctypes.byref(st))
        return {n: getattr(st, n) for n, _ in _Stats._fields_}

    def stats(self):
        """Arena bytes: persistent, nonpersistent, needed, temp_peak, copied_bytes, n_scratch."""
        return self._stats()

    def _input(self, i):
        p = self._L.mn_interp_input(self._it, i)
        if not p:
            raise IndexError(i)
        return p.contents

    def _output(self, i):
        p = self._L.mn_interp_output(self._it, i)
        if not p:
            raise IndexError(i)
        return p.contents

    @property
    def num_inputs(self):
        return self.model.num_inputs

    @property
    def num_outputs(self):
        return self.model.num_outputs

    def input_details(self, i):
        return _tensor_info(self._input(i), self.model.input_indices()[i], self.model)

    def output_details(self, i):
        return _tensor_info(self._output(i), self.model.output_indices()[i], self.model)

    def set_input(self, i, value):
        t = self._input(i)
        raw = value.tobytes() if isinstance(value, np.ndarray) else bytes(value)
        need = self._L.mn_tensor_bytes(ctypes.byref(t))
        if len(raw) != need:
            raise ValueError("input %d needs %d bytes, got %d" % (i, need, len(raw)))
        ctypes.memmove(t.data, raw, len(raw))

    def invoke(self):
        s = self._L.mn_interp_invoke(self._it)
        if s != OK:
            raise self._err(s)

    def reset(self):
        self._L.mn_interp_reset(self._it)

    def output(self, i):
        return _array(self._output(i))

    def input(self, i):
        return _array(self._input(i))

    def tensor(self, index):
        """Copy of any tensor's data (intermediates are meaningful with planner="no_reuse")."""
        p = self._L.mn_interp_tensor(self._it, index)
        if not p:
            raise IndexError(index)
        return _array(p.contents)

    def tensor_details(self, index):
        p = self._L.mn_interp_tensor(self._it, index)
        if not p:
            raise IndexError(index)
        return _tensor_info(p.contents, index, self.model)

    def tensor_address(self, index):
        p = self._L.mn_interp_tensor(self._it, index)
        return p.contents.data if p else None

    def plan_buffers(self):
        """The non-persistent plan as the engine made it: one dict per planned buffer (tensors, then
        kernel scratch buffers) with tensor (index, or None for scratch), scratch (index or None),
        size (rounded to the arena alignment), first/last op (inclusive) and offset."""
        if not hasattr(self._L, "mn_interp_plan_buffer"):
            raise MicronnError(ERR_STATE, "the host engine library has no mn_interp_plan_buffer: "
                                          "rebuild it with `make -C tests/engine lib`")
        out = []
        n = self._L.mn_interp_num_tensors(self._it) + self._stats()["n_scratch"]
        for k in range(n):
            p = _PlanInfo()
            s = self._L.mn_interp_plan_buffer(self._it, k, ctypes.byref(p))
            if s != OK:
                raise MicronnError(s, f"plan buffer {k}: not available")
            if p.planned:
                out.append({"tensor": p.index if p.index >= 0 else None,
                            "scratch": -1 - p.index if p.index < 0 else None,
                            "size": p.size, "first": p.first, "last": p.last, "offset": p.offset,
                            "over": p.over if p.over >= 0 else None, "shift": p.shift})
        return out

    def patch(self):
        """The patch stage this interpreter runs (as Model.patch_choice(), arena_without 0), or None."""
        c = _PatchChoice()
        s = self._L.mn_interp_patch(self._it, ctypes.byref(c))
        if s != OK:
            raise self._err(s)
        return _choice_dict(c)

    def profile(self):
        out = []
        for i in range(self._L.mn_interp_num_ops(self._it)):
            p = _Profile()
            self._L.mn_interp_profile(self._it, i, ctypes.byref(p))
            out.append({"index": i, "name": p.name.decode(errors="replace"), "builtin": p.builtin, "calls": p.calls,
                        "ticks": p.ticks, "variant": p.variant.decode(errors="replace"),
                        "persistent": p.persistent,
                        "backend": p.backend.decode() if p.backend else None, "op": p.model_index,
                        "subgraph": p.subgraph})
        return out

    # LiteRT-style aliases
    get_output = output
    get_input = input
    get_tensor = tensor


def inspect(model_bytes, planner="greedy"):
    """Everything `micronn inspect` shows, as plain data: ops (with support flags), tensors,
    inputs/outputs, and the exact arena size (None + reason if some op is unsupported)."""
    m = Model(model_bytes)
    info = {
        "subgraphs": m.num_subgraphs,
        "ops": m.ops(),
        "tensors": m.tensors(),
        "inputs": m.input_indices(),
        "outputs": m.output_indices(),
        "arena_bytes": None,
        "arena_error": None,
    }
    try:
        info["arena_bytes"] = m.arena_needed(planner)
        it = Interpreter(m, arena_size=info["arena_bytes"], planner=planner)
        info["arena"] = it.stats()
    except MicronnError as e:
        info["arena_error"] = str(e)
    return info
