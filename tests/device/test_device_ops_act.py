"""A sample of the activation / unary / quantization kernels (single-op models from
tests/engine/ops/models_act.py) on the board, compared with the LiteRT reference kernels: table
builds (int8 / int16 LUTs from the board's libm), fixed-point paths and float32 math run on
Cortex-M and RV32, not only on the host."""
import os
import sys
import zlib

import numpy as np
import pytest

import devhelp
import oracle
from devhelp import assert_matches

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))

import models_act as A  # noqa: E402
from opmodels import BO  # noqa: E402


def _models():
    rng = np.random.default_rng(8)
    return {
        "act_logistic_s8": A.unary(BO.LOGISTIC, "int8", (4, 64), (0.05, 3), (1 / 256, -128)),
        "act_tanh_s16": A.unary(BO.TANH, "int16", (8, 64), (0.0003, 0), (2 ** -15, 0)),
        "act_logistic_s16_pot": A.unary(BO.LOGISTIC, "int16", (8, 64), (2 ** -12, 0), (2 ** -15, 0)),
        "act_leaky_relu_s16": A.unary(BO.LEAKY_RELU, "int16", (4, 64), (0.001, 0), (0.0008, 0),
                                      attrs={"alpha": 0.2}),
        "act_hard_swish_s8": A.unary(BO.HARD_SWISH, "int8", (4, 64), (0.05, 3), (0.04, -10)),
        "act_relu6_s8": A.unary(BO.RELU6, "int8", (4, 64), (0.05, 3), (0.03, -100)),
        "act_gelu_s8": A.unary(BO.GELU, "int8", (4, 64), (0.05, 3), (0.03, -100)),
        "act_exp_f32": A.unary(BO.EXP, "float32", (2, 3, 7, 5)),
        "act_softmax_s16": A.unary(BO.SOFTMAX, "int16", (4, 64), (0.0003, 0), (1 / 32768, 0), attrs={"beta": 1.0}),
        "act_log_softmax_s8": A.unary(BO.LOG_SOFTMAX, "int8", (4, 64), (0.05, 3), (16 / 256, 127)),
        "act_l2norm_s8": A.unary(BO.L2_NORMALIZATION, "int8", (4, 64), (0.05, 3), (1 / 128, 0)),
        "act_quantize_s32_s16": A.unary(BO.QUANTIZE, "int32", (3, 41), (1e-5, 7), (0.001, 0), out_dtype="int16"),
        "act_cast_f32_s8": A.cast("float32", "int8", (3, 17)),
        "act_prelu_s8": A.prelu(rng, "int8", (2, 4, 5, 3), (3,)),
    }


MODELS = _models()


def _input(rng, name, t):
    if t.dtype == np.int32:
        return rng.integers(-3000000, 3000000, t.shape).astype(np.int32)
    if "softmax_s16" in name:
        spread = int(12.0 / t.scale[0])  # rows within ~12 real units
        return rng.integers(-spread // 2, spread // 2, t.shape).astype(np.int16)
    if "cast" in name:
        return (rng.normal(0, 100, t.shape)).astype(np.float32)  # in and beyond the int8 range
    return A.full_range(rng, t)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_op_on_device(dev, tmp_path, monkeypatch, name):
    m = MODELS[name]
    mb = m.tflite()
    (tmp_path / f"{name}.tflite").write_bytes(mb)
    monkeypatch.setattr(devhelp, "MODELS_DIR", str(tmp_path))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    sets = [[_input(rng, name, m.tensors[i]) for i in m.graph_inputs] for _ in range(2)]
    got = dev.run(name, sets)
    for k, (inputs, outs) in enumerate(zip(sets, got)):
        want = oracle.run(mb, inputs)
        for i, (g, w) in enumerate(zip(outs, want)):
            assert_matches(g, w, f"{name} input set {k} output {i}")
