"""The ``tapedeck`` command line: one subcommand per capability, each with ``--json`` output.

Layout: one module per command family in this package, each a thin adapter from parsed arguments to a core
function and a printer, exposing ``register(subparsers) -> None``. To add a family, write ``core/cli/NAME.py``
with a ``register`` function and list it in ``COMMAND_MODULES``. Shared plumbing (``emit``, ``fail``,
``guarded``) lives in ``core/cli/common.py``.

- ``log``: ``inspect``, ``surface``, ``events``, ``sessions``
- ``fold``: ``fold``
- ``status``: ``status``
- ``route``: ``route``
- ``slice``: ``seal``, ``recall``, ``expand``
- ``host``: ``run``, ``repair``
- ``control``: ``control``
- ``timetravel``: ``request``, ``diff``, ``cost``

The TUI adds ``watch`` and ``demo`` from ``tui/cli.py``, which is the console-script entry point; ``core``
itself never imports ``tui``. ``main(argv) -> int`` is the in-process entry that tests and tools call;
``python -m core.cli`` runs it too.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from core import __version__

# Modules that contribute subcommands, in help order. Each exposes ``register(subparsers) -> None``.
COMMAND_MODULES: list[str] = [
    "core.cli.log",
    "core.cli.fold",
    "core.cli.status",
    "core.cli.route",
    "core.cli.slice",
    "core.cli.host",
    "core.cli.control",
    "core.cli.timetravel",
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
