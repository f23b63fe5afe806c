"""Every command block of README.md, usermod/micronn/README.md and host_tools/README.md is run.

`test_blocks_are_known` extracts the shell blocks (```sh fences, also inside list items, and
indented blocks that start with a command) and requires each to be one of the literal copies
below, so a block that changes or appears fails until its copy here is updated; the other tests
run each block as written, with only these substitutions: firmware goes to build/docs/ (not the
build/<BOARD> that the board tests share), `make setup` is left out (CI has just run it; it may
install packages), a real board's port (/dev/ttyACM0, /dev/ttyUSB0, none here) must give a clean
`micronn: error` (exit 1), pytest runs on a real board are collected only, and placeholder paths
(/path/to/micronn) name this repo. What a block claims in its comments (outputs, arena figures)
is checked against what it printed.

These tests and tests/build/test_upstream_ports.py share build directories: they run on one
xdist worker (tests/conftest.py: SHARED_BUILD_DIRS).
"""
import ast
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from micronn_tools import repo_root
from micronn_tools.board import QemuBoard

ROOT = Path(repo_root())
MODELS_DIR = Path(os.environ.get("MICRONN_MODELS_DIR", ROOT.parent / "shared" / "models"))
MICROPY = Path(os.environ.get("MICROPY_DIR", ROOT / "build" / "micropython"))
DOCS_BUILD = ROOT / "build" / "docs"
DOCS = ("README.md", "usermod/micronn/README.md", "host_tools/README.md")
COMMAND_WORDS = ("make", "pytest", ".venv/bin/pytest", "micronn", "python", "mpremote", "cd")

pytestmark = pytest.mark.timeout(1800)


def command_blocks(text):
    blocks = [textwrap.dedent(m.group(3)) for m in
              re.finditer(r"^( *)```(sh|bash|console)\n(.*?)^\1```", text, re.M | re.S)]
    for m in re.finditer(r"(?:\A|\n\n)((?:    .*\S.*\n)+)", text):
        block = textwrap.dedent(m.group(1))
        if block.split()[0] in COMMAND_WORDS:
            blocks.append(block)
    return blocks


def doc(name):
    return (ROOT / name).read_text()


# ---- the literal copies -----------------------------------------------------------------------
README_QUICKSTART = """\
make demo     # person detection on the default emulated board (Cortex-M4F under QEMU)
make test     # host engine tests, firmware for every board, tests on every emulated board
"""
README_SPEECH = """\
make demo-speech    # both models built in, the shared clips copied to the default board
"""
README_OWN_PORT = """\
cd micropython/ports/qemu
make BOARD=MPS2_AN385 USER_C_MODULES=/path/to/micronn/usermod \\
    MICRONN_MODELS=/path/to/model.tflite      # optional: built in, micronn.models['model']
"""
README_EXAMPLE = """\
make firmware MODELS="$PWD/../shared/models/person_detect.tflite"
make run &                        # first line: the pty, e.g. /dev/pts/3
mpremote connect /dev/pts/3 exec "
import micronn
it = micronn.Interpreter(micronn.load('person_detect'))
it.input(0)[:] = bytes(96 * 96)   # a black frame
it.invoke()
print(it.output(0)[0], it.output(0)[1], it.stats()['needed'])"
"""
README_CLI = """\
make setup && . .venv/bin/activate
M=../shared/models
micronn inspect $M/person_detect.tflite               # 31 ops, all supported; int8 [1,96,96,1]; arena
python -c "from micronn_tools.cmd_demo import bmp_to_input; import numpy as np; \\
np.save('person.npy', bmp_to_input('$M/person.bmp'))"   # BMP pixel rows, top-down, as int8
micronn run $M/person_detect.tflite --input person.npy                 # prints [[-113  113]]
micronn run $M/person_detect.tflite --input person.npy --output scores.npy
micronn bench $M/person_detect.tflite --plot person_detect.png
micronn run $M/person_detect.tflite --input person.npy --port /dev/ttyACM0   # a real board
"""
README_HIL = """\
.venv/bin/pytest tests/hil tests/device --port /dev/ttyACM0 --board NETDUINOPLUS2
"""
USERMOD_BUILD = """\
make -C port BOARD=MPS2_AN386 USER_C_MODULES=$PWD/usermod \\
    MICRONN_MODELS="$PWD/../shared/models/person_detect.tflite" \\
    MICRONN_OPS="AVERAGE_POOL_2D CONV_2D DEPTHWISE_CONV_2D RESHAPE SOFTMAX"
"""
USERMOD_TESTS = """\
pytest tests/device --board UNIX          # or MPS2_AN386, all, ...
"""
HOST_CLI = """\
make setup                                    # once: toolchains, QEMU, MicroPython, .venv
make -C tests/engine lib                      # the host engine library used by inspect/convert/run
. .venv/bin/activate
M=../shared/models

micronn inspect $M/person_detect.tflite       # 31 ops, all supported; input int8 [1,96,96,1]; arena
make firmware MODELS="$PWD/$M/person_detect.tflite"   # default board, model built in (optional)

# an input: the BMP's pixel bytes, rows top-down, as int8 [1,96,96,1]
python -c "from micronn_tools.cmd_demo import bmp_to_input; import numpy as np; \\
np.save('person.npy', bmp_to_input('$M/person.bmp'))"

micronn run $M/person_detect.tflite --input person.npy               # prints [[-113  113]]
micronn run $M/person_detect.tflite --input person.npy --output scores.npy
micronn bench $M/person_detect.tflite --plot person_detect.png       # instructions, per-op, arena
micronn run $M/person_detect.tflite --input person.npy --port /dev/ttyACM0   # a real board
"""
HOST_ESP32_FLASH = """\
micronn convert person_detect.tflite -o person_detect.bin          # verified by the engine
micronn flash --esp32 --port /dev/ttyUSB0 --firmware firmware.bin \\
    --model person_detect.bin --partitions partitions.csv --dry-run  # shows the command
micronn flash --esp32 --port /dev/ttyUSB0 --firmware firmware.bin \\
    --model person_detect.bin --partitions partitions.csv
"""
README_PARTITION = """\
micronn partition ../shared/models/person_detect.tflite --backend mve -o pd_mve.tflite
#   pd_mve.tflite: 2 subgraph(s) on mve holding 28 of 31 ops; 378280 bytes
#     subgraph 1: ops 0-26, inputs [88], outputs [50]
#     subgraph 2: ops 28, inputs [27], outputs [28]
micronn inspect pd_mve.tflite --no-tensors
#   Partition: 2 delegated subgraph(s) (custom op micronn_subgraph)
#     op 0 micronn_subgraph: subgraph 1 on mve, 27 ops (CONV_2D x13, DEPTHWISE_CONV_2D x14)
#     op 2 micronn_subgraph: subgraph 2 on mve, 1 ops (CONV_2D x1)
"""
HOST_ESP32_ROMFS = """\
micronn flash --romfs person_detect.tflite --port /dev/ttyUSB0
mpremote connect /dev/ttyUSB0 romfs deploy models/      # a directory holding the .tflite
"""
HOST_ESP32_ESPTOOL = """\
python -m esptool --chip esp32 --port /dev/ttyUSB0 --baud 460800 write-flash \\
    --flash-mode keep --flash-size keep 0x1000 firmware.bin 0x3b0000 person_detect.bin
"""

KNOWN = {
    "README.md": [README_QUICKSTART, README_SPEECH, README_OWN_PORT, README_EXAMPLE, README_CLI, README_HIL, README_PARTITION],
    "usermod/micronn/README.md": [USERMOD_BUILD, USERMOD_TESTS],
    "host_tools/README.md": [HOST_CLI, HOST_ESP32_FLASH, HOST_ESP32_ESPTOOL, HOST_ESP32_ROMFS],
}


@pytest.mark.parametrize("name", DOCS)
def test_blocks_are_known(name):
    """Each command block is one of the copies this file runs (and each copy is in the doc)."""
    assert sorted(command_blocks(doc(name))) == sorted(KNOWN[name])


# ---- helpers -------------------------------------------------------------------------------------
def env(**extra):
    e = dict(os.environ)
    # the worktree's host tools, also for the `micronn` console script of the shared .venv
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "host_tools")] + [p for p in [e.get("PYTHONPATH")] if p])
    e["MICRONN_BUILD_DIR"] = str(DOCS_BUILD)
    # under `make test` the blocks' own make calls would inherit make's flags and print
    # "Entering directory" lines: a user types them in a plain shell
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        e.pop(k, None)
    e["PATH"] = str(ROOT / ".venv" / "bin") + os.pathsep + e["PATH"]  # mpremote, micronn
    e.update(extra)
    return e


def bash(script, cwd=ROOT, timeout=1500, **extra):
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env(**extra),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"--- script ---\n{script}\n--- stdout ---\n{r.stdout[-4000:]}\n" \
                              f"--- stderr ---\n{r.stderr[-4000:]}"
    return r.stdout


def real_board_fails_cleanly(script, port):
    """A line that talks to a real board: it must fail with exit status 1 (no board here)."""
    out = []
    for line in script.splitlines():
        if "--port " + port in line and not line.endswith("\\"):
            cmd, _, comment = line.partition(" #")
            line = cmd + " || test $? -eq 1" + (" #" + comment if comment else "")
        out.append(line)
    return "\n".join(out)


FIRMWARE = "FIRMWARE_BUILD=" + str(DOCS_BUILD / "MPS2_AN386")


def docs_firmware(script):
    return re.sub(r"^make firmware (.*?)(\s*#.*)?$", r"make firmware \1 " + FIRMWARE + r"\2", script, flags=re.M)


# ---- README.md -----------------------------------------------------------------------------------
def test_readme_quickstart_demo():
    text = doc("README.md")
    assert README_QUICKSTART in command_blocks(text)
    # `make test` is what CI runs (.ci/run), and so what runs this test
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make setup\nmake test\n" in ci
    out = bash("make demo " + FIRMWARE)
    shown = re.search(r"prints:\n\n```\n(.*?)```", text, re.S).group(1)
    # every line as printed; the instruction count within 1% (it moves with every kernel change,
    # which should not have to touch the README)
    count = re.compile(r"(instructions per inference: )([\d,]+)")
    got = out[out.index(shown.splitlines()[0]):].splitlines()[:len(shown.splitlines())]
    # README's figures are for the board's own kernels; `make test KERNELS=reference` checks the rest
    own_kernels = not os.environ.get("KERNELS")
    for want_line, got_line in zip(shown.splitlines(), got):
        m, g = count.search(want_line), count.search(got_line)
        if not own_kernels and (m or want_line.startswith("  arena: ")):
            assert got_line.split(":")[0] == want_line.split(":")[0], out
        elif m and g:
            want_n, got_n = (int(x.group(2).replace(",", "")) for x in (m, g))
            assert abs(got_n - want_n) <= want_n // 100, (want_line, got_line)
        else:
            assert got_line == want_line, out


def test_readme_speech_demo():
    """`make demo-speech` prints what README's "Speech from raw audio" shows (the instruction
    counts within 1%, as for `make demo`)."""
    text = doc("README.md")
    assert README_SPEECH in command_blocks(text)
    out = bash(README_SPEECH.split("#")[0].strip() + " " + FIRMWARE)
    shown = re.search(r"make demo-speech    #.*?prints\n.*?```\n(.*?)```", text, re.S).group(1).splitlines()
    got = out[out.index(shown[0]):].splitlines()[:len(shown)]
    assert len(got) == len(shown), out
    own_kernels = not os.environ.get("KERNELS")
    nums = re.compile(r"[\d,]{5,}")
    for want_line, got_line in zip(shown, got):
        if want_line.startswith("  instructions per 20 ms step"):
            w, g = ([int(x.replace(",", "")) for x in nums.findall(line)] for line in (want_line, got_line))
            assert len(w) == len(g) == 2, (want_line, got_line)
            if own_kernels:
                assert all(abs(a - b) <= a // 100 for a, b in zip(w, g)), (want_line, got_line)
        elif not own_kernels and want_line.startswith("  shared arena: "):
            assert got_line.split(":")[0] == want_line.split(":")[0], out
        else:
            assert got_line == want_line, out


def test_readme_own_port_make():
    build = ROOT / "build" / "upstream" / "qemu-MPS2_AN385"
    script = README_OWN_PORT.replace("cd micropython/", f"cd {MICROPY}/") \
        .replace("/path/to/micronn/", f"{ROOT}/") \
        .replace("/path/to/model.tflite", str(MODELS_DIR / "hello_world_int8.tflite")) \
        .replace("make BOARD=", "make -j2 FROZEN_MANIFEST= BUILD=%s BOARD=" % build)
    out = bash(script)
    # (a build that was already up to date prints neither the link nor the model table)
    assert (build / "firmware.elf").exists(), out
    assert "1 built-in model(s): hello_world_int8" in out or "firmware.elf" in out or \
        "hello_world_int8" in (build / "micronn_gen" / "micronn_models.h").read_text(), out


def test_readme_runnable_example():
    assert README_EXAMPLE in command_blocks(doc("README.md"))
    lines = README_EXAMPLE.splitlines()
    bash(docs_firmware(lines[0]))
    run = subprocess.Popen(["bash", "-c", lines[1].split("&")[0]], cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        pty = run.stdout.readline().strip()
        assert pty.startswith("/dev/pts/"), pty
        out = bash("\n".join(lines[2:]).replace("/dev/pts/3", pty), timeout=300)
    finally:
        os.killpg(run.pid, 15)
        run.wait(10)
    a, b, needed = map(int, out.split())
    assert -128 <= a <= 127 and -128 <= b <= 127 and needed > 60000, out


@pytest.mark.parametrize("name,block", [("README.md", README_CLI), ("host_tools/README.md", HOST_CLI)])
def test_cli_walkthrough(name, block):
    assert block in command_blocks(doc(name))
    script = real_board_fails_cleanly(docs_firmware(block), "/dev/ttyACM0")
    script = script.replace("make setup && ", "").replace("make setup ", "true ")
    made = [ROOT / f for f in ("person.npy", "scores.npy", "person_detect.png")]
    bash(docs_firmware("make firmware MODELS=%s" % (MODELS_DIR / "person_detect.tflite")))
    try:
        out = bash(script)
        assert "[[-113  113]]" in out, out
        assert all(f.is_file() for f in made), made
    finally:
        for f in made:
            f.unlink(missing_ok=True)


@pytest.mark.parametrize("block,target", [(README_HIL, "README.md"), (USERMOD_TESTS, "usermod/micronn/README.md")])
def test_pytest_commands_collect(block, target):
    """Board test runs: on a real board (none here) or what `make test` runs anyway: the command
    line must be valid and collect tests."""
    assert block in command_blocks(doc(target))
    cmd = block.split("#")[0].strip()
    if cmd.startswith("pytest"):
        cmd = ".venv/bin/" + cmd
    out = bash(cmd + " --collect-only -q -p no:cacheprovider")
    assert re.search(r"^\d+ tests collected", out, re.M), out[-2000:]


# ---- usermod/micronn/README.md -------------------------------------------------------------------
def test_usermod_build_block_and_arena_figures(monkeypatch):
    build = DOCS_BUILD / "usermod" / "MPS2_AN386"
    script = USERMOD_BUILD.rstrip("\n") + " BUILD=%s -j2" % build
    bash(script)
    # where QemuBoard finds it (restored after the test: the board tests that follow on this
    # worker boot the test firmware, tests/conftest.py)
    monkeypatch.setenv("MICRONN_BUILD_DIR", str(DOCS_BUILD / "usermod"))
    board = QemuBoard("MPS2_AN386")
    try:
        assert board.eval("__import__('micronn').ops()") == \
            ("AVERAGE_POOL_2D", "CONV_2D", "DEPTHWISE_CONV_2D", "RESHAPE", "SOFTMAX")
        needed = board.eval("(m.arena_needed(reuse_inputs=True), m.arena_needed())",
                            pre="import micronn\nm = micronn.Model(micronn.models['person_detect'])")
    finally:
        board.close()
    m = re.search(r"person_detect\s+#?\s*needs ([\d,]+) instead of ([\d,]+) bytes", doc("usermod/micronn/README.md"))
    claimed = tuple(int(g.replace(",", "")) for g in m.groups())
    assert claimed == needed, f"README says {claimed}, MPS2_AN386 says {needed}"


# ---- host_tools/README.md: ESP32 -----------------------------------------------------------------
def test_esp32_flash_blocks(tmp_path):
    text = doc("host_tools/README.md")
    assert HOST_ESP32_FLASH in command_blocks(text) and HOST_ESP32_ESPTOOL in command_blocks(text)
    # the partition table of step 1: upstream's partitions-4MiB.csv with vfs shrunk and `model`
    part = re.search(r"`(model, data, 0x40, (0x[0-9A-Fa-f]+), (\w+))`, shrinking `vfs` to `(0x[0-9A-Fa-f]+)`", text)
    base = (MICROPY / "ports" / "esp32" / "partitions-4MiB.csv").read_text()
    base = re.sub(r"^(vfs, +data, fat, +0x200000, +)0x200000", r"\g<1>" + part.group(4), base, flags=re.M)
    (tmp_path / "partitions.csv").write_text(base + part.group(1) + ",\n")
    shutil.copy(MODELS_DIR / "person_detect.tflite", tmp_path)
    (tmp_path / "firmware.bin").write_bytes(bytes(1024 * 1024))
    # the last command flashes a real board (none here): a clean error, exit status 1
    out = bash(HOST_ESP32_FLASH.replace("# shows the command", "").rstrip("\n") + " || test $? -eq 1",
               cwd=tmp_path)
    # --dry-run printed exactly the esptool command the README shows
    assert " ".join(out.split()) == " ".join(HOST_ESP32_ESPTOOL.replace("\\\n", " ").split())
    # contiguous up to 4 MiB
    rows = [[c.strip() for c in line.split(",")] for line in (tmp_path / "partitions.csv").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    ends = [int(r[3], 0) + (int(r[4], 0) if not r[4][-1] in "KM" else int(r[4][:-1]) * 1024) for r in rows]
    assert ends[-1] == 4 * 1024 * 1024 and max(ends) == ends[-1]


def test_readme_partition_block(tmp_path):
    """The partition example runs on the host as written and prints the lines its comments show."""
    assert README_PARTITION in command_blocks(doc("README.md"))
    block = README_PARTITION.replace("../shared/models", str(MODELS_DIR))
    for cmd, shown in re.findall(r"^(micronn .*)\n((?:#.*\n)+)", block, re.M):
        out = bash(cmd, cwd=tmp_path)
        for line in shown.splitlines():
            assert line[1:].strip() in out, (cmd, line, out)


def test_esp32_romfs_block(tmp_path):
    """Both ways of filling the ROMFS partition need a real board: each fails cleanly (exit 1,
    no traceback) here, after parsing its arguments."""
    assert HOST_ESP32_ROMFS in command_blocks(doc("host_tools/README.md"))
    shutil.copy(MODELS_DIR / "person_detect.tflite", tmp_path)
    (tmp_path / "models").mkdir()
    shutil.copy(MODELS_DIR / "person_detect.tflite", tmp_path / "models")
    for line in HOST_ESP32_ROMFS.splitlines():
        cmd = line.partition(" #")[0]
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env(), capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)
        assert "/dev/ttyUSB0" in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)


def test_readme_esp32_partition_table(tmp_path):
    """README's ROMFS partition table: contiguous, 4 MiB, and the ROMFS image of person_detect fits."""
    text = doc("README.md")
    table = re.search(r"^( *)```\n( *nvs, .*?)^\1```", text, re.S | re.M).group(2)
    rows = [[c.strip() for c in line.split(",")] for line in textwrap.dedent(table).splitlines() if line.strip()]
    end = 0x9000
    for r in rows:
        assert int(r[3], 0) == end, r
        end += int(r[4], 0)
    assert end == 4 * 1024 * 1024
    romfs = next(r for r in rows if r[0] == "romfs")
    (tmp_path / "models").mkdir()
    shutil.copy(MODELS_DIR / "person_detect.tflite", tmp_path / "models")
    bash(f"{ROOT / '.venv/bin/mpremote'} romfs --output {tmp_path / 'image.romfs'} build {tmp_path / 'models'}")
    image = (tmp_path / "image.romfs").stat().st_size
    assert image <= int(romfs[4], 0), (image, romfs)
    assert "person_detect (300,568 bytes)" in text and (MODELS_DIR / "person_detect.tflite").stat().st_size == 300568
