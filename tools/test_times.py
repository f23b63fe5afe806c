#!/usr/bin/env python3
"""Where a test run's minutes went: totals per board and per test file from pytest's JUnit XML.

    python3 tools/test_times.py [build/test-reports/hil.xml] [--top N]

`make test-hil` writes build/test-reports/hil.xml. Each test's time is its setup, call and
teardown (the board fixture's QEMU boot lands in the first test of a board). The board groups
run one after the other on an xdist worker (tests/conftest.py), so a group's total is a lower
bound for the run's wall time, and the sum over everything divided by the workers is another.
"""
import argparse
import collections
import re
import xml.etree.ElementTree as ET
from pathlib import Path

BOARDS = sorted(p.parent.name for p in (Path(__file__).resolve().parent.parent / "boards").glob("*/board.json"))
BOARD_RE = re.compile(r"\[(?:[^\]]*-)?(%s)(?:-[^\]]*)?\]$" % "|".join(map(re.escape, BOARDS)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("xml", nargs="?", default="build/test-reports/hil.xml")
    ap.add_argument("--top", type=int, default=15, help="slowest tests to list (default 15)")
    args = ap.parse_args()
    cases = []
    for tc in ET.parse(args.xml).getroot().iter("testcase"):
        name = tc.get("name", "")
        path = tc.get("classname", "").replace(".", "/") + ".py"
        cases.append((float(tc.get("time", 0)), path, name))
    total = sum(t for t, _, _ in cases)
    by_board, by_file = collections.Counter(), collections.Counter()
    for t, path, name in cases:
        m = BOARD_RE.search(name)
        by_board[m.group(1) if m else "(no board)"] += t
        by_file[path] += t
    print(f"{len(cases)} tests, {total:.0f} s of test time in all")
    print("\nper board (a board's tests run one after the other on one worker):")
    for k, t in by_board.most_common():
        print(f"  {t:8.0f} s  {k}")
    print("\nper test file:")
    for k, t in by_file.most_common(20):
        print(f"  {t:8.0f} s  {k}")
    print(f"\nslowest {args.top} tests:")
    for t, path, name in sorted(cases, reverse=True)[:args.top]:
        print(f"  {t:8.1f} s  {path}::{name}")


if __name__ == "__main__":
    main()
