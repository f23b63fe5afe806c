"""Helpers for the device tests: run models on a board and on the oracle."""
import ast
import os
import struct

import numpy as np

import oracle

MODELS_DIR = (os.environ.get("MICRONN_MODELS_DIR") or os.environ.get("MICRONN_MODELS")
              or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "..", "shared", "models"))

_frozen_cache = {}


def model_path(name):
    return os.path.join(MODELS_DIR, name if "." in name else name + ".tflite")


def model_bytes(name):
    with open(model_path(name), "rb") as f:
        return f.read()


def bmp_pixels_top_down(path):
    """Pixel bytes of an 8-bit greyscale BMP, rows top-down (as TFLM's person_detection test)."""
    with open(path, "rb") as f:
        d = f.read()
    off = struct.unpack_from("<I", d, 10)[0]
    w, h = struct.unpack_from("<ii", d, 18)
    bpp = struct.unpack_from("<H", d, 28)[0]
    assert bpp == 8, bpp
    stride = (w + 3) & ~3
    rows = [d[off + r * stride: off + r * stride + w] for r in range(abs(h))]
    if h > 0:  # stored bottom-up
        rows.reverse()
    return b"".join(rows), off, w, h, stride


def last_literal(out):
    """The value printed on the last non-empty line (repr of a literal)."""
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    return ast.literal_eval(lines[-1])


_CLEAN = """
import gc
for _k in list(globals()):
    if not _k.startswith('_') and type(globals()[_k]) is not type(gc):
        del globals()[_k]
gc.collect()
"""


class DeviceRunner:
    def __init__(self, board):
        self.board = board
        self.files = []

    def put(self, src, remote):
        """board.put, remembering the file so that remove_files() deletes it after the test."""
        self.board.put(src, remote)
        if remote not in self.files:
            self.files.append(remote)

    def remove_files(self):
        if self.files:
            self.board.exec("import os\nfor p in %r:\n    try:\n        os.remove(p)\n"
                            "    except OSError:\n        pass\n" % (self.files,))
            self.files = []

    def clean(self):
        """Start from a fresh VM: a soft reset clears the heap, globals and qstr pools that
        earlier tests left behind (serial boards keep them between exec calls, and on a board
        with ~110 KB of heap, fragmentation would otherwise decide whether a 90 KB arena fits).
        Falls back to deleting globals where a soft reset is not available."""
        try:
            self.board.soft_reset()
        except NotImplementedError:
            self.board.exec(_CLEAN)

    def exec(self, code, timeout=120):
        return self.board.exec(code, timeout=timeout)

    def eval_last(self, code, timeout=120):
        return last_literal(self.exec(code, timeout=timeout))

    def frozen(self):
        key = id(self.board)
        if key not in _frozen_cache:
            _frozen_cache[key] = self.eval_last("import micronn\nprint(sorted(micronn.models))")
        return _frozen_cache[key]

    def load_code(self, name, var="m"):
        """Device code that binds `var` to the Model `name` (frozen, else copied to the board)."""
        if name in self.frozen():
            return f"import micronn\n{var} = micronn.Model(micronn.models[{name!r}])\n"
        remote = f"{name}.tflite"
        self.put(model_path(name), remote)
        return f"import micronn\n{var} = micronn.load_file({remote!r})\n"

    def run(self, name, input_sets, reset_each=True, extra_args="", timeout=300):
        """Run model `name` on the board once per entry of `input_sets` (each a list of arrays,
        one per model input) and return [[np.ndarray per output], ...].

        Inputs go to the board's filesystem and are read straight into the input tensors
        (f.readinto(tensor)); outputs come back through files (f.write(tensor)). Small jobs run in
        one Interpreter (state carries over when reset_each is False); large ones (boards with a
        small filesystem) run one input set per call, cleaning up in between."""
        mb = model_bytes(name)
        ind = oracle.input_details(mb)
        outd = oracle.output_details(mb)
        per_set = sum(int(np.prod(d["shape"])) * np.dtype(d["dtype"]).itemsize for d in ind + outd)
        if per_set * len(input_sets) <= 24 * 1024 or not reset_each:
            return self._run_batch(name, input_sets, 0, reset_each, extra_args, timeout, ind, outd)
        results = []
        for k, inputs in enumerate(input_sets):
            results += self._run_batch(name, [inputs], k, reset_each, extra_args, timeout, ind, outd)
        return results

    def _run_batch(self, name, input_sets, first, reset_each, extra_args, timeout, ind, outd):
        self.clean()  # drop the previous batch's Interpreter
        files = []
        for k, inputs in enumerate(input_sets, first):
            for i, (d, x) in enumerate(zip(ind, inputs)):
                data = np.asarray(x, dtype=d["dtype"]).reshape(d["shape"]).tobytes()
                self.board.put(data, f"mn_in_{k}_{i}.bin")
                files.append(f"mn_in_{k}_{i}.bin")
        load = self.load_code(name)
        self.clean()  # the transfers above fragment a small heap; the run gets a fresh one
        code = load + f"""
it = micronn.Interpreter(m{extra_args})
for k in range({first}, {first + len(input_sets)}):
    for i in range(it.num_inputs):
        t = it.input(i)
        with open('mn_in_%d_%d.bin' % (k, i), 'rb') as f:
            n = f.readinto(t)
        assert n == t.nbytes, (n, t.nbytes)
    if {bool(reset_each)}:
        it.reset()
    it.invoke()
    for i in range(it.num_outputs):
        with open('mn_out_%d_%d.bin' % (k, i), 'wb') as f:
            f.write(it.output(i))
print('done')
"""
        self.exec(code, timeout=timeout)
        results = []
        for k in range(first, first + len(input_sets)):
            outs = []
            for i, d in enumerate(outd):
                raw = self.board.get(f"mn_out_{k}_{i}.bin")
                files.append(f"mn_out_{k}_{i}.bin")
                outs.append(np.frombuffer(raw, dtype=d["dtype"]).reshape(d["shape"]))
            results.append(outs)
        self.exec("import os\nfor p in %r:\n    os.remove(p)\n" % (files,))
        return results


def assert_matches(got, want, what=""):
    """int types bit-exact; float32 within 1e-5 relative (plus a tiny absolute floor)."""
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        if not np.array_equal(got, want):
            diff = np.flatnonzero(got.ravel() != want.ravel())
            raise AssertionError(f"{what}: {len(diff)} of {want.size} elements differ; first at "
                                 f"{diff[:5].tolist()}: got {got.ravel()[diff[:5]].tolist()} "
                                 f"want {want.ravel()[diff[:5]].tolist()}")


def check_single_op(dev, tmp_path, monkeypatch, name, model, sets, reference=None):
    """Run the single-op model `model` (tests/engine/ops OpModel) on the board under `name` with each
    input set of `sets` (state reset before each) and compare every output with LiteRT's reference
    kernels (assert_matches), or with reference(model_bytes, inputs) (oracle.run_tflm)."""
    reference = reference or oracle.run
    mb = model.tflite()
    (tmp_path / f"{name}.tflite").write_bytes(mb)
    monkeypatch.setitem(globals(), "MODELS_DIR", str(tmp_path))
    got = dev.run(name, sets)
    for k, (inputs, outs) in enumerate(zip(sets, got)):
        for i, (g, w) in enumerate(zip(outs, reference(mb, inputs))):
            assert_matches(g, w, f"{name} input set {k} output {i}")
