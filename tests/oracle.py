"""Reference results from LiteRT (ai-edge-litert) with TFLite's reference kernels.

    from oracle import run
    outs = run(model_bytes, [input0, ...])                     # list of numpy outputs
    outs, tensors = run(model_bytes, inputs, all_tensors=True) # + {tensor index: array}

LiteRT refuses per-tensor quantization whose quantized_dimension is not smaller than the tensor's
rank (person_detect.tflite stores 3 on 1-D biases; TFLM ignores it). Such fields are reset to 0
in a re-serialized copy before loading; the tensors and their data are otherwise unchanged.

For what LiteRT lacks or computes otherwise (int8 SVDF weights_time and state, signal ops), TFLM
itself is the second oracle: `tflm_interpreter(model_bytes)`, `run_tflm(model_bytes, inputs)`.
"""
import os

import numpy as np

MODELS_DIR = os.environ.get("MICRONN_MODELS") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "models")


def model_path(name):
    return os.path.join(MODELS_DIR, name)


def read_model(name):
    with open(model_path(name), "rb") as f:
        return f.read()


def _needs_patch(model_bytes):
    from ai_edge_litert import schema_py_generated as s
    m = s.Model.GetRootAsModel(model_bytes, 0)
    for g in range(m.SubgraphsLength()):
        sg = m.Subgraphs(g)
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            q = t.Quantization()
            if q is not None and q.QuantizedDimension() >= max(t.ShapeLength(), 1) and q.QuantizedDimension() > 0:
                return True
    return False


def patch_quantized_dimension(model_bytes):
    """Copy of the model with out-of-range quantized_dimension fields set to 0."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    mt = s.ModelT.InitFromObj(s.Model.GetRootAsModel(model_bytes, 0))
    for sg in mt.subgraphs or []:
        for t in sg.tensors or []:
            q = t.quantization
            rank = len(t.shape) if t.shape is not None else 0
            if q is not None and q.quantizedDimension >= max(rank, 1) and q.quantizedDimension > 0:
                q.quantizedDimension = 0
    b = flatbuffers.Builder(len(model_bytes) + 1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


_cache = {}


def interpreter(model_bytes, all_tensors=False):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    key = (hash(model_bytes), len(model_bytes), all_tensors)
    if key in _cache:
        return _cache[key]
    content = patch_quantized_dimension(model_bytes) if _needs_patch(model_bytes) else model_bytes
    it = Interpreter(model_content=content, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=all_tensors)
    it.allocate_tensors()
    _cache[key] = it
    return it


def run(model_bytes, inputs, all_tensors=False):
    """Run once with `inputs` (list of arrays, cast to the input dtypes/shapes)."""
    it = interpreter(model_bytes, all_tensors)
    it.reset_all_variables()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], np.asarray(x, dtype=d["dtype"]).reshape(d["shape"]))
    it.invoke()
    outs = [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]
    if not all_tensors:
        return outs
    tensors = {}
    for d in it.get_tensor_details():
        try:
            tensors[d["index"]] = it.get_tensor(d["index"]).copy()
        except ValueError:
            pass
    return outs, tensors


def input_details(model_bytes):
    return interpreter(model_bytes).get_input_details()


def output_details(model_bytes):
    return interpreter(model_bytes).get_output_details()


def tflm_interpreter(model_bytes, arena_size=None):
    """TFLM's interpreter (PyPI tflite-micro: its reference kernels) over the model; variable
    tensors start from TFLM's reset values (int8: the zero point)."""
    from tflite_micro.python.tflite_micro import runtime
    return runtime.Interpreter.from_bytes(model_bytes, arena_size=arena_size or len(model_bytes) + (1 << 20))


def run_tflm(model_bytes, inputs):
    """As run(), with TFLM: a fresh interpreter (state from its reset values), one invoke."""
    it = tflm_interpreter(model_bytes)
    for i, x in enumerate(inputs):
        d = it.get_input_details(i)
        it.set_input(np.asarray(x, dtype=d["dtype"]).reshape(d["shape"]), i)
    it.invoke()
    return [it.get_output(i).copy() for i in range(len(output_details(model_bytes)))]
