"""The ``tapedeck`` console script: the core CLI plus the TUI's ``watch`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core import __version__

TUI_COMMAND_MODULES = ["tui.cli_watch", "tui.cli_demo"]


def _watch_only(argv: list[str]) -> int:
    """``tapedeck watch …`` without importing every other subcommand (some pull in heavy SDKs at import)."""
    from tui import cli_watch

    parser = argparse.ArgumentParser(prog="tapedeck")
    parser.add_argument("--version", action="version", version=f"tapedeck {__version__}")
    cli_watch.register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(argv)
    return args.handler(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tapedeck`` with every subcommand, the TUI's included."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["watch"]:
        return _watch_only(args)
    from core.cli import main as core_main

    return core_main(args, extra_modules=TUI_COMMAND_MODULES)


if __name__ == "__main__":
    sys.exit(main())
