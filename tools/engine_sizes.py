#!/usr/bin/env python3
"""Engine bytes (.text + .rodata the link kept from usermod/micronn/engine) per object file of a
firmware, from its map: the breakdown of micronn_tools.bench_report.code_size() (same total).

    .venv/bin/python tools/engine_sizes.py build/MPS2_AN386/firmware.map [--sections]

--sections also lists the largest input sections (functions, tables) with their objects.
"""
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host_tools"))
from micronn_tools.bench_report import engine_sections  # noqa: E402


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    paths = [a for a in args if not a.startswith("--")]
    if len(paths) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(paths[0], errors="replace") as f:
        sections = engine_sections(f.read())
    per = collections.Counter()
    for size, _, obj in sections:
        per[obj] += size
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
