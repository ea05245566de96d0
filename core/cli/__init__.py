"""The ``tapedeck`` command line: one subcommand per capability, each with ``--json`` output.

Layout: one module per command family in this package, each a thin adapter from parsed arguments to a core
function and a printer, exposing ``register(subparsers) -> None``:

- ``log``: ``inspect``, ``surface``, ``events``, ``sessions``
- ``fold``: ``fold``
- ``status``: ``status``
- ``route``: ``route``
- ``slice``: ``seal``, ``recall``, ``expand``
- ``host``: ``run``, ``repair``
- ``control``: ``control``
- ``bridge``: ``bridge install|remove|status``
- ``timetravel``: ``request``, ``diff``, ``cost``
- ``alerts``: ``alerts``
- ``export``: ``export``, ``note``, ``notes``
- ``cache``: ``cache info``, ``cache clear``

``COMMANDS`` below is the one table of commands: name, the module that registers it, and its one-line help, in
help order. A family's ``register`` adds full parsers and takes their help line from the table
(``help=COMMANDS["inspect"].help``). To add a command, add its row here and its parser to the family's
``register``; a new family is a new module with a ``register`` function.

Imports stay lazy: ``main`` imports only the family of the command being run and lists every other command
from the table alone, so ``tapedeck --help`` loads no family module and each command loads only its own
(``tests/test_cli_imports.py`` checks that no Textual or unused policy module comes along).

The TUI adds ``watch`` and ``demo`` from ``tui/cli.py``, which is the console-script entry point; ``core``
itself never imports ``tui``. ``main(argv) -> int`` is the in-process entry that tests and tools call;
``python -m core.cli`` runs it too. Shared plumbing (``emit``, ``fail``, ``guarded``) is in ``common.py``.
"""

from __future__ import annotations

import sys

# ``python -m core.cli`` (the module being imported as -m's): its signals are held from here, as the console script
# holds them from its first step (tui/cli.py), while the imports below take their time (a SIGTERM then took the
# default action, exit -15 with no word); ``main`` takes them (``run``) or lets them go (any other command).
if sys.argv[:1] == ["-m"]:
    from core.shared.held_signals import hold

    hold()

import argparse  # noqa: E402 - after the hold
import importlib  # noqa: E402
import itertools  # noqa: E402
import os  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from typing import NamedTuple  # noqa: E402

from core import __version__  # noqa: E402
from core.shared.envdirs import check_own_dirs  # noqa: E402
from core.shared.errors import TapedeckError  # noqa: E402
from core.shared.jsonout import allow_deepest_walks  # noqa: E402


class Command(NamedTuple):
    """A subcommand: the module whose ``register(subparsers)`` adds it, and its one-line help."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "inspect": Command(
        "core.cli.log", "summarize a session log: header, turns, tools, surface, usage, diagnostics"
    ),
    "surface": Command("core.cli.log", "print the model-visible messages in order"),
    "events": Command("core.cli.log", "list events, optionally filtered by type or turn"),
    "sessions": Command("core.cli.log", "every session under sessions roots: host state, attention, turn, cost (the fleet)"),
    "fold": Command(
        "core.cli.fold", "preview what the tool-result fold would do to each tool result on the surface"
    ),
    "status": Command(
        "core.cli.status", "prolong-memory status of a session (log file, probe, sections, denied calls)"
    ),
    "route": Command(
        "core.cli.route", "classify a request and show its output cap, step budgets and checkpoint risk"
    ),
    "seal": Command("core.cli.slice", "preview the tape entries sealing would append now"),
    "recall": Command("core.cli.slice", "read earlier turns, steps or search hits back from the log"),
    "expand": Command("core.cli.slice", "the full text of one logged tool result (expand_result)"),
    "run": Command("core.cli.host", "run an agent session (each TASK is one turn) with the reference host"),
    "repair": Command(
        "core.cli.host",
        "make a log damaged mid-file resumable: keep a copy, stand in for lost events, keep every intact one",
    ),
    "control": Command(
        "core.cli.control",
        "send a control request (checkpoint, rewind, expand, …) to the host running a session",
    ),
    "bridge": Command(
        "core.cli.bridge",
        "install the DSH bridge plugin into a DSH home (control of sessions DSH runs), remove it, show its status",
    ),
    "request": Command(
        "core.cli.timetravel", "rebuild the request the model received for a step (or every request)"
    ),
    "diff": Command(
        "core.cli.timetravel", "what changed against the previous request: where the prefix cache broke and why"
    ),
    "cost": Command(
        "core.cli.timetravel", "tokens and dollars per request, turn and session; what each cut saved or cost"
    ),
    "export": Command(
        "core.cli.export", "share a session or a moment as one HTML page, a Markdown transcript or JSON (redacted)"
    ),
    "note": Command("core.cli.export", "add, edit or remove the note on an event (kept beside the log, not in it)"),
    "notes": Command("core.cli.export", "list the notes on a session's events"),
    "alerts": Command(
        "core.cli.alerts", "run the alert rules over session logs: report what fired (exit 1), or --follow"
    ),
    "cache": Command("core.cli.cache", "list or remove what is kept to read logs again fast: index files, alert checkpoints"),
}


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose every refusal reads as the CLI's own usage errors; its subcommands' parsers are
    of this class too."""

    def _check_value(self, action: argparse.Action, value: object) -> None:
        """Refuse a ``value`` that is none of ``action``'s choices: quoted as other refusals quote a value (cut, its
        controls escaped, ``quoted``), the choices listed plain, the nearest named; argparse wrote both as Python
        writes a string (``invalid choice: "it's" (choose from 'a', 'b')``), the value whole however long."""
        if action.choices is None or value in action.choices:
            return
        from core.shared.text import nearest, quoted

        options = [str(choice) for choice in action.choices]
        near = nearest(str(value), options, within=min(2, len(str(value)) // 2))  # "x" is near every short word
        hint = f" (did you mean {near}?)" if near else ""
        raise argparse.ArgumentError(action, f"'{quoted(value)}' is not one of: {', '.join(options)}{hint}")


def build_parser(
    extra_commands: Mapping[str, Command] | None = None, command: str | None = None
) -> argparse.ArgumentParser:
    """The argument parser with the core commands plus ``extra_commands``.

    With a known ``command`` only the module holding it registers: parsing it needs nothing else, and building
    every other subparser cost 10-17 ms a run. With any other ``command`` ("" for ``--help``, an unknown word)
    every command is listed by name and help line, all the top-level help and "invalid choice" need. Without
    one every module registers.
    """
    parser = Parser(
        prog="tapedeck",
        description="Inspect, follow and steer long-running agent sessions stored as DSH session logs.",
    )
    parser.add_argument("--version", action="version", version=f"tapedeck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    table = {**COMMANDS, **(extra_commands or {})}
    if command in table:
        importlib.import_module(table[command].module).register(sub)
        return parser
    registered: set[str] = set()
    for name, spec in table.items():
        if command is not None:
            sub.add_parser(name, help=spec.help)
        elif spec.module not in registered:
            registered.add(spec.module)
            importlib.import_module(spec.module).register(sub)
    return parser


def command_of(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` starts with, or "" when it starts with an option or is empty (``--help``)."""
    return argv[0] if argv and not argv[0].startswith("-") else ""


def _standard_streams() -> None:
    """A closed stdin, stdout or stderr (``>&-``) opened on /dev/null: what is written there goes nowhere instead of
    failing, and no file opened later takes its number (a log at 1 would get what a child process prints)."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)  # the lowest number free: this one
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))  # noqa: SIM115 - for the process


def main(argv: Sequence[str] | None = None, extra_commands: Mapping[str, Command] | None = None) -> int:
    """Run the CLI and return its exit code."""
    _standard_streams()
    allow_deepest_walks()
    try:
        check_own_dirs()  # before anything reads or writes where they point (the help names the sessions root)
    except TapedeckError as exc:
        from core.cli.common import fail

        return fail(str(exc))
    words = list(sys.argv[1:] if argv is None else argv)
    if command_of(words) == "run":  # its signals are taken before its modules are imported (core.cli.stops)
        from core.cli.stops import started

        return started(lambda: _dispatch(words, extra_commands))
    from core.shared.held_signals import let_go

    follows = command_of(words) == "alerts"  # until stopped: its signals are taken, held until then (stops.ending)
    if not follows:
        let_go()  # any other command: the console script's hold ends, a signal held meanwhile acts now
    try:
        if follows:
            from core.cli.stops import ending

            return ending(lambda: _dispatch(words, extra_commands))
        return _dispatch(words, extra_commands)
    except KeyboardInterrupt:  # Ctrl-C in a command that takes none itself (run, export -o, control --wait do)
        import signal

        from core.cli.common import fail
        from core.cli.stops import ended_by

        return fail(*ended_by(signal.SIGINT))


def _dispatch(words: list[str], extra_commands: Mapping[str, Command] | None) -> int:
    """Parse ``words`` and run the command they name."""
    parser = build_parser(extra_commands, command_of(words))
    args = parsed(parser, words)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    return args.handler(args)


def parsed(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """``words`` parsed by ``parser``, exiting 2 on an error. A word no option takes is refused by the subcommand
    ``words`` start with, quoted, as its other errors read (``tapedeck request: error: …``): argparse left it to the
    top parser, whose error named no subcommand. Options before the command are the top parser's, and only they are
    named (``tapedeck --bogus events LOG`` named ``LOG`` too, which the command only listed, never parsed)."""
    args, unknown = parser.parse_known_args(words)
    if unknown:
        from core.shared.text import quoted

        owner = _named(parser, args) if command_of(words) else parser  # after an option: the top parser's own
        if owner is parser:
            leading = set(itertools.takewhile(lambda word: word.startswith("-"), words))
            unknown = [word for word in unknown if word in leading] or unknown
        owner.error(f"unrecognized arguments: {' '.join(map(quoted, unknown))}")
    return args


def _named(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest subcommand under ``parser`` that ``args`` names (``parser`` itself if none)."""
    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        child = None if action is None else action.choices.get(getattr(args, action.dest, None))
        if child is None:
            return parser
        parser = child
