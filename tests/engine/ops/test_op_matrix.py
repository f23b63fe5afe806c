"""The support matrix (engine/mn_ops.h: op x dtype combination) is true: every combination it
claims has a model builder (models_*.py CASES, also what tools/gen_op_models.py writes) whose
model has exactly that dtype signature and runs bit-exact (float32 within 1e-5) against LiteRT's
reference kernels, and every builder's combination is claimed."""
import sys
from pathlib import Path

import pytest

from models_control import ENGINE_ONLY
from runners import run_kshim
from test_op_kernels import check

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import gen_op_models as G  # noqa: E402

CLAIMS = G.claims()
CASES = G.all_cases()


def test_every_claim_has_a_builder():
    missing = [c for c in CLAIMS if c not in CASES]
    assert not missing, f"mn_ops.h claims combinations no models_*.py CASES builds: {missing}"


def test_every_builder_is_claimed():
    extra = sorted(set(CASES) - set(CLAIMS))
    assert not extra, f"CASES build combinations mn_ops.h does not claim: {extra}"


def test_claims_match_the_engine_library():
    """The host library reports the same table (mn_op_kernel_info) as mn_ops.h says."""
    E = pytest.importorskip("micronn_tools.engine")
    try:
        kernels = E.kernels()
    except OSError as e:
        pytest.skip(f"no engine library: {e}")
    assert [(k["name"], c) for k in kernels for c in k["dtypes"]] == CLAIMS


@pytest.mark.parametrize("op,combo", [c for c in CLAIMS if c in CASES], ids=lambda v: str(v))
def test_claim(runner, rng, op, combo):
    if op in ENGINE_ONLY and runner is run_kshim:
        pytest.skip("several subgraphs / resource variables: the kernel shim runs one op of one subgraph")
    model, gen = CASES[(op, combo)](rng)
    assert G.signature(model, op) == combo, model.desc
    boolean = model.tensors[model.outputs[0]].dtype == bool
    check(runner, rng, model, gen=gen, max_saturated=None if boolean else 0.9)


def test_readme_matrix_is_current():
    """README.md's table is what `micronn ops --markdown` prints (tools/update_readme_matrix.py)."""
    E = pytest.importorskip("micronn_tools.engine")
    import update_readme_matrix as U
    try:
        E.kernels()
    except OSError as e:
        pytest.skip(f"no engine library: {e}")
    text = (U.ROOT / "README.md").read_text()
    assert U.updated(text) == text, "README.md support matrix is stale: run tools/update_readme_matrix.py"
