"""A model converted to `.py` and frozen into firmware is read in place from flash, aligned.

Frozen `bytes` carry no alignment guarantee of their own; the port builds frozen_content.c so
that GCC word-aligns them (port/Makefile). With seven models a misaligned one would show up as
arena copies (the engine copies misaligned int32/float constants into the arena).
"""
import os
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


@pytest.mark.timeout(1800)
def test_frozen_py_models_are_aligned_and_read_in_place(tmp_path, monkeypatch):
    models = sorted(p.stem for p in MODELS_DIR.glob("*.tflite"))
    lines = [f'include("{ROOT}/boards/{BOARD}/manifest.py")']
    for name in models:
        out = subprocess.run([str(ROOT / ".venv/bin/micronn"), "convert", str(MODELS_DIR / f"{name}.tflite"),
                              "-o", str(tmp_path / f"{name}.py")], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        lines.append(f'module("{name}.py", base_path="{tmp_path}")')
    (tmp_path / "manifest.py").write_text("\n".join(lines) + "\n")
    build = ROOT / "build" / "test-builds"  # shared with test_op_selection.py: incremental builds
    log = subprocess.run(["make", "--no-print-directory", "firmware", "BOARD=" + BOARD,
                          "FIRMWARE_BUILD=" + str(build / BOARD),
                          "FROZEN_MANIFEST=" + str(tmp_path / "manifest.py")],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert log.returncode == 0, log.stdout[-3000:] + log.stderr[-3000:]

    monkeypatch.setenv("MICRONN_BUILD_DIR", str(build))
    board = QemuBoard(BOARD)
    try:
        for name in models:
            r = board.eval("r", pre=(
                f"import gc, micronn, {name} as mod\n"
                f"buf = mod.{name}\n"
                "gc.collect(); f0 = gc.mem_free()\n"
                "m = micronn.Model(buf)\n"
                "gc.collect(); heap = f0 - gc.mem_free()\n"
                "st = micronn.Interpreter(m).stats()\n"
                "r = (m.address % 4, heap, st['copied'], len(buf))\n"))
            misalign, heap, copied, size = r
            assert (misalign, copied) == (0, 0), (name, r)
            assert heap < 512, (name, r)     # a Model object; person_detect alone is 300 KB
        # and it computes the oracle's answer, from flash
        model = (MODELS_DIR / "hello_world_int8.tflite").read_bytes()
        xs = [-90, -3, 64]
        got = board.eval("out", pre=(
            "import micronn, hello_world_int8 as mod\n"
            "it = micronn.Interpreter(micronn.Model(mod.hello_world_int8))\n"
            "out = []\n"
            f"for x in {xs!r}:\n"
            "    it.input(0)[0] = x\n"
            "    it.invoke()\n"
            "    out.append(it.output(0)[0])\n"))
        assert got == [int(oracle.run(model, [np.array([[x]], dtype=np.int8)])[0].item()) for x in xs]
    finally:
        board.close()
