"""Engine subcommands: ``inspect``, ``surface``, ``events`` and ``sessions``."""

from __future__ import annotations

import argparse
import heapq
import sys
from collections import Counter
from collections.abc import Container
from itertools import chain
from pathlib import Path
from typing import IO, Any

from core.cli import COMMANDS
from core.cli.args import (
    add_json,
    add_log_path,
    add_roots,
    check_at_least,
    check_local_roots,
    check_types,
    layout_notes,
    local_roots,
    path_argument,
    whole,
)
from core.cli.common import (
    ROW_MEMBERS,
    RULE_SECTIONS,
    SEQ_WIDTH,
    JsonList,
    column,
    emit,
    guarded,
    json_member,
    seq_width,
    warn,
    write_bytes,
)
from core.cli.rowspool import BATCH, RowSpool
from core.control.host_state import HostState, describe_host, read_host_state
from core.log.layout import default_sessions_root, is_sessions_root, resolve_log_path, sessions_under
from core.log.linestore import LineStore
from core.log.reader import read_log_header
from core.log.records import PackedRow
from core.log.skipped import UNREADABLE
from core.log.vocabulary import SURFACE_TYPES
from core.read.load import PassEnded, load_session
from core.read.session import Session, missing_turn_step
from core.read.streams import CHUNK_TYPE
from core.read.summary import human_chars, one_line, row_summaries, summarize
from core.read.surface import surface_row
from core.remote.copy import with_remote_copy
from core.shared.envdirs import in_the_way
from core.shared.errors import LogNotFoundError, TapedeckError, seq_not_in_log
from core.shared.text import counted, model_label, quoted, quoted_path


def inspect_report(session: Session) -> dict[str, Any]:
    """The ``inspect`` summary of a session as plain data."""
    tools: Counter[str] = Counter()
    for call in session.tool_calls.values():
        tools[call.name] += 1
    tool_errors = sum(c.result_error for c in session.tool_calls.values() if c.result_seq is not None)
    sub_calls = session.counts.get("tool/code-dispatch", 0)  # the run_code sub-calls of DSH's bash
    turns = [
        {
            "turn": t.number,
            "status": t.status,
            "steps": len(t.steps),
            "startSeq": t.start_seq,
            "endSeq": t.end_seq,
        }
        for t in session.turns.values()
    ]
    header = session.request_header() or {}
    return {
        "path": str(session.path) if session.path else None,
        "compressed": session.compressed,
        "header": session.header,
        "provider": (header.get("config") or {}).get("provider"),
        "model": (header.get("config") or {}).get("model"),
        "events": session.next_seq,
        "types": dict(Counter(session.counts).most_common()),
        "turns": turns,
        "steps": sum(len(t.steps) for t in session.turns.values()),
        "tools": {
            "calls": sum(tools.values()),
            "errors": tool_errors,
            "byName": dict(tools.most_common()),
            **({"subCalls": {"calls": sub_calls, "errors": session.failed_sub_calls}} if sub_calls else {}),
        },
        "surface": {
            "nodes": len(session.surface),
            "chars": session.surface_chars,
            "replacements": len(session.cuts),
        },
        "usage": session.usage_total(),
        "host": read_host_state(session.path).to_dict() if session.path else HostState("none").to_dict(),
        "diagnostics": [d.to_dict() for d in session.diagnostics],
    }


BATCH_EVENTS = 4096  # events ``events --json`` holds at most before it prints them (a run of small deltas)


def _indexed(args: argparse.Namespace) -> bool:
    """Whether the command reads ``args.path`` through its persistent index (not a remote log's local copy)."""
    return not getattr(args, "local_copy", False)


def _inspect(args: argparse.Namespace) -> None:
    report = inspect_report(load_session(args.path, retain=False, index=_indexed(args)))
    remote = getattr(args, "remote_copy", None)
    if remote is not None:  # read through a local copy: the log and its host are on the far side
        report["path"], report["host"] = str(remote.log), remote.host_state().to_dict()
    emit(report, args.json, _render_inspect)


def _sub_calls(tools: dict[str, Any]) -> str:
    """The run_code sub-calls of an inspect report's tool counts, when it has any."""
    sub = tools.get("subCalls")
    return f", code sub-calls {sub['calls']} ({counted(sub['errors'], 'error')})" if sub else ""


def _render_inspect(r: dict[str, Any]) -> str:
    """The inspect report as text. What it names from the log (the header's id, cwd and parent, the model, the tools,
    how each turn ended) is quoted, the ids and the cwd whole: on a terminal or not, nothing in them runs."""
    h = r["header"]
    lines = [
        f"session {quoted(h.get('id'), None)}  ({quoted_path(r['path'])}{', zstd' if r['compressed'] else ''})",
        f"  cwd {quoted_path(str(h.get('cwd')))}  depth {quoted(h.get('delegationDepth'))}"
        + (f"  parent {quoted(h['parentSession'], None)}" if h.get("parentSession") else ""),
        f"  model {quoted(model_label(r['provider'], r['model']))}",
        f"  host {describe_host(r['host'])}",
        f"events {r['events']}  turns {len(r['turns'])}  steps {r['steps']}  "
        f"tool calls {r['tools']['calls']} ({counted(r['tools']['errors'], 'error')})"
        + _sub_calls(r["tools"]),
        f"surface {counted(r['surface']['nodes'], 'node')}, {r['surface']['chars']} chars, "
        f"{counted(r['surface']['replacements'], 'replacement')}",
        "usage " + (" ".join(f"{k}={v}" for k, v in r["usage"].items()) or "none recorded"),
    ]
    if r["tools"]["byName"]:
        lines.append("tools " + ", ".join(f"{quoted(k)}×{v}" for k, v in r["tools"]["byName"].items()))
    for t in r["turns"]:
        lines.append(
            f"  turn {t['turn']}: {quoted(t['status'])}, {t['steps']} step(s), seq {t['startSeq']}..{'(still open)' if t['endSeq'] is None else t['endSeq']}"
        )
    diags = r["diagnostics"]
    lines.append(f"diagnostics {len(diags)}")
    for d in diags[:50]:
        where = ", ".join(x for x in (f"seq {d['seq']}" if d["seq"] is not None else "",
                                      f"offset {d['offset']}" if d["offset"] is not None else "") if x)  # fmt: skip
        lines.append(f"  {d['severity']}: {d['code']}{f' ({where})' if where else ''}: {d['message']}")
    if len(diags) > 50:
        lines.append(f"  … {len(diags) - 50} more (use --json)")
    return "\n".join(lines)


def _surface(args: argparse.Namespace) -> None:
    """One streaming pass that keeps the surface's seqs; each surface node's row is rendered as its event goes by
    and spooled to a temporary file (``RowSpool``), and the rows of the nodes on the surface at the end are
    copied out of it. Holding the events until then would hold most of a log that is never cut; reading them
    back would decode them twice.

    With ``--at SEQ`` the surface is taken as the pass goes by SEQ: exactly the surface of the log cut there
    (a packed chunk row that spans SEQ changes no surface node), and the pass ends there, the rest of the log
    unread. What a row shows of a seq never changes later.
    Without it the log's index is used: the surface events it holds are read back from the file.
    """
    import tempfile

    with tempfile.TemporaryFile() as file:
        _surface_into(args, RowSpool(file))


def _surface_into(args: argparse.Namespace, spool: RowSpool) -> None:
    at: list[list[int]] = []

    def render(session: Session, seq: int, event: dict[str, Any]) -> bytes | memoryview:
        row = surface_row(session, seq, event)
        if row is None:
            return b""
        if args.json:  # a member of the list, with the comma that leads every member but the first
            return json_member(row)
        return (_surface_line(row) + "\n").encode()

    lead = (b",",) if args.json else ()

    def observe(session: Session, item: dict[str, Any] | PackedRow) -> None:
        if at:  # the surface of --at is taken: what follows is not printed
            return
        if type(item) is not PackedRow and item["type"] in SURFACE_TYPES:  # type: ignore[index]
            seq = session.next_seq - 1
            if session.on_surface(seq):
                data = render(session, seq, item)  # type: ignore[arg-type]
                if data:
                    spool.put(seq, *lead, data)
                else:
                    spool.put(seq)
        if args.at is not None and session.next_seq > args.at:
            at.append(list(session.surface))
            if args.at >= 0:  # nothing after it changes that surface: the rest of the log is left unread
                raise PassEnded(session)

    # without --at only surface events matter: the rest (nearly every item) is projected without a call
    types = SURFACE_TYPES if args.at is None else None
    index = args.at is None and _indexed(args)  # the index, when used, reads back the nodes it restored
    try:
        session = load_session(args.path, retain=False, observe=observe, observe_types=types, index=index)
    except PassEnded as ended:  # the surface of --at, taken
        session = ended.session
    if args.at is not None and not 0 <= args.at < session.next_seq:
        raise seq_not_in_log(args.at, session.next_seq)

    def restored(seq: int) -> bytes:  # a node the index held: read back
        data = render(session, seq, session.events[seq])
        return b"".join((*lead, data)) if data else b""

    seqs = at[0] if at else session.surface
    if args.json:
        count = spool.print(seqs, restored, b"[", 1)
        write_bytes(b"\n]\n" if count else b"[]\n")
    else:
        # rows are rendered with their seq in ``SEQ_WIDTH`` places: each is widened to the widest seq printed (the
        # greatest, which need not be the last: a replacement sits in the place of the older seqs it shadows)
        width = seq_width(seqs)

        def indent(seq: int) -> bytes:
            return b" " * (width - max(SEQ_WIDTH, len(str(seq))))

        count = spool.print(seqs, restored, indent=indent if width > SEQ_WIDTH else None)
        write_bytes(f"{count} model-visible message(s); * = replacement\n".encode())
    sys.stdout.flush()


def _surface_line(row: dict[str, Any]) -> str:
    mark = "*" if row["replacement"] else " "
    role, source = column(str(row["role"]), 9), column(row["source"], 34)
    return f"{row['seq']:>{SEQ_WIDTH}}{mark} {role} {source} {human_chars(row['chars']):>6}  {one_line(row['summary'], 90)}"


def _events(args: argparse.Namespace) -> None:
    """One streaming pass. JSON goes out as events are read. Text lines go to a temporary file, since whether a
    surface event is still on the surface is only known at the end of the log: such a line leaves a gap for
    its mark, filled in when the file is copied out."""
    import tempfile

    check_at_least("turn", args.turn, 1)
    check_types(args.type)
    with tempfile.TemporaryFile(buffering=BATCH) as spool:  # written and read back in big pieces
        _events_into(args, spool)


def _events_into(args: argparse.Namespace, spool: IO[bytes]) -> None:
    out = JsonList() if args.json else None
    gaps: list[tuple[int, int]] = []  # (offset in the spool, seq) of each mark left open

    columns: dict[str, str] = {}  # each type's column, as the summary prints it
    # Lines are spooled with their seq right-aligned in ``SEQ_WIDTH`` places; the seq of each line from the first
    # one of more digits on (its spool offset and digits in ``wider``) is aligned to the widest when copied out.
    wider: list[tuple[int, int]] = []
    wider_from = 10**SEQ_WIDTH  # the first seq of more digits than the lines spooled so far

    def widen(seq: int) -> None:
        """Note that the line about to be spooled is the first of a seq of more digits, ``seq``."""
        nonlocal wider_from
        digits = len(str(seq))
        wider.append((spool.tell(), digits))
        wider_from = 10**digits

    def turn_at(session: Session, seq: int) -> int | None:
        return session.turn_of(seq) if session.in_turn(seq) else None

    def take(session: Session, event: dict[str, Any], turn: int | None) -> None:
        """Print ``event`` (of ``turn``; None outside every turn), of a type ``--type`` wants, unless ``--turn``
        leaves it out."""
        if args.turn is not None and turn != args.turn:
            return
        if out is not None:
            out.add(event)
            return
        etype = event["type"]
        seq = event["seq"]
        if seq >= wider_from:
            widen(seq)
        head = f"{seq:>6} t{'-' if turn is None else turn:<3} {column_of(etype)}"
        if etype in SURFACE_TYPES:  # its mark is known only at the end: a gap is left for it
            spool.write(head.encode())
            gaps.append((spool.tell(), seq))
            spool.write(f"{summarize(event, 100)}\n".encode())
        else:
            spool.write(f"{head}  {summarize(event, 100)}\n".encode())

    def column_of(etype: Any) -> str:
        text = columns.get(etype) if etype.__class__ is str else None
        if text is None:
            text = f"{column(etype, 26)} "
            if etype.__class__ is str:
                columns[etype] = text
        return text

    def take_row(session: Session, row: PackedRow, turn: int | None) -> None:
        """``take`` of every member of ``row``: as JSON in one dump, as text its lines rendered from the row without
        building events."""
        if args.turn is not None and turn != args.turn:
            return
        if out is not None:
            out.extend_row(row)
            return
        head = (
            f" t{'-' if turn is None else turn:<3} {column_of(CHUNK_TYPE)}  "  # a chunk is no surface event
        )
        for start in range(0, row.count, ROW_MEMBERS):  # a row of a million: never all of it rendered at once
            seq0 = row.seq0 + start
            summaries = row_summaries(row, 100, start, start + ROW_MEMBERS)
            lines = [f"{seq0 + k:>6}{head}{text}\n" for k, text in enumerate(summaries)]
            del summaries
            while (
                seq0 + len(lines) > wider_from
            ):  # its seqs reach a digit more: its lines spooled up to there
                spool.write("".join(lines[: wider_from - seq0]).encode())
                del lines[: wider_from - seq0]
                seq0 = wider_from
                widen(seq0)
            block = "".join(lines)
            del lines  # let go before the text is encoded
            spool.write(block.encode())

    def observe(session: Session, item: dict[str, Any] | PackedRow) -> None:
        if type(item) is not PackedRow:
            take(session, item, turn_at(session, item["seq"]))  # type: ignore[index, arg-type]
        elif args.turn is None or item.turn == args.turn:
            take_row(
                session, item, turn_at(session, item.seq0)
            )  # a row's members are all of its turn, in a turn or not alike

    def restored(session: Session) -> None:
        """The events the index holds of the types asked for, read back (found from the line table)."""
        lines = session.events
        assert isinstance(lines, LineStore) and types is not None
        picked = [name for name in lines.type_names if name in types]
        if out is None:
            for seq in lines.seqs_of_types(picked):
                take(session, lines.raw(seq), turn_at(session, seq))
            return
        batch: list[
            dict[str, Any]
        ] = []  # JSON: a batch (``BATCH`` bytes of lines, or ``BATCH_EVENTS``) in one dump
        size = 0
        for seqs, length in lines.lines_of_types(picked):
            wanted = (
                seqs if args.turn is None else [seq for seq in seqs if turn_at(session, seq) == args.turn]
            )
            batch += map(lines.raw, wanted)
            size += length
            if size >= BATCH or len(batch) >= BATCH_EVENTS:
                out.extend(batch)
                batch, size = [], 0
        out.extend(batch)

    # with --type only the events it picks are observed: the rest (nearly every item) is projected without a call
    from core.read.type_select import TypeSelection  # only the commands that take --type import it

    types = TypeSelection.parse(args.type) if args.type else None
    index = types is not None and _indexed(args)
    session = load_session(
        args.path,
        retain=False,
        observe=observe,
        observe_types=types,
        raw=True,
        index=index,
        restored=restored,
    )
    if out is not None:
        out.close()
    else:
        _copy_marked(spool, gaps, wider, session)
    if args.turn is not None and args.turn not in session.turns:  # said apart from a turn without such events
        warn(f"--turn {args.turn}{missing_turn_step(session.turns, args.turn)}")


def _copy_marked(
    spool: IO[bytes], gaps: list[tuple[int, int]], wider: list[tuple[int, int]], session: Session
) -> None:
    """Print the spooled lines, each open gap filled with the surface mark of its seq, and each seq right-aligned
    in a column as wide as the widest one printed: the lines were spooled at ``SEQ_WIDTH`` places, and each line from
    a spool offset in ``wider`` on (with its digits) gets the spaces that make it up to the widest."""
    end = spool.tell()
    if not end:
        emit([], False, lambda _: "(no matching events)")
        return
    spool.seek(0)
    write = sys.stdout.buffer.write if hasattr(sys.stdout, "buffer") else None
    width = wider[-1][1] if wider else SEQ_WIDTH
    pad = b" " * (width - SEQ_WIDTH)  # what every line gets in front, from where ``wider`` says on
    line_start = True

    def put(data: bytes) -> None:
        nonlocal line_start
        if pad:  # rare: a log of a million events or more
            ends = data.endswith(b"\n")
            body = data[:-1] if ends else data
            data = (pad if line_start else b"") + body.replace(b"\n", b"\n" + pad) + (b"\n" if ends else b"")
        line_start = data.endswith(b"\n")
        if write is not None:
            write(data)
        else:
            sys.stdout.write(data.decode())

    pos = 0
    points = heapq.merge(((offset, 1, seq) for offset, seq in gaps), ((offset, 0, n) for offset, n in wider))
    for offset, gap, value in chain(points, [(end, 0, width)]):
        while pos < offset:
            piece = spool.read(min(offset - pos, 1 << 20))
            pos += len(piece)
            put(piece)
        if gap:
            put(b"\xc2\xb7 " if session.on_surface(value) else b"  ")
        else:
            pad = b" " * (width - value)
    sys.stdout.flush()


def _sessions(args: argparse.Namespace) -> int | None:
    from rich.cells import cell_len  # the rule the TUI draws its tables by: titles line up as in the fleet

    from core.control.config import load_config
    from core.fleet.follow import Fleet
    from core.fleet.row import COLUMNS, FleetRow, cells, twin

    default = default_sessions_root()
    if args.roots == [str(default)] and not default.exists():  # a fresh install: no session has run yet
        if blocked := in_the_way(default):
            raise TapedeckError(f"{quoted_path(default)} cannot be made: {blocked[0]} {blocked[1]}, so `tapedeck run` and "
                                "`tapedeck demo` can keep no session there")  # fmt: skip
        emit([], args.json, lambda _: sessions_under(0, [str(default)]))
        warn(
            f"{quoted_path(default)} does not exist yet: `tapedeck run` and `tapedeck demo` keep their sessions there"
        )
        return None
    check_local_roots(args.roots)
    fleet = Fleet(args.roots, load_config(args.config, only=RULE_SECTIONS))
    fleet.poll(final=True)
    rows = fleet.rows()
    named = dict(filter(None, (_header_error(root, fleet.watches) for root in local_roots(args.roots))))
    unread = [*fleet.unread, *named.values()]
    # a log named that is no session log is said once, as the error it is, not also as the listing's skip note
    skipped = [note for note in fleet.skipped if note.kind != UNREADABLE or Path(note.subject) not in named]

    def render(payload: list[dict[str, Any]]) -> str:
        n = len(rows)
        labels = Counter(row.label for row in rows)

        def line(row: FleetRow) -> tuple[str, ...]:  # a title rows share is followed by each one's id (twin)
            first, *rest = cells(row)
            return (first + twin(row, labels), *rest)

        table = [COLUMNS, *map(line, rows)]
        widths = [
            max(cell_len(line[i]) for line in table) for i in range(len(COLUMNS))
        ]  # a wide character: 2
        head = sessions_under(n, args.roots)
        more = f"{len(unread)} {'more ' if n else ''}could not be read: see stderr"
        lines = [f"{head} ({more})" if unread else head]
        lines += ["  ".join(cell + " " * (w - cell_len(cell)) for cell, w in zip(line, widths, strict=True)).rstrip()
                  for line in table]  # fmt: skip
        return "\n".join(lines if n else lines[:1])

    emit([row.to_dict() for row in rows], args.json, render)
    for note in [*skipped, *unread, *layout_notes(args.roots, "sessions")]:
        warn(note)
    # as alerts: a machine that could not be listed, or a session that could not be read, leaves no whole answer
    return 2 if fleet.unreached or unread else None


def _header_error(root: Path, watched: Container[str]) -> tuple[Path, str] | None:
    """The log ``root`` names (a log file or a session directory, not a sessions root) and why it is not among the
    ``watched`` ones, which have a row: its header cannot be read (None: it is, it has one, or ``root`` is a
    sessions root)."""
    if is_sessions_root(root):
        return None
    log = root
    try:
        log = resolve_log_path(root)
        if str(log) not in watched:
            read_log_header(log)
    except LogNotFoundError:
        return None  # gone since the listing found it: the listing's own notes say so
    except TapedeckError as exc:
        return log, str(exc)
    return None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the engine subcommands."""
    p = sub.add_parser(
        "inspect",
        help=COMMANDS["inspect"].help,
        description="Summarize one session log: its header, each turn with its status and steps, the "
        "tools called, what the model sees now (nodes and chars), token usage, and every problem found "
        "while reading it.",
    )
    add_log_path(p, remote=True)
    add_json(p)
    p.set_defaults(handler=guarded(with_remote_copy(_inspect), paused=True))

    p = sub.add_parser(
        "surface",
        help=COMMANDS["surface"].help,
        description="List the messages the model would be sent now, in order: the seq of each, its role, "
        "where it came from (user, model, tool, a tape entry, a fold …) and its size in chars.",
    )
    add_log_path(p, remote=True)
    p.add_argument("--at", type=whole, metavar="SEQ", help="the surface as it stood right after event SEQ")
    add_json(p)
    p.set_defaults(handler=guarded(with_remote_copy(_surface), paused=True))

    p = sub.add_parser(
        "events",
        help=COMMANDS["events"].help,
        description="List the events of a log one per line: seq, turn (t- between turns), type, a dot "
        "when the event is on the model-visible surface, and a one-line summary.",
    )
    add_log_path(p, remote=True)
    p.add_argument(
        "--type",
        action="append",
        metavar="T",
        help="event types, comma-separated or repeated, as the TUI's filter takes them: 'tool/' or 'tool*' "
        "match a family, '!' in front leaves one out",
    )
    p.add_argument(
        "--turn",
        type=whole,
        metavar="N",
        help="only events inside turn N (events between turns belong to none)",
    )
    add_json(p, "print the events as JSON")
    p.set_defaults(handler=guarded(with_remote_copy(_events), paused=True))

    p = sub.add_parser(
        "sessions",
        help=COMMANDS["sessions"].help,
        description="List every session log under one or more sessions roots laid out as DSH lays them out, "
        "one row per session as the fleet table shows it: title, host state, what needs the operator "
        "(attention), turn.step, how the last turn ended, phase and class, time since the last write, context "
        "and cache-hit %, cost and run rate. Sessions needing attention come first, each subagent child under its "
        "parent. A directory that holds none in that layout (ROOT/PROJECT/SESSION/session.jsonl) but one project's "
        "session directories, or logs lying loose, is named on stderr with the command that lists them. "
        "A directory that cannot be read, or an entry where a log should be that is no log (a FIFO, a link to "
        "nothing), is skipped with a note on stderr. Exit 0 with the list; exit 2 when the list is not the whole "
        "answer or there is none: a root named that is not there, a machine that could not be reached, a log named on "
        "the command line that is no session log, or a log truncated, replaced or removed while it was read (it "
        "is left out, counted in the heading, and its note says to read it again).",
    )
    add_roots(p)
    p.add_argument(
        "--config",
        metavar="FILE",
        type=path_argument,
        help="config file whose alerts and model sections apply",
    )
    add_json(p)
    p.set_defaults(handler=guarded(_sessions))
