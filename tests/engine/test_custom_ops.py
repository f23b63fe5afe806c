"""Custom ops on the host build of the engine: the built-in C kernel "Atan2" (engine/kernels/custom/
atan2.c, registered in engine/mn_custom_ops.h) and the Ethos-U custom op's error."""
import numpy as np
import pytest

import graphmodels


def test_atan2_custom_op_runs(engine):
    rng = np.random.default_rng(7)
    data, ref = graphmodels.atan2_model((3, 5))
    it = engine.Interpreter(engine.Model(data))
    y = rng.normal(0, 2, (3, 5)).astype(np.float32)
    x = rng.normal(0, 2, (3, 5)).astype(np.float32)
    x[0, :3] = [0, -0.0, 0]  # the axes: atan2's special cases
    y[0, :3] = [1, 0, 0]
    it.set_input(0, y)
    it.set_input(1, x)
    it.invoke()
    np.testing.assert_allclose(it.output(0), ref(y, x), rtol=1e-5, atol=1e-6)


def test_atan2_is_listed_and_checked(engine):
    m = engine.Model(graphmodels.atan2_model()[0])
    ops = m.ops()
    assert [o["name"] for o in ops] == ["Atan2", "MUL"]
    assert ops[0]["builtin"] == 32 and ops[0]["kernel"] == "linked"
    assert m.check_ops() == [None, None]


def test_atan2_refuses_int8(engine):
    data = graphmodels.custom_model("Atan2", dtype=np.int8, n_inputs=2, scale=0.1)
    with pytest.raises(engine.MicronnError) as e:
        engine.Interpreter(engine.Model(data))
    assert "op 2 Atan2: dtypes int8, int8 -> int8 not supported (float32 only)" in str(e.value)


def test_ethos_u_is_recognised(engine):
    m = engine.Model(graphmodels.custom_model("ethos-u", dtype=np.int8, scale=0.1))
    with pytest.raises(engine.MicronnError) as e:
        engine.Interpreter(m)
    assert e.value.status == engine.ERR_UNSUPPORTED
    assert str(e.value).endswith('unsupported custom op "ethos-u" (op 1): compiled for an Arm Ethos-U NPU; '
                                 'this board has none; convert the model without Vela')
    chk = m.check_ops()
    assert chk[0] is None and chk[2] is None and "convert the model without Vela" in chk[1][1]


def test_unknown_custom_op(engine):
    with pytest.raises(engine.MicronnError) as e:
        engine.Interpreter(engine.Model(graphmodels.custom_model("MyOp")))
    assert str(e.value).endswith('unsupported custom op "MyOp" (op 1)')
