"""Loading a session log into a projection in one streaming pass.

The decoder hands each event and packed chunk row (kept packed) straight to ``Session.apply``/``apply_row`` as
it decodes it (its ``Consumer``, routed to the session once the header made one), with the cyclic GC paused: an event a streaming load does not keep is dropped
right after it is projected, while its objects are still in the CPU cache. A retaining load keeps every event
in an ``EventStore``; a streaming load keeps none and lets ``observe`` see each one right after it is projected
(and ``before`` right before), so a command can keep only what it prints. With ``readback`` a streaming load
also notes where each line is (``core.log.linestore``), so ``session.events[seq]`` still reads any event back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from core.log.bulk import gc_paused
from core.log.decoder import CHUNK, ChunkSink, Consumer, DecodeBatch, LogDecoder, TypedSink
from core.log.layout import is_compressed, resolve_log_path
from core.log.linestore import LineStore
from core.log.records import PackedRow
from core.log.store import EventStore
from core.log.validate import INVALID, readable
from core.read.facts import FACT_TYPES, SessionFacts
from core.read.index_size import worth_writing
from core.read.session import Session
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError, TapedeckError, truncated_while_read
from core.shared.regular import open_regular
from core.shared.text import quoted_path

READ_CHUNK = 1 << 20  # each read ends a run of stream deltas and sends the line it cuts through the general path
NOTES_HELD = 1 << 11  # fields of noted lines a read-back pass lets wait for the line table (about 340 lines)
Observer = Callable[[Session, "dict | PackedRow"], None]
RunObserver = Callable[[Session, int, int, int, int, int], None]
"""Told of a run of stream deltas once projected: the session, then ``(seq0, n, turn, step, chars)`` as
``core.log.decoder.DeltaSink`` takes them."""
ParsedObserver = Callable[[Session, dict[str, Any], bytes], None]
"""Told of an event a fused path took, once projected: the session, the event (its line as parsed, nothing changed
but its seq and time) and the bytes of its line, as read (without its newline)."""


class PassEnded(Exception):
    """Raised out of a pass by an observer that has what it wanted: the pass stops there, the rest of the log unread
    (``load_session`` does not catch it: its caller takes ``session``, the projection as it stood then)."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session


def load_session(
    path: str | os.PathLike[str],
    *,
    retain: bool = True,
    observe: Observer | None = None,
    before: Observer | None = None,
    readback: bool = False,
    observe_types: Container[str] | None = None,
    raw: bool = False,
    index: bool = False,
    restored: Callable[[Session], None] | None = None,
    before_optional: Container[str] = (),
    skip_deltas: bool = False,
    deltas: RunObserver | None = None,
    skip_before: Callable[[str, int], bool] | None = None,
    parsed: ParsedObserver | None = None,
) -> Session:
    """Project a whole log file or session directory (raw or zstd).

    ``retain=False`` keeps no event: ``session.events`` stays empty, or with ``readback`` is a ``LineStore``
    that reads events back from the file by seq (also while the pass runs, for every line decoded so far).
    ``before(session, item)`` and ``observe(session, item)`` are called right before and right after each
    event dict or ``PackedRow`` is applied; with ``observe_types`` only for the items of those types (a
    ``PackedRow`` is of type ``assistant/chunk``; the container is asked once per type). They see each event
    through the validated view (``core.log.validate.readable``), as every reader of ``session.events`` does;
    with ``raw`` as decoded, flagged or not, for a command that displays events. Events of ``before_optional``
    types may be projected without ``before`` (a fused path then takes them, as it does when nothing observes
    them). ``skip_before(type, seq)``, asked right before an event of any other type a fused path takes would be
    projected at ``seq``, may answer that ``before`` need not be told of that one: the fused path then takes it
    (``observe`` is still told of it). ``parsed`` (with ``readback`` and ``retain=False``), when given, is told instead of
    ``observe`` of each event a fused path took, with its line's bytes. With ``skip_deltas`` (and ``retain=False``), stream deltas (packed rows, and chunk events that are no
    usage sample or finish) are projected a run at a time without ``before`` or ``observe``: an observer finds
    them in the seqs it was not told of. ``deltas`` (with ``retain=False``) is told of each such run once it is
    projected, instead of ``before`` and ``observe`` of its items. Diagnostics come out
    as a full read gives them: the decoder's first, then the projection's. Raises LogFormatError only when no
    header is usable.

    ``index`` (with ``retain=False``; implies ``readback`` unless the log is too small to be indexed, when its
    index is not looked up and the read is a plain one) uses the log's persistent index (``core.read.index``): the projection starts from the state it holds and only the bytes after it are
    decoded, so ``before`` and ``observe`` see only the events from there on; ``restored(session)`` is called
    first with the session as the index left it (any seq below its ``next_seq`` was not observed). The result
    is the same as a full read's. The pass then writes the index when it is worth it (``index_size.worth_writing``).
    """
    p = resolve_log_path(path)
    compressed = is_compressed(p)
    consumer = Consumer()
    found: list[Diagnostic] = []
    sessions: list[Session] = []
    back = None
    if index and not retain:
        if _may_index(p):
            from core.read.index import restore

            back = restore(p, compressed, consumer)
        else:
            index = False  # no index can be written: no line table or facts to gather for one
    facts = back.facts if back is not None else SessionFacts.empty()  # kept in the index with the projection

    def route(session: Session) -> None:  # where the decoder sends what it decodes from now on
        event, consumer.row, consumer.chunk = _routes(session, before, observe, observe_types, raw)
        if skip_deltas:
            consumer.row = session.apply_row
        # runs of stream deltas no one sees or keeps are projected a run at a time
        unseen = skip_deltas or deltas is not None or consumer.chunk == session.apply_chunk
        consumer.deltas = _runs(session, deltas) if not retain and unseen else None
        consumer.event = event
        consumer.told = facts.general_observers() if index else None
        fused = observe if parsed is None or lines is None else _with_line(parsed, lines.noted, decoder)
        consumer.typed, consumer.after = _typed_routes(session, before, observe, observe_types, facts if index else None,
                                                       before_optional, skip_before, fused)  # fmt: skip

    if back is not None:
        decoder, lines, session = back.decoder, back.lines, back.session
        found[:] = session.diagnostics[: back.decoder_diagnostics]
        del session.diagnostics[: back.decoder_diagnostics]
        sessions.append(session)
        route(session)
        if restored is not None:
            restored(session)
    else:
        decoder = LogDecoder(str(p), compressed, consumer=consumer)
        lines = None if retain or not (readback or index) else LineStore(p, decoder)
    store = EventStore() if retain else lines

    def start(header: dict[str, Any]) -> None:  # every item after the header goes to the session
        sessions.append(Session(header, store, path=p, retain=isinstance(store, EventStore)))
        route(sessions[0])

    consumer.header = start

    def take(batch: DecodeBatch) -> None:
        found.extend(batch.diagnostics)
        if decoder.fatal:
            raise LogFormatError(decoder.fatal)
        if lines is not None and lines.pending() >= NOTES_HELD:  # the line table takes them in before they pile up
            lines.take_notes()

    with gc_paused():
        try:
            f = open_regular(p)  # a FIFO swapped in since the log's stat is not waited on
        except OSError as exc:
            raise _unreadable(p, exc) from exc
        with f:
            try:
                opened = os.fstat(f.fileno()).st_size  # the file holds this much: a shrink below it is a cut
                if lines is not None:
                    lines.read_from(f.fileno())
                f.seek(back.offset if back is not None else 0)
            except OSError as exc:
                raise _unreadable(p, exc) from exc
            try:
                for chunk in _chunks(f, p):
                    take(decoder.feed(chunk))
            except TapedeckError as exc:  # a line read back that is no longer there: say why, when it is that
                _check_not_cut(f, p, opened, exc)
                raise
            _check_not_cut(f, p, opened)
        whole = decoder.at_boundary  # no torn line or frame for ``finish`` to report: the index can be written
        take(decoder.finish())
    if not sessions:
        raise decoder.no_header(p)
    session = sessions[0]
    session.diagnostics[:0] = found
    session.compressed = compressed
    if index and lines is not None and whole and worth_writing(decoder.bytes_fed, back.offset if back else 0):
        from core.read.index import write

        with gc_paused():  # encoding the state makes many containers: no collection walks them meanwhile
            write(p, session, lines, decoder, len(found), facts)
    return session


def _chunks(f: BinaryIO, p: Path) -> Iterator[bytes]:
    """The bytes of the log open as ``f``, a chunk at a time from where it is. Only a read that fails is the log's
    error (LogFormatError): one in what the events are handed to (a command's output, a closed pipe) is not."""
    while True:
        try:
            chunk = f.read(READ_CHUNK)
        except OSError as exc:
            raise _unreadable(p, exc) from exc
        if not chunk:
            return
        yield chunk


def _unreadable(p: Path, exc: OSError) -> LogFormatError:
    return LogFormatError(f"{quoted_path(p)}: cannot read ({exc.strerror or exc})")


def _check_not_cut(f: BinaryIO, p: Path, opened: int, cause: Exception | None = None) -> None:
    """Raise when the file open as ``f`` is now shorter than what was read from it or than it was when ``opened``:
    another program truncated the log during the read, so what was read describes bytes it no longer holds, or
    ends where the cut fell (a cut ahead of the read) and not where the log did (an append is read as usual). A
    file whose size read 0 when opened and still does, though bytes were read from it (a /proc or /sys file), has
    no size to go by: it is read as a stream, to its end."""
    try:
        held, size = max(f.tell(), opened), os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise _unreadable(p, exc) from exc
    if size < held and (size or opened):
        raise truncated_while_read(p, size, held) from cause


def _may_index(log: os.PathLike[str]) -> bool:
    """Whether a full pass over ``log`` may write its index (it is not under ``index_size.min_log_bytes()``)."""
    try:
        return worth_writing(os.path.getsize(log), 0)
    except OSError:
        return True  # the read reports it


def _typed_routes(
    session: Session,
    before: Observer | None,
    observe: Observer | None,
    types: Container[str] | None,
    facts: SessionFacts | None,
    before_optional: Container[str] = (),
    skip_before: Callable[[str, int], bool] | None = None,
    fused: Observer | None = None,
) -> tuple[dict[str, TypedSink], dict[str, Callable[[dict[str, Any]], None]]]:
    """The fused paths into ``session`` (``Consumer.typed``) and what is told of each event one took, by type
    (``Consumer.after``): ``observe`` (or ``fused`` in its place, when given) for the types it sees, then ``facts``
    for theirs. A type ``before`` sees
    (but those of ``before_optional``) takes the general path, where it is told of an event before the event is
    projected, unless ``skip_before`` lets the fused path take that event."""
    sinks = session.typed_sinks()
    seen = {etype for etype in sinks if types is None or etype in types} if before or observe else set()
    if before is not None:
        general = {etype for etype in seen if etype not in before_optional}
        if skip_before is None:
            sinks = {etype: sink for etype, sink in sinks.items() if etype not in general}
            seen -= general
        else:
            sinks = {etype: _gated(etype, sink, skip_before) if etype in general else sink for etype, sink in sinks.items()}
    noted = facts.typed_observers(session) if facts is not None else {}
    after: dict[str, Callable[[dict[str, Any]], None]] = {}
    for etype in sinks:
        note = noted.get(etype, facts.observe if facts is not None and etype in FACT_TYPES else None)
        if etype in seen:
            after[etype] = _told(session, fused or observe, note)  # type: ignore[arg-type]
        elif note is not None:
            after[etype] = note
    return sinks, after


def _gated(etype: str, sink: TypedSink, skip_before: Callable[[str, int], bool]) -> TypedSink:
    """``sink`` for the events of ``etype`` that ``skip_before`` lets it take; it declines the others."""

    def gated(event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        return skip_before(etype, seq) and sink(event, data, seq)

    return gated


def _with_line(parsed: ParsedObserver, noted: list[Any], decoder: LogDecoder) -> Observer:
    """``parsed`` told of an event a fused path took with its line: the decoder noted where the line is (the last
    ``RecordNote`` in ``noted``, a ``LineStore``'s) right before telling of its event."""

    def told(session: Session, event: dict[str, Any]) -> None:
        start, length = noted[-3], noted[-2]  # the note's fields: seq, count, offset, start, length, type
        parsed(session, event, decoder.fed[start : start + length])

    return told


def _told(
    session: Session, observe: Observer, note: Callable[[dict[str, Any]], None] | None
) -> Callable[[dict[str, Any]], None]:
    """``observe`` told of an event a fused path took, then ``note`` (the facts), when given."""
    if note is None:
        return lambda event: observe(session, event)

    def both(event: dict[str, Any]) -> None:
        observe(session, event)
        note(event)

    return both


def _runs(session: Session, told: RunObserver | None) -> Callable[[int, int, int, int, int], None]:
    """Where the decoder's runs of stream deltas go: ``session.apply_deltas``, then ``told``, when given."""
    apply = session.apply_deltas
    if told is None:
        return apply

    def run(seq0: int, n: int, turn: int, step: int, chars: int) -> None:
        apply(seq0, n, turn, step, chars)
        told(session, seq0, n, turn, step, chars)

    return run


def _routes(
    session: Session,
    before: Observer | None,
    observe: Observer | None,
    types: Container[str] | None,
    raw: bool,
) -> tuple[Callable[[dict[str, Any]], None], Callable[[PackedRow], None], ChunkSink]:
    """Where the decoder's events, rows and chunk events go (``Consumer``): apply one decoded item to ``session``, between
    ``before`` and ``observe`` when it is of one of ``types`` (any type when None; a row is of chunk type), who
    see a flagged event's ``readable`` stand-in unless ``raw``."""
    apply, apply_row, apply_chunk = session.apply, session.apply_row, session.apply_chunk
    if before is None and observe is None:
        return apply, apply_row, apply_chunk

    wanted: dict[str, bool] = {}  # each type's answer from ``types``, asked once

    def observed(item: Any) -> None:  # an event, or a row when chunks are observed
        row = item.__class__ is PackedRow
        seen = row or types is None or wanted.get(item["type"])
        if seen is None:
            seen = wanted[item["type"]] = item["type"] in types  # type: ignore[operator]
        if not seen:
            (apply_row if row else apply)(item)
            return
        shown = item if row or raw or INVALID not in item else readable(item)
        if before is not None:
            before(session, shown)
        if row:
            apply_row(item)
        else:
            apply(item)
        if observe is not None:
            observe(session, shown)

    def observed_chunk(event: dict[str, Any], turn: int, step: int, chunk: dict[str, Any]) -> None:
        if before is not None:
            before(session, event)
        apply_chunk(event, turn, step, chunk)
        if observe is not None:
            observe(session, event)

    if types is None or CHUNK in types:
        return observed, observed, observed_chunk
    return observed, apply_row, apply_chunk
