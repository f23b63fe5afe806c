"""The model, the weights and the arena cannot change under the engine (issue 9, items 2, 3, 8):
a writable model buffer is copied once into bytes the Model owns, micronn.load gives an immutable
model without doubling the heap, constant tensors are read-only, a resized user arena is refused,
and integers a tensor's dtype cannot hold raise instead of wrapping."""
import pytest

from devhelp import model_bytes

HW = "hello_world_int8"
SETTERS = """
def seti(x, i, v):
    x[i] = v
def setall(x, v):
    x[:] = v
def setrange(x, a, b, v):
    x[a:b] = v
"""


def test_writable_model_buffer_is_copied_and_immutable(dev):
    r = dev.eval_last(dev.load_code(HW, "src") + """
import uctypes
b = bytearray(src.buffer)
m = micronn.Model(b)
copied = m.address != uctypes.addressof(b)
kind = type(m.buffer).__name__
try:
    m.buffer[0] = 1
    ro = False
except TypeError:
    ro = True
it = micronn.Interpreter(m)
it.input(0)[0] = 37
it.invoke()
before = it.output(0)[0]
b[:] = b''                  # the caller's buffer shrinks: the model must not care
it.invoke()
after = it.output(0)[0]
it2 = micronn.Interpreter(m)  # and a new Interpreter still works from the model's own copy
it2.input(0)[0] = 37
it2.invoke()
mv = micronn.Model(memoryview(bytearray(src.buffer)))
ref = micronn.Model(src.buffer)  # an immutable buffer is referenced, not copied
print((copied, kind, ro, before, after, it2.output(0)[0], type(mv.buffer).__name__,
       ref.buffer is src.buffer, ref.address == uctypes.addressof(src.buffer), m.address % 8))
""")
    copied, kind, ro, before, after, again, mvkind, same, same_addr, align = r
    assert copied and kind == "bytes" and ro and mvkind == "bytes"
    assert before == after == again
    assert same and same_addr
    assert align == 0


def test_load_file_is_immutable_and_single_copy(dev):
    size = len(model_bytes("micro_speech_quantized"))
    dev.put(model_bytes("micro_speech_quantized"), "ms.tflite")
    r = dev.eval_last("""
import gc, micronn
gc.collect()
f0 = gc.mem_free()
m = micronn.load('ms.tflite')
gc.collect()
f1 = gc.mem_free()
print((type(m.buffer).__name__, m.size, f0 - f1))
""")
    kind, n, cost = r
    assert kind == "bytes" and n == size
    # one block of the file's size (+ the Model object and GC rounding), not two
    assert cost < size + 1024, f"loading a {size}-byte model took {cost} bytes of heap"


def test_constant_tensors_are_read_only(dev):
    r = dev.eval_last(dev.load_code(HW) + SETTERS + """
it = micronn.Interpreter(m)
res = []
for i in range(m.num_tensors):
    t = it.tensor(i)
    if not t.constant:
        continue
    before = bytes(t)
    errs = []
    for f in (lambda: seti(t, 0, 1), lambda: t.fill(0), lambda: setall(t, bytes(t.nbytes)),
              lambda: seti(memoryview(t), 0, 1), lambda: seti(t[:], 0, 1)):
        try:
            f()
            errs.append(None)
        except TypeError:
            errs.append('TypeError')
    res.append((i, errs, bytes(t) == before))
x = it.input(0)
memoryview(x)[0] = 5     # activations stay writable
x[:][0] += 1
print((res, x[0], it.input(0).constant))
""")
    res, x0, in_const = r
    assert res, "hello_world_int8 has constant tensors"
    for i, errs, same in res:
        assert errs == ["TypeError"] * 5, (i, errs)
        assert same, f"constant tensor {i} changed"
    assert x0 == 6 and in_const is False


def test_out_of_range_ints_raise(dev):
    r = dev.eval_last(dev.load_code(HW) + dev.load_code("keyword_scrambled", "k") + SETTERS + """
def tryset(t, f):
    try:
        f()
        return 'ok'
    except OverflowError:
        return 'OverflowError'
res = []
t = micronn.Interpreter(m).input(0)          # int8
t[0] = 5
for v in (127, -128, 128, -129, 1000, 2 ** 40, -2 ** 70):
    res.append(tryset(t, lambda: seti(t, 0, v)))
res.append(tryset(t, lambda: setrange(t, 0, 1, [200])))
res.append(tryset(t, lambda: t.fill(-300)))
res.append(t[0])
s = micronn.Interpreter(k).input(0)          # int16
s[1] = 7
for v in (32767, -32768, 32768, -32769, 70000):
    res.append(tryset(s, lambda: seti(s, 1, v)))
before = bytes(s[:3])
res.append(tryset(s, lambda: setrange(s, 0, 3, [1, 2, 40000])))
res.append((s.dtype, s[1], bytes(s[:3]) == before))
print(res)
""")
    assert r == ["ok", "ok", "OverflowError", "OverflowError", "OverflowError", "OverflowError",
                 "OverflowError", "OverflowError", "OverflowError", -128,
                 "ok", "ok", "OverflowError", "OverflowError", "OverflowError", "OverflowError",
                 ("int16", -32768, True)]


def test_resized_user_arena_is_refused(dev):
    r = dev.eval_last(dev.load_code(HW) + """
arena = bytearray(m.arena_needed())
it = micronn.Interpreter(m, arena=arena)
t = it.input(0)
t[0] = 37
it.invoke()
good = it.output(0)[0]
arena.extend(bytes(64))     # reallocates: the engine's memory moves away
res = []
for f in (it.invoke, lambda: t[0], lambda: it.output(0), it.stats, lambda: t.shape):
    try:
        f()
        res.append('ok')
    except RuntimeError as e:
        res.append('resized' in str(e))
arena2 = bytearray(m.arena_needed())
it2 = micronn.Interpreter(m, arena=arena2)
arena2[-1:] = b''           # shrinking in place is refused too
try:
    it2.invoke()
    shrunk = 'ok'
except RuntimeError:
    shrunk = 'RuntimeError'
it3 = micronn.Interpreter(m)
it3.input(0)[0] = 37
it3.invoke()
print((res, shrunk, repr(it).startswith('<Interpreter'), good == it3.output(0)[0]))
""")
    res, shrunk, printable, same = r
    assert res == [True] * 5 and shrunk == "RuntimeError" and printable and same
