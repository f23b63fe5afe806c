"""tests/cpu_limit.py: a spinning child is stopped by its CPU limit, a slow but idle one is not."""
import sys

import pytest

import cpu_limit


def test_spinning_child_is_stopped():
    with pytest.raises(cpu_limit.CpuLimitExceeded):
        cpu_limit.run([sys.executable, "-c", "while True: pass"], 1)


def test_waiting_child_is_not_stopped():
    # 3 s of wall time but almost no CPU: a busy machine looks like this to a child.
    r = cpu_limit.run([sys.executable, "-c", "import time; time.sleep(3); print('done')"], 1,
                      capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "done"
