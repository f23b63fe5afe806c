"""Fixtures of the single-op kernel tests: `runner` (kernel shim, full engine) and a seeded `rng`."""
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runners  # noqa: E402


def pytest_generate_tests(metafunc):
    if "runner" in metafunc.fixturenames:
        metafunc.parametrize("runner", ["kshim", "engine"], scope="module", indirect=True)


_engine = None


@pytest.fixture(scope="module")
def runner(request):
    """The system under test: 'kshim' drives the reference kernels' prepare/eval directly;
    'engine' runs the whole model through the engine (fails when libmicronn.so is missing)."""
    global _engine
    if request.param == "kshim":
        return runners.run_kshim
    if _engine is None:
        _engine = runners.engine_runner() or False
    if not _engine:
        pytest.fail("engine ctypes wrapper / libmicronn.so not available: make -C tests/engine lib",
                    pytrace=False)
    return _engine


@pytest.fixture
def rng(request):
    # Deterministic per test id (the same for both runners), so failures reproduce.
    seed = zlib.crc32(request.node.nodeid.replace("[engine", "[kshim").encode())
    return np.random.default_rng(seed)
