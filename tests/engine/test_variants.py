"""The variant query (kernels/mn_variants.h mn_variants_query, micronn_tools.opset --variants): which
optimized kernel variants a firmware for given models links (make firmware MODELS=... MICRONN_VARIANTS).
The host library compiles the generic backend, so for it the query must name exactly the variants
the host's own prepare selects; the dsp and mve lists are evaluated from their portable fits()."""
import os

import pytest

from micronn_tools import opset

MODELS = os.environ.get("MICRONN_MODELS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "models")


def model_bytes(name):
    path = os.path.join(MODELS, name + ".tflite")
    if not os.path.exists(path):
        pytest.skip(f"no {path}")
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled"])
def test_query_matches_host_selection(engine, name):
    """With the backends the host build has (generic), the query names the variants its prepare
    selects, node by node as the profile reports them."""
    data = model_bytes(name)
    it = engine.Interpreter(engine.Model(data), profile=True)
    selected = sorted({p["variant"] for p in it.profile() if p["variant"] != "reference"})
    assert selected, "the host build selected no generic variant: the check would be empty"
    assert opset.variants_used([data], "generic") == selected
    # the query leaves no state behind: a later interpreter selects as before
    it2 = engine.Interpreter(engine.Model(data), profile=True)
    assert sorted({p["variant"] for p in it2.profile() if p["variant"] != "reference"}) == selected


def test_query_person_detect_backends(engine):
    """person_detect (int8 convolutions and depthwise ones, one with a single input channel):
    the variants an Armv7E-M and a Helium firmware select (the bench profiles on MPS2_AN386 and
    MPS3_AN547 name the same)."""
    data = model_bytes("person_detect")
    assert opset.variants_used([data], "dsp generic") == [
        "dsp.conv_s8", "dsp.depthwise_s8_c1", "dsp.depthwise_s8_mult1"]
    mve = opset.variants_used([data], "mve dsp generic")
    assert mve and all(v.startswith("mve.") for v in mve)
    assert "mve.depthwise_s8_in1" in mve and "mve.depthwise_s8_3x3" in mve
    assert opset.variants_used([data], "reference") == []


def test_query_unknown_backend(engine):
    with pytest.raises(ValueError):
        opset.variants_used([model_bytes("person_detect")], "dsp neon")


def test_opset_cli_variants(engine, capsys):
    path = os.path.join(MODELS, "person_detect.tflite")
    if not os.path.exists(path):
        pytest.skip(f"no {path}")
    assert opset.main(["--variants", "--kernels", "dsp generic", path]) == 0
    assert capsys.readouterr().out.split() == ["dsp.conv_s8", "dsp.depthwise_s8_c1", "dsp.depthwise_s8_mult1"]
    assert opset.main(["--variants", "--kernels", "reference", path]) == 0
    assert capsys.readouterr().out.split() == ["none"]
    assert opset.main(["--variants", path]) == 2   # --kernels is required
