"""The engine's FlexBuffers reader (engine/mn_flexbuf.c, custom options of TFLite custom ops) through
ctypes: blobs written by flatbuffers' own encoder in every byte width read back exactly; malformed
blobs (truncated, bad widths, offsets past either end, counts that do not fit, wrong types) give a
status, never a read outside the blob. Each blob is copied into a malloc'ed block of exactly its
size, so the ASan library `make test` loads reports a read one byte past it."""
import ctypes
import struct

import flatbuffers.flexbuffers as fx
import numpy as np
import pytest

E = pytest.importorskip("micronn_tools.engine")

OK, ABSENT, MALFORMED, TYPE, RANGE = range(5)


class FlexMap(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("len", ctypes.c_size_t), ("values", ctypes.c_size_t),
                ("keys", ctypes.c_size_t), ("count", ctypes.c_uint32), ("width", ctypes.c_uint8),
                ("key_width", ctypes.c_uint8)]


class FlexValue(ctypes.Structure):
    _fields_ = [("p", ctypes.c_void_p), ("type", ctypes.c_uint8), ("width", ctypes.c_uint8)]


@pytest.fixture(scope="module")
def L():
    try:
        lib = E.lib()
    except OSError as e:
        pytest.skip(f"no engine library: {e}")
    P = ctypes.POINTER
    for name, args in (("mn_flex_root_map", [ctypes.c_void_p, ctypes.c_size_t, P(FlexMap)]),
                       ("mn_flex_at", [P(FlexMap), ctypes.c_uint32, P(ctypes.c_char_p), P(FlexValue)]),
                       ("mn_flex_find", [P(FlexMap), ctypes.c_char_p, P(FlexValue)]),
                       ("mn_flex_value_i64", [P(FlexValue), P(ctypes.c_int64)]),
                       ("mn_flex_value_f64", [P(FlexValue), P(ctypes.c_double)]),
                       ("mn_flex_value_bool", [P(FlexValue), P(ctypes.c_bool)]),
                       ("mn_flex_i32", [P(FlexMap), ctypes.c_char_p, P(ctypes.c_int32)]),
                       ("mn_flex_f32", [P(FlexMap), ctypes.c_char_p, P(ctypes.c_float)]),
                       ("mn_flex_bool", [P(FlexMap), ctypes.c_char_p, P(ctypes.c_bool)])):
        f = getattr(lib, name)
        f.argtypes, f.restype = args, ctypes.c_int
    lib.mn_flex_status_str.argtypes, lib.mn_flex_status_str.restype = [ctypes.c_int], ctypes.c_char_p
    return lib


_libc = ctypes.CDLL(None)
_libc.malloc.restype, _libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]


class Blob:
    """blob bytes in a malloc'ed block of exactly their size (ASan's redzone right after it)."""
    def __init__(self, L, data):
        self.L, self.data = L, bytes(data)
        self.p = _libc.malloc(max(len(self.data), 1))
        ctypes.memmove(self.p, self.data, len(self.data))
        self.m = FlexMap()
        self.status = L.mn_flex_root_map(self.p, len(self.data), ctypes.byref(self.m))

    def __del__(self):
        _libc.free(self.p)

    def get(self, key, kind):
        out = {"i32": ctypes.c_int32, "f32": ctypes.c_float, "bool": ctypes.c_bool}[kind](0)
        s = getattr(self.L, "mn_flex_" + kind)(ctypes.byref(self.m), key.encode(), ctypes.byref(out))
        return s, out.value

    def entries(self):
        """[(status, key, type, width)] of every entry (walks all of them)."""
        res = []
        for i in range(self.m.count):
            k, v = ctypes.c_char_p(), FlexValue()
            s = self.L.mn_flex_at(ctypes.byref(self.m), i, ctypes.byref(k), ctypes.byref(v))
            if s == OK:
                assert self.p <= ctypes.cast(k, ctypes.c_void_p).value < self.p + len(self.data)
                if v.p:
                    assert self.p <= v.p and v.p + v.width <= self.p + len(self.data)
                res.append((s, k.value, v.type, v.width))
            else:
                res.append((s, None, None, None))
        return res

    def exercise(self):
        """Every accessor on every entry and on a few keys (for malformed blobs: must not crash)."""
        if self.status != OK:
            return
        for s, k, _, _ in self.entries():
            if s == OK:
                for kind in ("i32", "f32", "bool"):
                    self.get(k.decode(errors="replace"), kind)
        for key in ("a", "cycles_max", "max_detections", ""):
            for kind in ("i32", "f32", "bool"):
                self.get(key, kind)


def _builder_blob(width, fill):
    b = fx.Builder(force_min_bit_width=width)
    with b.Map():
        fill(b)
    return bytes(b.Finish())


WIDTHS = [fx.BitWidth.W8, fx.BitWidth.W16, fx.BitWidth.W32, fx.BitWidth.W64]


@pytest.mark.parametrize("width", WIDTHS, ids=lambda w: f"w{8 << int(w)}")
def test_values_of_every_width(L, width):
    def fill(b):
        b.Key("neg"); b.Int(-5)
        b.Key("big"); b.Int(-(1 << 31))
        b.Key("u"); b.UInt(4000000000)
        b.Key("ind"); b.IndirectInt(123456)
        b.Key("indu"); b.IndirectUInt(7)
        b.Key("f"); b.Float(0.375)
        b.Key("indf"); b.IndirectFloat(-2.5)
        b.Key("t"); b.Bool(True)
        b.Key("nul"); b.Null()
        b.Key("s"); b.String("text")
        b.Key("v"); b.VectorFromElements([1, 2, 3])
    x = Blob(L, _builder_blob(width, fill))
    assert x.status == OK and x.m.count == 11
    assert [k for _, k, _, _ in x.entries()] == sorted(k for _, k, _, _ in x.entries())   # stored sorted
    assert x.get("neg", "i32") == (OK, -5)
    assert x.get("big", "i32") == (OK, -(1 << 31))
    assert x.get("u", "i32")[0] == RANGE                       # 4e9 does not fit int32
    assert x.get("u", "f32") == (OK, 4000000000.0)
    assert x.get("ind", "i32") == (OK, 123456)
    assert x.get("indu", "i32") == (OK, 7)
    assert x.get("f", "f32") == (OK, 0.375)
    assert x.get("f", "i32")[0] == TYPE                        # no silent float -> int
    assert x.get("indf", "f32") == (OK, -2.5)
    assert x.get("t", "bool") == (OK, True) and x.get("t", "i32") == (OK, 1)
    assert x.get("neg", "bool") == (OK, True)
    assert x.get("nul", "i32") == (ABSENT, 0)                  # null: the default applies
    assert x.get("missing", "f32") == (ABSENT, 0.0)
    assert x.get("s", "i32")[0] == TYPE and x.get("v", "f32")[0] == TYPE


def test_converter_style_options(L):
    """The options TFLite's converter writes for TFLite_Detection_PostProcess (the narrowest widths),
    with an int and a double too large for int32 / float32."""
    opts = dict(max_detections=10, max_classes_per_detection=1, detections_per_class=100, use_regular_nms=False,
                nms_score_threshold=9.99999993922529e-09, nms_iou_threshold=0.6000000238418579, num_classes=90,
                y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0, huge=1 << 62)

    def fill(b):
        for k, v in opts.items():
            b.Key(k)
            b.Add(v)
        b.Key("big")
        b.Float(1e300, byte_width=8)
    x = Blob(L, _builder_blob(fx.BitWidth.W8, fill))
    assert x.status == OK
    assert x.get("num_classes", "i32") == (OK, 90)
    assert x.get("use_regular_nms", "bool") == (OK, False)
    assert x.get("nms_iou_threshold", "f32") == (OK, np.float32(0.6000000238418579))
    assert x.get("nms_score_threshold", "f32") == (OK, np.float32(1e-8))
    assert x.get("big", "f32")[0] == RANGE and x.get("huge", "i32")[0] == RANGE


@pytest.mark.parametrize("data,status", [
    (b"", MALFORMED), (b"\x01", MALFORMED), (b"\x00\x01", MALFORMED),
    (b"\x05\x24\x03", MALFORMED),                     # root width 3
    (b"\x05\x24\x01", MALFORMED),                     # map offset 5 from slot 0: before the blob
    (b"\x00\x24\x08", MALFORMED),                     # width 8, 3 bytes
    (b"\x07\x04\x01", TYPE),                          # root is an int
    (b"\x01\x28\x01", TYPE),                          # root is a vector
    # a map claiming 200 entries in a 10-byte blob
    (bytes([0, 1, 1, 200, 0, 0, 0, 0, 0]) + b"\x04\x24\x01", MALFORMED),
])
def test_malformed_root(L, data, status):
    x = Blob(L, data)
    assert x.status == status, L.mn_flex_status_str(x.status)
    x.exercise()


def _good():
    return bytes(fx.Dumps(dict(cycles_max=2, max_detections=10, nms_iou_threshold=0.5, use_regular_nms=True,
                               name="x", big=1 << 40)))


def test_every_truncation(L):
    """Every prefix and suffix of a valid blob: a status, and nothing read outside it."""
    good = _good()
    seen = set()
    for n in range(len(good)):
        for part in (good[:n], good[n:]):
            x = Blob(L, part)
            seen.add(x.status)
            x.exercise()
    assert MALFORMED in seen


def test_bad_key_and_type_bytes(L):
    good = bytearray(_good())
    x = Blob(L, good)
    m = x.m
    # a key offset pointing before the blob
    bad = bytearray(good)
    bad[m.keys] = 0xff if m.key_width == 1 else bad[m.keys]
    y = Blob(L, bad)
    assert y.status == OK and y.entries()[0][0] == MALFORMED
    assert y.get("cycles_max", "i32")[0] == MALFORMED        # lookups walk the keys: a clean error
    # in a map of 1-byte values: a type byte claiming a float of width 1 / an indirect int whose
    # offset points before the blob
    good = bytes(fx.Dumps(dict(a=3, b=4)))
    m = Blob(L, good).m
    assert m.width == 1
    types = m.values + m.count * m.width
    for tb in (MN_FLOAT << 2 | 0, MN_INDIRECT_INT << 2 | 3):
        bad = bytearray(good)
        bad[types] = tb
        bad[m.values] = 0xff
        z = Blob(L, bad)
        assert z.entries()[0][0] == MALFORMED
        z.exercise()


MN_FLOAT, MN_INDIRECT_INT = 3, 6


def test_random_corruption(L):
    """Random byte changes of valid blobs (the options of both custom ops, every width)."""
    rng = np.random.default_rng(7)
    blobs = [_good(), bytes(fx.Dumps({"cycles_max": 1}))]
    blobs += [_builder_blob(w, lambda b: (b.Key("a"), b.IndirectFloat(1.5), b.Key("b"), b.UInt(9))) for w in WIDTHS]
    for _ in range(3000):
        b = bytearray(blobs[rng.integers(len(blobs))])
        for _ in range(int(rng.integers(1, 4))):
            b[rng.integers(len(b))] = int(rng.integers(256))
        Blob(L, b).exercise()


def test_status_strings(L):
    assert [L.mn_flex_status_str(s).decode() for s in range(5)] == \
        ["ok", "absent", "malformed flexbuffer", "wrong type", "out of range"]
    assert struct.calcsize("P") == ctypes.sizeof(ctypes.c_void_p)
