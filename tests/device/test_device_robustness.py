"""Hostile and unusable models: the board raises a Python exception and keeps working."""
import flatbuffers
import numpy as np
import pytest

import oracle
from devhelp import model_bytes

# Device-side harness: try(buf) -> 'ok' or the exception's type name. Runs inside a function so
# nothing is left behind in globals; prints a summary as a literal.
_TRY = """
import micronn, gc
def attempt(buf):
    try:
        m = micronn.Model(buf)
        it = micronn.Interpreter(m)
        it.invoke()
        return 'ok'
    except Exception as e:
        return type(e).__name__
"""


def _still_alive(dev):
    assert dev.eval_last("print(1 + 1)") == 2
    # and it still computes correctly
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
it = micronn.Interpreter(m)
it.input(0)[0] = 5
it.invoke()
print(it.output(0)[0])
""")
    want = oracle.run(model_bytes("hello_world_int8"), [np.array([[5]], np.int8)])[0]
    assert r == int(want.ravel()[0])


def _source(dev, name):
    """Device code binding `src` to the model's bytes (frozen, or read from the filesystem)."""
    if name in dev.frozen():
        return f"src = micronn.models[{name!r}]\n"
    dev.put(model_bytes(name), f"{name}.tflite")
    return f"src = open({name + '.tflite'!r}, 'rb').read()\n"


@pytest.mark.parametrize("name", ["hello_world_int8", "micro_speech_quantized"])
def test_truncated_models(dev, name):
    size = len(model_bytes(name))
    cuts = sorted(set(list(range(0, 64)) + list(range(64, size, max(1, size // 97)))
                      + list(range(size - 32, size))))
    r = dev.eval_last(_TRY + _source(dev, name) + f"""
def run():
    res = {{}}
    mv = memoryview(src)
    for n in {cuts!r}:
        k = attempt(mv[:n])
        res[k] = res.get(k, 0) + 1
        if k == 'ok':
            res.setdefault('ok_at', []).append(n)
    return res
print(run())
""", timeout=600)
    assert r.get("ok", 0) == 0, f"truncated models accepted at lengths {r.get('ok_at')}"
    assert sum(v for k, v in r.items() if k != "ok_at") == len(cuts)
    _still_alive(dev)


@pytest.mark.parametrize("name,flips", [("hello_world_int8", 400), ("micro_speech_quantized", 150)])
def test_random_bit_flips(dev, name, flips):
    r = dev.eval_last(_TRY + _source(dev, name) + f"""
def run():
    buf = bytearray(src)
    n = len(buf)
    seed = 12345
    res = {{}}
    for i in range({flips}):
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        pos = seed % n
        bit = (seed >> 20) & 7
        buf[pos] ^= 1 << bit
        k = attempt(buf)
        buf[pos] ^= 1 << bit
        res[k] = res.get(k, 0) + 1
    return res
print(run())
""", timeout=900)
    assert sum(r.values()) == flips
    assert set(r) <= {"ok", "ValueError", "MemoryError", "NotImplementedError", "RuntimeError"}, r
    _still_alive(dev)


def test_offsets_pointing_outside(dev):
    """Every 4-aligned uint32 of the model in turn set to offsets beyond the buffer."""
    name = "hello_world_int8"
    size = len(model_bytes(name))
    r = dev.eval_last(_TRY + _source(dev, name) + f"""
import struct
def run():
    buf = bytearray(src)
    res = {{}}
    for pos in range(0, {size} - 3, 4):
        old = buf[pos:pos + 4]
        for v in (0x7ffffff0, 0xfffffff0, {size}):
            struct.pack_into('<I', buf, pos, v)
            k = attempt(buf)
            res[k] = res.get(k, 0) + 1
        buf[pos:pos + 4] = old
    return res
print(run())
""", timeout=900)
    assert set(r) <= {"ok", "ValueError", "MemoryError", "NotImplementedError", "RuntimeError"}, r
    # The root offset and the table offsets must be caught: most of these are errors.
    assert r.get("ValueError", 0) > 0
    _still_alive(dev)


def _shape_positions(mb):
    from ai_edge_litert import schema_py_generated as s
    m = s.Model.GetRootAsModel(mb, 0)
    sg = m.Subgraphs(0)
    pos = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        o = t._tab.Offset(4)  # field 0: shape
        if o:
            start = t._tab.Vector(o)
            for j in range(t._tab.VectorLen(o)):
                pos.append((i, start + 4 * j))
    return pos


@pytest.mark.parametrize("name", ["hello_world_int8", "micro_speech_quantized"])
def test_absurd_shapes(dev, name):
    mb = model_bytes(name)
    positions = [p for _, p in _shape_positions(mb)]
    assert positions
    r = dev.eval_last(_TRY + _source(dev, name) + f"""
import struct
def run():
    buf = bytearray(src)
    res = []
    for pos in {positions!r}:
        old = buf[pos:pos + 4]
        row = []
        for v in (0x7fffffff, -1, -0x80000000, 0x10000, 0):
            struct.pack_into('<i', buf, pos, v)
            row.append(attempt(buf))
        buf[pos:pos + 4] = old
        res.append(row)
    return res
print(run())
""", timeout=900)
    for pos, row in zip(positions, r):
        huge, minus1, minint, big, zero = row
        assert huge != "ok" and minus1 != "ok" and minint != "ok", (pos, row)
    _still_alive(dev)


def _unsupported_model():
    """hello_world_int8 with op 0 and op 2 turned into LSH_PROJECTION and op 1 into a custom op."""
    from ai_edge_litert import schema_py_generated as s
    mt = s.ModelT.InitFromObj(s.Model.GetRootAsModel(model_bytes("hello_world_int8"), 0))
    lsh = s.OperatorCodeT()
    lsh.builtinCode = lsh.deprecatedBuiltinCode = s.BuiltinOperator.LSH_PROJECTION
    lsh.version = 1
    custom = s.OperatorCodeT()
    custom.builtinCode = custom.deprecatedBuiltinCode = s.BuiltinOperator.CUSTOM
    custom.customCode = "MyFancyOp"
    custom.version = 1
    mt.operatorCodes = [lsh, custom]
    ops = mt.subgraphs[0].operators
    for i, op in enumerate(ops):
        op.opcodeIndex = 1 if i == 1 else 0
        if i == 1:
            op.builtinOptionsType = 0
            op.builtinOptions = None
    b = flatbuffers.Builder(8192)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_unsupported_ops_are_named(dev):
    dev.put(_unsupported_model(), "unsup.tflite")
    r = dev.eval_last("""
import micronn
m = micronn.load('unsup.tflite')
u = m.unsupported()
try:
    micronn.Interpreter(m)
    msg = None
except NotImplementedError as e:
    msg = str(e)
print((u, msg))
""")
    unsupported, msg = r
    assert unsupported == [(0, "LSH_PROJECTION"), (1, "MyFancyOp"), (2, "LSH_PROJECTION")]
    assert msg == ("unsupported ops: LSH_PROJECTION (op 0), MyFancyOp (op 1), LSH_PROJECTION (op 2): "
                   "micronn has no kernel for these yet"), msg
    _still_alive(dev)


def test_not_a_model(dev):
    r = dev.eval_last("""
import micronn
res = []
for b in (b'', b'hello', bytes(64), b'\\x10\\x00\\x00\\x00TFL3' + bytes(8)):
    try:
        micronn.Model(b)
        res.append(None)
    except ValueError as e:
        res.append(str(e))
try:
    micronn.Model(12)
except TypeError:
    res.append('TypeError')
print(res)
""")
    assert all(isinstance(x, str) and x for x in r), r
    assert r[-1] == "TypeError"


def _dtype_refused_model():
    """hello_world_int8 whose op 0 gets an int16 input and op 2 an int16 output: FULLY_CONNECTED
    exists, but not for those dtypes."""
    from ai_edge_litert import schema_py_generated as s
    mt = s.ModelT.InitFromObj(s.Model.GetRootAsModel(model_bytes("hello_world_int8"), 0))
    sg = mt.subgraphs[0]
    sg.tensors[sg.operators[0].inputs[0]].type = s.TensorType.INT16
    sg.tensors[sg.operators[2].outputs[0]].type = s.TensorType.INT16
    b = flatbuffers.Builder(8192)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_refused_dtypes_name_every_op(dev):
    dev.put(_dtype_refused_model(), "dtype.tflite")
    r = dev.eval_last("""
import micronn
m = micronn.load('dtype.tflite')
res = [m.unsupported()]
for kw in ({}, {'arena_size': 50000}):
    try:
        micronn.Interpreter(m, **kw)
        res.append(None)
    except NotImplementedError as e:
        res.append(str(e))
print(res)
""")
    registry, msg1, msg2 = r
    assert registry == []  # kernels exist; the refusal comes from their prepare
    for msg in (msg1, msg2):
        assert msg and msg.startswith("unsupported ops: FULLY_CONNECTED (op 0): "), msg
        assert "; FULLY_CONNECTED (op 2): " in msg and "int16" in msg, msg
    _still_alive(dev)
