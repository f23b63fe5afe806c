"""Type-family selection (mn_config.h MICRONN_TYPE_*): build/host/libmicronn_int8.so is the engine
built for the int8 family only, as `make firmware MODELS=<int8 model>` builds it. It runs int8
models exactly as the full build does, and refuses a node of another family at prepare, naming op
and family, instead of running a path it does not have."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from micronn_tools import engine as E, repo_root

sys.path.insert(0, str(Path(__file__).parent / "ops"))
import opmodels  # noqa: E402
import models_hybrid  # noqa: E402

ROOT = Path(repo_root())
MODELS = Path(os.environ.get("MICRONN_MODELS", ROOT.parent / "shared" / "models"))
INT8_LIB = ROOT / "build" / "host" / "libmicronn_int8.so"
REFUSED = "kernels not linked in this firmware (built for int8)"


@pytest.fixture(scope="module")
def int8_lib(engine):
    if not INT8_LIB.exists():
        pytest.fail("%s not built: make -C tests/engine lib" % INT8_LIB, pytrace=False)
    return str(INT8_LIB)


def run(data, inputs, lib_path=None):
    it = E.Interpreter(E.Model(data, lib_path=lib_path) if lib_path else E.Model(data))
    for i, x in enumerate(inputs):
        it.set_input(i, x)
    it.invoke()
    return it.output(0)


@pytest.mark.parametrize("name", ["person_detect.tflite", "micro_speech_quantized.tflite", "hello_world_int8.tflite"])
def test_int8_build_runs_int8_models_bit_exact(engine, int8_lib, name):
    data = (MODELS / name).read_bytes()
    assert E.Model(data, lib_path=int8_lib).check_ops() == [None] * len(E.Model(data).ops())
    rng = np.random.default_rng(7)
    m = E.Model(data)
    inputs = []
    for idx in m.input_indices():
        t = m.tensor(idx)
        info = np.iinfo(E.DTYPES[t["dtype_code"]])
        inputs.append(rng.integers(info.min, info.max + 1, size=t["shape"]).astype(E.DTYPES[t["dtype_code"]]))
    np.testing.assert_array_equal(run(data, inputs, int8_lib), run(data, inputs))


def _cases():
    rng = np.random.default_rng(3)
    return [
        ("hello_world_float", (MODELS / "hello_world_float.tflite").read_bytes(), "FULLY_CONNECTED", "float32"),
        ("conv float32", opmodels.conv2d(rng, "float32").tflite(), "CONV_2D", "float32"),
        ("depthwise float32", opmodels.depthwise(rng, "float32").tflite(), "DEPTHWISE_CONV_2D", "float32"),
        ("avg pool int16", opmodels.pool(rng, "avg", "int16").tflite(), "AVERAGE_POOL_2D", "int16"),
        ("softmax float32", opmodels.softmax(rng, "float32", "float32").tflite(), "SOFTMAX", "float32"),
        ("fc hybrid", models_hybrid.fully_connected_hybrid(rng).tflite(), "FULLY_CONNECTED",
         "hybrid (float32 with int8 weights)"),
        ("conv hybrid", models_hybrid.conv2d_hybrid(rng).tflite(), "CONV_2D", "hybrid (float32 with int8 weights)"),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_int8_build_refuses_other_families(engine, int8_lib, case):
    _, data, op, family = case
    # the full build runs it
    assert E.Model(data).check_ops()[0] is None
    checks = E.Model(data, lib_path=int8_lib).check_ops()
    assert checks[0] is not None and checks[0][0] == E.ERR_UNSUPPORTED, checks
    assert checks[0][1] == "op 0 %s: %s %s" % (op, family, REFUSED), checks[0][1]
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(E.Model(data, lib_path=int8_lib))
    assert "op 0 %s: %s %s" % (op, family, REFUSED) in str(e.value)


def test_int8_build_refuses_int16_output_softmax(engine, int8_lib):
    """keyword_scrambled's SOFTMAX is int8 -> int16: that path needs the int16 family too (opset
    --types gives "int8 int16"); only that op is refused."""
    data = (MODELS / "keyword_scrambled.tflite").read_bytes()
    ops = E.Model(data).ops()
    checks = E.Model(data, lib_path=int8_lib).check_ops()
    refused = [(op["name"], c[1]) for op, c in zip(ops, checks) if c is not None]
    assert [name for name, _ in refused] == ["SOFTMAX"], refused
    assert refused[0][1].endswith("SOFTMAX: int16 %s" % REFUSED), refused
