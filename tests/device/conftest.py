"""On-device tests of the `micronn` MicroPython API (C module _micronn + frozen package micronn).

They use the ``board`` fixture of tests/conftest.py (``--board MPS2_AN386``, ``--board all``,
``--board UNIX``) and compute expected results on the host with tests/oracle.py (LiteRT reference
kernels) at test time. Models come from MICRONN_MODELS_DIR (or MICRONN_MODELS, the oracle's
variable), default ../shared/models; a model the firmware has not frozen (micronn.models) is
copied to the board's filesystem and loaded with micronn.load_file() instead.
"""
import os
import sys

import pytest

# tests/ and host_tools/ come from tests/conftest.py; this directory for `import devhelp`.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def dev(board):
    """A DeviceRunner for ``board`` (see devhelp.py)."""
    import devhelp
    runner = devhelp.DeviceRunner(board)
    runner.clean()
    yield runner
    try:
        runner.remove_files()
    except Exception:
        pass  # the board fixture checks the board (and resets it) after a failure
