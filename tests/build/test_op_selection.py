"""`make firmware MODELS=...` links only the kernels the models use, and it shows.

Builds two MPS2_AN386 firmwares with hello_world_int8 frozen in (one with the computed op set,
one with OPS=all) into a temporary build directory, compares their code size, and boots the
small one to check what it reports and that it still runs the model.
"""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import oracle
from micronn_tools import repo_root
from micronn_tools.board import QemuBoard

ROOT = Path(repo_root())
MODELS_DIR = Path(os.environ.get("MICRONN_MODELS_DIR", ROOT.parent / "shared" / "models"))
BOARD = "MPS2_AN386"


def build(tmp, ops=None):
    out = tmp / (ops or "computed")
    cmd = ["make", "--no-print-directory", "firmware", "BOARD=" + BOARD,
           "MODELS=" + str(MODELS_DIR / "hello_world_int8.tflite"), "FIRMWARE_BUILD=" + str(out / BOARD)]
    if ops:
        cmd.append("OPS=" + ops)
    log = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert log.returncode == 0, log.stdout[-3000:] + log.stderr[-3000:]
    return out, log.stdout


def text_size(elf):
    out = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True, check=True)
    return int(out.stdout.splitlines()[1].split()[0])


@pytest.mark.timeout(1800)
def test_models_select_kernels(tmp_path, monkeypatch):
    small, log = build(tmp_path)
    assert re.search(r"ops: FULLY_CONNECTED$", log, re.M), log
    full, _ = build(tmp_path, "all")
    small_text = text_size(small / BOARD / "firmware.elf")
    full_text = text_size(full / BOARD / "firmware.elf")
    print("text bytes: FULLY_CONNECTED only %d, all kernels %d" % (small_text, full_text))
    # The conv, depthwise, pooling, softmax, SVDF and LSTM kernels are tens of KB together.
    assert full_text - small_text > 20000

    monkeypatch.setenv("MICRONN_BUILD_DIR", str(small))
    board = QemuBoard(BOARD)
    try:
        assert board.eval("__import__('micronn').ops()") == ("FULLY_CONNECTED",)
        assert board.eval("list(__import__('micronn').models)") == ["hello_world_int8"]
        model = (MODELS_DIR / "hello_world_int8.tflite").read_bytes()
        xs = [-100, -37, 0, 42, 99]
        got = board.eval("out", pre=(
            "import micronn\n"
            "it = micronn.Interpreter(micronn.load('hello_world_int8'))\n"
            "out = []\n"
            "for x in %r:\n"
            "    it.input(0)[0] = x\n"
            "    it.invoke()\n"
            "    out.append(it.output(0)[0])\n" % xs))
        want = [int(oracle.run(model, [np.array([[x]], dtype=np.int8)])[0].item()) for x in xs]
        assert got == want
    finally:
        board.close()
