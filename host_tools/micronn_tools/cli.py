"""The `micronn` command line: one entry point, one subcommand per job (cmd_*.py).

Exit status: 0 ok, 1 failure (message on stderr, never a traceback for user errors), 2 usage.
Set MICRONN_DEBUG=1 to get the traceback of an unexpected error.
"""
import argparse
import os
import sys

from . import __version__

COMMANDS = ("inspect", "plan", "ops", "convert", "partition", "run", "bench", "flash", "demo")

EPILOG = """\
commands:
  inspect   operators, tensors, quantization, op support and exact arena of a model
  plan      memory plans (lower bound, greedy and optimal planners); store one in the model, draw it
  ops       support matrix: every kernel, its dtype combinations, versions and variants
  convert   model -> .py/.mpy/.c/.h/.bin (verified by the engine first)
  partition split a model between a kernel backend and the CPU kernels (one custom op per subgraph)
  run       run a model on an emulated board (QEMU) or a real board with .npy inputs
  bench     instructions (emulated) or microseconds (real) per inference, per-op profile, arena
  flash     install firmware (emulated image, or ESP32 via esptool) and copy files to a board
  demo      person detection on the default emulated board (what `make demo` runs)

`micronn COMMAND --help` describes each one. Exit status: 0 ok, 1 failure, 2 usage error.
Environment: MICRONN_MODELS_DIR (test models, default ../shared/models), MICRONN_BUILD_DIR
(firmware builds, default build/), MICRONN_LIB (host engine library), MICRONN_DEBUG=1 (tracebacks).
"""


def build_parser():
    from . import cmd_bench, cmd_convert, cmd_demo, cmd_flash, cmd_inspect, cmd_ops, cmd_plan, cmd_run, partition
    parser = argparse.ArgumentParser(
        prog="micronn",
        description="Host tools for micronn: MicroPython firmware with a built-in neural-network engine.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="micronn " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in (cmd_inspect, cmd_plan, cmd_ops, cmd_convert, partition, cmd_run, cmd_bench, cmd_flash, cmd_demo):
        mod.add_parser(sub)
    return parser


def _error(msg, code=1):
    print(f"micronn: error: {msg}", file=sys.stderr)
    return code


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)  # usage errors exit 2 here
    if args.command is None:
        parser.print_help()
        return 2
    from . import boards
    from .board import LINK_ERRORS, BoardCrash, BoardError, BoardExecError, BoardTimeout
    from .cli_common import CliError
    from .convert import ConvertError
    from .plan import PlanError
    from .qemu import QemuError
    try:
        return args.func(args) or 0
    except CliError as e:
        return _error(e, e.code)
    except BoardTimeout as e:
        return _error(f"the board did not answer in time: {e}")
    except BoardCrash as e:
        return _error(f"the board crashed or reset: {e}")
    except BoardExecError as e:
        return _error(f"the board raised {e.traceback.strip().splitlines()[-1] if e.traceback.strip() else 'an error'}"
                      f"\n{e.traceback.rstrip()}")
    except (BoardError, QemuError, boards.BoardConfigError, ConvertError, PlanError) as e:
        return _error(e)
    except LINK_ERRORS as e:
        # the serial link failed outside a board call that reports it (QEMU died, cable pulled)
        where = getattr(args, "port", None) or getattr(args, "board", None) or "the board"
        return _error(f"lost the link to {where}: {e} (is it connected, or its QEMU still running? "
                      "then try again)")
    except KeyboardInterrupt:
        print("micronn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # a bug: say so briefly unless debugging
        if os.environ.get("MICRONN_DEBUG"):
            raise
        return _error(f"internal error: {type(e).__name__}: {e} (set MICRONN_DEBUG=1 for the traceback)")


if __name__ == "__main__":
    sys.exit(main())
