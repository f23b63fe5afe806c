"""A 10-layer int8 fully-connected autoencoder built like tests/engine/test_fc_stack.py's (MLPerf
Tiny's anomaly detector shape, 640 -> 128 x4 -> 8 -> 128 x4 -> 640, scaled down by 4 so that it
fits the smallest board filesystem; odd widths so that the three-rows-per-pass dsp loop ends with
one or two rows left) on the board: bit-exact with the LiteRT reference kernels, and as lean as the
engine's host figure. With one batch row no backend takes a kernel scratch buffer (the dsp
FULLY_CONNECTED expands its input in registers instead of keeping an int16 copy of the row), so
the planned bytes are the activations alone."""
import os
import sys

import numpy as np

import devhelp
import oracle

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine"))
import test_fc_stack as FC  # noqa: E402


DIMS = [160, 32, 31, 32, 32, 8, 32, 32, 33, 32, 160]


def test_fc_stack_on_board(dev, board, tmp_path, monkeypatch):
    data = FC._model(dims=DIMS)
    (tmp_path / "fc_stack.tflite").write_bytes(data)
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    sets = [[x] for x in FC._inputs(DIMS[0])]
    got = dev.run("fc_stack", sets)
    for k, (inputs, outs) in enumerate(zip(sets, got)):
        devhelp.assert_matches(outs[0], oracle.run(data, inputs)[0], f"fc_stack input set {k}")
        assert len(np.unique(outs[0])) > 10, "saturated: the test would not see a wrong offset"
    dev.clean()
    code = dev.load_code("fc_stack") + """
it = micronn.Interpreter(m, reuse_inputs=True)
s = it.stats()
print((s['scratch_buffers'], s['nonpersistent'], sorted(set(s['op_persistent'])), micronn.kernels()))
"""
    n_scratch, planned, per_op, kernels = dev.eval_last(code)
    assert n_scratch == 0, (board.name, n_scratch)
    # the largest layer's input and output (32 + 160, each 16-byte rounded), nothing else
    assert planned == 192, (board.name, planned)
    # every layer keeps the same data, whatever its width (nothing per unit); MVE's variant keeps
    # its per-unit weight sums (speed over memory, as CMSIS-NN's kernel sums)
    assert len(per_op) == 1 or "mve" in kernels, (board.name, per_op, kernels)
