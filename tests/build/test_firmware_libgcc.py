"""The engine pulls no 64-bit integer division out of libgcc on Arm.

libgcc's __udivmoddi4 (behind __aeabi_uldivmod / __aeabi_ldivmod) carries an unwind table
(.ARM.exidx). Our linker script places it, but upstream MicroPython's qemu port's does not, so one
`uint64_t / uint64_t` in the engine breaks every stock-port build with "section .ARM.exidx LMA
overlaps section .data" (it did: mn_flexbuf.c). This reads the link maps of the test firmware
(`make firmware-test`) and names the object that asked for the helper, long before the upstream
port build (tests/build/test_upstream_ports.py) would fail.
"""
import re

import pytest

from micronn_tools import boards

# libgcc members that hold 64-bit division (the __aeabi_* entry points pull in the first one)
DIV64 = ("_udivmoddi4.o", "_divdi3.o", "_udivdi3.o", "_moddi3.o", "_umoddi3.o", "_aeabi_ldivmod.o",
         "_aeabi_uldivmod.o")
ARM = [b.name for b in boards.emulated_boards() if (b.arch or "").startswith("armv")]


def requests(map_text):
    """{(archive member, requesting file, symbol)} from the map's archive-member section."""
    head = map_text.split("\n\n", 2)[:2]
    lines = "\n".join(head).splitlines()
    out = set()
    for i, line in enumerate(lines):
        m = re.match(r"\S*libgcc\.a\(([^)]+)\)(?:\s+(\S+) \((\S+)\))?\s*$", line)
        if not m:
            continue
        if m.group(2):   # short names: the requester on the same line
            out.add((m.group(1), m.group(2), m.group(3)))
        elif i + 1 < len(lines):
            r = re.match(r"\s+(\S+) \((\S+)\)\s*$", lines[i + 1])
            if r:
                out.add((m.group(1), r.group(1), r.group(2)))
    return out


@pytest.mark.parametrize("board", ARM)
def test_no_64bit_division_from_libgcc(board):
    path = boards.build_dir() / board / "firmware.map"   # (conftest: MICRONN_BUILD_DIR = build/test)
    if not path.exists():
        pytest.skip(f"no test firmware for {board} (make firmware-test)")
    text = path.read_text(errors="replace")
    assert "Archive member included" in text, "unexpected link map format"
    ours = str(path.parent / "micronn") + "/"   # the engine and the binding (the port's own files may divide)
    bad = sorted((m, f, s) for m, f, s in requests(text) if m in DIV64 and f.startswith(ours))
    assert not bad, "64-bit division from libgcc (its .ARM.exidx breaks upstream ports' links): " + \
        "; ".join(f"{f} needs {s} ({m})" for m, f, s in bad)


def test_requests_parser():
    sample = ("Archive member included to satisfy reference by file (symbol)\n\n"
              "/x/libgcc.a(_aeabi_uldivmod.o)\n"
              "                              /b/engine/mn_flexbuf.o (__aeabi_uldivmod)\n"
              "/x/libgcc.a(_udivmoddi4.o)    /x/libgcc.a(_aeabi_uldivmod.o) (__udivmoddi4)\n\n"
              "Discarded input sections\n")
    assert requests(sample) == {("_aeabi_uldivmod.o", "/b/engine/mn_flexbuf.o", "__aeabi_uldivmod"),
                                ("_udivmoddi4.o", "/x/libgcc.a(_aeabi_uldivmod.o)", "__udivmoddi4")}
