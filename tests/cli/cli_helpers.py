"""Helpers for tests/cli (put on sys.path by tests/cli/conftest.py)."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.abspath(os.environ.get("MICRONN_MODELS_DIR")
                         or os.path.join(REPO, "..", "shared", "models"))


class Result:
    def __init__(self, p):
        self.code, self.out, self.err = p.returncode, p.stdout, p.stderr

    def __repr__(self):
        return f"<exit {self.code}\n--- stdout ---\n{self.out[-3000:]}\n--- stderr ---\n{self.err[-3000:]}>"


def run_cli(*args, env=None, timeout=280, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, "-m", "micronn_tools.cli", *map(str, args)], capture_output=True,
                       text=True, env=e, timeout=timeout, cwd=cwd)
    r = Result(p)
    assert "Traceback" not in r.err, r  # never a Python traceback
    return r


def patch_model(data, fn):
    """Re-serialize a model after fn(ModelT) (TFLite schema object API from ai-edge-litert)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    mt = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
    fn(mt)
    b = flatbuffers.Builder(len(data) + 1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())
