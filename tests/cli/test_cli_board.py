"""`micronn` CLI on the default emulated board (QEMU): run/bench/inspect/demo/flash against the
LiteRT oracle and the board's own reports. Each CLI call boots its own QEMU (about a second)."""
import json
import os

import numpy as np
import pytest

import oracle  # tests/oracle.py

from micronn_tools.cmd_demo import bmp_to_input


def _oracle(model_path, inputs):
    return oracle.run(open(model_path, "rb").read(), inputs)


def test_run_person_detect_matches_oracle(cli, model, default_board, tmp_path):
    pd = model("person_detect.tflite")
    outs = {}
    for img in ("person.bmp", "no_person.bmp"):
        x = bmp_to_input(model(img))
        inp, out = tmp_path / f"{img}.npy", tmp_path / f"{img}.out.npy"
        np.save(inp, x)
        r = cli("run", pd, "--input", inp, "--output", out)
        assert r.code == 0, r
        assert "instructions per inference" in r.err and "arena" in r.err
        y = np.load(out)
        assert y.dtype == np.int8 and y.shape == (1, 2)
        assert np.array_equal(y, _oracle(pd, [x])[0])
        outs[img] = y.reshape(-1).tolist()
    assert outs == {"person.bmp": [-113, 113], "no_person.bmp": [57, -57]}


def test_run_quantize_dequantize_prints(cli, model, default_board, tmp_path):
    hw = model("hello_world_int8.tflite")
    x = np.array([[1.5]], np.float32)
    inp = tmp_path / "x.npy"
    np.save(inp, x)
    r = cli("run", hw, "--input", inp, "--quantize", "--dequantize", "--output", tmp_path / "y.npy")
    assert r.code == 0, r
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float32
    # oracle on the same quantized input
    from micronn_tools import engine
    m = engine.Model(open(hw, "rb").read())
    ti, to = m.tensor(m.input_indices()[0]), m.tensor(m.output_indices()[0])
    q = np.clip(np.floor(1.5 / ti["scale"] + 0.5) + ti["zero_point"], -128, 127).astype(np.int8).reshape(1, 1)
    ref = _oracle(hw, [q])[0]
    assert np.allclose(y, (ref.astype(np.float32) - to["zero_point"]) * to["scale"])
    assert abs(float(y.reshape(-1)[0]) - np.sin(1.5)) < 0.1   # it is a sine model
    # printed form (no --output)
    r = cli("run", hw, "--input", inp, "--quantize")
    assert r.code == 0 and "output 0" in r.out and str(int(ref.reshape(-1)[0])) in r.out, r


def test_run_int16_stateful_model_matches_oracle(cli, model, default_board, tmp_path):
    ks = model("keyword_scrambled.tflite")
    rng = np.random.default_rng(1)
    x = rng.integers(-32768, 32767, size=(1, 96), dtype=np.int16)
    np.save(tmp_path / "x.npy", x)
    r = cli("run", ks, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert r.code == 0, r
    assert np.array_equal(np.load(tmp_path / "y.npy"), _oracle(ks, [x])[0])


def test_convert_freeze_run(cli, model, default_board, tmp_path):
    """convert -> .py/.mpy -> on the board -> same outputs as the oracle; and a model frozen
    into the firmware (make firmware MODELS=..., via convert.model_table) is found by `run`."""
    from micronn_tools.board import open_board
    hw = model("hello_world_int8.tflite")
    for suffix in (".py", ".mpy"):
        assert cli("convert", hw, "-o", tmp_path / f"hwmodel{suffix}").code == 0
    x = np.array([[37]], np.int8)
    ref = int(_oracle(hw, [x])[0].reshape(-1)[0])
    with open_board(default_board.name) as b:
        got = {}
        for suffix in (".py", ".mpy"):
            b.put((tmp_path / f"hwmodel{suffix}").read_bytes(), f"hwmodel{suffix}")
            got[suffix] = b.eval(
                "_it.output(0)[0]",
                pre=("import sys, micronn\nsys.modules.pop('hwmodel', None)\nimport hwmodel\n"
                     "_it = micronn.Interpreter(micronn.Model(hwmodel.hwmodel))\n"
                     "_it.input(0)[0] = 37\n_it.invoke()"))
            b.remove(f"hwmodel{suffix}")
        frozen = b.eval("list(micronn.models)", pre="import micronn")
    assert got == {".py": ref, ".mpy": ref}
    # `micronn run` uses the firmware's built-in copy when it has the same model
    np.save(tmp_path / "x.npy", x)
    r = cli("run", hw, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert r.code == 0 and int(np.load(tmp_path / "y.npy").reshape(-1)[0]) == ref, r
    if "hello_world_int8" in frozen:
        assert "built into the firmware" in r.err
    else:
        assert "sha256 verified on the board" in r.err


def test_inspect_arena_equals_board(cli, model, default_board):
    """inspect's arena figure comes from the engine; on the board it equals the Interpreter's."""
    ks = model("keyword_scrambled.tflite")
    r = cli("inspect", ks, "--json", "--board", default_board.name)
    assert r.code == 0, r
    j = json.loads(r.out)
    ba = j["board_arena"]
    b = cli("bench", ks, "--json", "--runs", "1")
    assert b.code == 0, b
    a = json.loads(b.out)["arena"]        # Interpreter(m).stats() on the board
    assert ba["bytes"] == a["bytes"] and ba["persistent"] == a["persistent"]
    assert ba["nonpersistent"] == a["nonpersistent"]
    # the host's 32-bit figure (generic kernels) is exactly that of a 32-bit board with the same
    # kernels (VIRT_RV32; the default board's dsp kernels request their own scratch buffers)
    rv = cli("inspect", ks, "--json", "--board", "VIRT_RV32")
    assert rv.code == 0, rv
    bv = json.loads(rv.out)["board_arena"]
    assert (j["arena"]["bytes"], j["arena"]["persistent"], j["arena"]["nonpersistent"]) == \
        (bv["bytes"], bv["persistent"], bv["nonpersistent"])


def test_inspect_host_arena_equals_unix_board(cli, model):
    """The host engine (64-bit) and the UNIX firmware (64-bit) report the same arena."""
    from micronn_tools import boards
    from micronn_tools.board import open_board
    spec = boards.get("UNIX")
    if not spec.firmware_path.is_file():
        pytest.fail(f"{spec.firmware_path} missing: `make firmware-test` (or `{spec.build_command}`)")
    for name in ("person_detect.tflite", "keyword_scrambled.tflite"):
        j = json.loads(cli("inspect", model(name), "--json").out)
        with open_board("UNIX") as b:
            b.put(open(model(name), "rb").read(), "m.tflite")
            st = b.eval("_it.stats()", pre="import micronn\n_it = micronn.Interpreter(micronn.load_file('m.tflite'))")
        h = j["host_arena"]
        assert h["bytes"] == st["arena_size"], (name, h, st)
        assert (h["persistent"], h["nonpersistent"]) == (st["persistent"], st["nonpersistent"])


def test_bench_json_and_plot(cli, model, default_board, tmp_path):
    png = tmp_path / "p.png"
    r = cli("bench", model("keyword_scrambled.tflite"), "--json", "--runs", "3", "--plot", png)
    assert r.code == 0, r
    j = json.loads(r.out)
    assert j["unit"] == "instructions" and j["emulated"] and j["board"] == default_board.name
    assert len(j["samples"]) == 3 and j["min"] <= j["per_inference"] <= j["max"]
    assert 50_000 < j["per_inference"] < 5_000_000
    assert [o["index"] for o in j["per_op"]] == list(range(15))
    assert j["ops_total"] + j["overhead"] == j["profiled_total"] and j["overhead"] >= 0
    assert abs(sum(o["share"] for o in j["per_op"]) + j["overhead_share"] - 1) < 1e-6
    assert j["arena"]["persistent"] > 0 and j["arena"]["nonpersistent"] > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    t = cli("bench", model("hello_world_int8.tflite"), "--runs", "1")
    assert t.code == 0 and "interpreter overhead" in t.out and "FULLY_CONNECTED" in t.out, t


def test_run_names_ops_missing_from_firmware(cli, lsh_model, default_board):
    r = cli("run", lsh_model, "--zeros")
    assert r.code == 1, r
    assert "micronn has no kernel for LSH_PROJECTION (ops 0, 1, 2) yet" in r.err, r


def test_run_timeout_is_reported(cli, model, default_board):
    r = cli("run", model("person_detect.tflite"), "--zeros", "--repeat", "200", "--timeout", "3")
    assert r.code == 1 and "did not answer in time" in r.err, r


def test_flash_files_to_board(cli, model, default_board, tmp_path):
    f = tmp_path / "hello.py"
    f.write_text("print('hi')\n")
    r = cli("flash", f, model("hello_world_int8.tflite"), "--dest", "lib")
    assert r.code == 0, r
    assert "lib/hello.py: 12 bytes written, sha256 verified" in r.err
    assert "lib/hello_world_int8.tflite: 2704 bytes written, sha256 verified" in r.err
    assert cli("flash", tmp_path / "missing.py").code == 1


def test_demo(cli, default_board):
    r = cli("demo")
    assert r.code == 0, r
    assert "person.bmp" in r.out and "[-113, 113]" in r.out and "[57, -57]" in r.out
    assert "instructions per inference" in r.out and "arena" in r.out


def test_demo_speech(cli, default_board):
    """micro_speech from raw audio on the board (micronn.audio.Speech): TFLM's scores."""
    r = cli("demo", "speech")
    assert r.code == 0, r
    for line in ("yes_1000ms.wav      49 frames, scores [silence, unknown, yes, no] = [-128, -128, 127, -128]  -> yes",
                 "no_1000ms.wav       49 frames, scores [silence, unknown, yes, no] = [-128, -114, -128, 114]  -> no",
                 "silence_1000ms.wav  49 frames, scores [silence, unknown, yes, no] = [-42, -68, -68, -78]  -> silence",
                 "noise_1000ms.wav    49 frames, scores [silence, unknown, yes, no] = [120, -125, -126, -125]  -> silence"):
        assert line in r.out, r
    assert "MISMATCH" not in r.out and "shared arena" in r.out and "front end + classifier" in r.out


def test_run_custom_op_model(cli, model, default_board, tmp_path):
    """A model of custom ops (TFLM's audio front end, signal-library ops: micronn.ops() lists
    builtins only) runs through `micronn run`, bit-exact with TFLM."""
    import wave
    pre = model("audio/audio_preprocessor_int8.tflite")
    with wave.open(str(model("audio/yes_30ms.wav"))) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)[:480].reshape(1, 480)
    inp, out = tmp_path / "win.npy", tmp_path / "feat.npy"
    np.save(inp, x)
    r = cli("run", pre, "--input", inp, "--output", out)
    assert r.code == 0, r
    tf = oracle.tflm_interpreter(open(pre, "rb").read())
    tf.set_input(x, 0)
    tf.invoke()
    want = tf.get_output(0)
    got = np.load(out)
    assert got.dtype == np.int8 and np.array_equal(got.reshape(want.shape), want)
    assert len(np.unique(got)) > 10


def test_flash_model_that_does_not_fit_says_so_first(cli, model):
    """person_detect (300 KB) on NETDUINOPLUS2 (64 KB filesystem): one clear error naming the
    sizes and how to build the model into the firmware, before anything is copied."""
    from micronn_tools import boards
    spec = boards.get("NETDUINOPLUS2")
    if not spec.firmware_path.is_file():
        pytest.fail(f"{spec.firmware_path} missing: `make firmware-test` (or `{spec.build_command}`)")
    pd = model("person_detect.tflite")
    r = cli("flash", pd, "--board", "NETDUINOPLUS2")
    assert r.code == 1, r
    errors = [ln for ln in r.err.splitlines() if ln.startswith("micronn: error:")]
    assert len(errors) == 1, r
    assert "person_detect.tflite (300,568 bytes) does not fit on NETDUINOPLUS2" in errors[0], r
    assert f"make firmware BOARD=NETDUINOPLUS2 MODELS={os.path.abspath(pd)}" in errors[0], r
    assert "nothing was copied" in errors[0]
    assert "copy person_detect" not in r.err and "OSError" not in r.err, r  # no transfer started
    # several files: checked together, also before copying any of them
    r = cli("flash", model("hello_world_int8.tflite"), pd, "--board", "NETDUINOPLUS2")
    assert r.code == 1 and "2 files (303,272 bytes) do not fit" in r.err, r
    assert "written" not in r.err, r


def test_run_copies_a_model_once_across_qemu_boots(cli, model, default_board, tmp_path):
    """The board's filesystem outlives QEMU (storage image): a second `micronn run`, in a new
    QEMU, finds the model by its sha256 instead of copying it again."""
    from cli_helpers import patch_model

    def rename(mt):  # a model the firmware cannot have built in
        mt.subgraphs[0].tensors[0].name = f"once-{os.getpid()}".encode()
    m = tmp_path / "copy_once.tflite"
    m.write_bytes(patch_model(open(model("hello_world_int8.tflite"), "rb").read(), rename))
    first = cli("run", m, "--zeros")
    assert first.code == 0 and "sha256 verified on the board" in first.err, first
    second = cli("run", m, "--zeros")
    assert second.code == 0, second
    assert "already on" in second.err and "sha256 matches" in second.err, second
    assert first.out == second.out


def test_flash_romfs_then_load_in_place(cli, model, default_board, tmp_path, monkeypatch):
    """`micronn flash --romfs` writes the model into the ROMFS region; a later boot finds it on
    /rom and micronn.load uses it there (the heap grows by far less than the model)."""
    from micronn_tools.board import open_board
    # Storage images of this test's own: two QEMU runs in a row must find the same image, which a
    # board this test session keeps open elsewhere would have locked (its QEMU would get a copy).
    monkeypatch.setenv("MICRONN_STORAGE_DIR", str(tmp_path))
    ks = model("keyword_scrambled.tflite")
    r = cli("flash", "--romfs", ks)
    assert r.code == 0, r
    assert "/rom/keyword_scrambled.tflite: 34576 bytes" in r.err and "verified on the board" in r.err
    with open_board(default_board.name) as b:
        grown = b.eval("_a - gc.mem_free()", pre="import gc, micronn\ngc.collect()\n_a = gc.mem_free()\n"
                       "_m = micronn.load('/rom/keyword_scrambled.tflite')\ngc.collect()")
    assert grown < 1024
    assert cli("flash", "--romfs").code == 2
