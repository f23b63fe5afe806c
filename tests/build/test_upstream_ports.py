"""The usermod in stock upstream MicroPython 1.25 ports: nothing of ours but USER_C_MODULES.

Builds upstream's unix port (standard variant) and upstream's qemu port (MPS2_AN385, Cortex-M3;
VIRT_RV32) from the untouched source in build/micropython, out of tree under build/upstream/<target>
(make is incremental: a rebuild with nothing changed takes seconds), with our module and two
models frozen in through the module's own MICRONN_MODELS, boots the qemu boards under QEMU on a
pty, and checks each model's outputs bit for bit against the LiteRT oracle.

The extra make variables are not ours (one for the RISC-V toolchain, below); the "+ds" source package has no git submodules, so the
frozen manifests (they require micropython-lib) and unix's btree/ssl/ffi (berkeley-db, mbedtls,
libffi) are turned off. Upstream's frozen `micronn` Python package is not part of a stock port,
so the model runs through the C module `_micronn` directly.
"""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import oracle
from micronn_tools import repo_root
from micronn_tools.board import SerialBoard
from micronn_tools.qemu import QemuProcess

ROOT = Path(repo_root())
MICROPY = Path(os.environ.get("MICROPY_DIR", ROOT / "build" / "micropython"))
MODELS_DIR = Path(os.environ.get("MICRONN_MODELS_DIR", ROOT.parent / "shared" / "models"))
MODELS = ("hello_world_int8", "keyword_scrambled")
NO_SUBMODULES = ["FROZEN_MANIFEST="]

TARGETS = {
    "unix-standard": dict(
        port="unix", args=["VARIANT=standard", "MICROPY_PY_BTREE=0", "MICROPY_PY_SSL=0",
                           "MICROPY_SSL_AXTLS=0", "MICROPY_PY_FFI=0"], clock="ns"),
    "qemu-MPS2_AN385": dict(
        port="qemu", args=["BOARD=MPS2_AN385"], clock="none",
        qemu=["qemu-system-arm", "-machine", "mps2-an385"]),
    # Debian's riscv64-unknown-elf GCC 12 picks its rv64 multilib (libgcc, picolibc's crt0) for
    # upstream's default -march=rv32imac_zicsr, so upstream's own build does not link with it;
    # the pre-2.2 ISA spec (where I includes the CSR instructions) selects the rv32imac multilib.
    "qemu-VIRT_RV32": dict(
        port="qemu", args=["BOARD=VIRT_RV32", "RV32_ARCH=rv32imac -misa-spec=2.2"], clock="none",
        qemu=["qemu-system-riscv32", "-machine", "virt", "-bios", "none"]),
}


def make_argv(name, *extra):
    t = TARGETS[name]
    build = ROOT / "build" / "upstream" / name
    argv = ["make", "--no-print-directory", "-C", str(MICROPY / "ports" / t["port"]), "-j2",
            "USER_C_MODULES=" + str(ROOT / "usermod"), "BUILD=" + str(build),
            "MICRONN_MODELS=" + " ".join(str(MODELS_DIR / (m + ".tflite")) for m in MODELS)]
    argv += t["args"] + NO_SUBMODULES
    return argv + list(extra), build


def build(name):
    argv, build_dir = make_argv(name)
    log = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    assert log.returncode == 0, log.stdout[-4000:] + log.stderr[-4000:]
    return build_dir


class _Spec:
    """What QemuProcess needs of a board: upstream's own QEMU command line (ports/qemu/Makefile)."""

    # upstream boards keep no storage image: every boot starts from the firmware alone
    storage_path = storage_bytes = storage_region = None

    def __init__(self, name, qemu_args, firmware):
        self.name, self.qemu_args, self.firmware = name, qemu_args, firmware

    def qemu_argv(self, serial, firmware, extra=(), storage=None):
        return self.qemu_args + ["-nographic", "-monitor", "null", "-semihosting",
                                 "-serial", serial, "-kernel", str(firmware)] + list(extra)

    def require_firmware(self):
        return self.firmware


def _program(name, inputs):
    """Code that runs model `name` on each input (bytes) and prints the outputs' lists."""
    return ("import _micronn\n"
            "it = _micronn.Interpreter(_micronn.Model(_micronn.models[%r]), profile=True)\n"
            "for x in %r:\n"
            "    it.input(0)[:] = x\n"
            "    it.invoke()\n"
            "    print([it.output(i).tolist() for i in range(%d)])\n"
            "print('clock', _micronn.PROFILE_CLOCK, 'calls', it.profile()[0][2])\n"
            % (name, inputs, len(oracle.output_details(oracle.read_model(name + ".tflite")))))


def _cases(name, rng):
    model = (MODELS_DIR / (name + ".tflite")).read_bytes()
    d = oracle.input_details(model)[0]
    info = np.iinfo(d["dtype"])
    xs = [rng.integers(info.min, info.max, size=d["shape"], dtype=d["dtype"], endpoint=True) for _ in range(3)]
    want = [[o.reshape(-1).tolist() for o in oracle.run(model, [x])] for x in xs]
    return [x.tobytes() for x in xs], want


@pytest.mark.timeout(3600)
# CI builds the unix port and upstream's qemu port for Arm; the RISC-V build is make test-full's.
@pytest.mark.parametrize("target", [t if t != "qemu-VIRT_RV32" else pytest.param(
    t, marks=pytest.mark.full_only("a third upstream port build")) for t in TARGETS])
def test_upstream_port_runs_models(target):
    t = TARGETS[target]
    build_dir = build(target)
    # The engine's kernels are built at -O2 in a port that builds MicroPython at -Os (what make
    # would run); the rest of the engine keeps the port's -Os.
    for src, o2 in (("kernels/reference/conv.c", True), ("mn_interp.c", False)):
        argv, _ = make_argv(target, "-n", "-B", "V=1", str(build_dir / "micronn" / "engine" / src)
                            .replace(".c", ".o"))
        cmd = subprocess.run(argv, capture_output=True, text=True, timeout=300).stdout
        cc = [line for line in cmd.splitlines() if src in line and " -c " in line]
        assert cc and bool(re.search(r" -O2( |$)", cc[-1].split("-Os")[-1])) == o2, (src, cc)

    rng = np.random.default_rng(10)
    runs = [(name,) + _cases(name, rng) for name in MODELS]
    if "qemu" not in t:
        for name, inputs, want in runs:
            out = subprocess.run([str(build_dir / "micropython"), "-c", _program(name, inputs)],
                                 capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stdout + out.stderr
            _check(out.stdout, want, t["clock"])
        return
    qemu = QemuProcess(_Spec(target, t["qemu"], build_dir / "firmware.elf"))
    qemu.start()
    board = SerialBoard(qemu.pty)
    try:
        for name, inputs, want in runs:
            _check(board.exec(_program(name, inputs), timeout=120), want, t["clock"])
    finally:
        board.close()
        qemu.stop()


def _check(printed, want, clock):
    lines = printed.strip().splitlines()
    got = [eval(line) for line in lines[:-1]]
    assert got == want
    # No clock in upstream's qemu port: the profiler still counts calls, with ticks 0.
    assert lines[-1] == "clock %s calls %d" % (clock, len(want)), lines[-1]
