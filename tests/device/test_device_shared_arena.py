"""Several Interpreters in one micronn.Arena (persistent parts stacked, activations shared) and
split arenas (persistent_arena=): outputs identical to separate Interpreters, exact sizes, stale
tensors refused."""
import pytest

# Two arenas at once (the separate reference Interpreters, then the shared or split ones) and
# person_detect's input: NETDUINOPLUS2's 112 KB heap holds one person_detect arena, not two.
HEAP_NEEDED = {"person_detect": 200_000, "keyword_scrambled": 60_000}


def _need_heap(board_spec, *models):
    n = sum(HEAP_NEEDED[m] for m in models)
    if board_spec.heap_bytes and board_spec.heap_bytes < n:
        pytest.skip(f"needs about {n} bytes of heap for {' + '.join(models)} in two arenas; this board "
                    f"has {board_spec.heap_bytes}")

# person_detect and keyword_scrambled (SVDF state: the persistent part must survive the other
# model's invokes), alternating under heap_lock, against one Interpreter each.
_SETUP = """
import micronn, micropython
xa = bytes((i * 7 + 3) & 0xff for i in range(96 * 96))
xb = bytearray(192)
for i in range(96):
    v = (i * 300 - 14000) & 0xffff
    xb[2 * i] = v & 0xff
    xb[2 * i + 1] = v >> 8
"""


def test_two_models_alternate_in_one_arena(dev, board_spec):
    _need_heap(board_spec, "person_detect", "keyword_scrambled")
    r = dev.eval_last(dev.load_code("person_detect", "pd") + dev.load_code("keyword_scrambled", "kw") + _SETUP + """
def run():
    ra = micronn.Interpreter(pd)
    rb = micronn.Interpreter(kw)
    ref = []
    for k in range(3):
        ra.input(0)[:] = xa
        ra.invoke()
        rb.input(0)[:] = xb
        rb.invoke()
        ref.append((bytes(ra.output(0)), bytes(rb.output(0))))
    sa, sb = ra.stats(), rb.stats()
    seps = (sa['persistent'], sa['nonpersistent'], sb['persistent'], sb['nonpersistent'],
            ra.arena_size, rb.arena_size)
    del ra, rb
    size = micronn.arena_size(pd, kw)
    shared = micronn.Arena(size)
    a = micronn.Interpreter(pd, arena=shared)
    b = micronn.Interpreter(kw, arena=shared)
    ta, oa, tb, ob = a.input(0), a.output(0), b.input(0), b.output(0)
    got_a = [bytearray(2) for k in range(3)]
    got_b = [bytearray(8) for k in range(3)]
    k = 0
    micropython.heap_lock()
    try:
        while k < 3:
            ta.write(xa)
            a.invoke()
            oa.readinto(got_a[k])
            tb.write(xb)
            b.invoke()
            ob.readinto(got_b[k])
            k += 1
    finally:
        micropython.heap_unlock()
    same = all(bytes(got_a[k]) == ref[k][0] and bytes(got_b[k]) == ref[k][1] for k in range(3))
    st = shared.stats()
    return (same, seps, size, st['persistent'], st['nonpersistent'], st['used'], st['size'],
            a.stats()['persistent'], b.stats()['persistent'])
print(run())
""", timeout=600)
    same, seps, size, sp, snp, used, ssize, pa2, pb2 = r
    pa, npa, pb, npb, arena_a, arena_b = seps
    assert same, "outputs in the shared arena differ from separate Interpreters"
    # persistent parts stacked, the larger non-persistent part once
    assert (pa2, pb2) == (pa, pb)
    assert (sp, snp, used) == (pa + pb, max(npa, npb), pa + pb + max(npa, npb))
    assert size <= used + 15 + 16 and ssize >= used
    assert size < arena_a + arena_b - min(npa, npb) + 32


def test_stale_tensors_refused(dev, board_spec):
    _need_heap(board_spec, "person_detect", "keyword_scrambled")
    r = dev.eval_last(dev.load_code("person_detect", "pd") + dev.load_code("keyword_scrambled", "kw") + _SETUP + """
def err(f):
    try:
        f()
    except RuntimeError as e:
        return str(e)
    return None
shared = micronn.Arena(micronn.arena_size(pd, kw))
a = micronn.Interpreter(pd, arena=shared)
b = micronn.Interpreter(kw, arena=shared)
a.input(0)[:] = xa
a.invoke()
ok = a.output(0)[0]
b.input(0)[:] = xb
e1 = err(lambda: a.output(0)[0])          # b's input overwrote a's activations
b.invoke()
e2 = err(lambda: bytes(a.output(0)))
e3 = err(a.invoke)                         # a's input is gone too
fresh = b.output(0)[0]
a.input(0)[:] = xa                         # writing the input takes the arena back
a.invoke()
print((e1, e2, e3, a.output(0)[0] == ok, err(lambda: b.output(0)[0])))
""", timeout=600)
    e1, e2, e3, again, e4 = r
    for e in (e1, e2, e4):
        assert e and "stale tensor" in e
    assert e3 and "write them again" in e3
    assert again


def test_shared_arena_too_small(dev, board_spec):
    _need_heap(board_spec, "person_detect", "keyword_scrambled")
    r = dev.eval_last(dev.load_code("person_detect", "pd") + dev.load_code("keyword_scrambled", "kw") + """
n = micronn.arena_size(pd, kw)
shared = micronn.Arena(n - 48)
msg = None
try:
    a = micronn.Interpreter(pd, arena=shared)
    b = micronn.Interpreter(kw, arena=shared)
except MemoryError as e:
    msg = str(e)
print((n, msg))
""", timeout=600)
    n, msg = r
    assert msg and msg.startswith("shared arena too small: need %d bytes" % n), msg


@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled"])
def test_split_arenas(dev, board_spec, name):
    _need_heap(board_spec, name)
    r = dev.eval_last(dev.load_code(name) + _SETUP + """
x = xa if m.inputs()[0][2] == 'int8' else xb
def outs(it):
    it.input(0)[:] = x
    it.invoke()
    it.invoke()
    return bytes(it.output(0))
d = m.arena_needed(detail=True)
pers = bytearray(d['persistent'] + 15)
act = bytearray(max(d['nonpersistent'], d['temp_peak']) + 15)
it = micronn.Interpreter(m, arena=act, persistent_arena=pers)
auto = micronn.Interpreter(m, persistent_arena=d['persistent'] + 15)
ref = micronn.Interpreter(m)
small = None
try:
    micronn.Interpreter(m, arena=act, persistent_arena=bytearray(d['persistent'] - 16))
except MemoryError as e:
    small = str(e)
print((outs(it) == outs(ref), outs(auto) == outs(ref), it.stats()['persistent'] == ref.stats()['persistent'],
       len(pers) + len(act) <= ref.arena_size + 15, auto.arena_size == len(act), small))
""", timeout=600)
    same, same_auto, pers_same, smaller, auto_size, small = r
    assert same and same_auto and pers_same and smaller and auto_size
    assert small and "persistent arena too small" in small
