"""The ``tapedeck`` command line: one subcommand per capability, each with ``--json`` output.

Each ``core/cli_*.py`` module contributes subcommands through ``register(subparsers)``. The TUI adds ``watch``
and ``demo`` from ``tui/cli.py``, which is the console-script entry point; ``core`` itself never imports ``tui``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from core import __version__

# Modules that contribute subcommands, in help order. Each exposes ``register(subparsers) -> None``.
COMMAND_MODULES: list[str] = [
    "core.cli_log",
    "core.cli_fold",
    "core.cli_status",
    "core.cli_route",
    "core.cli_slice",
    "core.cli_host",
    "core.cli_control",
]


def build_parser(extra_modules: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The full argument parser, with the core commands plus ``extra_modules``."""
    parser = argparse.ArgumentParser(
        prog="tapedeck",
        description="Inspect, follow and steer long-running agent sessions stored as DSH session logs.",
    )
    parser.add_argument("--version", action="version", version=f"tapedeck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [*COMMAND_MODULES, *extra_modules]:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None, extra_modules: Sequence[str] = ()) -> int:
    """Run the CLI and return its exit code."""
    parser = build_parser(extra_modules)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
