"""The variant query (kernels/mn_variants.h mn_variants_query, micronn_tools.opset --variants): which
optimized kernel variants a firmware for given models links (make firmware MODELS=... MICRONN_VARIANTS).
The host library compiles the generic backend, so for it the query must name exactly the variants
the host's own prepare selects; the dsp and mve lists are evaluated from their portable fits().
The reference int8 convolutions are selectable too ("ref.conv_s8", "ref.depthwise_s8"): listed
only when a node runs them, and a build without one (build/host/libmicronn_varsel.so) refuses
such a node at prepare, naming op, node and the remedy."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from micronn_tools import engine as E, opset, repo_root

sys.path.insert(0, str(Path(__file__).parent / "ops"))
import opmodels  # noqa: E402

VARSEL_LIB = Path(repo_root()) / "build" / "host" / "libmicronn_varsel.so"

MODELS = os.environ.get("MICRONN_MODELS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "models")


@pytest.fixture
def generic_engine(engine):
    """The engine, skipping where the host build has no generic backend (make test KERNELS=reference
    builds it without): the query answers for the dsp and mve backends from their portable fits(),
    but for generic only with its compiled variants."""
    if "generic" not in engine.backends():
        pytest.skip("the host library has no generic backend (KERNELS=reference)")
    return engine


def model_bytes(name):
    path = os.path.join(MODELS, name + ".tflite")
    if not os.path.exists(path):
        pytest.skip(f"no {path}")
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled"])
def test_query_matches_host_selection(generic_engine, name):
    """With the backends the host build has (generic), the query names the variants its prepare
    selects, node by node as the profile reports them."""
    engine = generic_engine
    data = model_bytes(name)
    it = engine.Interpreter(engine.Model(data), profile=True)
    selected = sorted({p["variant"] for p in it.profile() if p["variant"] != "reference"})
    assert selected, "the host build selected no generic variant: the check would be empty"
    assert opset.variants_used([data], "generic") == selected
    # the query leaves no state behind: a later interpreter selects as before
    it2 = engine.Interpreter(engine.Model(data), profile=True)
    assert sorted({p["variant"] for p in it2.profile() if p["variant"] != "reference"}) == selected


def test_query_person_detect_backends(generic_engine):
    """person_detect (int8 convolutions and depthwise ones, one with a single input channel):
    the variants an Armv7E-M and a Helium firmware select (the bench profiles on MPS2_AN386 and
    MPS3_AN547 name the same)."""
    data = model_bytes("person_detect")
    assert opset.variants_used([data], "dsp generic") == [
        "dsp.conv_s8", "dsp.depthwise_s8_c1", "dsp.depthwise_s8_mult1"]
    mve = opset.variants_used([data], "mve dsp generic")
    assert mve and all(v.startswith("mve.") for v in mve)
    assert "mve.depthwise_s8_in1" in mve and "mve.depthwise_s8_3x3" in mve
    # without optimized backends every convolution runs the (selectable) reference functions
    assert opset.variants_used([data], "reference") == ["ref.conv_s8", "ref.depthwise_s8"]


def test_query_unknown_backend(engine):
    with pytest.raises(ValueError):
        opset.variants_used([model_bytes("person_detect")], "dsp neon")


def test_opset_cli_variants(engine, capsys):
    path = os.path.join(MODELS, "person_detect.tflite")
    if not os.path.exists(path):
        pytest.skip(f"no {path}")
    if "generic" in engine.backends():   # (see generic_engine)
        assert opset.main(["--variants", "--kernels", "dsp generic", path]) == 0
        assert capsys.readouterr().out.split() == [
            "dsp.conv_s8", "dsp.depthwise_s8_c1", "dsp.depthwise_s8_mult1"]
    assert opset.main(["--variants", "--kernels", "reference", path]) == 0
    assert capsys.readouterr().out.split() == ["ref.conv_s8", "ref.depthwise_s8"]
    hello = os.path.join(MODELS, "hello_world_int8.tflite")
    if os.path.exists(hello):   # FULLY_CONNECTED only: no variant, no selectable reference
        assert opset.main(["--variants", "--kernels", "reference", hello]) == 0
        assert capsys.readouterr().out.split() == ["none"]
    assert opset.main(["--variants", path]) == 2   # --kernels is required


def test_query_lists_reference_only_where_a_node_runs_it(engine):
    """A grouped int8 convolution: dsp.conv_s8 takes ungrouped ones only, generic.conv_s8 any. On
    dsp alone it runs the reference function, which the query then lists; float32 and int8
    depthwise nodes add nothing of theirs."""
    rng = np.random.default_rng(11)
    grouped = opmodels.conv2d(rng, "int8", cin=4, cout=6, groups=2).tflite()
    plain = opmodels.conv2d(rng, "int8").tflite()
    dw = opmodels.depthwise(rng, "int8", mult=1, cin=4).tflite()
    f32 = opmodels.conv2d(rng, "float32").tflite()
    assert opset.variants_used([grouped], "dsp") == ["ref.conv_s8"]
    if "generic" in engine.backends():   # (see generic_engine)
        assert opset.variants_used([grouped], "dsp generic") == ["generic.conv_s8"]
    assert opset.variants_used([plain, dw], "dsp") == ["dsp.conv_s8", "dsp.depthwise_s8_mult1"]
    assert opset.variants_used([plain, grouped, dw], "dsp") == [
        "dsp.conv_s8", "dsp.depthwise_s8_mult1", "ref.conv_s8"]
    assert opset.variants_used([f32], "reference") == []
    assert opset.variants_used([f32, dw], "reference") == ["ref.depthwise_s8"]


def test_query_depthwise_1d_and_dilated(engine):
    """Depthwise shapes and the variant each backend picks: two taps per SMLAD along W (1xK,
    multipliers above 1) and along H over a width of one (Kx1 on 1xTx1xC,
    the streaming audio shape); dilated along W (no adjacent tap pairs) and 3x3 multiplier-1 rows,
    wide or narrow, the four-channel kernel (pairs would cost arena for little); on Helium the padded-row kernel takes 1-D windows."""
    rng = np.random.default_rng(5)
    col = opmodels.depthwise(rng, "int8", h=20, w=1, cin=12, mult=1, fh=9, fw=1).tflite()
    row = opmodels.depthwise(rng, "int8", h=1, w=20, cin=12, mult=1, fh=1, fw=5).tflite()
    dil = opmodels.depthwise(rng, "int8", h=9, w=9, cin=8, mult=1, dil=(1, 2)).tflite()
    m2 = opmodels.depthwise(rng, "int8", h=9, w=9, cin=5, mult=2, stride=(2, 2)).tflite()
    wide = opmodels.depthwise(rng, "int8", h=4, w=16, cin=8, mult=1).tflite()
    narrow = opmodels.depthwise(rng, "int8", h=4, w=8, cin=8, mult=1).tflite()
    assert opset.variants_used([col], "dsp") == ["dsp.depthwise_s8_pair"]
    assert opset.variants_used([row], "dsp") == ["dsp.depthwise_s8_pair"]
    assert opset.variants_used([dil], "dsp") == ["dsp.depthwise_s8_mult1"]
    assert opset.variants_used([m2], "dsp") == ["dsp.depthwise_s8_pair"]
    assert opset.variants_used([wide], "dsp") == ["dsp.depthwise_s8_mult1"]
    assert opset.variants_used([narrow], "dsp") == ["dsp.depthwise_s8_mult1"]
    assert opset.variants_used([col, row], "mve dsp") == ["mve.depthwise_s8_rows"]


@pytest.fixture(scope="module")
def varsel_lib(engine):
    if not VARSEL_LIB.exists():
        pytest.fail("%s not built: make -C tests/engine lib" % VARSEL_LIB, pytrace=False)
    return str(VARSEL_LIB)


def _run(data, x, lib_path=None):
    it = E.Interpreter(E.Model(data, lib_path=lib_path) if lib_path else E.Model(data))
    it.set_input(0, x)
    it.invoke()
    return it.output(0)


def test_left_out_reference_conv_is_refused(engine, varsel_lib):
    """A build with MICRONN_VARIANTS="ref.depthwise_s8" (no optimized variant, no reference int8
    convolution) runs int8 depthwise and float32 convolutions as the full build does, and refuses
    an int8 convolution at prepare (Interpreter()), naming op, node and what to rebuild with,
    instead of running a compute function it does not have."""
    rng = np.random.default_rng(5)
    for m in (opmodels.depthwise(rng, "int8", mult=2), opmodels.conv2d(rng, "float32")):
        data = m.tflite()
        t = E.Model(data).tensor(E.Model(data).input_indices()[0])
        dtype = E.DTYPES[t["dtype_code"]]
        if dtype == np.int8:
            x = rng.integers(-128, 128, size=t["shape"]).astype(np.int8)
        else:
            x = rng.normal(0, 1, size=t["shape"]).astype(np.float32)
        np.testing.assert_array_equal(_run(data, x, varsel_lib), _run(data, x))
    data = opmodels.conv2d(rng, "int8").tflite()
    with pytest.raises(E.MicronnError) as e:
        E.Interpreter(E.Model(data, lib_path=varsel_lib))
    assert str(e.value).endswith("op 0 CONV_2D: this firmware links no int8 variant that fits, nor ref.conv_s8 "
                                 "(rebuild with VARIANTS=all or MODELS= including this model)"), str(e.value)
    # person_detect: its depthwise nodes 0 and 1 prepare (ref.depthwise_s8 is linked); node 2, the
    # first CONV_2D, is refused
    path = os.path.join(MODELS, "person_detect.tflite")
    if os.path.exists(path):
        with pytest.raises(E.MicronnError, match=r"^op 2 CONV_2D: .*, nor ref\.conv_s8 \(rebuild with VARIANTS=all"):
            E.Interpreter(E.Model(model_bytes("person_detect"), lib_path=varsel_lib))
