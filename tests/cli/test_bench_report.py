"""The benchmark report's arithmetic and rendering, without a board (`make bench` runs the real
thing): MACs per op, code size from a linker map, a model without TFLM figures, the plot."""
import os

from cli_helpers import MODELS

from micronn_tools import bench_report as br


def _result(name, board, kind, total, per_op, macs):
    return {"name": name, "board": board, "kind": kind, "per_inference": total, "samples": [total] * 3,
            "per_op": [{"index": i, "name": n, "value": v, "variant": var, "share": 0.0}
                       for i, (n, v, var) in enumerate(per_op)],
            "macs": macs, "arena": {"bytes": 100, "persistent": 40, "nonpersistent": 60, "needed": 100},
            "overhead": 10, "overhead_share": 0.001, "model_source": "built-in", "kernels": ["dsp"]}


def test_macs_of_person_detect_match_the_published_count():
    with open(os.path.join(MODELS, "person_detect.tflite"), "rb") as f:
        macs = br.op_macs(f.read())
    assert sum(macs) == 7_157_888          # PLATFORM.md: "person_detect is 7.16 M multiply-accumulates"
    assert macs[0] == 48 * 48 * 8 * 3 * 3   # first op: 3x3 conv of 1 channel to a 48x48x8 output


def test_code_size_counts_only_kept_engine_sections(tmp_path):
    m = tmp_path / "firmware.map"
    m.write_text(
        "Discarded input sections\n\n"
        " .text.unused   0x00000000      0x400 /b/micronn/engine/mn_util.o\n\n"
        "Linker script and memory map\n\n"
        " .text.mn_conv_s8\n                0x000065b0      0x2e0 /b/micronn/engine/kernels/reference/conv.o\n"
        " .text          0x00001000       0x20 /b/micronn/engine/mn_interp.o\n"
        " .rodata.tab    0x00002000       0x10 /b/micronn/engine/mn_opnames.o\n"
        " .text.main     0x00003000      0x100 /b/main.o\n"
        " .data.x        0x20000000       0x40 /b/micronn/engine/mn_interp.o\n")
    assert br.code_size(m) == 0x2e0 + 0x20 + 0x10


def test_report_renders_models_with_and_without_tflm_figures(tmp_path):
    results = [
        _result("person_detect", "MPS2_AN386", "optimized", 20_000_000,
                [("CONV_2D", 12e6, "dsp.conv_s8_1x1"), ("DEPTHWISE_CONV_2D", 8e6, "dsp.dw_s8")], [6_193_664, 964_224]),
        _result("person_detect", "MPS2_AN386", "reference", 85_000_000,
                [("CONV_2D", 53e6, "reference"), ("DEPTHWISE_CONV_2D", 32e6, "reference")], [6_193_664, 964_224]),
        _result("hello_world_int8", "VIRT_RV32", "optimized", 5_000, [("FULLY_CONNECTED", 4_000, "reference")],
                [288]),
    ]
    rep = {"generated": "now", "method": "m", "results": results,
           "code_size": {"MPS2_AN386": {"optimized": 30_000, "reference": 28_000}}, "arm_bench": {}}
    md = br.render_md(rep)
    assert "| person_detect | MPS2_AN386 | 20,000,000 | 85,000,000 | 4.25x |" in md
    assert "0.89x" in md                                    # 20.0 M / TFLM CMSIS-NN 22,572,960
    assert "| hello_world_int8 | VIRT_RV32 | 5,000 | - | - |" in md
    assert "| CONV_2D | dsp.conv_s8_1x1 | 12,000,000 | 53,000,000 | 4.42x | 6,193,664 | 1.94 |" in md
    png = tmp_path / "p.png"
    br.plot_pair(br.pairs(results)[("person_detect", "MPS2_AN386")], str(png))
    assert png.stat().st_size > 5_000


def test_arm_bench_lines_are_parsed(tmp_path):
    f = tmp_path / "arm.txt"
    f.write_text("person_detect.tflite           persistent  26896 nonpersistent  64512 needed  91423 (reuse-inputs"
                 "  82207) | verify   324600 sizing   329440 prepare   1556160 (engine part   190480) invoke"
                 "   69306440 noop-invoke    680 insns\n")
    got = br.parse_arm_bench(str(f))["person_detect"]
    assert got["noop-invoke"] == 680 and got["sizing"] == 329440 and got["prepare"] == 1556160
