"""Per-op tables stored in the model (micronn_quant_v1 metadata, `micronn plan --write --tables`):
the engine compares every stored table with what its prepare computes and uses the stored copy in
place when identical, so the arena's persistent part shrinks while every output stays bit-exact
(every planner, optimized and reference kernels). Stored tables are untrusted: a changed byte,
a bad offset or a truncated buffer only costs the arena copy back."""
import struct

import numpy as np
import pytest

import oracle
MODELS = ["hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
          "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "simple_add_model.tflite",
          "trained_lstm_int8.tflite"]


def sample_inputs(engine, md, n=2):
    """n sets of random inputs (one array per model input) in each input's range."""
    it = engine.Interpreter(engine.Model(md))
    rng = np.random.default_rng(11)
    sets = []
    for _ in range(n):
        one = []
        for i in range(it.model.num_inputs):
            d = it.input_details(i)
            if np.dtype(d["dtype"]).kind == "f":
                one.append(rng.normal(0, 1, size=d["shape"]).astype(np.float32))
            else:
                info = np.iinfo(d["dtype"])
                one.append(rng.integers(max(info.min, -3000), min(info.max, 3000) + 1,
                                        size=d["shape"]).astype(d["dtype"]))
        sets.append(one)
    return sets


def assert_same(a, b, what):
    assert a.shape == b.shape, what
    if np.issubdtype(b.dtype, np.floating):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        assert np.array_equal(a, b), what

# models whose kernels keep per-channel tables, variant data or pointer-free kernel data
# (FULLY_CONNECTED, SVDF, QUANTIZE, SOFTMAX: MN_TABLE_KDATA); simple_add's ADD keeps pointers
WITH_TABLES = {"hello_world_int8.tflite", "hello_world_float.tflite", "person_detect.tflite",
               "keyword_scrambled.tflite", "micro_speech_quantized.tflite", "trained_lstm_int8.tflite"}
# with reference kernels only (no variant data): the same (kernel data does not depend on the
# variant, which the op record keeps)
REFERENCE_TABLES = WITH_TABLES


def tables_expected(engine, reference=False):
    """Models with tables to store, for this host library (KERNELS=reference: no backend)."""
    return REFERENCE_TABLES if reference or not engine.backends() else WITH_TABLES


def with_tables(name, **kw):
    from micronn_tools import plan
    md = oracle.read_model(name)
    new, n, nbytes = plan.with_tables(md, **kw)
    return md, new, n, nbytes


def run(engine, model_bytes, inputs, **kw):
    it = engine.Interpreter(engine.Model(model_bytes), **kw)
    for i, x in enumerate(inputs):
        it.set_input(i, x)
    it.reset()
    it.invoke()
    return it, [it.output(k) for k in range(it.model.num_outputs)]


def blob_of(engine, model_bytes):
    """(position of the micronn_quant_v1 buffer in the file, its bytes)."""
    from ai_edge_litert import schema_py_generated as s
    m = s.Model.GetRootAsModel(model_bytes, 0)
    for i in range(m.MetadataLength()):
        if m.Metadata(i).Name() == engine.TABLES_METADATA.encode():
            data = m.Buffers(m.Metadata(i).Buffer()).DataAsNumpy()
            blob = data.tobytes()
            pos = model_bytes.find(blob)
            assert pos >= 0 and pos % 16 == 0
            return pos, blob
    raise AssertionError("no tables metadata")


@pytest.mark.parametrize("name", MODELS)
def test_tables_bit_exact_and_smaller(engine, name):
    md, new, n, nbytes = with_tables(name)
    assert (n > 0) == (name in tables_expected(engine))
    for inputs in sample_inputs(engine, md):
        expect = oracle.run(md, inputs)
        for planner in ("greedy", "no_reuse", "offline"):
            for reference in (False, True):
                it0, _ = run(engine, md, inputs, planner=planner, reference=reference)
                it1, out = run(engine, new, inputs, planner=planner, reference=reference)
                for k, e in enumerate(expect):
                    assert_same(out[k], e, "%s output %d (%s, reference=%s)" % (name, k, planner, reference))
                p0, p1 = it0.stats()["persistent"], it1.stats()["persistent"]
                if name in tables_expected(engine, reference):
                    assert p1 < p0, (planner, reference, p0, p1)
                else:
                    assert p1 == p0, (planner, reference, p0, p1)
    if name in tables_expected(engine):
        # the stored bytes are at least what the arena saves (blocks are rounded up to 16)
        it0, _ = run(engine, md, sample_inputs(engine, md, 1)[0])
        it1, _ = run(engine, new, sample_inputs(engine, md, 1)[0])
        saved = it0.stats()["persistent"] - it1.stats()["persistent"]
        assert 0 < saved <= nbytes + 16 * n


@pytest.mark.parametrize("name", sorted(WITH_TABLES))
@pytest.mark.parametrize("reuse_inputs", [False, True])
def test_tables_arena_exact(engine, name, reuse_inputs):
    """The sizing dry run compares the stored tables too: its figure is the real need."""
    _, new, _, _ = with_tables(name)
    m = engine.Model(new)
    need = m.arena_needed(reuse_inputs=reuse_inputs)
    it = engine.Interpreter(m, arena_size=need, reuse_inputs=reuse_inputs)
    assert it.stats()["needed"] == need
    with pytest.raises(engine.MicronnError) as ei:
        engine.Interpreter(m, arena_size=need - 16, reuse_inputs=reuse_inputs)
    assert ei.value.status == engine.ERR_ARENA


def test_tables_per_op_persistent(engine):
    """inspect's per-op persistent bytes: the ops whose tables are stored need less, none more."""
    md, new, _, _ = with_tables("person_detect.tflite")
    p0 = [r["persistent"] for r in engine.Interpreter(engine.Model(md), profile=True).profile()]
    p1 = [r["persistent"] for r in engine.Interpreter(engine.Model(new), profile=True).profile()]
    assert len(p0) == len(p1)
    assert all(b <= a for a, b in zip(p0, p1))
    assert sum(b < a for a, b in zip(p0, p1)) >= 28   # every conv, depthwise conv and the FC


def test_changed_table_is_not_used(engine):
    """One changed byte in a stored table: that table is computed into the arena again (more
    persistent bytes than with intact tables, fewer than without), outputs unchanged."""
    name = "person_detect.tflite"
    md, new, _, _ = with_tables(name)
    pos, blob = blob_of(engine, new)
    count = struct.unpack_from("<I", blob, 0)[0]
    sg, tag, op, off, nbytes = struct.unpack_from("<HHIII", blob, 4)
    assert count > 0 and nbytes > 0
    bad = bytearray(new)
    bad[pos + off + nbytes // 2] ^= 0x01
    inputs = sample_inputs(engine, md, 1)[0]
    it_ok, out_ok = run(engine, new, inputs)
    it_bad, out_bad = run(engine, bytes(bad), inputs)
    it_none, out_none = run(engine, md, inputs)
    for a, b, c in zip(out_ok, out_bad, out_none):
        assert_same(b, c, "changed table")
        assert_same(a, c, "intact tables")
    pers = [it.stats()["persistent"] for it in (it_ok, it_bad, it_none)]
    assert pers[0] < pers[1] < pers[2], pers


@pytest.mark.parametrize("damage", ["offset", "bytes", "count", "truncated", "other_op", "other_tag"])
def test_hostile_tables_metadata(engine, damage):
    """Entries pointing outside the buffer, a count larger than the buffer, or tables filed under
    another op or tag are never used (and never read out of bounds: ASan build)."""
    name = "micro_speech_quantized.tflite"   # variant data and multiplier tables
    md, new, _, _ = with_tables(name)
    pos, blob = blob_of(engine, new)
    count = struct.unpack_from("<I", blob, 0)[0]
    b = bytearray(blob)
    for i in range(count):
        e = 4 + 16 * i
        sg, tag, op, off, nbytes = struct.unpack_from("<HHIII", b, e)
        if damage == "offset":
            off = len(b) - 4   # past the end for every table (and misaligned)
        elif damage == "bytes":
            off, nbytes = 0xFFFFFFF0, nbytes
        elif damage == "other_op":
            op += 1000
        elif damage == "other_tag":
            tag += 7
        struct.pack_into("<HHIII", b, e, sg, tag, op, off, nbytes)
    if damage == "count":
        struct.pack_into("<I", b, 0, 0x7FFFFFFF)
    from micronn_tools import plan
    blob2 = bytes(b[:24]) if damage == "truncated" else bytes(b)
    bad = plan.with_metadata(md, {engine.TABLES_METADATA: blob2})
    inputs = sample_inputs(engine, md, 1)[0]
    it_bad, out_bad = run(engine, bad, inputs)
    it_none, out_none = run(engine, md, inputs)
    for a, c in zip(out_bad, out_none):
        assert_same(a, c, damage)
    assert it_bad.stats()["persistent"] == it_none.stats()["persistent"]
    m = engine.Model(bad)
    assert m.arena_needed() == it_bad.stats()["needed"]


def test_tables_of_delegated_subgraphs(engine):
    """A partitioned model (micronn_subgraph ops running other subgraphs): the inner interpreters'
    tables are stored too (keyed by subgraph), and the whole arena shrinks; outputs unchanged."""
    from micronn_tools import partition, plan
    data = oracle.read_model("person_detect.tflite")
    parted, summary = partition.partition(data, "generic")
    assert summary
    new, n, nbytes = plan.with_tables(parted)
    tables = engine.op_tables(engine.Model(new))
    # every conv is inside (the main subgraph keeps the SOFTMAX's kernel data)
    assert {sg for sg, _, tag, _ in tables if tag != engine.TABLE_KDATA} == {s["subgraph"] for s in summary}
    x = sample_inputs(engine, data, 1)[0]
    it0, out0 = run(engine, parted, x)
    it1, out1 = run(engine, new, x)
    _, want = run(engine, data, x)
    for a, b, c in zip(out0, out1, want):
        assert_same(a, c, "partitioned")
        assert_same(b, c, "partitioned, stored tables")
    # every stored table is used in place: the arena shrinks by its bytes (blocks rounded to 16)
    saved = it0.stats()["persistent"] - it1.stats()["persistent"]
    assert nbytes - 16 <= saved <= nbytes + 16 * n, (saved, nbytes, n)


def test_kernel_data_stored(engine):
    """keyword_scrambled (SVDF, FULLY_CONNECTED, QUANTIZE, SOFTMAX): every op's kernel data is
    pointer-free and stored, so with the tables no op keeps arena bytes, on the host's generic
    kernels as with the reference ones; outputs unchanged. A stored kernel data block whose bytes
    differ (another model's op) is not used."""
    name = "keyword_scrambled.tflite"
    md, new, n, _ = with_tables(name)
    tables = engine.op_tables(engine.Model(md))
    assert {tag for _, _, tag, _ in tables} == {engine.TABLE_KDATA} and n == 15
    prof = engine.Interpreter(engine.Model(new), profile=True).profile()
    assert [r["persistent"] for r in prof] == [0] * 15
    before = engine.Interpreter(engine.Model(md), profile=True).profile()
    assert all(r["persistent"] > 0 for r in before)
    # op 1's kernel data filed under op 3 (both SVDF, other scales): op 3 keeps its own
    pos, blob = blob_of(engine, new)
    b = bytearray(new)
    for i in range(struct.unpack_from("<I", blob, 0)[0]):
        sg, tag, op, off, nbytes = struct.unpack_from("<HHIII", blob, 4 + 16 * i)
        if op in (1, 3):
            struct.pack_into("<HHIII", b, pos + 4 + 16 * i, sg, tag, 4 - op, off, nbytes)
    swapped = engine.Interpreter(engine.Model(bytes(b)), profile=True).profile()
    assert [r["persistent"] > 0 for r in swapped][:4] == [False, True, False, True]
    for inputs in sample_inputs(engine, md):
        expect = oracle.run(md, inputs)
        for model in (new, bytes(b)):
            _, out = run(engine, model, inputs)
            assert_same(out[0], expect[0], name)
