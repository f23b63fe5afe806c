"""The micronn Python API on the board: memory behaviour, errors, tensors, arena, profiler."""
import numpy as np
import pytest

import oracle
from devhelp import model_bytes


def test_module_contents(dev):
    r = dev.eval_last("""
import micronn, _micronn
print((micronn.version, micronn.PROFILE_CLOCK, micronn.ops(), sorted(micronn.models),
       micronn.Model is _micronn.Model))
""")
    version, clock, ops, models, same = r
    assert same and version
    assert clock in ("cpu", "ns", "us")
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX", "RESHAPE"):
        assert op in ops
    assert isinstance(models, list)


def test_model_introspection(dev):
    r = dev.eval_last(dev.load_code("person_detect") + """
print((m.num_inputs, m.num_outputs, m.num_ops, len(m.ops()), m.ops()[0], m.unsupported(),
       m.inputs(), m.outputs()[0][1:3], m.size))
""")
    n_in, n_out, n_ops, n_ops2, op0, unsup, inputs, out, size = r
    assert (n_in, n_out, n_ops, n_ops2) == (1, 1, 31, 31)
    assert op0 == ("DEPTHWISE_CONV_2D", True)
    assert unsup == []
    name, shape, dtype, scale, zp = inputs[0]
    assert (shape, dtype, zp) == ((1, 96, 96, 1), "int8", -1)
    assert abs(scale - 0.0078431377) < 1e-6
    assert out == ((1, 2), "int8")
    assert size == len(model_bytes("person_detect"))


def test_tensor_properties_and_buffer(dev):
    r = dev.eval_last(dev.load_code("hello_world_float") + """
it = micronn.Interpreter(m)
t = it.input(0)
mv = memoryview(t)
t[0] = 1.5
a = (t.shape, t.dtype, t.scale, t.zero_point, t.name, len(t), t.nbytes, t.typecode, mv[0], t[0])
t[:] = [2.0]
b = mv[0]
import array
t[:] = array.array('f', [3.0])
c = t[-1]
it.invoke()
o = it.output(0)
print((a, b, c, o.dtype, o.tolist(), it.input(0) is t, o.interpreter is it))
""")
    a, b, c, odtype, out, same, alive = r
    assert a == ((1, 1), "float32", 0.0, 0, "serving_default_dense_input:0", 1, 4, "f", 1.5, 1.5)
    assert (b, c, odtype, same, alive) == (2.0, 3.0, "float32", True, True)
    want = oracle.run(model_bytes("hello_world_float"), [np.array([[3.0]], np.float32)])[0]
    assert abs(out[0] - float(want[0, 0])) <= 1e-5 * abs(float(want[0, 0])) + 1e-6


def test_tensor_keeps_interpreter_alive(dev):
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
import gc
def make():
    it = micronn.Interpreter(m)
    return it.input(0), it.output(0)
tin, tout = make()
gc.collect()
junk = [bytearray(64) for _ in range(200)]
gc.collect()
tin[0] = 0
tout.interpreter.invoke()
print(tout.tolist())
""")
    want = oracle.run(model_bytes("hello_world_int8"), [np.array([[0]], np.int8)])[0]
    assert r == want.ravel().tolist()


@pytest.mark.parametrize("name", ["hello_world_int8", "person_detect"])
def test_invoke_under_heap_lock(dev, name):
    out = dev.eval_last(dev.load_code(name) + """
import micropython
def run():
    it = micronn.Interpreter(m)
    it.input(0)[0] = 3
    t = None
    first = None
    micropython.heap_lock()
    try:
        it.invoke()
        it.invoke()
        t = it.output(0)
        first = t[0]
    finally:
        micropython.heap_unlock()
    return first
print(run())
""", timeout=600)
    assert isinstance(out, int)


def test_1000_invokes_no_heap_change(dev):
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
import gc, micropython
def run():
    it = micronn.Interpreter(m)
    it.input(0)[0] = 17
    it.invoke()
    ref = bytes(it.output(0))
    gc.collect()
    f0 = gc.mem_free()
    i = 0
    while i < 1000:
        it.invoke()
        i += 1
    f1 = gc.mem_free()
    same = bytes(it.output(0)) == ref
    micropython.heap_lock()
    i = 0
    while i < 1000:
        it.invoke()
        i += 1
    micropython.heap_unlock()
    return (f0, f1, same, bytes(it.output(0)) == ref, it.invokes)
print(run())
""", timeout=300)
    f0, f1, same, same2, invokes = r
    assert f0 == f1, f"gc.mem_free changed by {f0 - f1} bytes over 1000 invokes"
    assert same and same2
    assert invokes == 2001


def test_1000_invokes_stateful_model(dev):
    """keyword_scrambled (SVDF state): 1000 x (reset + invoke), heap unchanged, output stable."""
    r = dev.eval_last(dev.load_code("keyword_scrambled") + """
import gc
def run():
    it = micronn.Interpreter(m)
    t = it.input(0)
    i = 0
    while i < 96:
        t[i] = i * 300 - 14000
        i += 1
    it.reset()
    it.invoke()
    ref = bytes(it.output(0))
    gc.collect()
    f0 = gc.mem_free()
    i = 0
    while i < 1000:
        it.reset()
        it.invoke()
        i += 1
    f1 = gc.mem_free()
    return (f0 - f1, bytes(it.output(0)) == ref)
print(run())
""", timeout=600)
    assert r == (0, True)


def test_frozen_model_costs_no_heap(dev):
    if "person_detect" not in dev.frozen():
        pytest.skip("person_detect is not frozen into this firmware (MICRONN_MODELS)")
    r = dev.eval_last("""
import gc, micronn
buf = micronn.models['person_detect']
gc.collect()
f0 = gc.mem_free()
m = micronn.Model(buf)
f1 = gc.mem_free()
print((f0 - f1, len(buf), m.address % 16))
""")
    cost, size, align = r
    assert cost < 512, f"Model() of a frozen model took {cost} bytes of heap"
    assert size == len(model_bytes("person_detect"))
    assert align == 0, "frozen model is not 16-byte aligned"


def test_arena_modes(dev):
    r = dev.eval_last(dev.load_code("micro_speech_quantized") + """
need = m.arena_needed()
it1 = micronn.Interpreter(m)
s1 = it1.stats()
it2 = micronn.Interpreter(m, need + 1000)
arena = bytearray(need)
it3 = micronn.Interpreter(m, arena=arena)
outs = []
for it in (it1, it2, it3):
    it.input(0)[:] = bytes(range(256)) * 7 + bytes(168)
    it.invoke()
    outs.append(it.output(0).tolist())
print((need, s1['arena_size'], s1['total'], s1['persistent'] + s1['nonpersistent'], it1.arena_used(),
       it2.arena_size, it3.arena_size, outs[0] == outs[1] == outs[2], s1['needed']))
""")
    need, size1, total, total2, used, size2, size3, same, needed = r
    assert size1 == need and size3 == need and size2 == need + 1000
    assert total == total2 == used and 0 < total <= need
    assert needed <= need
    assert same


def test_arena_too_small_states_bytes(dev):
    r = dev.eval_last(dev.load_code("micro_speech_quantized") + """
need = m.arena_needed()
res = []
for kw in ({'arena_size': 1000}, {'arena': bytearray(2000)}):
    try:
        micronn.Interpreter(m, **kw)
        res.append(None)
    except MemoryError as e:
        res.append(str(e))
print((need, res))
""")
    need, msgs = r
    for msg in msgs:
        assert msg is not None, "no MemoryError for a too small arena"
        assert "arena too small" in msg and "need" in msg and "have" in msg, msg
        n = int(msg.split("need ")[1].split()[0])
        assert 0 < n <= need + 16, msg


def test_wrong_input_size_and_type(dev):
    r = dev.eval_last(dev.load_code("micro_speech_quantized") + """
import array
it = micronn.Interpreter(m)
t = it.input(0)
res = []
def attempt(f):
    try:
        f()
        res.append(None)
    except Exception as e:
        res.append(type(e).__name__ + ': ' + str(e))
def a(): t[:] = bytes(100)
def b(): t[:] = bytearray(1961)
def c(): t[:] = array.array('f', [0.0] * 1960)
def d(): t[:] = 'x' * 1960
def e(): t[5000] = 1
def f(): t[:] = [1, 2, 3]
def g(): t[:] = array.array('h', [0] * 980)
attempt(a); attempt(b); attempt(c); attempt(d); attempt(e); attempt(f); attempt(g)
t[:] = bytes(1960)
t[:] = array.array('b', [1] * 1960)
t[10:20] = bytes(10)
print(res + [t[9], t[10], t[20]])
""")
    a, b, c, d, e, f, g, t9, t10, t20 = r
    assert a.startswith("ValueError") and "1960" in a and "100" in a
    assert b.startswith("ValueError")
    assert c.startswith("TypeError") and "int8" in c, c
    assert d.startswith("TypeError")
    assert e.startswith("IndexError")
    assert f.startswith("ValueError")
    assert g.startswith("TypeError")
    assert (t9, t10, t20) == (1, 0, 1)


def test_float_tensor_rejects_int_array(dev):
    r = dev.eval_last(dev.load_code("hello_world_float") + """
import array
it = micronn.Interpreter(m)
try:
    it.input(0)[:] = array.array('i', [1])
    print('no error')
except TypeError as e:
    print(repr(str(e)))
""")
    assert "float32" in r


def test_interpreter_tables_list(dev):
    """Interpreter(tables=[...]) collects every table the firmware's kernels keep at prepare, what
    `micronn plan --board --write --tables` stores: hello_world_int8's three FULLY_CONNECTED
    kernel data blocks (MN_TABLE_KDATA, 20 bytes, more where a variant's data follows). Anything
    but a list is refused."""
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
t = []
it = micronn.Interpreter(m, tables=t)
try:
    micronn.Interpreter(m, tables=5)
    e = 'no error'
except TypeError as x:
    e = 'TypeError: ' + str(x)
print(([(a, b, c, len(d)) for a, b, c, d in t], e))
""")
    got, err = r
    assert [(sg, op, tag) for sg, op, tag, _ in got] == [(0, 0, 3), (0, 1, 3), (0, 2, 3)], got
    assert all(n >= 20 for _, _, _, n in got), got
    assert err.startswith("TypeError") and "list" in err, err


def test_profile(dev):
    r = dev.eval_last(dev.load_code("micro_speech_quantized") + """
it = micronn.Interpreter(m, profile=True)
it.invoke(); it.invoke()
p = it.profile()
rows = micronn.profile_report(it)
rows2 = micronn.profile_report(it, instructions_per_tick=5.95, cpu_hz=168000000)
try:
    micronn.Interpreter(m).profile()
    off = None
except RuntimeError as e:
    off = str(e)
print((p, len(rows), off))
""")
    prof, nrows, off = r
    assert [row[:3] for row in prof] == [(0, "RESHAPE", 2), (1, "DEPTHWISE_CONV_2D", 2),
                                         (2, "FULLY_CONNECTED", 2), (3, "SOFTMAX", 2)]
    assert all(row[3] >= 0 for row in prof) and sum(row[3] for row in prof) > 0
    assert nrows == 4 and "profile=True" in off


def test_helpers(dev):
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
it = micronn.Interpreter(m)
t = it.input(0)
q = micronn.quantize(t, [0.0, 1.0, 100.0, -100.0])
micronn.set_input(t, [1.0])
v = t[0]
dq = micronn.dequantize(t)
print((q, v, dq, micronn.top_k([3, 9, 1, 7], 2), micronn.argmax([1, 5, 5, 0])))
""")
    q, v, dq, top, am = r
    d = oracle.input_details(model_bytes("hello_world_int8"))[0]
    scale, zp = d["quantization"]
    assert q == [zp, int(np.clip(np.round(1.0 / scale) + zp, -128, 127)), 127, -128]
    assert v == q[1]
    assert abs(dq[0] - (v - zp) * scale) < 1e-6
    assert top == [(1, 9), (3, 7)] and am == 1


def test_load_file_and_bytes(dev):
    dev.put(model_bytes("hello_world_int8"), "hw.tflite")
    r = dev.eval_last("""
import micronn
m1 = micronn.load('hw.tflite')
m2 = micronn.load(open('hw.tflite', 'rb').read())
m3 = micronn.Model(memoryview(bytearray(open('hw.tflite', 'rb').read())))
it = micronn.Interpreter(open('hw.tflite', 'rb').read())
print((type(m1.buffer).__name__, m1.size, m2.size, m3.size, it.num_ops))
""")
    assert r == ("bytes", 2704, 2704, 2704, 3)


def test_load_unknown_name_says_what_exists(dev):
    r = dev.eval_last("""
import micronn
try:
    micronn.load('no_such_model')
    print(None)
except ValueError as e:
    print(repr(str(e)))
""")
    assert r is not None and "'no_such_model'" in r and "not built in" in r and "no such file" in r


def test_person_detect_memory(dev, board_spec):
    """person_detect's arena fits the board's heap; the Interpreter costs its arena plus a few
    hundred bytes; the dry run frees what it used. Prints the numbers (pytest -s)."""
    r = dev.eval_last(dev.load_code("person_detect") + """
import gc
def run():
    gc.collect()
    free0 = gc.mem_free()
    need = m.arena_needed()
    need_r = m.arena_needed(reuse_inputs=True)
    gc.collect()
    free1 = gc.mem_free()
    it = micronn.Interpreter(m, reuse_inputs=True)
    gc.collect()
    free2 = gc.mem_free()
    it.invoke()
    s = it.stats()
    return (free0, free1, free2, need, need_r, s['persistent'], s['nonpersistent'], s['arena_size'])
print(run())
""", timeout=600)
    free0, free1, free2, need, need_r, pers, nonpers, size = r
    print(f"\n{board_spec.name}: heap {free0} bytes free before; arena needed {need} "
          f"({need_r} with reuse_inputs: persistent {pers} + non-persistent {nonpers}); "
          f"Interpreter took {free0 - free2} bytes of heap; {free2} bytes free after")
    assert free1 == free0, "the dry run left memory allocated"
    assert size == need_r
    assert need_r <= free0 - free2 <= need_r + 1024
    if board_spec.heap_bytes:
        assert need_r < board_spec.heap_bytes


def test_profile_accounts_for_invoke(dev, board_spec):
    """The per-op ticks add up to (nearly) the whole invoke, measured with the same clock."""
    r = dev.eval_last(dev.load_code("person_detect") + """
def run():
    it = micronn.Interpreter(m, profile=True, reuse_inputs=True)
    it.input(0)[:] = bytes(9216)
    t0 = micronn.ticks()
    it.invoke()
    t1 = micronn.ticks()
    return (t1 - t0, sum(p[3] for p in it.profile()), micronn.PROFILE_CLOCK)
print(run())
""", timeout=600)
    total, ops, clock = r
    assert 0.95 * total <= ops <= total, r
    if clock == "cpu" and board_spec.instructions_per_tick:
        print(f"\n{board_spec.name}: person_detect invoke {int(total * board_spec.instructions_per_tick)} "
              f"instructions ({total} cycles)")


def test_interpreters_are_collected(dev):
    """Dropped Interpreters (and their arenas) are reclaimed by the GC: on NETDUINOPLUS2 a second
    person_detect arena only fits once the first one is gone."""
    r = dev.eval_last(dev.load_code("person_detect") + """
import gc
def one():
    it = micronn.Interpreter(m, reuse_inputs=True)
    t = it.input(0)
    t[:] = bytes(9216)
    it.invoke()
    return it.output(0).tolist()
def run():
    # One function call per Interpreter: a dropped object can linger in the caller's VM value
    # stack (the GC is conservative); a returned-from frame does not.
    outs = []
    for i in range(4):
        outs.append(one())
        gc.collect()
    return outs[0] == outs[3]
def measure():
    gc.collect()
    f0 = gc.mem_free()
    same = run()
    gc.collect()
    return (f0 - gc.mem_free(), same)
print(measure())
""", timeout=600)
    leaked, same = r
    assert same
    assert leaked < 512, f"{leaked} bytes not reclaimed"
