"""Delegation on the board: person_detect with its conv/depthwise subgraphs on the board's first
optimized kernel backend (mve on MPS3_AN547) and everything else on the reference kernels, at run
time (Interpreter(delegate=...)) and ahead of time (`micronn partition`); bit-exact with the
undelegated run and the oracle, with the profile split per backend."""
import numpy as np
import pytest

import oracle
from devhelp import model_bytes
from micronn_tools import partition

pytestmark = pytest.mark.needs_firmware(delegate=True)

RUN = """
import micronn, gc
backend = micronn.kernels()[0] if micronn.kernels() else None
def run(m, **kw):
    gc.collect()   # small boards: the previous run's arena must be gone first
    it = micronn.Interpreter(m, profile=True, **kw)
    with open('pd_in.bin', 'rb') as f:
        f.readinto(it.input(0))
    it.invoke()
    res = bytes(it.output(0)), it.variants(), it.backends(), [p[3] for p in it.profile()]
    it = None
    return res
"""


def _split(keys, ticks):
    out = {}
    for k, t in zip(keys, ticks):
        out[k] = out.get(k, 0) + t
    return out


def _input():
    return np.random.default_rng(11).integers(-128, 128, (1, 96, 96, 1)).astype(np.int8)


def _backend(dev):
    b = dev.eval_last("import micronn\nprint(micronn.kernels())")
    if not b:
        pytest.skip("firmware built with KERNELS=reference: no backend to delegate to")
    return b[0]


def _need_heap(board_spec, n):
    if board_spec.heap_bytes and board_spec.heap_bytes < n:
        pytest.skip(f"needs {n} bytes of heap (two person_detect arenas, or a partitioned model and "
                    f"its inner arena); this board has {board_spec.heap_bytes}")


def test_runtime_delegate_bit_exact_with_split(dev, board_spec):
    _need_heap(board_spec, 256 * 1024)
    backend = _backend(dev)
    x = _input()
    dev.put(x.tobytes(), "pd_in.bin")
    r = dev.eval_last(dev.load_code("person_detect") + RUN + """
plain = run(m, reference=True, reuse_inputs=True)
deleg = run(m, delegate=backend, reference=True, reuse_inputs=True)
print((plain[0], deleg[0], deleg[1], deleg[2], plain[3], deleg[3]))
""", timeout=600)
    plain_out, out, variants, backends, plain_ticks, ticks = r
    split = _split([b or "kernels" for b in backends], ticks)
    want = oracle.run(model_bytes("person_detect"), [x])[0].ravel()
    assert list(np.frombuffer(out, np.int8)) == list(want)
    assert plain_out == out
    # the 28 conv/depthwise ops run on the backend with its variants, the other 3 on reference
    assert backends.count(backend) == 28 and backends.count(None) == 3
    assert all(v.startswith(backend + ".") for v, b in zip(variants, backends) if b)
    assert all(v == "reference" for v, b in zip(variants, backends) if b is None)
    assert set(split) == {backend, "kernels"} and min(split.values()) > 0
    if board_spec.instructions_per_tick is not None:
        # the backend is faster: asserted where ticks count instructions (QEMU -icount); on the
        # UNIX build they are wall-clock time on a shared host, where one preempted op decides
        assert sum(ticks) < sum(plain_ticks)
    print(f"\n{backend} delegate on person_detect: ticks per backend {split}, "
          f"all-reference run {sum(plain_ticks)}")


STATEFUL = RUN + """
def run2(m, runs, **kw):   # invokes without reset: state (SVDF) carries over
    gc.collect()
    it = micronn.Interpreter(m, profile=True, **kw)
    outs = []
    for k in range(runs):
        with open('pd_in.bin', 'rb') as f:
            f.readinto(it.input(0))
        it.invoke()
        outs.append(bytes(it.output(0)))
    res = outs, it.variants(), [p[3] for p in it.profile()], [o[0] for o in m.ops()]
    it = None
    return res
"""


@pytest.mark.parametrize("name", ["keyword_scrambled", "person_detect"])
def test_partitioned_model_bit_exact(dev, board_spec, name):
    backend = _backend(dev)
    original = model_bytes(name)
    data, summary = partition.partition(original, backend)
    _need_heap(board_spec, max(256 * 1024, 2 * len(data)))
    d = oracle.input_details(original)[0]
    info = np.iinfo(d["dtype"])
    x = np.random.default_rng(12).integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])
    dev.put(data, "part.tflite")
    dev.put(x.tobytes(), "pd_in.bin")
    # keyword_scrambled: its SVDF state must carry over alike, checked against the unpartitioned
    # model's second invoke; a stateless model's one invoke is checked against the oracle alone
    stateful = name == "keyword_scrambled"
    runs = 2 if stateful else 1
    plain_run = f"a = run2(m0, {runs}, reference=True)[0]\n" if stateful else "a = None\n"
    r = dev.eval_last(dev.load_code(name, "m0") + STATEFUL + plain_run + f"""
m0 = None
m = micronn.load_file('part.tflite')
outs, variants, ticks, names = run2(m, {runs}, reference=True)
print((a, outs, names, variants, ticks))
""", timeout=600)
    plain, outs, names, variants, ticks = r
    dtype = oracle.output_details(original)[0]["dtype"]
    want = oracle.run(original, [x])[0].ravel()
    assert list(np.frombuffer(outs[0], dtype)) == list(want)
    assert not stateful or outs == plain   # both invokes, state included
    assert names.count("micronn_subgraph") == len(summary)
    assert [v for v in variants if ":" in v] == [f"{backend}:subgraph{s['subgraph']}" for s in summary]
    split = _split([v.split(":")[0] if ":" in v else "kernels" for v in variants], ticks)
    assert set(split) == {backend, "kernels"} and min(split.values()) > 0
    print(f"\npartitioned {name} ({backend}): ticks per backend {split}")


def test_unknown_delegate_names_the_delegates(dev):
    """A wrong name is a ValueError that lists the names the engine takes (every build partitions
    for every backend, compiled in or not)."""
    r = dev.eval_last(dev.load_code("hello_world_int8") + """
try:
    micronn.Interpreter(m, delegate='npu')
    print(repr('accepted'))
except ValueError as e:
    print(repr(str(e)))
""")
    assert r == "no delegate 'npu' (delegates: mve, dsp, generic)"
