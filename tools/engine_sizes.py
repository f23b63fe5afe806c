#!/usr/bin/env python3
"""Engine bytes (.text + .rodata the link kept from usermod/micronn/engine) per object file of a
firmware, from its map: the breakdown of micronn_tools.bench_report.code_size() (same total).

    .venv/bin/python tools/engine_sizes.py build/MPS2_AN386/firmware.map [--sections]

--sections also lists the largest input sections (functions, tables) with their objects.
"""
import collections
import re
import sys


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    paths = [a for a in args if not a.startswith("--")]
    if len(paths) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(paths[0], errors="replace") as f:
        text = f.read().partition("Linker script and memory map")[2]   # before: discarded sections
    row = re.compile(r"^\s+(\.(?:text|rodata)\S*)?\s*0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o)\s*$")
    per, sections, pending = collections.Counter(), [], None
    for line in text.splitlines():
        head = re.match(r"^ (\.(?:text|rodata)\S*)\s*$", line)
        if head:
            pending = head.group(1)
            continue
        m = row.match(line)
        if m and (m.group(1) or pending) and "/engine/" in m.group(3):
            obj, size = m.group(3).split("/engine/")[1], int(m.group(2), 16)
            per[obj] += size
            sections.append((size, m.group(1) or pending, obj))
        pending = None
    print("%7d  total" % sum(per.values()))
    for obj, size in per.most_common():
        print("%7d  %s" % (size, obj))
    if "--sections" in args:
        print()
        for size, sec, obj in sorted(sections, reverse=True)[:60]:
            print("%7d  %-50s %s" % (size, sec, obj))
    return 0


if __name__ == "__main__":
    sys.exit(main())
