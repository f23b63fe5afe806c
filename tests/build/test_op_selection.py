"""`make firmware MODELS=...` links only the kernels the models use, and it shows.

Builds an MPS2_AN386 firmware with hello_world_int8 frozen in, with the computed op set and type
families, into a temporary build directory and boots it to check what it reports, that it still
runs the model, and that it refuses models it was not built for with the reason (an op not linked,
a type family not linked, no delegation). Then rebuilds the same directory with OPS=all, as a user
going from `make demo` to the test firmware does: every object the settings reach is rebuilt (the
binding files too: a stale mod_interp.o once kept delegation out of an OPS=all firmware), which
the firmware's build_config() and a delegated run show, and the code size grows.
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


# One build directory for every configuration, kept between runs and shared with
# test_frozen_py_model.py (conftest.py runs them one after the other): each build is incremental
# and must leave no stale object.
SHARED_BUILD = ROOT / "build" / "test-builds"


def build(tmp, ops=None):
    out = SHARED_BUILD
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
    # and only the variant its nodes select on the board's backends (opset --variants)
    assert re.search(r"ops: FULLY_CONNECTED; types: int8(; patches: 0)?; variants: dsp.fc_s8$", log, re.M), log
    small_text = text_size(small / BOARD / "firmware.elf")
    monkeypatch.setenv("MICRONN_BUILD_DIR", str(small))
    board = QemuBoard(BOARD)
    try:
        assert board.eval("__import__('micronn').build_config()") == {
            "ops_all": False, "types": ["int8"], "variants_all": False, "patches": False,
            "delegate": False, "kernels": ("dsp", "generic"), "mismatch": []}
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
        # an op the engine has but this firmware was built without: said so, with the remedy
        msg = board.eval("msg", pre=(
            "import micronn\n"
            "try:\n"
            "    micronn.Interpreter(micronn.Model(%r))\n"
            "    msg = None\n"
            "except NotImplementedError as e:\n"
            "    msg = str(e)\n" % _softmax_model()))
        assert msg == ("unsupported ops: SOFTMAX (op 0): this firmware was built without these kernels "
                       "(rebuild it with OPS=... or MODELS=<this model>)"), msg
        # the op's kernel is linked, but only its int8 paths (types: int8): a float32 model is
        # refused at prepare, naming op and type family
        msg = board.eval("msg", pre=(
            "import micronn\n"
            "try:\n"
            "    micronn.Interpreter(micronn.Model(%r))\n"
            "    msg = None\n"
            "except Exception as e:\n"
            "    msg = '%%s: %%s' %% (type(e).__name__, e)\n" % (MODELS_DIR / "hello_world_float.tflite").read_bytes()))
        assert msg == "NotImplementedError: unsupported ops: " + "; ".join(
            "FULLY_CONNECTED (op %d): float32 kernels not linked in this firmware (built for int8)" % i
            for i in range(3)), msg
        # delegation is left out of a model-specific firmware (DELEGATE=1 keeps it): said so
        msg = board.eval("msg", pre=(
            "import micronn\n"
            "try:\n"
            "    micronn.Interpreter(micronn.load('hello_world_int8'), delegate='dsp')\n"
            "    msg = None\n"
            "except Exception as e:\n"
            "    msg = '%s: %s' % (type(e).__name__, e)\n"))
        assert msg == ("NotImplementedError: delegate dsp: this firmware was built without delegation "
                       "(make firmware ... DELEGATE=1, or OPS=all)"), msg
        # it keeps the names of the options tables its kernels take only: another one by number
        msg = board.eval("msg", pre=(
            "import micronn\n"
            "try:\n"
            "    micronn.Interpreter(micronn.Model(%r))\n"
            "    msg = None\n"
            "except Exception as e:\n"
            "    msg = str(e)\n" % _conv_options_fc(model)))
        assert "op 0 FULLY_CONNECTED: builtin options table is type 1, FULLY_CONNECTED takes " \
            "FullyConnectedOptions" in msg, msg
    finally:
        board.close()

    full, _ = build(tmp_path, "all")
    full_text = text_size(full / BOARD / "firmware.elf")
    print("text bytes: FULLY_CONNECTED only %d, all kernels %d" % (small_text, full_text))
    # The conv, depthwise, pooling, softmax, SVDF and LSTM kernels are tens of KB together.
    assert full_text - small_text > 20000
    board = QemuBoard(BOARD)
    try:
        assert board.eval("__import__('micronn').build_config()") == {
            "ops_all": True, "types": ["int8", "int16", "float32", "hybrid"], "variants_all": True,
            "patches": True, "delegate": True, "kernels": ("dsp", "generic"), "mismatch": []}
        got = board.eval("out", pre=(
            "import micronn\n"
            "it = micronn.Interpreter(micronn.load('hello_world_int8'), delegate='dsp')\n"
            "out = []\n"
            "for x in %r:\n"
            "    it.input(0)[0] = x\n"
            "    it.invoke()\n"
            "    out.append(it.output(0)[0])\n" % xs))
        assert got == want
    finally:
        board.close()


def _conv_options_fc(data):
    """The model with its first FULLY_CONNECTED carrying Conv2DOptions (options type 1)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    mt = s.ModelT.InitFromPackedBuf(data, 0)
    op = mt.subgraphs[0].operators[0]
    op.builtinOptionsType, op.builtinOptions = 1, s.Conv2DOptionsT()
    b = flatbuffers.Builder(1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _softmax_model():
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "engine" / "ops"))
    import opmodels
    return opmodels.softmax(np.random.default_rng(0), "int8", "int8", shape=(1, 4)).tflite()


def test_models_the_engine_cannot_run_fail_the_build(tmp_path):
    """`make firmware MODELS=...` stops before building, naming model and op, when micronn has no
    kernel for an op of a model (unless ALLOW_UNSUPPORTED=1, see tests/cli: opset)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    data = (MODELS_DIR / "hello_world_int8.tflite").read_bytes()
    mt = s.ModelT.InitFromPackedBuf(data, 0)
    mt.operatorCodes[0].builtinCode = mt.operatorCodes[0].deprecatedBuiltinCode = 15   # LSH_PROJECTION
    b = flatbuffers.Builder(1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    bad = tmp_path / "lsh.tflite"
    bad.write_bytes(bytes(b.Output()))
    for ops in ([], ["OPS=all"]):
        r = subprocess.run(["make", "--no-print-directory", "firmware", "BOARD=" + BOARD, "MODELS=" + str(bad),
                            "FIRMWARE_BUILD=" + str(tmp_path / "fw"), *ops],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0, r.stdout[-2000:]
        assert "lsh.tflite: op 0 LSH_PROJECTION: micronn has no kernel for this op yet" in r.stderr, r.stderr
        assert not (tmp_path / "fw" / BOARD / "firmware.elf").exists()
