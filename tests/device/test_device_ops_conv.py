"""A sample of the int16x8 conv / fully-connected kernels, TRANSPOSE_CONV, BATCH_MATMUL and L2_POOL_2D on the
board: single-op models (tests/engine/ops/models_conv.py) run through the firmware and compared
with the LiteRT reference kernels (TFLM where LiteRT has no such kernel), so these kernels are
exercised on Cortex-M and RV32 too."""
import os
import sys

import numpy as np
import pytest

import devhelp
import oracle

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine", "ops"))
import models_conv as MC  # noqa: E402
import opmodels as M  # noqa: E402


def _models():
    rng = np.random.default_rng(11)
    return {
        "op_conv_16x8": MC.conv2d_16x8(rng, n=2, h=7, w=6, cin=3, cout=4, stride=(2, 1), dil=(1, 2)),
        "op_conv_16x8_b32": MC.conv2d_16x8(rng, np.int32, n=1, h=6, w=6, cin=4, cout=3, act=M.ACT_RELU),
        "op_dw_16x8": MC.depthwise_16x8(rng, n=1, h=7, w=6, cin=3, mult=2, padding=M.VALID),
        "op_fc_16x8_pc": MC.fully_connected_16x8(rng, in_shape=(3, 20), units=6, per_channel=True),
        "op_tconv_s8": MC.transpose_conv(rng, "int8", n=2, h=4, w=3, cin=3, cout=4, fh=3, fw=3, stride=(2, 2)),
        "op_tconv_16x8": MC.transpose_conv_16x8(rng, n=1, h=4, w=4, cin=2, cout=3, fh=4, fw=3, stride=(2, 2),
                                                padding=M.VALID),
        "op_tconv_f32": MC.transpose_conv(rng, "float32", n=1, h=3, w=5, cin=2, cout=3, fh=2, fw=3, stride=(1, 2),
                                          act=M.ACT_RELU6),
        "op_bmm_s8": MC.batch_matmul(rng, "int8", (2, 3, 6), (6, 4), rhs_const=True),
        "op_bmm_s16": MC.batch_matmul(rng, "int16", (2, 1, 3, 5), (3, 4, 5), adj_y=True),
        "op_bmm_f32": MC.batch_matmul(rng, "float32", (2, 6, 3), (2, 6, 4), adj_x=True),
        "op_l2pool_f32": M.pool(rng, "l2", "float32", n=2, h=7, w=6, c=3, fh=3, fw=2, stride=(2, 2), act=M.ACT_RELU6),
        # int8 weights_time and state: TFLM is the oracle (LiteRT reads them as int16)
        "op_svdf_s8_t8": M.svdf(rng, "int8", batches=2, input_size=20, units=6, rank=2, memory=6,
                                time_dtype=np.int8),
    }


TFLM_ORACLE = {"op_svdf_s8_t8"}


@pytest.mark.parametrize("name", list(_models()))
def test_op_sample(dev, tmp_path, monkeypatch, name):
    model = _models()[name]
    rng = np.random.default_rng(12)
    sets = [[M.random_input(rng, model.tensors[i]) for i in model.graph_inputs] for _ in range(2)]
    devhelp.check_single_op(dev, tmp_path, monkeypatch, name, model, sets,
                            reference=oracle.run_tflm if name in TFLM_ORACLE else None)
