"""The `micronn` command line: one entry point, one subcommand per job."""
import argparse
import sys

from . import __version__


def build_parser():
    parser = argparse.ArgumentParser(
        prog="micronn",
        description="Host tools for micronn: MicroPython firmware with a built-in neural-network engine.",
    )
    parser.add_argument("--version", action="version", version="micronn " + __version__)
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
