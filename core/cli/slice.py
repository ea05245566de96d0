"""The ``seal``, ``recall`` and ``expand`` subcommands: preview sealing, and run the recall tools on a log.

``recall``/``expand`` go through ``core.policies.recall.run_recall_tool`` with the arguments a model would pass,
so they print exactly the text the model would receive.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, check_at_least, check_utf8, path_argument, whole
from core.cli.common import emit, emit_json_list_field, guarded
from core.cli.fold import effective_config
from core.policies.fold import EXPAND_TOOL, LOCATOR_FORMAT_VERSION
from core.policies.read_index import ReadIndex, index_reads
from core.policies.recall import (
    LINE_RANGE,
    MAX_SEARCH_TERMS,
    RECALL_SEARCH_TOOL,
    RECALL_STEP_TOOL,
    RECALL_TURN_TOOL,
    SEARCH_KINDS,
    SEARCH_LIMIT_MAX,
    run_recall_tool,
)
from core.policies.slice import plan_seal
from core.read.load import load_session
from core.read.session import Session
from core.read.summary import human_chars, turn_span
from core.shared.config_ranges import number_range
from core.shared.errors import TapedeckError
from core.shared.text import a_or_an, quoted


def seal_report(session: Session, overrides: list[str], config_file: str | None = None) -> dict[str, Any]:
    """What sealing would append now, as plain data: the effective history config, entries and warnings."""
    config = effective_config(session, config_file, overrides)
    plan = plan_seal(session, config)
    return {
        "path": str(session.path) if session.path else None,
        "keepRecentTurns": config.history.keepRecentTurns,
        "entryMaxChars": config.history.entryMaxChars,
        "entries": [entry.to_dict(session) for entry in plan.entries],
        "warnings": [warning.message for warning in plan.warnings],
    }


def _seal_lines(report: dict[str, Any]) -> Iterator[str]:
    """The text form of a seal report, line by line (an entry's text is one item)."""
    for number, entry in enumerate(report["entries"], 1):
        first, last = entry["turns"]
        yield (
            f"entry {number} → seq {entry['seq']}: replaces seq {entry['start']}..{entry['end']} "
            f"({len(entry['sources'])} node(s), {human_chars(entry['charsReplaced'])} chars) · {turn_span(first, last)} · "
            f"{human_chars(entry['chars'])} chars"
        )
        yield entry["text"]
        yield ""
    yield from (f"warning: {w}" for w in report["warnings"])
    count = len(report["entries"])
    yield (
        f"{count} entr{'y' if count == 1 else 'ies'} would be sealed now" if count else "nothing to seal now"
    )


def _seal(args: argparse.Namespace) -> None:
    # named as typed here, within the range the config gives its key (a config file's bad value is named by its key)
    for option, key, value in (
        ("keep-recent-turns", "slice.history.keepRecentTurns", args.keep_recent_turns),
        ("entry-max-chars", "slice.history.entryMaxChars", args.entry_max_chars),
    ):
        bounds = number_range(key)
        assert bounds is not None, key
        check_at_least(option, value, int(bounds[0]), int(bounds[1]))
    session = load_session(
        args.path, retain=False, readback=True, observe=index_reads, observe_types=ReadIndex.TYPES
    )
    overrides = []
    if args.keep_recent_turns is not None:
        overrides.append(f"history.keepRecentTurns={args.keep_recent_turns}")
    if args.entry_max_chars is not None:
        overrides.append(f"history.entryMaxChars={args.entry_max_chars}")
    report = seal_report(session, overrides, args.config)
    if args.json:
        emit_json_list_field(report, "entries")
        return
    for line in _seal_lines(report):  # one line at a time: the entries' texts are never joined into one
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _run(
    args: argparse.Namespace,
    tool: str,
    arguments: dict[str, Any],
    message: Callable[[str], str] = lambda text: text,
) -> None:
    result = run_recall_tool(
        load_session(args.path, retain=False, readback=True, index=True), tool, arguments
    )
    if result.is_error:
        raise TapedeckError(message(result.text))
    payload = {"tool": tool, "arguments": arguments, "text": result.text}
    emit(payload, args.json, lambda p: p["text"])


_DIGITS = re.compile("[0-9]")


def _convertible(text: str, name: str, what: str) -> None:
    """Refuse ``text`` (the argument ``name``) when it holds more digits than Python converts: the tool reads it
    as no number and says so in its words for the model (or, for a turn, quotes the whole argument)."""
    digits, most = len(_DIGITS.findall(text)), sys.get_int_max_str_digits()
    if most and digits > most:
        raise TapedeckError(f"{name}: a {what} number has at most {most} digits (this one has {digits})")


def _recall_turn(args: argparse.Namespace) -> None:
    _convertible(args.turn, "N", "turn")
    arguments: dict[str, Any] = {"turn": args.turn}
    if args.view is not None:
        arguments["view"] = args.view
    _run(args, RECALL_TURN_TOOL, arguments, lambda text: recall_turn_message(text, args))


def recall_turn_message(text: str, args: argparse.Namespace) -> str:
    """``recall_turn``'s argument error (written for the model, as the spec has it) told to a person."""
    if text.startswith(f"{RECALL_TURN_TOOL} needs "):
        return f"'{quoted(args.turn)}' is not a turn: give its number (3) or its tape id (slice-turn-3)"
    return text


def _number(text: str, name: str, what: str) -> str:
    """``text`` when it is a whole number from 1; else why not, as a TapedeckError (the tool reads the digits a
    text ends in, as the model may write ``step-3``, so it took ``-1`` for 1)."""
    if not re.fullmatch(r"0*[1-9][0-9]*", text.strip()):
        raise TapedeckError(f"'{quoted(text)}' is not a {what} number: give a number from 1")
    _convertible(text, name, what)
    return text


def _recall_step(args: argparse.Namespace) -> None:
    turn, step = _number(args.turn, "T", "turn"), _number(args.step, "S", "step")
    _run(args, RECALL_STEP_TOOL, {"turn": turn, "step": step})


def _recall_search(args: argparse.Namespace) -> None:
    if not args.query.strip():
        raise TapedeckError("give the words to search for")
    check_utf8("QUERY", args.query)
    arguments: dict[str, Any] = {"query": args.query}
    if args.kinds is not None:  # the tool reads an unknown kind as one that matches nothing
        arguments["kinds"] = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in arguments["kinds"] if k not in SEARCH_KINDS]
        if unknown:
            raise TapedeckError(
                f"--kinds: unknown kind '{quoted(unknown[0])}' (kinds: {', '.join(SEARCH_KINDS)})"
            )
    if args.limit is not None and not 1 <= args.limit <= SEARCH_LIMIT_MAX:  # the tool would clamp it
        raise TapedeckError(f"--limit must be from 1 to {SEARCH_LIMIT_MAX} (got {args.limit})")
    if args.scope is not None:
        arguments["scope"] = args.scope
    if args.limit is not None:
        arguments["limit"] = args.limit
    _run(args, RECALL_SEARCH_TOOL, arguments)


# What the recall tool tells the model, reworded for a person at a terminal (patterns after the tool prefix).
EXPAND_MESSAGES: list[tuple[re.Pattern[str], Callable[[re.Match[str], argparse.Namespace], str]]] = [
    (re.compile(r"^no session event at seq (\d+)$"), lambda m, a: f"no event at seq {m[1]} in this log"),
    (  # the tool keeps the spec's wording, 'a' before every type
        re.compile(r"^seq (\d+) is a (.*) event, not a tool result$"),
        lambda m, a: f"seq {m[1]} is {a_or_an(m[2])} event, not a tool result",
    ),
    (
        re.compile(r"^empty range \S+ \(result has (\d+) lines\)$"),
        lambda m, a: f"--lines {quoted(a.lines)} selects nothing: the result has {m[1]} lines",
    ),
    (
        re.compile(r'^invalid regex "(.*)"( \(.*\))?$'),
        lambda m, a: f"--grep: '{quoted(a.grep)}' is not a valid regular expression{m[2] or ''}",
    ),
    (
        re.compile(r"^no result block (\d+) \(result has 1 blocks\)$"),
        lambda m, a: f"--block {m[1]}: the result has 1 block (use --block 1)",
    ),
]


def expand_message(text: str, args: argparse.Namespace) -> str:
    """A recall tool error as a sentence for a person: no tool name, no JSON addresses."""
    text = text.removeprefix(f"{EXPAND_TOOL}: ")
    for pattern, say in EXPAND_MESSAGES:
        match = pattern.match(text)
        if match:
            return say(match, args)
    return text


def _expand(args: argparse.Namespace) -> None:
    if args.seq is None and args.turn is None:
        raise TapedeckError(
            "give --seq Q --format-version 4, or --turn T --step S, to say which tool result to show"
        )
    if args.seq is None and args.format_version not in (None, LOCATOR_FORMAT_VERSION):
        raise TapedeckError(
            f"--format-version {args.format_version} is no locator format this tapedeck reads (it reads "
            f"{LOCATOR_FORMAT_VERSION}); --turn T --step S needs none"
        )
    if args.seq is not None and args.format_version != LOCATOR_FORMAT_VERSION:
        raise TapedeckError(
            f"--seq needs --format-version {LOCATOR_FORMAT_VERSION} (copy both from a current locator); "
            "or address the result as --turn T --step S [--call K], which never changes"
        )
    if args.seq is None and args.step is None:
        raise TapedeckError("--turn needs --step (and --call K for the K-th result of that step)")
    if args.seq is not None and (args.turn, args.step, args.call) != (None, None, None):
        raise TapedeckError("--seq addresses a result itself: give it without --turn, --step and --call")
    for name, least in (("seq", 0), ("turn", 1), ("step", 1), ("call", 1), ("block", 1)):
        check_at_least(name, getattr(args, name), least)
    if args.lines is not None:
        match = LINE_RANGE.fullmatch(args.lines.strip())
        if match is None:  # the tool would show it all
            raise TapedeckError(
                f"--lines '{quoted(args.lines)}' is not a line range: give A-B (1-based, inclusive), e.g. 40-90"
            )
        if not match[1].lstrip("0"):  # the tool reads a model's 0 as 1
            raise TapedeckError(f"--lines '{quoted(args.lines)}': lines count from 1, so A must be 1 or more")
        # compared as digits: a bound may have more of them than int() converts
        first, last = (bound.lstrip("0") for bound in match.groups())
        if (len(first), first) > (len(last), last):
            raise TapedeckError(
                f"--lines '{quoted(args.lines)}' is reversed: give the first line first, as "
                f"{quoted(match[2])}-{quoted(match[1])}"
            )
    names = {
        "seq": "seq",
        "format_version": "formatVersion",
        "turn": "turn",
        "step": "step",
        "call": "call",
        "block": "block",
        "grep": "grep",
        "lines": "lines",
    }
    arguments = {key: getattr(args, attr) for attr, key in names.items() if getattr(args, attr) is not None}
    _run(args, EXPAND_TOOL, arguments, lambda text: expand_message(text, args))


def _common(p: argparse.ArgumentParser) -> None:
    add_log_path(p)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``seal``, ``recall`` and ``expand`` subcommands."""
    p = sub.add_parser(
        "seal",
        help=COMMANDS["seal"].help,
        description="Show the tape entries the slice policy would append if it sealed the finished turns "
        "of this log now: which seqs each entry replaces, its turn span and its size. Nothing is written.",
    )
    _common(p)
    p.add_argument(
        "--keep-recent-turns",
        metavar="N",
        type=whole,
        help="completed turns to keep raw (history.keepRecentTurns)",
    )
    p.add_argument(
        "--entry-max-chars",
        metavar="N",
        type=whole,
        help="code-point cap per entry (history.entryMaxChars, >= 256)",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="policy config file (TOML or JSON) whose [slice] section applies",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_seal))

    recall = sub.add_parser(
        "recall",
        help=COMMANDS["recall"].help,
        description="Run a recall tool on a log as the model would call it, and print the text the model would "
        "get: a whole earlier turn (turn), the calls and results of one step (step), or a search over what was "
        "said and run (search).",
    )
    kinds = recall.add_subparsers(dest="recall_command", metavar="WHAT", required=True)
    p = kinds.add_parser(
        "turn",
        help="one turn's verbatim page (recall_turn)",
        description="Print the page recall_turn gives the model for one turn, sealed on the tape or not: its "
        "messages and tool calls, and with --view full every record of the turn as JSON.",
    )
    _common(p)
    p.add_argument("turn", metavar="N", help='turn number, or "slice-turn-N"')
    p.add_argument("--view", choices=("dialogue", "full"), help="full adds every original record as JSON")
    add_json(p)
    p.set_defaults(handler=guarded(_recall_turn))

    p = kinds.add_parser(
        "step",
        help="one step's tool calls and results (recall_step)",
        description="Print what recall_step gives the model for one step: each tool call it made with the "
        "result as it was logged, a spilled output read back from its file.",
    )
    _common(p)
    p.add_argument("turn", metavar="T", help="turn number")
    p.add_argument("step", metavar="S", help="step number")
    add_json(p)
    p.set_defaults(handler=guarded(_recall_step))

    p = kinds.add_parser(
        "search",
        help="scored hits over the recorded history (recall_search)",
        description="Search the session's history as recall_search does for the model and print its scored "
        "hits among the kinds asked for (user and assistant text, context, tool inputs, errors and outputs), with "
        "scope auto a few tool-output hits besides.",
    )
    _common(p)
    p.add_argument(
        "query",
        metavar="QUERY",
        help=f"words of two or more characters to look for, at most {MAX_SEARCH_TERMS} distinct ones",
    )
    p.add_argument(
        "--kinds", metavar="A,B", help=f"comma-separated kinds to search: {', '.join(SEARCH_KINDS)}"
    )
    p.add_argument("--scope", choices=("auto", "dialogue"), help="auto (default) adds a few tool-output hits")
    p.add_argument(
        "--limit",
        type=whole,
        metavar="N",
        help=f"hits to return besides tool output, 1-{SEARCH_LIMIT_MAX} (default 5)",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_recall_search))

    p = sub.add_parser(
        "expand",
        help=COMMANDS["expand"].help,
        description="Print one tool result from the log in full, exactly as expand_result would hand it "
        "to the model. Address it by --turn/--step (and --call) or by the --seq and --format-version of a "
        "locator; --grep or --lines narrow the output.",
    )
    _common(p)
    p.add_argument("--seq", type=whole, metavar="Q", help="log id of the result, from a locator")
    p.add_argument(
        "--format-version",
        type=whole,
        metavar="V",
        help=f"locator format version, required with --seq (currently {LOCATOR_FORMAT_VERSION})",
    )
    p.add_argument("--turn", type=whole, metavar="T", help="turn of the result (without --seq)")
    p.add_argument("--step", type=whole, metavar="S", help="step of the result (without --seq)")
    p.add_argument("--call", type=whole, metavar="K", help="which result of that step, from 1 (default 1)")
    p.add_argument("--block", type=whole, metavar="B", help="result block (only 1 exists)")
    only = p.add_mutually_exclusive_group()
    only.add_argument(
        "--grep", metavar="RE", help="only lines matching this case-insensitive regex, with context"
    )
    only.add_argument("--lines", metavar="A-B", help="only this 1-based inclusive line range")
    add_json(p)
    p.set_defaults(handler=guarded(_expand))
