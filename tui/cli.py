"""The ``tapedeck`` console script: the core CLI plus the TUI's ``watch`` and ``demo`` commands.

Only the module of the command being run is imported (``core.cli.build_parser``), so Textual loads when
``watch`` or ``demo`` actually runs, never for ``--help`` or a core command.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence  # loaded as Python starts: no time of its own

# Not ``typing``'s: importing it took 8 of the 9 ms before ``run`` holds the signals (a SIGTERM then ended the
# process, exit -15). Type checkers take any ``TYPE_CHECKING`` as theirs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from core.cli import Command

# Each command's module and help (core.cli.Command's fields): this module imports nothing of core.cli as it loads,
# so that the console script holds SIGTERM before anything that takes time (run).
_TUI_COMMANDS = {
    "watch": ("tui.cli_watch", "follow a session log live in the terminal UI"),
    "fleet": ("tui.cli_fleet", "every session under sessions roots in one table, the ones needing you first"),
    "demo": ("tui.cli_demo", "watch a scripted agent fix a failing test, live, with operator control"),
}


def tui_commands() -> dict[str, Command]:
    """The TUI's commands, by name."""
    from core.cli import Command

    return {name: Command(*spec) for name, spec in _TUI_COMMANDS.items()}


def check_terminal() -> None:
    """Refuse to start the TUI when stdin (where it reads keys) or stderr (where it draws, as Textual does) is no
    terminal: it would draw escape sequences into a file or a pipe and wait for keys that never come."""
    import os

    from core.shared.errors import TapedeckError

    streams = {"stdin": sys.__stdin__, "stderr": sys.__stderr__}
    missing = [name for name, stream in streams.items() if stream is None or not os.isatty(stream.fileno())]
    if missing:
        raise TapedeckError(
            f"the TUI needs a terminal: it draws on stderr and reads keys from stdin, and {' and '.join(missing)} "
            f"{'is not one' if len(missing) == 1 else 'are not terminals'} here; `tapedeck sessions`, `inspect` "
            "and `events` read logs without one"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tapedeck`` with every subcommand, the TUI's included."""
    from core.cli import main as core_main

    return core_main(sys.argv[1:] if argv is None else argv, extra_commands=tui_commands())


def run() -> int:
    """The console script's entry: SIGTERM and Ctrl-C held from its first step until the command takes them or lets
    them go (``core.shared.held_signals``), ``main``, then everything left is frozen, as the process ends here: the
    interpreter's final collection skips a heap that exiting frees anyway (10 ms a command)."""
    from core.shared.held_signals import hold

    hold()
    from core.cli.common import ends_after_command

    ends_after_command()
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(run())
