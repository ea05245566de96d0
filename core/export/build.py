"""The export pass: one streaming pass over a log that hands each event-list row to a writer as it is read and
gathers the other sections (header, surface, one request, cost, context chart, cuts, notes) for the end.

Rows are the TUI's (``core.read.rows``): the same glyphs and summaries, each model stream collapsed into one row,
a tool result carrying its call, a replacement (tape entry, fold, prune, rewind report, compaction) the seqs it
replaced, a note its text. With a ``Redactor`` every string is redacted before anything is derived from it, while
every number (sizes, seqs, tokens) comes from the log as it is.

The big sections are never one value: the surface's rows (an iterator) and the chosen request's messages
(``Streamed``) are handed to the writer one at a time, each as the writer's piece (``Pieces``) when it keeps
nodes (``nodes``: made as the pass reads each node, else read back and made then). A surface event is redacted as its event-list row is made, and
again as its surface row is read back only when that replaced something (the pass keeps what it replaced, which
the summary counts again as a separate redaction of the surface would). The request's messages are redacted as
they are read, so the redaction summary is known once the writer has read them: ``doc["redaction"]`` is set then.
The summary counts what the file holds: a row hands its writer what redacting it replaced (``FOUND``), which
the writer counts where it shows the row (``count_shown``), and a row a filter leaves out counts nothing. A writer
that shows no request (``messages=False``, the Markdown) has the summary at once, and counts the surface's rows
and the notes on no row it shows as it shows them.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar

import orjson

from core.control.host_state import read_host_state
from core.export.redact import KINDS, Counts, Redactor, Seen
from core.export.spool import NodeSpool
from core.log.linestore import LineStore
from core.log.records import PackedRow
from core.log.validate import readable
from core.log.vocabulary import CHECKPOINT_EVENT
from core.read.event_filter import EventFilter, Predicate, tool_names
from core.read.load import load_session
from core.read.notes import Note, readable_notes
from core.read.rows import SUMMARY_LIMIT, SUMMARY_SOURCE_LIMIT, Row, block_row, build_row, event_size
from core.read.session import Session, ToolCall, derive_message, missing_turn_step
from core.read.streams import Block, delta_chars
from core.read.summary import cut_line
from core.read.surface import SURFACE_SUMMARY, surface_row
from core.rebuild.cost import CostTally
from core.rebuild.request import Request, RequestPass, node_wire
from core.rebuild.request_diff import RequestDiff, break_point, diff_requests
from core.shared.dsh_wire import makes_text
from core.shared.errors import TapedeckError, seq_not_in_log
from core.shared.regex import names_any
from core.shared.text import path_text, text_of_blocks, tool_result_text

_WHOLE = SURFACE_SUMMARY <= SUMMARY_LIMIT  # a row's summary of a whole event, cut, is its surface row's
TEXT_CLIP = 4000  # code points of an event's text an export carries (the rest is counted)
CHUNK = "assistant/chunk"
REDACTED_REGEX = "[redacted]"  # a --grep regex shown so, as it names what redaction replaced in a row listed
# a row's (an event-list row, a surface row, a note) key that says what redacting it replaced, as ``(what its row
# shows, what its note shows)``, each ``Counts`` or None: a writer takes it out and counts the rows it shows
# (``count_shown``); the pass counts the rest of what the file holds
FOUND = "_found"
# what a document says in place of its notes when their sidecar could not be read (not why: its path and content
# stay out of a shared file; the exporting command says it)
NOTES_UNREAD = "The notes could not be read (their file is damaged, or is no notes file of tapedeck's), so none are shown."
GREP_FOUND_MAX = 256  # texts a --grep found only where redaction replaced that are kept to judge it (past them: hidden)
_NAME_WORD = re.compile(r"\w+")


@dataclass
class ExportOptions:
    """What to export: the moment (``at``), the request (``turn``/``step``), and redaction."""

    at: int | None = None
    cut: bool = False  # the HTML list ends at the moment (the TUI's view then), instead of dimming the rows after it
    turn: int | None = None
    step: int | None = None
    redactor: Redactor | None = None
    filter: EventFilter | None = None  # the rows the TUI's filter lets through (None or inactive: every row)


RowSink = Callable[[dict[str, Any]], None]
# a surface: its nodes, and what redacting each of them replaced (where that was anything)
Surface = tuple[list[int], dict[int, Counts]]


class Rows:
    """The surface's rows, each made as the writer reads it (read once), and how many there are when the pass
    kept every node (``count``; else None: a node read back may project no message)."""

    def __init__(self, items: Iterator[dict[str, Any] | bytes], count: int | None) -> None:
        self.items = items
        self.count = count

    def __iter__(self) -> Iterator[dict[str, Any] | bytes]:
        return self.items


class ModelsRedacted:
    """The cost section's request rows, each made as it is read (as ``RowDicts``), its model's name redacted (each
    name once; counted nowhere, as the header's name is)."""

    def __init__(self, rows: Collection[dict[str, Any]], redactor: Redactor) -> None:
        self.rows = rows
        self.redactor = redactor
        self.names: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        names = self.names
        for row in self.rows:
            model = row["model"]
            if model not in names:
                names[model] = self.redactor.again(model)
            row["model"] = names[model]
            yield row


class Streamed(Rows):
    """The request's messages, made as ``Rows`` are; how many there are is known before, and whether any is read
    back from the log (``read_back``: else reading them in step with the surface's rows, ``in_step``, saves
    nothing)."""

    count: int

    def __init__(self, count: int, items: Iterator[dict[str, Any] | bytes], read_back: bool = True) -> None:
        super().__init__(items, count)
        self.read_back = read_back

    def __len__(self) -> int:
        return self.count


T = TypeVar("T")
U = TypeVar("U")


def in_step(rows: Iterable[T], other: Iterator[U], put: Callable[[U], object]) -> Iterator[T]:
    """``rows``, with the next item of ``other`` handed to ``put`` after each: the surface's rows and the request's
    messages, read in step, read mostly the same events in the same order, so the second read of each is served
    by the event store's cache of recently decoded lines."""
    for row in rows:
        yield row
        item = next(other, None)
        if item is not None:
            put(item)


@dataclass
class _Stream:
    """The model stream being read: its first row and its extent."""

    head: Row
    start: int
    end: int
    turn: Any
    step: Any
    chars: int = 0
    error: bool = False


def clipped(text: str, limit: int = TEXT_CLIP, length: int | None = None) -> dict[str, Any]:
    """``{"text", "more"}``: the first ``limit`` code points and how many were left out (of ``length``, the
    unredacted text's length, when given: redaction changes no number)."""
    return {"text": text[:limit], "more": max(0, (len(text) if length is None else length) - limit)}


def event_text(event: dict[str, Any]) -> str:
    """The readable text of an event: a message's text and tool calls, a result's text, else ''."""
    etype = event.get("type")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    if etype == "user/message":
        return text_of_blocks(data.get("content"), "\n")
    if etype == "assistant/message":
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        parts = []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "tool-call":
                parts.append(f"→ {block.get('name')}({block.get('arguments', '')})")
        return "\n".join(p for p in parts if p)
    if etype == "tool/result":
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        return tool_result_text(message, "\n")
    if etype == "tool/call":
        return str(data.get("arguments", ""))
    return ""


@dataclass
class ExportPass:
    """Runs the pass; ``rows`` gets each row (a JSON-ready dict) in seq order, ``document`` the rest after it."""

    makes_nodes: ClassVar[bool] = True  # this process makes the surface nodes' pieces (``nodes``) as it reads them

    path: str | os.PathLike[str]
    options: ExportOptions
    rows: RowSink
    # the writer shows the request's messages and the whole surface (else neither: no messages, and the surface's
    # rows it shows, counted by their ``FOUND``)
    messages: bool = True
    costs: bool = True  # the writer shows each request's cost (else a request's diff is made only where it is read)
    nodes: NodeSpool | None = None  # where the pass keeps what the sections write of each node, while no cut came
    notes: dict[int, Note] | None = None  # the log's notes (None: read as the pass starts)
    notes_unread: bool = False  # their sidecar could not be read (the document says so)
    # the fields of ``doc["session"]`` the writer does not show (their redactions are not counted)
    unshown: frozenset[str] = frozenset()
    problems_shown: int | None = None  # how many of the log's problems (``diagnostics``) the writer lists (None: all)
    _noted: list[int] = field(default_factory=list)  # the notes' seqs, in order
    _anchors: dict[int, int] = field(default_factory=dict)  # the row each note is shown on, by the note's seq
    count: int = 0  # rows handed out
    left_out: int = 0  # rows the filter left out
    _test: Predicate | None = None  # the filter's test of an event (``_listed``)
    # what the filter's regex finds in a row listed as the log has it, not as the export shows it (``_filter_text``)
    _grep_found: set[str] = field(default_factory=set)
    events: int = 0
    _stream: _Stream | None = None
    # the deltas a filter that lists each delta lets through, held until their stream's text is whole: each seq and
    # its event when it was at hand (else read back)
    _deltas: list[tuple[int, dict[str, Any] | None]] = field(default_factory=list)
    _found: dict[int, Counts] = field(default_factory=dict)  # what redacting the surface's nodes replaced
    _surface_at: Surface | None = None
    # the chosen request, its diff (or the request it is against, when the tally left it out), whether it came first
    _request: tuple[Request, RequestDiff | Request, bool] | None = None
    _marks: list[dict[str, Any]] = field(default_factory=list)
    # the session's latest title, as its row shows it (redacted), and what redacting it replaced
    _title: tuple[str, Counts | None] | None = None
    _requests: RequestPass | None = None
    # the tools the log's events are about (``tool_names``), gathered while a filter names tools: those it names
    # that none is about are warned of (the CLI's ``--tool``)
    tools_seen: set[str] = field(default_factory=set)
    shown: Callable[[], list[int]] | None = None  # what redacting the rows the writer shows replaced (``count_shown``)

    def run(self) -> dict[str, Any]:
        """Read the log, hand out every row, and return the document's other sections."""
        if self.notes is None:
            self.notes, problem = readable_notes(self.path)
            self.notes_unread = problem is not None
        self._noted = sorted(self.notes)
        tally = CostTally(diffs=self.costs)
        requests = RequestPass(  # the nodes' wire messages built, once, where their pieces are made here
            lambda request, session: self._request_done(tally, request, session), keep=True, lean=True,
            wired=self.makes_nodes and self.nodes is not None,
        )

        def after(session: Session, item: dict[str, Any] | PackedRow, raw: bytes | None = None) -> None:
            requests.after(session, item)
            self._take(session, item, raw)

        self._requests = requests
        if self.options.filter is not None and not self.options.filter.active:  # the caller's options stay as given
            self.options = replace(self.options, filter=None)
        session = load_session(self.path, retain=False, readback=True, before=requests.before, observe=after,
                               before_optional=RequestPass.NEUTRAL, skip_before=requests.quiet,
                               deltas=self._run, parsed=after if self.options.redactor is not None else None)  # fmt: skip
        requests.finish(session)
        self._flush(session)
        at = self.options.at
        if at is not None and not 0 <= at < session.next_seq:
            raise seq_not_in_log(at, session.next_seq)
        return self._document(session, tally)

    # --- rows

    def _take(self, session: Session, item: dict[str, Any] | PackedRow, raw: bytes | None = None) -> None:
        """Take an item the session applied (``raw``: the bytes of its line, when it is the line as parsed)."""
        seq = session.next_seq - 1
        if type(item) is PackedRow:
            first = seq - item.count + 1
            self._chunk(session, first, item.count, item.turn, item.step, item.chars, lambda: item.event(0))
        elif item.get("type") == CHUNK:
            data = item.get("data") if isinstance(item.get("data"), dict) else {}
            self._chunk(session, seq, 1, data.get("turn"), data.get("step"), delta_chars(data.get("chunk")),
                        lambda: item)  # fmt: skip
        else:
            if self._stream is not None or self._deltas:
                self._flush(session)
            if self.options.filter is not None and self.options.filter.tools:
                self.tools_seen |= tool_names(item, session)
            self._event(session, item, seq, raw)
        if self.options.at is not None:
            self._moment(session)

    def _run(self, session: Session, seq0: int, n: int, turn: int, step: int, chars: int) -> None:
        """A run of stream deltas the decoder projected without building them: the first is read back only when
        it heads a new stream."""
        self._chunk(session, seq0, n, turn, step, chars, lambda: _run_head(session, seq0))
        self._moment(session)

    def _moment(self, session: Session) -> None:
        """Keep the surface as it stands once the chosen moment (``--at``) is applied."""
        at = self.options.at
        if at is not None and self._surface_at is None and session.next_seq > at:
            self._surface_at = self._surface(session)

    def _chunk(self, session: Session, seq: int, count: int, turn: Any, step: Any, chars: int,
               first: Callable[[], dict[str, Any]]) -> None:  # fmt: skip
        """Chunk events ``seq`` to ``seq + count - 1``: the stream they continue, else a new one headed by the
        first (``first()``); each a row of its own when the filter asks for deltas (as the TUI's list then shows
        them)."""
        flt = self.options.filter
        if flt is not None and flt.raw_chunks:
            if self.options.redactor is not None:  # held: redacted with the deltas after them (``_flush_deltas``)
                self._deltas += ((at, first() if at == seq else None) for at in range(seq, seq + count))
                return
            for at in range(seq, seq + count):
                self._event(session, first() if at == seq else session.events[at], at)
            return
        s = self._stream
        if s is not None and s.end == seq and (s.turn, s.step) == (turn, step):
            s.end += count
            s.chars += chars
            return
        self._flush(session)
        # its block's row takes none of its text (``block_row``): nothing of it is redacted, or counted as such
        head = build_row(first(), head=True)
        self._stream = _Stream(head, seq, seq + count, turn, step, chars, head.error)

    def _flush(self, session: Session) -> None:
        if self._deltas:
            self._flush_deltas(session)
        s, self._stream = self._stream, None
        if s is None:
            return
        block = Block(s.start, s.end, s.turn if isinstance(s.turn, int) else 0, s.step if isinstance(s.step, int) else 0,
                      s.chars)  # fmt: skip
        flt = self.options.filter
        if flt is not None and not flt.passes_stream(self._filter_test(session), s.start, s.end, session.events.__getitem__):
            self.left_out += 1
            return
        redactor = self.options.redactor
        if flt is not None and flt.regex and redactor is not None and len(self._grep_found) <= GREP_FOUND_MAX:
            # its row shows none of the deltas' text: the regex is judged by them as redaction shows them (read in
            # one sweep, and redacted only when the screen finds something in them)
            events = _read_range(session, s.start, s.end)
            if not _deltas_clean(redactor, events):
                for event, (shown, _) in zip(events, _deltas_redacted(redactor, events), strict=True):
                    if shown is not event:
                        self._grep_found |= flt.found(event) - flt.found(shown)
        row = block_row(s.head, block, False, s.error)
        self._emit(self._row_dict(session, row, {"deltas": block.deltas, "endSeq": s.end - 1}, end=s.end - 1))

    def _flush_deltas(self, session: Session) -> None:
        """The rows of the deltas held (``_chunk``), each redacted with the text its stream's deltas make together
        (``_deltas_redacted``): a model streams a few characters at a time, so a delta alone holds a secret's
        tail (``hunter2`` after a delta's ``DB_PASSWORD=``) that no pattern would find there."""
        held, self._deltas = self._deltas, []
        events = [event if event is not None else session.events[at] for at, event in held]
        redacted = _deltas_redacted(self.options.redactor, events)  # type: ignore[arg-type]
        for (at, _), event, shown in zip(held, events, redacted, strict=True):
            self._event(session, event, at, shown=shown)

    def _event(self, session: Session, event: dict[str, Any], seq: int, raw: bytes | None = None,
               shown: tuple[dict[str, Any], Counts | None] | None = None) -> None:  # fmt: skip
        """The row of ``event`` (``raw``: its line's bytes, when it is the line as parsed; ``shown``: the event
        redacted already and what that replaced, counted nowhere), and its node kept."""
        redactor = self.options.redactor
        found: Counts | None = None  # what redacting the row replaced: counted where it is shown (``FOUND``)
        surface = session.on_surface(seq)
        line = None  # the row's summary, when it is ``summarize`` of the whole event (no string cut), to a longer limit
        if shown is not None:  # a stream's delta (``_flush_deltas``)
            (shown, found), seen = shown, None  # type: ignore[misc]
            row = build_row(shown)
        elif redactor is not None:  # one JSON of the event serves the redaction's screen and the row's clipping
            seen: Seen | None = {} if surface else None  # what redacting the strings a node's wire takes made
            if raw is not None and redactor.clean_line(raw):  # its line as read says there is nothing to redact
                shown, found, measured = event, None, len(raw)  # (a string's JSON is at least its length)
            else:
                try:
                    dump: bytes | None = orjson.dumps(event)
                except TypeError:
                    dump = None
                shown, found = redactor.walk_found(event, dump, seen)
                measured = len(dump) if dump is not None and shown is event else None
            if found is not None:
                redactor.uncount(found)
                if surface:
                    self._found[seq] = found
            row = build_row(shown, measured)
            if surface and measured is not None and measured <= SUMMARY_SOURCE_LIMIT and _WHOLE:
                line = row.summary
        else:
            shown, row, seen = event, build_row(event), None
        extra: dict[str, Any] = {}
        text = event_text(shown)
        if text:
            extra["text"] = clipped(text, length=len(event_text(event)) if shown is not event else None)
        if row.type == "tool/result":
            call = result_call(session, event)
            if call is not None:
                called, more = self._found_in({"name": call.name, "arguments": call.arguments})
                found = _plus(found, more)
                length = len(call.arguments)
                extra["call"] = {"seq": call.call_seq if call.call_seq is not None else call.message_seq,
                                 "name": called["name"], "arguments": clipped(called["arguments"], 1000, length)}  # fmt: skip
        replaced = session.shadowed.get(seq)
        for gone in replaced or ():  # off the surface now
            self._found.pop(gone, None)
        if row.replacement is not None and replaced:
            extra["replaced"] = list(replaced)
            self._marks.append(
                {"seq": seq, "kind": row.replacement, "summary": row.summary, "replaced": list(replaced)}
            )
        elif row.type == CHECKPOINT_EVENT:
            self._marks.append({"seq": seq, "kind": "checkpoint", "summary": row.summary, "replaced": []})
        elif row.type == "session/title":
            data = shown.get("data")
            if isinstance(data, dict) and isinstance(data.get("title"), str):  # and what redacting it replaced,
                found_title = None if shown is event else self._found_in(event["data"]["title"])[1]  # for the head
                self._title = (data["title"], found_title)
        flt = self.options.filter
        if flt is not None and not self._filter_test(session)(event):
            self.left_out += 1
        else:
            if flt is not None and flt.regex and shown is not event and len(self._grep_found) <= GREP_FOUND_MAX:
                self._grep_found |= flt.found(event) - flt.found(shown)
            self._emit(self._row_dict(session, row, extra, seq, event_size(event) if shown is not event else row.size,
                                      found=found))  # fmt: skip
        # the node's surface row after its row: a filtered page links it to the row only once it lists that row;
        # kept while every node so far is still on the surface (no cut came)
        if row.surface_type and surface and self.nodes is not None and not session.cuts:
            if seq in self._found:
                self._keep_node(session, seq, event, shown, walked=(shown, seen))
            else:  # a clean event's text, clipped for its row, serves its surface row when it is the same string
                known = (text, extra["text"]) if shown is event and text else None
                self._keep_node(session, seq, event, event, line if shown is event else None, (shown, seen), known)

    def _filter_test(self, session: Session) -> Predicate:
        """The filter's test of an event of ``session`` (made once)."""
        if self._test is None:
            assert self.options.filter is not None
            self._test = self.options.filter.predicate(session)
        return self._test

    def _keep_node(self, session: Session, seq: int, event: dict[str, Any], shown: dict[str, Any],
                   line: str | None = None, walked: tuple[dict[str, Any], Seen | None] | None = None,
                   known: tuple[str, dict[str, Any]] | None = None) -> None:  # fmt: skip
        """Keep what the sections write of the surface node ``seq`` (``shown``: its event as its surface row shows
        it; ``line``: ``shown``'s event-list summary, when made of all of it; ``walked``: what redacting the event
        gave and the strings it made; ``known``: its event-list text and that clipped), as ``_surface_rows`` and
        ``_messages`` would make it from the event read back."""
        assert self.nodes is not None
        wire, dump = self._wire(seq, event)  # the JSON is screened, and kept as it is when there is nothing to redact
        if dump is None:
            return  # read back
        redactor = self.options.redactor
        # the wire's strings are mostly the event's own, redacted already (``walked``)
        messages, found = _aside(redactor, event, *walked, wire, dump) if redactor is not None and walked else (wire, None)
        row = self._node_row(session, seq, event, shown, None if line is None else cut_line(line, SURFACE_SUMMARY),
                             known)  # fmt: skip
        self.nodes.put(seq, row, messages, found)

    def _wire(self, seq: int, event: dict[str, Any]) -> tuple[list[dict[str, Any]], bytes | None]:
        """The wire messages of surface node ``seq`` (its ``event``) and their JSON (None: they are no JSON), as
        the request pass noted them for its digest, else made here."""
        noted = self._requests.wired if self._requests is not None else None
        if noted is not None and noted[0] == seq and noted[1] is not None:
            return noted[1]
        wire = node_wire(event)
        try:
            return wire, orjson.dumps(wire)
        except TypeError:
            return wire, None

    def _node_row(self, session: Session, seq: int, event: dict[str, Any], shown: dict[str, Any],
                  summary: str | None = None, known: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any] | None:  # fmt: skip
        """The surface row of node ``seq`` (None: it projects no message): its text clipped, counted on ``event``
        (``summary``: its summary, when the caller has it; ``known``: a text of ``event`` and that clipped, taken
        when the row's text is that same text)."""
        row = surface_row(session, seq, shown, summary)
        if row is not None:
            text = message_text(row.pop("message"))
            if known is not None and shown is event and text == known[0]:
                row["text"] = known[1]  # the same clip of the same text (no second copy for the writer to encode)
            else:
                raw = derive_message(event) if shown is not event else None
                row["text"] = clipped(text, length=len(message_text(raw)) if raw is not None else None)
        return row

    def _row_dict(
        self, session: Session, row: Row, extra: dict[str, Any], seq: int | None = None, size: int | None = None,
        end: int | None = None, found: Counts | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """A row as JSON-ready data (``seq`` and ``size`` in place of the row's: the log's own seq, the
        unredacted event's size; ``end``: the last seq of a stream's row, which carries the notes of its deltas;
        ``found``: what redacting the row replaced, which its ``FOUND`` says with its note's)."""
        seq = row.seq if seq is None else seq
        turn = session.turn_of(seq) if seq < session.next_seq else row.turn
        out = {"seq": seq, "type": row.type, "turn": turn, "step": row.step, "time": row.time, "glyph": row.glyph,
               "summary": row.summary, "size": row.size if size is None else size, "unit": row.unit,
               "error": row.error, "replacement": row.replacement, **extra}  # fmt: skip
        note = self._note(seq, end)
        noted = None
        if note is not None:
            out["note"], noted = self._found_in(note)
        if found is not None or noted is not None:
            out[FOUND] = (found, noted)
        return out

    def _found_in(self, value: Any) -> tuple[Any, Counts | None]:
        """``value`` redacted, and what that replaced (not counted: ``FOUND``)."""
        redactor = self.options.redactor
        if redactor is None:
            return value, None
        value, found = redactor.walk_found(value)
        if found is not None:
            redactor.uncount(found)
        return value, found

    def _note(self, seq: int, end: int | None) -> str | None:
        """The note a row shows: the one on its event, or those on a stream's deltas ``seq`` to ``end``, each
        after the seq it is on (but a lone one on the stream's first delta)."""
        if end is None:
            note = self.notes.get(seq)
            if note is None:
                return None
            self._anchors[seq] = seq
            return note.text
        seqs = self._noted[bisect_left(self._noted, seq) : bisect_right(self._noted, end)]
        if not seqs:
            return None
        for noted in seqs:
            self._anchors[noted] = seq
        if seqs == [seq]:
            return self.notes[seq].text
        return " · ".join(f"seq {noted}: {self.notes[noted].text}" for noted in seqs)

    def _emit(self, row: dict[str, Any]) -> None:
        self.count += 1
        self.rows(row)

    def _filter_text(self, flt: EventFilter) -> str:
        """The filter as the export names it, redacted. A regex that found in a row listed what redaction replaced
        there would tell what was replaced when its text, redacted, still names it: it is shown as
        ``REDACTED_REGEX`` (``_names_found``)."""
        redactor = self.options.redactor
        if redactor is None:
            return flt.describe()
        regex = redactor.again(flt.regex)
        hide = len(self._grep_found) > GREP_FOUND_MAX or any(
            _names_found(found, redactor.again(found), regex) for found in self._grep_found
        )
        return str(self._redacted(flt.describe(REDACTED_REGEX if hide else None)))

    def _shown(self, value: Any, counted: bool) -> Any:
        """``value`` redacted, what that replaced counted when the writer shows it (``counted``)."""
        return self._redacted(value) if counted else self._found_in(value)[0]

    def _redacted(self, value: Any) -> Any:
        redactor = self.options.redactor
        return value if redactor is None else redactor.walk(value)

    # --- sections

    def _surface(self, session: Session) -> Surface:
        """The surface as it stands: its nodes and what redacting them replaced."""
        found = self._found
        return list(session.surface), {seq: found[seq] for seq in session.surface if seq in found}

    def _rows(self, session: Session, surface: Surface) -> Rows:
        """The surface section's rows (``_surface_rows``), counted when the pass kept every node: then the pieces
        of the rows come joined into blocks, whatever the writer (one that counts them can)."""
        where = self.nodes.where if self.nodes is not None else None
        if where is None or not all(seq in where for seq in surface[0]):
            return Rows(self._surface_rows(session, surface), None)
        count = sum(where[seq][1] >= 0 for seq in surface[0])
        return Rows(self._surface_rows(session, surface, True), count)

    def _surface_rows(self, session: Session, surface: Surface, joined: bool = False) -> Iterator[dict[str, Any] | bytes]:
        """The surface section's rows (the writer's pieces, when it keeps nodes; joined into blocks when it takes
        them so, or ``joined``), each as the pass kept it or read back as it is written: an event is redacted again
        only when its row's redaction replaced something (anything else would come out as it is)."""
        seqs, found = surface
        redactor, events, nodes = self.options.redactor, session.events, self.nodes
        for seq in nodes.rows_of(seqs, joined) if nodes is not None else seqs:
            if seq.__class__ is not int:  # the piece of a node kept (or a block of them)
                yield seq  # type: ignore[misc]
                continue
            event = events[seq]
            shown = redactor.again(event) if redactor is not None and seq in found else event
            row = self._node_row(session, seq, event, shown)
            if row is not None:
                if not self.messages and seq in found:  # counted by the writer, where it shows the row
                    row[FOUND] = (found[seq], None)
                yield row if nodes is None else nodes.render.surface_piece(row)

    def _request_done(self, tally: CostTally, request: Request, session: Session) -> bool:
        first = tally.before is None
        tally.add(request, session)
        o = self.options
        diff = tally.diff if tally.diff is not None else tally.skipped
        if diff is None or (o.at is not None and request.seq > o.at):  # not an agent request, or too late
            return False
        if o.turn is not None and (request.turn != o.turn or (o.step is not None and request.step != o.step)):
            return False
        self._request = (request, diff, first)  # made into data once chosen for good (``_document``)
        return False

    def _document(self, session: Session, tally: CostTally) -> dict[str, Any]:
        o = self.options
        header = session.request_header() or {}
        config = header.get("config") if isinstance(header.get("config"), dict) else {}
        cost = tally.report(session, rows=False)  # each request's row made as a writer reads it (JSON's alone)
        if o.redactor is not None:  # model names (a local model is often named by its path)
            cost["unpriced"] = [o.redactor.again(model) for model in cost["unpriced"]]
            cost["requests"] = ModelsRedacted(cost["requests"], o.redactor)
        state = read_host_state(session.path).to_dict() if session.path else {"state": "none"}
        surface = self._surface_at if self._surface_at is not None else self._surface(session)
        if o.redactor is not None and self._title is not None and self._title[1] is not None:
            o.redactor.add(self._title[1])  # every format's head shows the title
        if o.redactor is not None and self.messages:  # the surface's redactions, counted as the pass made them
            for found in surface[1].values():
                o.redactor.add(found)
        request = None
        if self._request is not None:
            built, made, first = self._request
            if made.__class__ is not RequestDiff:  # the request it is against: the tally left the diff out
                made = diff_requests(made, built, session)  # type: ignore[arg-type]
            diff = {**made.to_dict(), "first": first}  # type: ignore[union-attr]
            request = {**self._redacted(built.to_dict(shallow=True)), "nodes": request_nodes(built),
                       "cacheBreak": {k: diff[k] for k in ("first", "broke", "prefixBytes", "totalBytes", "cause", "causeSeq",
                                                             "added", "removed", "replaced")}}  # fmt: skip
        elif o.turn is not None:
            raise TapedeckError(f"turn {o.turn}{f' step {o.step}' if o.step is not None else ''} made no model request"
                                " in this log" + (f" at or before seq {o.at}" if o.at is not None  # the log read that far
                                                  else missing_turn_step(session.turns, o.turn, o.step)))  # fmt: skip
        turns = [{"turn": t.number, "status": t.status, "steps": len(t.steps), "startSeq": t.start_seq,
                  "endSeq": t.end_seq} for t in session.turns.values()]  # fmt: skip
        doc = {
            "format": "tapedeck-export/1",
            "session": {
                "id": self._redacted(session.id),
                "title": self._title[0] if self._title is not None else None,
                "path": self._shown(path_text(session.path), "path" not in self.unshown) if session.path else None,
                "cwd": self._shown(session.header.get("cwd"), "cwd" not in self.unshown),
                "provider": self._redacted(config.get("provider")),
                "model": self._redacted(config.get("model")),
                "state": state.get("state"),
                "events": session.next_seq,
                "turns": turns,
                "usd": cost["total"]["usd"],
            },
            "at": o.at,
            "rows": self.count,
            "filter": {"text": self._filter_text(o.filter), "rowsLeftOut": self.left_out}
            if o.filter is not None
            else None,
            "surface": {"at": o.at, "nodes": self._rows(session, surface)},
            "request": request,
            "cost": {k: cost[k] for k in ("requests", "turns", "total", "cuts", "unpriced")},
            "chart": {
                "samples": [
                    {"seq": s[0], "turn": s[1], "step": s[2], "chars": s[3]} for s in session.context_samples
                ],
                "cuts": [
                    {
                        "seq": c.seq,
                        "kind": c.kind,
                        "nodes": c.nodes,
                        "charsRemoved": c.chars_removed,
                        "turn": c.turn,
                    }
                    for c in session.cuts
                ],  # fmt: skip
            },
            "marks": self._marks,
            "notes": [self._note_item(n) for n in sorted(self.notes.values(), key=lambda n: n.seq)],
            "notesUnread": self.notes_unread,
            # what the readers found wrong in the log: why a row is missing
            "diagnostics": [self._shown(d.to_dict(), self.problems_shown is None or i < self.problems_shown)
                            for i, d in enumerate(session.diagnostics)],  # fmt: skip
        }
        if request is not None and self.messages:
            kept = self.nodes.where if self.nodes is not None else {}
            read_back = any(seq is not None and seq not in kept for seq, _ in built.wire_nodes())
            request["messages"] = Streamed(built.wire_stats()[0], self._messages(built, doc), read_back)
        else:
            self._summarize(doc)
        return doc

    def _note_item(self, note: Note) -> dict[str, Any]:
        """The notes section's item of ``note``: a writer that shows the notes on rows under them (no
        ``messages``) counts one on no row where it lists it (``FOUND``), the others with their rows."""
        row = self._anchors.get(note.seq)
        if self.messages:
            return {**note.to_dict(), "text": self._redacted(note.text), "row": row}
        text, found = self._found_in(note.text)
        item = {**note.to_dict(), "text": text, "row": row}
        if found is not None and row is None:
            item[FOUND] = (None, found)
        return item

    def _messages(self, built: Request, doc: dict[str, Any]) -> Iterator[dict[str, Any] | bytes]:
        """The request's messages (the writer's pieces, when it keeps nodes), each redacted as it is read back
        (or as the pass kept it); then the redaction summary is known."""
        redactor, nodes = self.options.redactor, self.nodes
        wired = built.wire_nodes()
        add = redactor.add if redactor is not None else None
        for node in nodes.messages_of(wired, add) if nodes is not None else wired:
            if node.__class__ is not tuple:  # the pieces of a node kept (or a block of them)
                yield node  # type: ignore[misc]
                continue
            for message in node[1]():  # type: ignore[index]
                shown = self._redacted(message)
                yield shown if nodes is None else nodes.render.message_piece(shown)
        self._summarize(doc)

    def _summarize(self, doc: dict[str, Any]) -> None:
        """The redaction summary: what the pass counted, and what redacting the rows the writer shows replaced."""
        redactor = self.options.redactor
        if redactor is None:
            doc["redaction"] = None
            return
        rows = self.shown() if self.shown is not None else [0] * len(KINDS)
        doc["redaction"] = {kind: n + shown for (kind, n), shown in zip(redactor.summary().items(), rows, strict=True)}


SCREENED_OUTRIGHT = 2048  # bytes of a clean node's wire JSON up to which one screen costs less than ``_noted``'s walks


def _aside(redactor: Redactor, event: dict[str, Any], shown: dict[str, Any], seen: Seen | None,
           wire: list[dict[str, Any]], dump: bytes | None) -> tuple[list[Any], Counts | None]:  # fmt: skip
    """``redactor.aside`` of the wire messages (``wire``, their JSON ``dump``) of the surface node ``event``, which
    redacting gave as ``shown`` noting ``seen``. A clean event's messages are clean when each of their strings is
    one of its own (``makes_text``: most nodes); else its short wire JSON is screened outright (its messages'
    strings are its own, or joined from them, so the screen passes but where a join made a match), else the
    strings are taken from the notes (``_noted``)."""
    if shown is event and ((message := derive_message(event)) is None or not makes_text(message)):
        return wire, None
    if shown is event and dump is not None and len(dump) <= SCREENED_OUTRIGHT:
        return redactor.aside(wire, dump)
    return redactor.aside(wire, dump, _noted(redactor, event, shown, seen))


def _noted(redactor: Redactor, event: dict[str, Any], shown: dict[str, Any], seen: Seen | None) -> Seen | None:
    """``seen`` of ``event``'s walk, and, when the walk gave it back as it is (``shown``: nothing to redact), the
    strings of the message it projects, each as it is."""
    if seen is not None and shown is event:
        redactor.seen_clean(derive_message(event), seen)
    return seen


def result_call(session: Session, event: dict[str, Any]) -> ToolCall | None:
    """The call whose result ``event`` is (by the ``callId`` of its message's source, in its step), if any."""
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    message = data.get("message") if isinstance(data.get("message"), dict) else {}
    source = message.get("source") if isinstance(message.get("source"), dict) else {}
    call_id = source.get("callId")
    return session.tool_call_at(data.get("turn"), data.get("step"), call_id) if isinstance(call_id, str) else None  # type: ignore[arg-type]


_DELTA_TEXT = {"text-delta": "text", "reasoning-delta": "text", "tool-call-delta": "argumentsDelta"}  # the key of its text


def _read_range(session: Session, start: int, end: int) -> list[dict[str, Any]]:
    """Events ``start``..``end - 1`` as ``session.events`` gives them, their lines read once each, in order."""
    events = session.events
    if isinstance(events, LineStore):
        return [readable(event) for event in events.iter_raw(start, end)]
    return events[start:end]


def _block_key(event: dict[str, Any]) -> tuple[tuple[Any, Any], str] | None:
    """The block a stream delta's text belongs to (its kind and index) and the key of that text; None for a delta
    with no text."""
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    chunk = data.get("chunk") if isinstance(data.get("chunk"), dict) else {}
    key = _DELTA_TEXT.get(chunk.get("type"))  # type: ignore[arg-type]
    if key is None or not isinstance(chunk.get(key), str):
        return None
    index = chunk.get("index")
    return (chunk["type"], index if isinstance(index, int) else None), key


def _deltas_clean(redactor: Redactor, events: list[dict[str, Any]]) -> bool:
    """True when ``_deltas_redacted`` would replace nothing in the stream deltas ``events``: the screen finds
    nothing in them, nor in the text each block's deltas make together. One screen of one JSON text."""
    texts: dict[tuple[Any, Any], list[str]] = {}
    for event in events:
        block = _block_key(event)
        if block is not None:
            texts.setdefault(block[0], []).append(event["data"]["chunk"][block[1]])
    try:
        dump = orjson.dumps([events, ["".join(parts) for parts in texts.values()]])
    except TypeError:  # not JSON: walked as it is
        return False
    return redactor.clean_line(dump)


def _deltas_redacted(redactor: Redactor, events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Counts | None]]:
    """Each of the stream deltas ``events`` (in order) redacted, and what that replaced (counted nowhere): the
    text of each block (its text, its reasoning, a tool call's arguments) as the text its deltas make together
    (``Redactor.pieces``), the rest of each delta alone."""
    out: list[tuple[dict[str, Any], Counts | None]] = []
    blocks: dict[tuple[Any, Any], list[int]] = {}  # the deltas of each block, by the block's kind and index
    for i, event in enumerate(events):
        block = _block_key(event)
        if block is None:
            shown, found = redactor.walk_found(event)
            if found is not None:
                redactor.uncount(found)
            out.append((shown, found))
            continue
        (kind, key), data = block, event["data"]
        blocks.setdefault(kind, []).append(i)
        blank = {**event, "data": {**data, "chunk": {**data["chunk"], key: ""}}}  # the rest of it, walked alone
        shown, found = redactor.walk_found(blank)
        if found is not None:
            redactor.uncount(found)
        out.append((shown, found))
    for members in blocks.values():
        texts = [events[i]["data"]["chunk"][_DELTA_TEXT[events[i]["data"]["chunk"]["type"]]] for i in members]
        redacted, found = redactor.pieces(texts)
        for i, text, redacted_text, more in zip(members, texts, redacted, found, strict=True):
            shown, before = out[i]
            if before is None and redacted_text == text:  # nothing of it replaced
                out[i] = (events[i], None)
                continue
            chunk = shown["data"]["chunk"]  # a copy of its own: the blank's, or what walking it made
            chunk[_DELTA_TEXT[chunk["type"]]] = redacted_text
            out[i] = (shown, _plus(before, more))
    return out


def _plus(a: Counts | None, b: Counts | None) -> Counts | None:
    """Two ``tally_since`` answers added (None: nothing in either)."""
    if a is None or b is None:
        return a if b is None else b
    return tuple(x + y for x, y in zip(a, b, strict=True))


def count_shown(total: list[int], found: tuple[Counts | None, Counts | None] | None, row: bool = True,
                note: bool = True) -> None:
    """Add to ``total`` what a row's ``FOUND`` says its redaction replaced: what its row shows (``row``) and what
    its note shows (``note``)."""
    if found is None:
        return
    for part in (found[0] if row else None, found[1] if note else None):
        if part is not None:
            for i, n in enumerate(part):
                total[i] += n


def _names_found(found: str, redacted: str, regex: str) -> bool:
    """True when ``regex`` (the filter's, redacted) names what redaction replaced where the filter found ``found``
    (``redacted``: ``found`` redacted alone). When redacting ``found`` alone changes nothing, only its context made
    it a secret (``hunter2`` after ``password =``, ``alice`` in ``/home/alice``) and any regex that found it may
    name it: it does when it names a character of it in RE2's grammar, the one the filter matches with
    (``hunter\\d``; not ``.`` or ``\\w``: ``core.shared.regex.names_any``); else the words redaction took from it
    (``home``, ``alice`` of ``/home/alice/proj``) must not be words of ``regex`` (``alice|/home/alice`` redacted is
    ``alice|~``)."""
    if redacted == found:
        return names_any(regex, found)
    gone = set(_NAME_WORD.findall(found)) - set(_NAME_WORD.findall(redacted))
    return any(re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", regex) for word in gone)


def _run_head(session: Session, seq: int) -> dict[str, Any]:
    """The event at ``seq``, the first of the run of stream deltas the decoder handed over last: made from the
    line the decoder parsed when the store can, else read back."""
    events = session.events
    head = events.run_head(seq) if isinstance(events, LineStore) else None
    return head if head is not None else events[seq]


def unlisted(doc: dict[str, Any], seq: int) -> str:
    """Why a note on ``seq`` is on no row of the document: the filter left its row out, or the log has no such seq
    (a copy cut short, a log replaced by a shorter one)."""
    if doc["filter"] is not None and seq < doc["session"]["events"]:
        return "its row left out by the filter"
    return "not in this log"


def turns_line(turns: list[dict[str, Any]], named: int = 10) -> str:
    """How a session's turns ended, counted by how (``40 completed; 2 aborted: turns 7, 12``), the turns that did
    not complete named, up to ``named`` of each way: one line whatever their number."""
    ways: dict[str, list[Any]] = {}
    for t in turns:
        ways.setdefault(str(t["status"]), []).append(t["turn"])
    parts = []
    for way, numbers in ways.items():
        part = f"{len(numbers)} {way}"
        if way != "completed":
            shown = ", ".join(map(str, numbers[:named])) + (", …" if len(numbers) > named else "")
            part += f": {'turn' if len(numbers) == 1 else 'turns'} {shown}"
        parts.append(part)
    return "; ".join(parts) or "none"


def cache_break(b: dict[str, Any]) -> str:
    """Where the chosen request's prompt cache broke, from its ``cacheBreak`` section, as a sentence."""
    if b["first"]:
        return f"the session's first request ({b['totalBytes']} bytes): nothing was cached before it"
    if b["broke"]:
        return "the " + break_point(b["prefixBytes"], b["totalBytes"], b["cause"], b["causeSeq"])
    return f"the first {b['prefixBytes']} of {b['totalBytes']} bytes are the previous request's (cache kept)"


def request_nodes(request: Request) -> list[int | str]:
    """The surface node of each of ``request``'s messages, without reading a lean request's messages back."""
    digest = request.digest
    return list(request.keys) if digest is None or digest.done else digest.keys[: digest.count]


def message_text(message: dict[str, Any]) -> str:
    """The text of a derived surface message: its text blocks, else its tool calls or its result's text."""
    parts = [text_of_blocks(message.get("content"), "\n")]
    for block in message.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "tool-call":
            parts.append(f"→ {block.get('name')}({block.get('arguments', '')})")
        elif isinstance(block, dict) and block.get("type") == "tool-result":
            parts.append(tool_result_text(message, "\n"))
    return "\n".join(p for p in parts if p)
