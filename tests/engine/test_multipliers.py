"""mn_conv_multipliers' integer path against TFLite's double-precision formula
(tests/engine/multiplier_unit.c: 2 M random and edge-case scale triples), and the engine's
64/32-bit division mn_udivmod64 against the compiler's (2 M random operands)."""
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
ENGINE = HERE.parents[1] / "usermod" / "micronn" / "engine"


def test_conv_multipliers_match_double_formula(tmp_path):
    exe = tmp_path / "multiplier_unit"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ENGINE}", "-o", str(exe),
                    str(HERE / "multiplier_unit.c"), str(ENGINE / "mn_quant.c"), "-lm"], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True, env={})
    assert run.returncode == 0, run.stdout
    assert run.stdout.strip().splitlines()[-1] == "4000000 passed, 0 failed"
