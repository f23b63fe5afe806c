"""usermod/micropython.cmake as MicroPython's cmake ports (esp32, rp2) use it.

No cmake port can be built here (no ESP-IDF, no pico-sdk), so a small cmake project does what
those ports do: include upstream's own py/usermod.cmake with USER_C_MODULES set, link the
`usermod` target, then compiles the module's engine and libm sources (the binding needs a port's
generated headers) with the include directories, definitions and per-source options the module
declared, at the -Os a port builds with.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from micronn_tools import repo_root

ROOT = Path(repo_root())
MICROPY = Path(os.environ.get("MICROPY_DIR", ROOT / "build" / "micropython"))
MODELS_DIR = Path(os.environ.get("MICRONN_MODELS_DIR", ROOT.parent / "shared" / "models"))

PROJECT = """
cmake_minimum_required(VERSION 3.12)
project(port C)
set(MICROPY_DIR {micropy})
include(${{MICROPY_DIR}}/py/usermod.cmake)
# what a port compiles of it (minus the binding, which needs the port's generated headers)
list(FILTER MICROPY_SOURCE_USERMOD INCLUDE REGEX "/(engine|libm)/")
add_library(engine STATIC ${{MICROPY_SOURCE_USERMOD}})
target_include_directories(engine PRIVATE ${{MICROPY_DIR}})
get_target_property(defs usermod_micronn INTERFACE_COMPILE_DEFINITIONS)
target_compile_definitions(engine PRIVATE ${{defs}})
target_include_directories(engine PRIVATE ${{MICROPY_INC_USERMOD}})
"""


def _make_lists(backends):
    """engine.mk's source list and hot list as make evaluates them, relative to usermod/micronn."""
    engine = ROOT / "usermod" / "micronn" / "engine"
    prog = (f"MICRONN_ENGINE := {engine}\nMICRONN_BACKENDS := {backends}\ninclude {engine}/engine.mk\n"
            "all:\n\t@echo $(MICRONN_ENGINE_SRC)\n\t@echo $(MICRONN_HOT_SRC)\n")
    # a clean make: under `make test` the parent's MAKEFLAGS would add "Entering directory" lines
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-"], input=prog, capture_output=True,
                         text=True, check=True, env=env)
    src, hot = out.stdout.splitlines()
    rel = lambda line: {Path(f).relative_to(engine.parent).as_posix() for f in line.split()}
    return rel(src), rel(hot)


@pytest.mark.parametrize("form", ["micropython.cmake", "directory"])
def test_cmake_port_includes_the_usermod(tmp_path, form):
    if shutil.which("cmake") is None:
        pytest.fail("cmake is not installed (make setup installs it)")
    (tmp_path / "CMakeLists.txt").write_text(PROJECT.format(micropy=MICROPY))
    modules = ROOT / "usermod" / ("micropython.cmake" if form == "micropython.cmake" else "")
    build = tmp_path / "build"
    conf = subprocess.run(
        ["cmake", "-S", str(tmp_path), "-B", str(build), "-DCMAKE_C_FLAGS=-Os",
         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DUSER_C_MODULES=" + str(modules),
         "-DMICRONN_MODELS=" + str(MODELS_DIR / "hello_world_int8.tflite")],
        capture_output=True, text=True, timeout=300)
    assert conf.returncode == 0, conf.stdout + conf.stderr
    assert "Found User C Module(s): usermod_micronn" in conf.stdout + conf.stderr
    table = (build / "micronn_gen" / "micronn_models.h").read_text()
    assert "hello_world_int8" in table

    commands = json.loads((build / "compile_commands.json").read_text())
    by_file = {Path(c["file"]).relative_to(ROOT / "usermod" / "micronn").as_posix(): c["command"]
               for c in commands}
    assert "engine/mn_interp.c" in by_file and "libm/exp.c" in by_file, sorted(by_file)
    # the engine's kernels and mn_quant.c at -O2 after the port's -Os; the rest of the engine (not
    # per-inference work) and the port's other files keep -Os
    assert by_file["engine/kernels/reference/conv.c"].split("-Os")[-1].split().count("-O2") == 1
    assert by_file["engine/mn_quant.c"].split("-Os")[-1].split().count("-O2") == 1
    assert "-O2" not in by_file["engine/mn_interp.c"]
    assert "-O2" not in by_file["libm/exp.c"]
    assert "-DMICRONN_OWN_LIBM_DBL=1" in by_file["engine/mn_interp.c"]
    # the same sources, and the same ones at -O2, as make ports build (engine/engine.mk, read once)
    src, hot = _make_lists("generic")
    assert {f for f in by_file if f.startswith("engine/")} == src
    assert {f for f in by_file if f.startswith("engine/") and "-O2" in by_file[f].split("-Os")[-1].split()} == hot

    if form == "directory":
        return  # same file, same configuration: compiled once, below
    b = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True, timeout=900)
    assert b.returncode == 0, b.stdout[-4000:] + b.stderr[-4000:]
    # the engine asks the port for no double libm function: it calls micronn_exp & co.
    undefined = subprocess.run(["nm", "-A", "-u", str(build / "libengine.a")], capture_output=True,
                               text=True, check=True).stdout.splitlines()
    engine_refs = {line.split()[-1] for line in undefined if "/libm/" not in line and
                   not any(f + ".c.o:" in line for f in ("exp", "floor", "round", "scalbn"))}
    assert {"micronn_exp", "micronn_floor", "micronn_round"} <= engine_refs
    assert not {"exp", "floor", "round"} & engine_refs
