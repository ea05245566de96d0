"""The parser ``main`` builds for one command (only the module holding it registers; for ``--help`` or an unknown
word, every command by name and help line) prints what the parser of every command prints: ``tapedeck --help``,
each subcommand's ``--help`` and a usage error of each, byte for byte, with the same exit status."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from core.cli import COMMANDS, build_parser, main, parsed
from tui.cli import tui_commands

ALL = {**COMMANDS, **tui_commands()}
NESTED = [["bridge", "install"], ["bridge", "remove"], ["bridge", "status"], ["cache", "info"], ["cache", "clear"]]
ARGVS = [
    [],
    ["--help"],
    ["--version"],
    ["no-such-command"],
    *([name, "--help"] for name in ALL),
    *([name, "--no-such-option"] for name in ALL),
    *([*words, "--help"] for words in NESTED),
]


def _full(argv: list[str]) -> int:
    """``main`` with the parser of every command (``build_parser`` without a command)."""
    parser = build_parser(tui_commands())
    args = parsed(parser, argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    raise AssertionError(f"{argv} parsed to a command")


def _outcome(run: Callable[[], int], capsys: pytest.CaptureFixture[str]) -> tuple[int | str | None, str, str]:
    try:
        code: int | str | None = run()
    except SystemExit as done:
        code = done.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", ARGVS, ids=lambda argv: " ".join(argv) or "(none)")
def test_the_parser_of_one_command_prints_what_the_parser_of_all_prints(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps help to the terminal's width
    full = _outcome(lambda: _full(argv), capsys)
    lazy = _outcome(lambda: main(argv, extra_commands=tui_commands()), capsys)
    assert lazy == full
    assert full[0] in (0, 2) and (full[1] or full[2])
