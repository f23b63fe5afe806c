"""Generated models (tests/gen) on the board: a fixed-seed batch run by the firmware's engine (the
board's optimized kernel variants: dsp on MPS2_AN386, mve on MPS3_AN547, generic on VIRT_RV32)
and compared with the oracle (LiteRT reference kernels; TFLM for int8 SVDF with int8 weights_time)
by tests/gen/run.py's rules: integer outputs bit-exact, float32 within 1e-5 relative (+1e-5 x the
output's largest magnitude).

The UART moves ~14 KB/s, so the batch travels in one file each way: GEN_DEVICE_COUNT models
(default 100, from seed GEN_DEVICE_SEED) with their inputs in one upload, one exec that runs them
all (each model read into its own bytearray, its record skipped on an error so the others still
run), one download of every output with a status per model. Models the host engine does not run
bit-exactly (a triaged known difference, tests/gen/test_gen.py) are left out, so a failure here is
one of the board's kernels.
"""
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.gen import generate, run  # noqa: E402

SEED = int(os.environ.get("GEN_DEVICE_SEED", "500000"))
COUNT = int(os.environ.get("GEN_DEVICE_COUNT", "100"))
BATCH = 50

_BOARD_CODE = """
import micronn, gc, struct
f = open('gen_in.bin', 'rb')
o = open('gen_out.bin', 'wb')
n = struct.unpack('<I', f.read(4))[0]
pos = 4
ok = 0
for k in range(n):
    f.seek(pos)
    rec, mlen, inv = struct.unpack('<III', f.read(12))
    try:
        buf = bytearray(mlen)
        f.readinto(buf)
        m = micronn.Model(buf)
        it = micronn.Interpreter(m)
        outs = []
        for j in range(inv):
            for i in range(it.num_inputs):
                t = it.input(i)
                assert f.readinto(t) == t.nbytes
            it.invoke()
            for i in range(it.num_outputs):
                outs.append(bytes(it.output(i)))
        o.write(struct.pack('<BI', 0, sum(len(b) for b in outs)))
        for b in outs:
            o.write(b)
        ok += 1
    except Exception as e:
        msg = ('%s: %s' % (type(e).__name__, e)).encode()[:200]
        o.write(struct.pack('<BI', 1, len(msg)))
        o.write(msg)
    it = m = buf = outs = None
    gc.collect()
    pos += rec
o.close()
f.close()
print('done', ok)
"""


def _cases():
    """(seed, case, oracle outputs) for COUNT seeds whose host run is clean."""
    out = []
    for seed in range(SEED, SEED + COUNT):
        ir = generate.generate(seed)
        case = run.make_case(ir)
        r = run.check_case(case, configs=["greedy"])
        if r.status != "ok":
            continue
        out.append((seed, case, run.run_oracle(case)))
    return out


def _pack(batch):
    recs = []
    for seed, case, _ in batch:
        body = case.model + b"".join(np.ascontiguousarray(x).tobytes() for inv in case.inputs for x in inv)
        rec = struct.pack("<III", 12 + len(body), len(case.model), len(case.inputs)) + body
        recs.append(rec)
    return struct.pack("<I", len(recs)) + b"".join(recs)


def _unpack(raw, batch):
    res, pos = [], 0
    for seed, case, ref in batch:
        status, n = struct.unpack_from("<BI", raw, pos)
        pos += 5
        body = raw[pos:pos + n]
        pos += n
        if status:
            res.append(body.decode(errors="replace"))
            continue
        got, off = [], 0
        for inv in ref:
            g = []
            for r in inv:
                nb = r.size * r.dtype.itemsize
                g.append(np.frombuffer(body[off:off + nb], dtype=r.dtype).reshape(r.shape))
                off += nb
            got.append(g)
        res.append(got)
    return res


@pytest.fixture(scope="module")
def cases():
    return _cases()


def test_generated_batch(dev, cases):
    assert len(cases) >= COUNT * 0.9, "most generated models must run cleanly on the host first"
    fams = {generate.generate(s).family for s, _, _ in cases}
    assert fams == set(generate.FAMILIES)
    bad, compared = [], 0
    for b0 in range(0, len(cases), BATCH):
        batch = cases[b0:b0 + BATCH]
        dev.put(_pack(batch), "gen_in.bin")
        out = dev.exec(_BOARD_CODE, timeout=280)
        assert "done" in out, out
        raw = dev.board.get("gen_out.bin")
        dev.files.append("gen_out.bin")
        for (seed, case, ref), got in zip(batch, _unpack(raw, batch)):
            if isinstance(got, str):
                bad.append(f"seed {seed}: the board refused or failed: {got}")
                continue
            d = run.compare(ref, got)
            compared += sum(r.size for inv in ref for r in inv)
            if d:
                bad.append(f"seed {seed} ({generate.generate(seed).family}): {d}\n{case.desc}")
    assert compared > 20 * len(cases), compared
    assert not bad, f"{len(bad)} of {len(cases)} generated models differ on the board:\n" + "\n".join(bad)
