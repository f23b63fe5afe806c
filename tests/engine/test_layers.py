"""The engine core is in layers with every call pointing down (usermod/micronn/engine/README.md).

Checked on what the linker sees, not on the text: each core file is compiled on its own and
`nm` gives the functions and data it defines and the ones it uses; a file that uses a symbol
another file defines depends on it. The core files' graph must have no circle, and kernels
must reach the interpreter only through mn_nested.c (ops that run a subgraph).
"""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENGINE = ROOT / "usermod" / "micronn" / "engine"
CC = shutil.which("gcc") or shutil.which("cc")
NM = shutil.which("nm")
ARM_CC = shutil.which("arm-none-eabi-gcc")
# Backends built for a target: compiled as op-selected firmwares compile them (tests/engine/Makefile).
TARGET_FLAGS = {"dsp": ["-mthumb", "-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"],
                "mve": ["-mthumb", "-mcpu=cortex-m55", "-mfloat-abi=hard"]}

pytestmark = pytest.mark.skipif(not CC or not NM, reason="needs a C compiler and nm")

# Files kernels may call into: layers 0-3 and the nested-interpreter client (README's table).
KERNEL_REACHABLE = {"mn_fb.c", "mn_util.c", "mn_planner.c", "mn_registry.c", "mn_quant.c", "mn_opnames.c",
                    "mn_options.c", "mn_flexbuf.c", "mn_model.c", "mn_verify.c", "mn_arena.c", "mn_context.c", "mn_node.c",
                    "mn_const.c", "mn_tables.c", "mn_nested.c", "mn_resource.c", "mn_delegate.c"}


def _symbols(src, out_dir):
    obj = out_dir / (src.parent.name + "_" + src.stem + ".o")
    backend = src.parent.name
    cc = [ARM_CC, *TARGET_FLAGS[backend], f"-DMICRONN_KERNELS_{backend.upper()}=1"] if backend in TARGET_FLAGS \
        else [CC, "-DMICRONN_KERNELS_GENERIC=1"]
    subprocess.run([*cc, "-std=c99", "-O1", "-c", "-I", str(ENGINE), "-I", str(ENGINE / "kernels" / "reference"),
                    "-o", str(obj), str(src)], check=True)
    defined, used = set(), set()
    for line in subprocess.run([NM, str(obj)], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDRB":
            defined.add(parts[2])
    return defined, used


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    out = tmp_path_factory.mktemp("layers")
    core = sorted(ENGINE.glob("*.c"))
    kernels = [k for k in sorted(ENGINE.glob("kernels/*/*.c")) + sorted(ENGINE.glob("kernels/*.c"))
               if k.parent.name not in TARGET_FLAGS or ARM_CC]
    syms = {src: _symbols(src, out) for src in core + kernels}
    owner = {s: src for src in core for s in syms[src][0]}
    deps = {src: {owner[s] for s in syms[src][1] if s in owner and owner[s] != src} for src in syms}
    return core, kernels, deps


def _cycles(nodes, deps):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in deps[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w.name)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def test_core_files_have_no_circle(graph):
    core, _, deps = graph
    core_deps = {f: {d for d in deps[f] if d in core} for f in core}
    assert len(core) >= 20
    assert _cycles(core, core_deps) == []


def test_kernels_call_only_the_lower_layers(graph):
    _, kernels, deps = graph
    bad = {k.relative_to(ENGINE).as_posix(): sorted(d.name for d in deps[k] if d.name not in KERNEL_REACHABLE)
           for k in kernels}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_check_sees_a_circle(graph, tmp_path):
    """The check itself: a file calling up (the planner into the interpreter) is a circle."""
    core, _, deps = graph
    by_name = {f.name: f for f in core}
    core_deps = {f: {d for d in deps[f] if d in core} for f in core}
    core_deps[by_name["mn_planner.c"]] = core_deps[by_name["mn_planner.c"]] | {by_name["mn_interp.c"]}
    assert any("mn_planner.c" in c and "mn_interp.c" in c for c in _cycles(core, core_deps))
