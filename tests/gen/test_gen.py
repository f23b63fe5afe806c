"""Generated models (tests/gen) against the oracle: a fixed-seed deterministic slice, and every saved
regression (tests/gen/regressions/*.tflite with its inputs and metadata).

The slice (GEN_CI_SEED, GEN_CI_COUNT: seeds 1..600 by default) runs in `make test-engine` under
ASan+UBSan; every model must give the oracle's outputs under every host configuration of micronn
(tests/gen/run.py CONFIGS), and none may be refused by either side. Seeds whose failure is a
triaged known difference are listed in KNOWN with the reason (xfail, strict: when fixed, the
entry must go).
"""
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.gen import __main__ as cli, generate, run  # noqa: E402

REGRESSIONS = Path(__file__).parent / "regressions"
SEED = int(os.environ.get("GEN_CI_SEED", "1"))
COUNT = int(os.environ.get("GEN_CI_COUNT", "600"))
CHUNK = 50
# seed -> reason (triaged; see tests/gen/README.md)
KNOWN = {}


@pytest.mark.parametrize("start", range(SEED, SEED + COUNT, CHUNK))
def test_generated_slice(engine, start):
    bad = []
    for seed in range(start, min(start + CHUNK, SEED + COUNT)):
        if seed in KNOWN:
            continue
        s, fam, status, detail, configs, sat, kinds = cli.check_seed(seed)
        if status not in run.AGREE:
            bad.append(f"seed {seed} ({fam}, {'/'.join(kinds)}): {status}: {detail[:400]}")
    assert not bad, "\n".join(bad)


def test_slice_is_not_trivial(engine):
    """The slice covers every family and the ops it is meant to: a generator that degenerated to
    tiny graphs would pass the comparisons without testing anything."""
    fams, kinds, n_ops = set(), set(), 0
    for seed in range(SEED, SEED + min(COUNT, 200)):
        ir = generate.generate(seed)
        fams.add(ir.family)
        kinds.update(ir.kinds())
        n_ops += len(ir.nodes)
    assert fams == set(generate.FAMILIES)
    assert {"conv", "dw", "fc", "add", "concat", "softmax", "svdf", "mean", "pad", "sslice"} <= kinds
    assert n_ops / min(COUNT, 200) > 3


def _regressions():
    return sorted(p.with_suffix("") for p in REGRESSIONS.glob("*.tflite"))


@pytest.mark.parametrize("path", _regressions(), ids=lambda p: p.name)
def test_regression(engine, path):
    case, meta = cli.load_case(path)
    if meta.get("xfail"):
        pytest.xfail(meta["xfail"]) if run.check_case(case).status != "ok" else pytest.fail(
            f"{path.name} passes now: remove its xfail ({meta['xfail'][:80]}...)")
    r = run.check_case(case)
    assert r.status in run.AGREE, f"{path.name}: {r.status}\n{r.detail}\n{meta.get('ir', '')}"
