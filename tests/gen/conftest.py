"""Fixture of the generated-model tests: the engine library (fails when it is not built)."""
import os

import pytest


@pytest.fixture(scope="session")
def engine():
    from micronn_tools import engine as e
    path = e.default_lib_path()
    if not os.path.exists(path):
        pytest.fail("engine library %s not built: make -C tests/engine lib" % path, pytrace=False)
    e.lib()
    return e
