#!/usr/bin/env python3
"""Regenerate the support matrix in README.md from the engine's registry (`micronn ops --markdown`).

    python tools/update_readme_matrix.py [--check]

--check: exit 1 if README.md's copy is not current (what tests/engine/ops/test_op_matrix.py checks).
Needs the host library (make -C tests/engine lib).
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host_tools"))

from micronn_tools import cmd_ops  # noqa: E402


def updated(text):
    begin, end = text.index(cmd_ops.BEGIN), text.index(cmd_ops.END) + len(cmd_ops.END)
    return text[:begin] + cmd_ops.readme_block(cmd_ops.matrix()) + text[end:]


def main(argv):
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = updated(text)
    if "--check" in argv:
        if new != text:
            print("README.md: support matrix is stale; run tools/update_readme_matrix.py", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
