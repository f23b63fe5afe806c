"""Ctrl-C stops a long invoke() between ops with KeyboardInterrupt, and the Interpreter keeps
working (issue 9). The engine polls a stop callback before each op; the binding wires it to
MicroPython's pending exception (set by the UART interrupt on a board, SIGINT on UNIX)."""
import signal
import subprocess
import threading
import time

from devhelp import last_literal
from micronn_tools.board import UnixBoard

LOOP = """
it = micronn.Interpreter(m, profile=True)
it.input(0)[:] = bytes(it.input(0).nbytes)
it.invoke()
ref = bytes(it.output(0))
print('go')
n = 0
try:
    while True:
        it.invoke()
        n += 1
except KeyboardInterrupt:
    pass
p = it.profile()
calls = (p[0][2], p[-1][2])
it.invoke()
print((calls, n, it.invokes, bytes(it.output(0)) == ref))
"""


def _model(dev):
    # person_detect: ~85 M instructions per invoke, 31 ops; where it fits (not in 128 KB of RAM)
    spec = dev.board.spec
    if "person_detect" in dev.frozen() and not (spec and spec.ram_bytes and spec.ram_bytes < 1 << 20):
        return "person_detect"
    return "micro_speech_quantized"


def _interrupt_unix(board, code, tmp_path, delay):
    script = tmp_path / "loop.py"
    script.write_text(code)
    p = subprocess.Popen(board._argv(script), cwd=board.fs, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "go"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    return out


def _interrupt_serial(board, code, delay):
    timer = []

    def on_data(chunk):
        if b"go" in chunk and not timer:
            timer.append(threading.Timer(delay, lambda: board._ser.write(b"\x03")))
            timer[0].start()

    try:
        return board.exec(code, timeout=240, on_data=on_data)
    finally:
        for t in timer:
            t.cancel()


def test_ctrl_c_stops_invoke_between_ops(dev, tmp_path):
    code = dev.load_code(_model(dev)) + LOOP
    results = []
    # Ctrl-C lands inside an invoke (and before its last op) nearly always: the loop does little
    # else. Three tries make a landing between invokes (which cannot show the stop) irrelevant.
    for attempt in range(3):
        if isinstance(dev.board, UnixBoard):
            out = _interrupt_unix(dev.board, code, tmp_path, 0.5 + attempt)
        else:
            out = _interrupt_serial(dev.board, code, 1.0 + attempt)
        (first, last), n, invokes, same = last_literal(out)
        results.append((first, last, n))
        assert same, "the interpreter gave a different answer after the interrupt"
        assert invokes == n + 2
        if first == last + 1:
            break
    assert results[-1][0] == results[-1][1] + 1, \
        f"invoke was never stopped between ops (op calls first/last, loops): {results}"
    assert results[-1][2] > 0


WHILE_LOOP = """
it = micronn.Interpreter(m)
it.input(1)[:] = b'\\x03\\x00\\x00\\x00'
print('go')
try:
    it.invoke()
    r = 'finished'
except KeyboardInterrupt:
    r = 'interrupted'
it.input(1)[:] = bytes(4)
it.invoke()
print((r, bytes(it.output(1))))
"""


def test_ctrl_c_stops_a_while_that_never_ends(dev, tmp_path, monkeypatch):
    """A WHILE whose cond stays true (tests/engine/ops/models_control.endless_while) is stopped by
    Ctrl-C like a long invoke (WHILE polls the stop callback each iteration), and the
    Interpreter runs the model again afterwards (0 iterations)."""
    import os
    import sys

    import numpy as np

    import devhelp
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))
    import models_control as MC
    (tmp_path / "cf_endless_while.tflite").write_bytes(MC.endless_while(np.random.default_rng(5)).tflite())
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    code = dev.load_code("cf_endless_while") + WHILE_LOOP
    if isinstance(dev.board, UnixBoard):
        out = _interrupt_unix(dev.board, code, tmp_path, 0.5)
    else:
        out = _interrupt_serial(dev.board, code, 1.0)
    assert last_literal(out) == ("interrupted", bytes(4))
