"""The ``tapedeck`` console script: the core CLI plus the TUI's ``watch`` command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from core.cli import main as core_main

TUI_COMMAND_MODULES = ["tui.cli_watch", "tui.cli_demo"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tapedeck`` with every subcommand, the TUI's included."""
    return core_main(argv, extra_modules=TUI_COMMAND_MODULES)


if __name__ == "__main__":
    sys.exit(main())
