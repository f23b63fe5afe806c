"""`micronn` CLI tests that need no board: help, exit codes, inspect, convert, input checks,
flash argument construction, transfer retry logic."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from cli_helpers import MODELS, REPO, patch_model as _patch

ALL_MODELS = sorted(f for f in os.listdir(MODELS) if f.endswith(".tflite"))
COMMANDS = ("inspect", "plan", "ops", "convert", "partition", "run", "bench", "flash", "demo")


# ---- help and exit codes -----------------------------------------------------------------------

def test_help_and_usage(cli):
    r = cli("--help")
    assert r.code == 0
    for c in COMMANDS:
        assert c in r.out
        h = cli(c, "--help")
        assert h.code == 0 and "usage: micronn " + c in h.out, h
    assert cli().code == 2                       # no command
    assert cli("inspect").code == 2              # missing argument
    assert cli("frobnicate").code == 2           # unknown command
    assert cli("run", "x.tflite", "--board", "A", "--repeat", "x").code == 2
    assert "--json" in cli("inspect", "--help").out and "arena" in cli("inspect", "--help").out
    assert "write-flash" in cli("flash", "--help").out


# ---- inspect -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_MODELS)
def test_inspect_json_matches_engine_and_litert(cli, model, name):
    from micronn_tools import engine
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    path = model(name)
    r = cli("inspect", path, "--json")
    assert r.code == 0, r
    j = json.loads(r.out)
    for k in ("model", "size", "sha256", "subgraphs", "inputs", "outputs", "operators", "tensors",
              "supported", "unsupported", "arena"):
        assert k in j
    data = open(path, "rb").read()
    m = engine.Model(data)
    # the arena is the engine's own figure (dry run), split as a real prepare reports it
    assert j["supported"] and j["unsupported"] == []
    h = j["host_arena"]
    assert h["bytes"] == m.arena_needed()
    st = engine.Interpreter(m).stats()
    assert (h["persistent"], h["nonpersistent"]) == (st["persistent"], st["nonpersistent"])
    assert h["bytes"] >= h["persistent"] + h["nonpersistent"]
    # the 32-bit figure: same activations, smaller metadata (4-byte pointers)
    a = j["arena"]
    assert a["pointer_bits"] == 32 and a["nonpersistent"] == h["nonpersistent"]
    assert a["persistent"] < h["persistent"] and a["bytes"] >= a["persistent"] + a["nonpersistent"]
    # operators and their operands agree with LiteRT's view of the model
    import oracle
    it = Interpreter(model_content=oracle.patch_quantized_dimension(data) if oracle._needs_patch(data) else data,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    ops = it._get_ops_details()
    assert len(ops) == len(j["operators"])
    for o, lo in zip(j["operators"], ops):
        assert o["name"] == lo["op_name"], (o, lo)
        assert o["inputs"] == list(lo["inputs"]) and o["outputs"] == list(lo["outputs"])
        assert o["supported"] and o["error"] is None
    assert j["inputs"] == [d["index"] for d in it.get_input_details()]
    assert j["outputs"] == [d["index"] for d in it.get_output_details()]
    for d in it.get_input_details() + it.get_output_details():
        t = j["tensors"][d["index"]]
        assert t["shape"] == list(d["shape"]) and t["name"] == d["name"]
        if d["quantization"][0]:
            assert t["quantization"]["scale"][0] == pytest.approx(d["quantization"][0])
            assert t["quantization"]["zero_point"][0] == d["quantization"][1]
    # text form
    r = cli("inspect", path)
    assert r.code == 0 and "Operators:" in r.out and "Arena" in r.out and "supported" in r.out


def test_inspect_persistent_per_op(cli, model):
    """Per-operator persistent bytes (32-bit engine): they add up to the operators' share of
    persistent, per-channel ops need the most, and the text table shows them."""
    j = json.loads(cli("inspect", model("person_detect.tflite"), "--json").out)
    ops, a = j["operators"], j["arena"]
    # persistent blocks are 8-byte aligned (MN_PERSIST_ALIGN)
    assert all(isinstance(op["persistent"], int) and op["persistent"] % 8 == 0 for op in ops)
    assert sum(op["persistent"] for op in ops) == a["kernel_persistent"]
    assert 0 < a["kernel_persistent"] < a["persistent"]
    # the widest CONV_2D (256 channels: int32 multiplier + int8 shift each) holds more than 1280 bytes
    conv = [op for op in ops if op["name"] == "CONV_2D"]
    assert max(op["persistent"] for op in conv) > 256 * 5
    reshape = [op for op in ops if op["name"] == "RESHAPE"][0]
    assert reshape["persistent"] == 0
    out = cli("inspect", model("person_detect.tflite"), "--no-tensors").out
    assert "persist" in out and f"operators {a['kernel_persistent']} + tensor/op records" in out
    # the figure says which kernels it assumes (the 32-bit host build's: reference and generic)
    assert a["kernels"] == ["reference", "generic"]
    assert f"Arena on a 32-bit board with the reference and generic kernels: {a['bytes']} bytes" in out


def test_inspect_unsupported_op(cli, lsh_model):
    r = cli("inspect", lsh_model, "--json")
    assert r.code == 0, r
    j = json.loads(r.out)
    assert not j["supported"] and j["arena"]["bytes"] is None and j["host_arena"]["bytes"] is None
    assert [u["op"] for u in j["unsupported"]] == [0, 1, 2]  # every op, not just the first
    for u in j["unsupported"]:
        assert u["name"] == "LSH_PROJECTION" and "micronn has no kernel for LSH_PROJECTION yet" in u["reason"]
        assert "int8" in u["dtypes"]
    r = cli("inspect", lsh_model)
    assert "3 of 3 operators are NOT supported" in r.out and "LSH_PROJECTION" in r.out
    assert cli("inspect", lsh_model, "--strict").code == 1


def test_inspect_unsupported_dtype_names_op_dtype_reason(cli, model, tmp_path):
    def f(mt):
        mt.subgraphs[0].tensors[7].type = 7  # the activation between op 0 and op 1 becomes int16
    p = tmp_path / "i16.tflite"
    p.write_bytes(_patch(open(model("hello_world_int8.tflite"), "rb").read(), f))
    j = json.loads(cli("inspect", p, "--json").out)
    bad = {u["op"]: u for u in j["unsupported"]}
    assert sorted(bad) == [0, 1]                      # both failures recorded, op 2 still fine
    assert "int16" in bad[0]["reason"] and "FULLY_CONNECTED" in bad[0]["reason"]
    assert "int16" in bad[1]["dtypes"] and "int16" in bad[1]["reason"]
    assert j["operators"][2]["supported"]


@pytest.mark.parametrize("content,msg", [
    (None, "no such file"),
    (b"hello, not a model at all", "not a TFLite model"),
    ("truncated", "rejected by the engine"),
])
def test_inspect_bad_files(cli, model, tmp_path, content, msg):
    p = tmp_path / "bad.tflite"
    if content == "truncated":
        p.write_bytes(open(model("person_detect.tflite"), "rb").read()[:5000])
    elif content is not None:
        p.write_bytes(content)
    r = cli("inspect", p)
    assert r.code == 1 and msg in r.err and r.err.startswith("micronn: error:"), r


# ---- convert -----------------------------------------------------------------------------------

def test_convert_all_forms(cli, model, tmp_path):
    src = model("hello_world_int8.tflite")
    data = open(src, "rb").read()
    for suffix in (".bin", ".c", ".h", ".py", ".mpy"):
        out = tmp_path / ("hw" + suffix)
        env = {}
        mpy = os.path.join(REPO, "build", "micropython", "mpy-cross", "build", "mpy-cross")
        if suffix == ".mpy" and not os.path.isfile(mpy) and not os.environ.get("MPY_CROSS"):
            pytest.fail(f"mpy-cross missing ({mpy}); run `make setup`")
        r = cli("convert", src, "-o", out, env=env)
        assert r.code == 0 and out.is_file(), r
    assert (tmp_path / "hw.bin").read_bytes() == data
    c = (tmp_path / "hw.c").read_text()
    assert "__attribute__((aligned(16)))" in c and f"hw_len = {len(data)};" in c
    assert "aligned(16)" in (tmp_path / "hw.h").read_text()
    ns = {}
    exec((tmp_path / "hw.py").read_text(), ns)
    assert ns["hw"] == data
    assert (tmp_path / "hw.mpy").read_bytes()[:1] == b"M"


def test_convert_errors_write_nothing(cli, model, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(open(model("person_detect.tflite"), "rb").read()[:4096])
    out = tmp_path / "out.c"
    r = cli("convert", bad, "-o", out)
    assert r.code == 1 and "rejected by the engine" in r.err and not out.exists(), r
    r = cli("convert", model("hello_world_int8.tflite"), "-o", tmp_path / "x.txt")
    assert r.code == 2 and "unknown output form" in r.err
    # --help says so
    assert "2 usage (including an OUT suffix" in " ".join(cli("convert", "--help").out.split())
    r = cli("convert", model("hello_world_int8.tflite"), "-o", tmp_path / "nodir" / "x.c")
    assert r.code == 1 and "does not exist" in r.err


# ---- run: input checks happen on the host before any board is involved -----------------------

def test_run_input_errors(cli, model, tmp_path):
    pd = model("person_detect.tflite")
    r = cli("run", pd)
    assert r.code == 1 and "no --input" in r.err and "int8 [1, 96, 96, 1]" in r.err, r
    f32 = tmp_path / "f.npy"
    np.save(f32, np.zeros((1, 96, 96, 1), np.float32))
    r = cli("run", pd, "--input", f32)
    assert r.code == 1 and "dtype float32 does not match" in r.err and "--quantize" in r.err, r
    shp = tmp_path / "s.npy"
    np.save(shp, np.zeros((1, 95, 96, 1), np.int8))
    r = cli("run", pd, "--input", shp)
    assert r.code == 1 and "shape [1, 95, 96, 1] does not match" in r.err, r
    r = cli("run", pd, "--input", tmp_path / "missing.npy")
    assert r.code == 1 and "no such file" in r.err
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"junk")
    r = cli("run", pd, "--input", junk)
    assert r.code == 1 and "not a readable .npy" in r.err
    ok = tmp_path / "ok.npy"
    np.save(ok, np.zeros((1, 96, 96, 1), np.int8))
    r = cli("run", pd, "--input", ok, "--input", ok)
    assert r.code == 1 and "1 input(s) but 2" in r.err
    r = cli("run", pd, "--input", ok, "--output", tmp_path / "a.npy", "--output", tmp_path / "b.npy")
    assert r.code == 1 and "1 output(s) but 2" in r.err
    r = cli("run", pd, "--input", f32, "--quantize", "--port", "/dev/does-not-exist")
    assert r.code == 1 and "no board at /dev/does-not-exist" in r.err, r
    r = cli("run", pd, "--zeros", "--board", "NO_SUCH_BOARD")
    assert r.code == 1 and "unknown board" in r.err


def test_run_missing_firmware_names_make_command(cli, model, tmp_path):
    r = cli("run", model("hello_world_int8.tflite"), "--zeros", env={"MICRONN_BUILD_DIR": str(tmp_path)})
    assert r.code == 1 and "make firmware BOARD=" in r.err, r


def test_quantize_matches_tflite_rounding():
    from micronn_tools.cli_common import dequantize, quantize
    x = np.array([-1.0, -0.25, 0.0, 0.25, 0.5, 100.0], np.float32)
    q = quantize(x, 0.5, -1, np.int8)
    assert q.tolist() == [-3, -2, -1, 0, 0, 127]   # half away from zero, clamped
    assert dequantize(np.array([-3, 0], np.int8), 0.5, -1).tolist() == [-1.0, 0.5]


# ---- flash (no hardware) -------------------------------------------------------------------------

def test_flash_esp32_command(cli, model, tmp_path):
    fw = tmp_path / "firmware.bin"
    fw.write_bytes(b"\xe9" + b"\0" * 1000)
    m = model("person_detect.tflite")
    r = cli("flash", "--esp32", "--port", "/dev/ttyUSB0", "--firmware", fw, "--model", m,
            "--model-offset", "0x300000", "--dry-run")
    assert r.code == 0, r
    assert r.out.strip() == (f"python -m esptool --chip esp32 --port /dev/ttyUSB0 --baud 460800 write-flash "
                             f"--flash-mode keep --flash-size keep 0x1000 {fw} 0x300000 {m}")
    r = cli("flash", "--esp32", "--chip", "esp32c3", "--port", "/dev/ttyACM0", "--baud", "921600",
            "--firmware", fw, "--dry-run")
    assert r.out.strip().endswith(f"--baud 921600 write-flash --flash-mode keep --flash-size keep 0x0 {fw}")
    csv = tmp_path / "parts.csv"
    csv.write_text("# Name, Type, SubType, Offset, Size\nnvs, data, nvs, 0x9000, 0x6000\n"
                   "factory, app, factory, 0x10000, 0x1F0000\nmodel, data, 0x40, 0x200000, 512K\n")
    r = cli("flash", "--esp32", "--port", "/dev/ttyUSB0", "--model", m, "--partitions", csv, "--dry-run")
    assert r.code == 0 and r.out.strip().endswith(f"0x200000 {m}"), r
    small = tmp_path / "small.csv"
    small.write_text("model, data, 0x40, 0x200000, 0x1000\n")
    r = cli("flash", "--esp32", "--port", "/dev/ttyUSB0", "--model", m, "--partitions", small, "--dry-run")
    assert r.code == 1 and "do not fit" in r.err
    # errors
    r = cli("flash", "--esp32", "--firmware", fw, "--dry-run")
    assert r.code == 1 and "needs --port" in r.err
    r = cli("flash", "--esp32", "--port", "/dev/ttyUSB0", "--model", m, "--model-offset", "0x300010", "--dry-run")
    assert r.code == 1 and "not a multiple of 0x1000" in r.err
    r = cli("flash", "--esp32", "--port", "/dev/ttyUSB0", "--firmware", fw, "--firmware-offset", "0x1000",
            "--model", m, "--model-offset", "0x1000", "--dry-run")
    assert r.code == 1 and "overlaps" in r.err
    r = cli("flash", "--esp32", "--port", "/dev/micronn-no-such-port", "--firmware", fw)
    assert r.code == 1 and "no board at" in r.err
    assert cli("flash").code == 2


def test_esptool_is_installed_and_accepts_the_command():
    """The exact subcommand and options we build exist in the pinned esptool."""
    p = subprocess.run([sys.executable, "-m", "esptool", "write-flash", "--help"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for opt in ("--flash-mode", "--flash-size"):
        assert opt in p.stdout


def test_flash_emulated_firmware_image(cli, tmp_path):
    from micronn_tools import boards
    spec = boards.default()
    src = spec.firmware_path
    if not src.is_file():
        pytest.fail(f"{src} missing: `{spec.build_command}`")
    env = {"MICRONN_BUILD_DIR": str(tmp_path)}
    r = cli("flash", "--firmware", src, env=env)
    assert r.code == 0, r
    assert (tmp_path / spec.name / spec.firmware).read_bytes() == src.read_bytes()
    notelf = tmp_path / "x.bin"
    notelf.write_bytes(b"\0" * 64)
    r = cli("flash", "--firmware", notelf, env=env)
    assert r.code == 1 and "not an ELF" in r.err
    rv = [b for b in boards.emulated_boards() if b.qemu.get("binary") == "qemu-system-riscv32"]
    if rv:
        r = cli("flash", "--firmware", src, "--board", rv[0].name, env=env)
        assert r.code == 1 and "RISC-V" in r.err
    r = cli("flash", "--firmware", src, "--port", "/dev/ttyUSB0")
    assert r.code == 1 and "--esp32" in r.err


# ---- transfer safety (board reset mid-transfer), with a fake board -----------------------------

class _FakeBoard:
    name = "FAKE"

    def __init__(self, fail_times):
        self.fail_times = fail_times
        self.puts = 0
        self.removed = []
        self.resets = 0

    def sha256(self, remote, timeout=None):
        from micronn_tools.board import TransferError
        raise TransferError("no such file")

    def put(self, data, remote, progress=None, chunk_size=4096, timeout=None, settle=False):
        from micronn_tools.board import BoardCrash
        assert settle, "the CLI must check the file after the board's own flush (soft reset)"
        self.puts += 1
        if progress:
            progress(len(data) // 2, len(data))
        if self.puts <= self.fail_times:
            raise BoardCrash("board reset while running code")
        return "ok"

    def ping(self, timeout=None):
        return False

    def hard_reset(self):
        self.resets += 1

    def _remove_quietly(self, remote):
        self.removed.append(remote)


def test_put_retries_once_after_reset_then_fails_safely():
    import argparse
    from micronn_tools.cli_common import CliError, put_verified
    args = argparse.Namespace(timeout=5, quiet=True)
    b = _FakeBoard(fail_times=1)
    assert put_verified(b, b"x" * 100, "m.tflite", args) is True
    assert b.puts == 2 and b.resets == 1 and b.removed == []
    b = _FakeBoard(fail_times=5)
    with pytest.raises(CliError) as e:
        put_verified(b, b"x" * 100, "m.tflite", args)
    assert "failed" in str(e.value) and "left as it was" in str(e.value)
    # only the temporary file goes: a previous complete m.tflite stays (puts are atomic)
    assert b.removed == ["m.tflite.mn-tmp"]


# ---- ops (support matrix) -------------------------------------------------------------------------

def mul_row(rows):
    return next(x for x in rows if x["op"] == "MUL")


def test_ops_lists_the_engine_registry(cli):
    from micronn_tools import engine
    r = cli("ops", "--json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert [x["op"] for x in rows] == [k["name"] for k in engine.kernels() + engine.custom_kernels()]
    atan2 = next(x for x in rows if x["op"] == "Atan2")
    assert atan2["custom"] and atan2["builtin"] == 32 and atan2["dtypes"] == ["float32"]
    assert not mul_row(rows)["custom"]
    c = cli("ops", "Atan2", "micronn_subgraph")
    assert c.code == 0 and "Atan2 (custom)" in c.out and "micronn_subgraph (custom)" in c.out, c
    mul = next(x for x in rows if x["op"] == "MUL")
    assert mul["dtypes"] == ["int8", "int16", "int32", "float32"] and mul["options"] == "MulOptions"
    # the reference kernel, then the optimized variants MUL selects from (as the query knows them)
    assert mul["max_version"] == 4 and mul["variants"] == ["reference", "mve.mul_s8", "dsp.mul_s8", "generic.mul_s8"]
    conv = next(x for x in rows if x["op"] == "CONV_2D")
    assert {"dsp.conv_s8", "mve.conv_s8_1x1", "generic.conv_s8"} <= set(conv["variants"])
    assert next(x for x in rows if x["op"] == "ABS")["variants"] == ["reference"]
    t = cli("ops", "EQUAL", "SELECT_V2")
    assert t.code == 0 and "int8->bool" in t.out and "SELECT_V2" in t.out and "CONV_2D" not in t.out, t
    u = cli("ops", "LSH_PROJECTION")
    assert u.code == 1 and "micronn has no kernel for: LSH_PROJECTION" in u.err, u


def test_opset_names_ops_the_engine_cannot_run(lsh_model, model):
    """`make firmware MODELS=...` computes its op set with micronn_tools.opset: it fails naming
    model, op and reason unless --allow-unsupported (ALLOW_UNSUPPORTED=1)."""
    cmd = [sys.executable, "-m", "micronn_tools.opset"]
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "host_tools"))
    r = subprocess.run(cmd + [model("hello_world_int8.tflite"), lsh_model], capture_output=True, text=True, env=env)
    assert r.returncode == 1, r
    assert "lsh.tflite: op 0 LSH_PROJECTION: micronn has no kernel for this op yet" in r.stderr, r.stderr
    assert "ALLOW_UNSUPPORTED=1" in r.stderr
    r = subprocess.run(cmd + ["--allow-unsupported", model("hello_world_int8.tflite"), lsh_model],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.split() == ["FULLY_CONNECTED"], r
    assert "warning: lsh.tflite: op 0 LSH_PROJECTION" in r.stderr
    ok = subprocess.run(cmd + [model("person_detect.tflite")], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and ok.stdout.split() == ["AVERAGE_POOL_2D", "CONV_2D", "DEPTHWISE_CONV_2D",
                                                        "RESHAPE", "SOFTMAX"], ok


def test_opset_types_names_the_type_families(model):
    """`make firmware MODELS=...` builds only the type families its models use (opset --types):
    input 0's family (float32 with int8 weights: hybrid), plus output 0's (SOFTMAX int8 -> int16 in
    keyword_scrambled), type conversions (QUANTIZE / DEQUANTIZE / CAST) not counted."""
    import numpy as np
    sys.path.insert(0, os.path.join(REPO, "tests", "engine", "ops"))
    import opmodels
    from micronn_tools import opset
    cmd = [sys.executable, "-m", "micronn_tools.opset", "--types"]
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "host_tools"))
    for names, want in ((["person_detect.tflite"], "int8"), (["hello_world_float.tflite"], "float32"),
                        (["keyword_scrambled.tflite"], "int8 int16"),
                        (["hello_world_float.tflite", "person_detect.tflite"], "int8 float32")):
        r = subprocess.run(cmd + [model(n) for n in names], capture_output=True, text=True, env=env)
        assert r.returncode == 0 and r.stdout.strip() == want, (names, r)
    rng = np.random.default_rng(0)
    assert opset.types_used([opmodels.pool(rng, "avg", "int16").tflite()]) == ["int16"]
    # the engine's own classification (mn_check_family): float32 input, int8 weights
    assert opset.op_family("float32", "int8") == "hybrid" and opset.op_family("float32", None) == "float32"
    assert opset.op_family("uint8", None) == "int8" and opset.op_family("int32", None) is None


def test_opset_patches_follows_a_stored_patch_stage(cli, model, tmp_path):
    """`make firmware MODELS=...` keeps patch-based execution only when a model stores a patch
    stage (opset --patches prints 1), as `micronn plan --patches --write` writes it."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "host_tools"))
    staged = tmp_path / "pd.tflite"
    r = cli("plan", model("person_detect.tflite"), "--patches", "--write", staged)
    assert r.code == 0, r
    cmd = [sys.executable, "-m", "micronn_tools.opset", "--patches"]
    for paths, want in (([model("person_detect.tflite")], "0"), ([str(staged)], "1"),
                        ([model("keyword_scrambled.tflite"), str(staged)], "1")):
        r = subprocess.run(cmd + paths, capture_output=True, text=True, env=env)
        assert r.returncode == 0 and r.stdout.strip() == want, (paths, r)
