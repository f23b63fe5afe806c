"""Fixtures for the `micronn` CLI tests (tests/cli).

The CLI is run in a subprocess, exactly as a user runs it (exit status, stdout, stderr). Tests
that need a board use the default emulated board through the CLI itself (each call boots its own
QEMU from build/<BOARD>/, or $MICRONN_BUILD_DIR), or the `micronn_tools.board` machinery
directly; they do not use the parametrized `board` fixture, so `--board all` does not multiply
them. Models come from $MICRONN_MODELS_DIR (default ../shared/models next to the repo).
"""
import os
import sys

import pytest

for _p in (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from cli_helpers import MODELS, patch_model, run_cli  # noqa: E402


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def model():
    def path(name):
        p = os.path.join(MODELS, name)
        assert os.path.isfile(p), f"test model {p} missing (set MICRONN_MODELS_DIR)"
        return p
    return path


@pytest.fixture(scope="session")
def default_board():
    """The default emulated board's spec; fails (does not skip) when its firmware is missing."""
    from micronn_tools import boards
    spec = boards.default()
    if not spec.firmware_path.is_file():
        pytest.fail(f"{spec.firmware_path} missing: build it with `make firmware-test` "
                    f"(or `{spec.build_command}`)")
    return spec


@pytest.fixture
def lsh_model(tmp_path, model):
    """hello_world_int8 with its FULLY_CONNECTED opcode turned into LSH_PROJECTION (no kernel)."""
    def f(mt):
        mt.operatorCodes[0].builtinCode = 15
        mt.operatorCodes[0].deprecatedBuiltinCode = 15
    p = tmp_path / "lsh.tflite"
    p.write_bytes(patch_model(open(model("hello_world_int8.tflite"), "rb").read(), f))
    return str(p)
