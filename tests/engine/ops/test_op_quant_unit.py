"""Builds and runs quant_unit.c: hand-checked cases for mn_quant and a few pure kernels
(with AddressSanitizer/UBSan when the compiler has them)."""
import subprocess

from runners import ENGINE, HERE, shim_kernel_sources


def test_quant_unit_c(tmp_path):
    exe = tmp_path / "quant_unit"
    srcs = [HERE / "quant_unit.c", HERE / "kshim.c", ENGINE / "mn_quant.c", ENGINE / "mn_util.c",
            ENGINE / "mn_opnames.c", ENGINE / "mn_registry.c", *shim_kernel_sources(),
            ENGINE / "kernels" / "mn_variants.c"]
    base = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-g", f"-I{ENGINE}",
            f"-I{ENGINE / 'kernels' / 'reference'}", "-o", str(exe), *map(str, srcs), "-lm"]
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    r = subprocess.run(base[:1] + san + base[1:], capture_output=True, text=True)
    if r.returncode != 0:          # no sanitizer runtime: plain build
        r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = {"ASAN_OPTIONS": "detect_leaks=0"}
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok")
