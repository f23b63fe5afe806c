"""Engine tests on the host: the ctypes wrapper (host_tools/micronn_tools/engine.py) against the
LiteRT oracle (tests/oracle.py). Needs build/host/libmicronn.so (`make -C tests/engine lib`);
`make -C tests/engine test` runs them against the ASan build."""
import os

import pytest


@pytest.fixture(scope="session")
def engine():
    from micronn_tools import engine as e
    path = e.default_lib_path()
    if not os.path.exists(path):
        # A missing library is a broken setup, not a reason to pass: fail every engine test.
        pytest.fail("engine library %s not built: make -C tests/engine lib" % path, pytrace=False)
    e.lib()
    return e
