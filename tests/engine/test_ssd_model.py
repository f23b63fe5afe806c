"""End to end: an SSD-style detector (graphmodels.ssd_model: conv feature maps, box and class heads,
RESHAPE / CONCATENATION, LOGISTIC, TFLite_Detection_PostProcess with constant anchors), float32 and
int8 (post-training quantized, uint8 into the post-processing), fast and regular NMS, against LiteRT
(and TFLM for float32): detection boxes, classes, scores and counts exactly equal."""
import numpy as np
import pytest

import graphmodels
import oracle

E = pytest.importorskip("micronn_tools.engine")


def _input(dtype, img):
    return img if dtype == "float32" else np.clip(np.round(img * 255) - 128, -128, 127).astype(np.int8)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("regular", [False, True])
def test_ssd_model(dtype, regular):
    data = graphmodels.ssd_model(dtype, options=dict(use_regular_nms=regular))
    m = E.Model(data)
    need = m.arena_needed()
    it = E.Interpreter(m, arena_size=need)
    assert it.stats()["needed"] == need
    assert [o["name"] for o in m.ops()][-1] == "TFLite_Detection_PostProcess"
    counts, classes = [], set()
    for img in graphmodels.ssd_images(0, 8):
        x = _input(dtype, img)
        it.set_input(0, x)
        it.invoke()
        got = [it.get_output(i).copy() for i in range(4)]
        oracles = [oracle.run(data, [x])] + ([oracle.run_tflm(data, [x])] if dtype == "float32" else [])
        for want in oracles:
            n = int(want[3][0])
            assert int(got[3][0]) == n
            for g, w in zip(got[:3], want[:3]):
                np.testing.assert_array_equal(g.reshape(w.shape)[0][:n], w[0][:n])
                assert not np.any(g.reshape(w.shape)[0][n:])   # padding: zeros
        counts.append(n)
        classes |= set(got[1].ravel()[:n].tolist())
    assert min(counts) >= 1 and len(set(counts)) > 1 and len(classes) > 1, (counts, classes)


def test_opset_selects_the_custom_ops():
    """`make firmware MODELS=...` links what micronn_tools.opset lists: the custom ops included."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent / "ops"))
    import models_custom
    from micronn_tools import opset
    cb = models_custom.circular_buffer(np.random.default_rng(0), cycles=2)[0].tflite()
    ops, _ = opset.ops_used([graphmodels.ssd_model("int8"), cb])
    assert {"TFLite_Detection_PostProcess", "CIRCULAR_BUFFER", "CONV_2D", "QUANTIZE"} <= set(ops)
