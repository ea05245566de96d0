"""``export``, ``note`` and ``notes``: share a session as HTML, Markdown or JSON; anchor notes to its events."""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from typing import TYPE_CHECKING, Any

from core.cli import COMMANDS
from core.cli.args import add_json, add_log_path, check_types, check_utf8, path_argument, whole
from core.cli.common import emit, for_terminal, guarded, seq_width, warn
from core.shared.errors import TapedeckError, seq_not_in_log
from core.shared.text import counted, nearest, printable, quoted, quoted_path

if TYPE_CHECKING:
    from core.export.build import ExportOptions


def _to_file(path: str, where: str, fmt: str, options: ExportOptions) -> dict[str, Any]:
    """``export_to_file``, with SIGTERM taken as Ctrl-C is (its default action ended the process and left the
    temporary file the export is written into beside ``where``): either ends it with that file removed and
    ``where`` as it was, said on stderr, exit 143 or 130."""
    from core.cli.stops import Stops, stopped_by
    from core.export.write import export_to_file

    stops = Stops()
    try:
        with stops.taken():
            return export_to_file(path, where, fmt, options)
    except KeyboardInterrupt as exc:
        if not stops.ending:  # not a signal's
            raise
        how, code = stopped_by(stops.caught(exc))
        stopped = TapedeckError(f"{how}; nothing was written to {quoted_path(where)}")
        stopped.exit_code = code
        raise stopped from None


def _export(args: argparse.Namespace) -> None:
    from core.export.build import ExportOptions
    from core.export.redact import Redactor
    from core.export.write import export
    from core.read.event_filter import EventFilter
    from core.read.notes import NotesError, find_sidecar

    if args.step is not None and args.turn is None:
        raise TapedeckError("--step needs --turn")
    for option, values in (("--type", args.type), ("--tool", args.tool), ("--grep", [args.grep])):
        for value in filter(None, values or ()):  # the export names its filter as typed
            check_utf8(option, value)
    check_types(args.type)
    to_terminal = args.output in (None, "-") and sys.stdout.isatty()
    redact = (
        args.redact if args.redact is not None else not to_terminal
    )  # a file or a pipe: it is being shared
    try:
        flt = EventFilter.parse(",".join(args.type or ()), ",".join(args.tool or ()), args.turns or "", args.errors,
                                args.grep or "")  # fmt: skip
    except ValueError as exc:
        raise TapedeckError(str(exc)) from None
    options = ExportOptions(
        at=args.at, turn=args.turn, step=args.step, redactor=Redactor() if redact else None, filter=flt
    )
    fmt = _format(args)
    where = "stdout" if args.output in (None, "-") else args.output
    if args.output in (None, "-"):
        sys.stdout.flush()
        doc = export(args.path, _stdout(), fmt, options)
        sys.stdout.flush()
    else:
        if os.path.isdir(where):
            where = os.path.join(where, _file_name(args.path, fmt, options))
        elif where.endswith(
            "/"
        ):  # names a directory: never a file of that name, nor the file it would replace
            raise TapedeckError(
                f"{quoted_path(where)}: no such directory; -o takes a file, or a directory that exists"
            )
        doc = _to_file(args.path, where, fmt, options)
    counts = doc["redaction"]
    said = ", ".join(f"{n} {kind}" for kind, n in counts.items()) if counts is not None else "off"
    f = doc["filter"]
    # every count is of the same rows, the log's: shown, plus what the filter left out, plus what the format
    # does not show of the rest (a transcript's rows with no paragraph, rows past the moment), is the total
    left_out = f["rowsLeftOut"] if f else 0
    total = doc["rows"] + left_out
    rows = f"{doc['shown']} of {counted(total, 'row')}" if doc["shown"] != total else counted(total, "row")
    unshown = doc["rows"] - doc["shown"]
    # the operator's own input, quoted but whole: cut at ``QUOTED`` characters it lost its end, a ``--grep``'s
    # closing ``/`` with it (``/error|warn…``, a pattern of its own that ``…`` is part of), or the whole regex
    # after a long ``--type`` list
    more = f", {unshown} more the {FORMAT_NAMES[fmt]} does not show" if unshown else ""
    if f:
        filtered = f" (filter: {quoted(f['text'], None)}; {left_out} left out{more})"
    else:  # what the format leaves out is said as with a filter: "7 of 19 rows" alone left 12 unexplained
        filtered = f" ({unshown} the {FORMAT_NAMES[fmt]} does not show)" if unshown else ""
    warn(f"exported {rows}{filtered} to {quoted_path(where)} (redaction: {said})")
    for tool in flt.tools if flt.active else ():  # as --type warns of a type no log holds (check_types)
        if tool not in doc["toolsSeen"]:
            near = nearest(tool, sorted(doc["toolsSeen"]))
            hint = f" (did you mean {quoted(near, None)}?)" if near else ""
            warn(f"--tool '{quoted(tool, None)}' names no tool this session used{hint}: no row is about it")
    try:
        found = find_sidecar(args.path)
        found.notes()
    except NotesError as exc:  # the document says they could not be read; here, where and why
        warn(f"the notes are left out of the export: {exc}")
        return
    if found.notice is not None:
        warn(found.notice)


FORMAT_NAMES = {"md": "transcript", "html": "page"}  # (a JSON document shows every row it holds)
SUFFIXES = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html"}


def _format(args: argparse.Namespace) -> str:
    """``--format``, else the one ``-o FILE``'s suffix names (``comment.md``: Markdown), else HTML."""
    if args.format is not None:
        return str(args.format)
    if args.output is None or os.path.isdir(args.output):
        return "html"
    return SUFFIXES.get(os.path.splitext(args.output)[1].lower(), "html")


def _file_name(path: str, fmt: str, options: ExportOptions) -> str:
    """The name of the export of the log at ``path`` written into a directory: its session's id redacted as the
    export is."""
    from core.export.naming import export_name
    from core.log.layout import resolve_log_path
    from core.log.reader import read_header

    log = resolve_log_path(path)
    sid = (read_header(log) or {}).get("id")
    sid = sid if isinstance(sid, str) else ""
    if options.redactor is not None:
        sid = options.redactor.again(sid)
    return export_name(sid, log.parent.name if log.parent.name else log.stem, options.at, fmt)


class _TextOut:
    """Bytes written to ``sys.stdout`` as text, decoded as they come, as a text report prints (``for_terminal``:
    on a terminal the log's control characters are drawn, never run): a terminal, or a redirected stdout with no
    byte buffer."""

    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def write(self, data: bytes) -> int:
        sys.stdout.write(for_terminal(self.decoder.decode(data)))
        return len(data)


def _stdout() -> Any:
    buffer = getattr(sys.stdout, "buffer", None)
    return buffer if buffer is not None and not sys.stdout.isatty() else _TextOut()


def _session_log(path: str) -> None:
    """Refuse a ``PATH`` that is no session log (a text file, an empty one), as every reading command does, naming
    why: notes are kept for a log's events, and such a file has none."""
    from core.log.layout import resolve_log_path
    from core.log.reader import read_log_header

    read_log_header(resolve_log_path(path))


def _last_seq(path: str) -> int:
    from core.log.tail import tail_events

    last = tail_events(path, 1)
    seq = last[-1].get("seq") if last else None
    return seq if isinstance(seq, int) else -1


def _note(args: argparse.Namespace) -> None:
    from core.read.notes import load_notes, set_note

    text = args.text
    check_utf8("TEXT", text)
    _session_log(args.path)
    if not text.strip() and args.seq not in load_notes(args.path):
        sys.stdout.write(f"no note at seq {args.seq}; nothing changed\n")
        return
    last = _last_seq(args.path)
    if (
        text.strip() and not 0 <= args.seq <= last
    ):  # a note is removed wherever it is (a log replaced under it)
        raise seq_not_in_log(args.seq, last + 1)
    written = set_note(args.path, args.seq, text)
    did = "replaced the note" if written.replaced else "added a note"
    if not text.strip():
        did = "removed the note"
    sys.stdout.write(f"{did} at seq {args.seq} ({quoted_path(written.sidecar)})\n")
    if written.kept is not None:
        warn(
            f"the notes of another session that were there (this log was replaced) are kept in {written.kept}"
        )


def _notes(args: argparse.Namespace) -> None:
    from core.read.notes import find_sidecar

    _session_log(args.path)
    found = find_sidecar(args.path)
    notes = [n.to_dict() for n in sorted(found.notes().values(), key=lambda n: n.seq)]
    if found.notice is not None:
        warn(found.notice)

    def render(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "no notes"
        # a note is the sidecar's text (a shared log's may be anyone's): its controls drawn, piped or not
        width = seq_width(r["seq"] for r in rows)
        return "\n".join(
            f"{r['seq']:>{width}}  " + printable(r["text"]).replace("\n", "\n" + " " * (width + 2))
            for r in rows
        )

    emit(notes, args.json, render)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``export``, ``note`` and ``notes``."""
    p = sub.add_parser(
        "export",
        help=COMMANDS["export"].help,
        description="Write a session as one self-contained HTML page (no network; readable without JavaScript), "
        "a Markdown transcript sized for an issue comment, or JSON. It holds the header, every event with the "
        "TUI's glyphs and summaries (streams collapsed, tool calls with their results), the surface at --at (or "
        "at the end), one request and where its cache broke, the cost table, the context chart, the cuts with "
        "what they replaced, and the notes; with the TUI's filter (--type, --tool, --turns, --errors, --grep) the "
        "list holds only the rows it lets through. Written while the log is read. Redaction is on unless the export goes "
        "to a terminal (a file, by -o or a redirect, or a pipe is being shared); --redact or --no-redact decides "
        "otherwise. A log of 16 MB or more is rendered by a second process beside the pass when two CPUs are "
        "there and the machine is not busy (the same bytes, sooner); TAPEDECK_EXPORT_JOBS=1 keeps the export in one "
        "process.",
    )
    add_log_path(p)
    p.add_argument(
        "--at",
        type=whole,
        metavar="SEQ",
        help="the moment: the surface as it stood right after SEQ (Markdown: the transcript up to it too)",
    )
    p.add_argument(
        "--turn", type=whole, metavar="T", help="the request shown: turn T's last (default: the last)"
    )
    p.add_argument("--step", type=whole, metavar="S", help="with --turn: that step's request")
    # the TUI's filter (f), field by field: the rows of the event list it lets through
    p.add_argument("--type", action="append", metavar="T",
                   help="only rows of these event types, as the TUI's filter takes them (comma-separated or repeated; "
                   "'tool/' or 'tool*' a family, '!' in front leaves one out); a model stream's row is listed when "
                   "one of its deltas passes the filter, each delta as its own row when the type assistant/chunk is "
                   "named")  # fmt: skip
    p.add_argument(
        "--tool", action="append", metavar="NAME", help="only rows about these tools (calls, results)"
    )
    p.add_argument("--turns", metavar="RANGE", help="only rows of these turns: 3, 3-7 or 3-")
    p.add_argument("--errors", action="store_true", help="only error rows")
    p.add_argument("--grep", metavar="REGEX", help="only rows whose event's JSON text the regex finds")
    p.add_argument("--format", choices=("html", "md", "json"),
                   help="default: the one -o FILE's suffix names (.md, .json, .html), else html")  # fmt: skip
    p.add_argument("--redact", action=argparse.BooleanOptionalAction, default=None,
                   help="replace keys, tokens, passwords, secret environment values, e-mail addresses and "
                   "home paths (default: on, but off when stdout is a terminal)")  # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE", type=path_argument,
                   help="write here (default: stdout); an existing directory: a file in it named for the session, "
                   "the moment and the format")  # fmt: skip
    p.set_defaults(handler=guarded(_export, paused=True))

    p = sub.add_parser(
        "note",
        help=COMMANDS["note"].help,
        description="Add, replace or (with empty TEXT) remove the note on event N. Notes live in a sidecar "
        "file beside the log (or in tapedeck's data directory when the log's directory is not writable), "
        "never in the log.",
    )
    add_log_path(p)
    p.add_argument("--seq", type=whole, required=True, metavar="N", help="the event the note is on")
    p.add_argument(
        "text", metavar="TEXT", help="the note, quoted as one argument ('' or only spaces: remove it)"
    )
    p.set_defaults(handler=guarded(_note))

    p = sub.add_parser("notes", help=COMMANDS["notes"].help,
                       description="List the notes on a session's events, by seq.")  # fmt: skip
    add_log_path(p)
    add_json(p)
    p.set_defaults(handler=guarded(_notes))
