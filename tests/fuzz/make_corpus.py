"""Regenerate the committed seed corpus of the libFuzzer target (tests/fuzz/corpus):

- the shared models that fit the fuzzer's 64 KB input limit, and truncated copies of them;
- one single-op model per kernel and dtype, built with tests/engine/ops/opmodels.py (the models the
  kernel tests run), including dilated, strided and broadcasting variants.

    .venv/bin/python tests/fuzz/make_corpus.py [SHARED_MODELS_DIR]

File names are content hashes, as libFuzzer names its own finds. Kept as they are: regression
inputs of fixed crashes (`regress-*`) and the minimized finds of a long campaign (`found-*`, from
`fuzz_model -merge=1`), which let the 60 s CI run start deep.
"""
import hashlib
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "engine" / "ops"))
import opmodels as om  # noqa: E402
import oracle  # noqa: E402

MAX_LEN = 65536


def op_models():
    rng = np.random.default_rng(2024)
    yield om.conv2d(rng)
    yield om.conv2d(rng, dtype="int16", stride=(2, 1), dil=(1, 2), padding=om.VALID)
    yield om.conv2d(rng, dtype="float32", act=om.ACT_RELU6)
    yield om.depthwise(rng)
    yield om.depthwise(rng, dtype="int16", dil=(2, 2))
    yield om.depthwise(rng, dtype="float32", stride=(2, 2))
    yield om.fully_connected(rng)
    yield om.fully_connected(rng, dtype="int16")
    yield om.fully_connected(rng, dtype="float32", bias=False)
    for kind in ("avg", "max"):
        yield om.pool(rng, kind)
        yield om.pool(rng, kind, dtype="float32", padding=om.VALID)
    yield om.softmax(rng)
    yield om.softmax(rng, in_dtype="float32", out_dtype="float32")
    yield om.add(rng)
    yield om.add(rng, shape1=(1, 4, 1, 3), shape2=(1, 1, 5, 3))
    yield om.add(rng, dtype="int16")
    yield om.add(rng, dtype="float32", shape1=(3, 1), shape2=(1, 4))
    yield om.reshape(rng)
    yield om.reshape(rng, shape_input=False)
    yield om.quantize(rng, "float32", "int8", out_q=(0.05, 3))
    yield om.quantize(rng, "int8", "int16", in_q=(0.1, -2), out_q=(0.01, 0))
    yield om.dequantize(rng, "int8", in_q=(0.1, 5))
    yield om.dequantize(rng, "int8", per_channel_dim=1)
    yield om.svdf(rng)
    yield om.svdf(rng, dtype="float32")
    yield om.lstm(rng)
    yield om.lstm(rng, dtype="float32", peephole=True, proj=True)
    # several subgraphs: IF, WHILE (one that never ends too), CALL_ONCE, resource variables
    import models_control as mc
    yield mc.if_model(rng, "int8")
    yield mc.while_model(rng, "int8")
    yield mc.endless_while(rng)
    yield mc.variable_model(rng, "int16")
    yield mc.accumulator_model(rng, "float32")
    yield mc.if_of_while(rng)
    yield mc.counting_while(rng)
    # custom ops with flexbuffer options (engine/mn_flexbuf.c reads them at prepare)
    import models_custom as mcu
    yield mcu.circular_buffer(rng, cycles=2, valid=True)[0]
    yield mcu.circular_buffer(rng, slots=5)[0]
    yield mcu.detection(rng, n_anchors=12)[0]
    yield mcu.detection(rng, "uint8", "uint8", n_anchors=10, use_regular_nms=True, background=False)[0]
    yield mcu.detection(rng, n_anchors=8, max_classes_per_detection=2, box_stride=6)[0]


def main():
    shared = Path(sys.argv[1] if len(sys.argv) > 1 else oracle.MODELS_DIR)
    out = HERE / "corpus"
    out.mkdir(exist_ok=True)
    for f in out.iterdir():
        if not f.name.startswith(("regress-", "found-")):
            f.unlink()
    seeds = []
    if not list(shared.glob("*.tflite")):
        sys.exit(f"no models in {shared}")
    for f in sorted(shared.glob("*.tflite")):
        b = f.read_bytes()
        if len(b) <= MAX_LEN:
            seeds.append(b)
            seeds += [b[:n] for n in (16, 64, 256, len(b) // 2, len(b) - 1)]
    for m in op_models():
        seeds.append(m.tflite())
    for b in seeds:
        (out / hashlib.sha1(b).hexdigest()).write_bytes(b)
    total = sum(f.stat().st_size for f in out.iterdir())
    print(f"{len(list(out.iterdir()))} files, {total} bytes in {out}")


if __name__ == "__main__":
    main()
