"""Run a child process with a limit on the CPU time it uses, not on the wall clock.

A hang (an infinite loop in micropython, a kernel spinning in QEMU) burns CPU, so an RLIMIT_CPU
catches it exactly; a wall-clock limit also fires when the machine is merely busy (a loaded CI
host or a laptop compiling beside the tests runs a child 10-30x slower), which made these tests
flaky. The wall-clock limit stays only as a backstop against a child that blocks without
computing, and is far above any CPU limit.
"""
import resource
import signal
import subprocess

WALL_BACKSTOP = 3600.0


class CpuLimitExceeded(Exception):
    pass


def run(argv, cpu_seconds, **kwargs):
    """subprocess.run(argv, **kwargs) with at most cpu_seconds of CPU for the child (SIGXCPU,
    then SIGKILL one second later); raises CpuLimitExceeded if the limit ended it."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 1))

    r = subprocess.run(argv, preexec_fn=limit, timeout=WALL_BACKSTOP, **kwargs)
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise CpuLimitExceeded(f"{argv[0]} used more than {cpu_seconds} s of CPU (killed by signal "
                               f"{-r.returncode})")
    return r
