"""Incremental log decoding: bytes in (raw or zstd, any split), events and diagnostics out.

The one-shot reader and the live tailer share this code path, so feeding a file in arbitrary chunks yields
exactly the state of reading it at once (``tests/log/test_decoder_props.py`` checks it). A multi-MB line is
completed in place and parsed in slices (``core.log.bigjson``), so decoding it never holds the GIL for long.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import field
from io import BytesIO
from typing import TYPE_CHECKING, Any

import orjson

from core.log import bigjson
from core.log.header import HeaderError, validate_header
from core.log.records import (
    PackedRow,
    RecordError,
    complete_event,
    is_packed_row,
    row_parts,
    row_placeholders,
)
from core.log.validate import INVALID, MAX_COUNTER, as_time, delta_of, finish_of, kind_of, time_problem
from core.log.vocabulary import (
    ENVELOPE_KEYS,
    KNOWN_TYPES,
    PACKED_ROW_TYPES,
    REJECTED_LEGACY_TYPES,
    is_known_type,
)
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError
from core.shared.records import record
from core.shared.text import json_line_problem, quoted_path, shown

if TYPE_CHECKING:
    from core.log.frames import DecodedFrame, FrameStream

RecordNote = tuple[int, int, int, int, int, str]
"""One line that yields events: its first seq, how many, the file offset of the line (raw) or of the zstd frame it
starts in, where it starts in that frame's data (zstd), its length in bytes (without the newline), and its events'
type."""

RecordHook = Callable[[RecordNote], None]
"""Told of each line that yields events, in one tuple (a list's ``extend`` takes it without a Python call)."""

SpanHook = Callable[[int, int], None]
"""Told, right before its ``RecordNote``, of a note that stands for several lines of a raw log: its first seq and
how many lines (a dict's ``__setitem__`` takes them without a Python call)."""

ChunkSink = Callable[[dict[str, Any], int, int, dict[str, Any]], None]
"""Takes a well-formed ``assistant/chunk`` event with its ``data``'s turn, step and chunk (``Consumer.chunk``)."""

DeltaSink = Callable[[int, int, int, int, int], None]
"""Takes ``(seq0, n, turn, step, chars)``: ``n`` well-formed stream deltas from ``seq0`` on, all of ``turn`` and
``step``, streaming ``chars`` chars (code points of their text or arguments) in all (``Consumer.deltas``)."""

TypedSink = Callable[[dict[str, Any], dict[str, Any], int], bool]
"""Takes an event line of its type with the plain envelope, its ``data`` object and the seq it gets
(``Consumer.typed``): True when it validated and projected it, False (having changed nothing) to send it down the
general path."""

CHUNK = "assistant/chunk"
_LINE = object()  # the type of a line that holds no object: ``_line`` reports it


class Consumer:
    """Where a decoder's output goes: ``LogDecoder`` takes one when it is made and keeps it.

    - ``header`` is told of the validated header once it is decoded;
    - ``event`` takes each event as it is decoded (a bad row's placeholders too), so a streaming consumer projects
      it and drops it while its objects are still in the CPU cache; None collects events in each feed's batch;
    - ``row`` takes each well-formed packed chunk row, unexpanded; None hands its member events on where events
      go, or with ``packed_rows`` the ``PackedRow`` itself as one item standing for them;
    - ``chunk``, when set, takes each well-formed ``assistant/chunk`` event that nothing is left to check about,
      with the fields its consumer reads (any other chunk event goes where events go);
    - ``deltas``, when set with ``chunk`` and ``row``, takes each run of consecutive ``assistant/chunk`` events of
      one turn and step that ``chunk`` would take one by one (but usage samples) and packed rows ``row`` would
      take, in one call (``DeltaSink``): their events are not built for anyone, so only for a consumer that would
      drop them;
    - ``typed``, when set, maps an event type to the sink that validates and projects an event line of that type
      in one step (``TypedSink``), for lines with the plain envelope (numbered as the stream expects, an integer
      time, a ``data`` object, envelope keys only); a sink declines anything but the shape it expects, which then
      goes where events go; ``after`` maps a type to what is told of each event of that type a typed sink took,
      once it is numbered and noted; ``told`` maps a type to what is told of each event of that type that went
      where events go from the general path (``_event``), right after it went there;
    - ``record`` is told of each line that yields events, in one tuple (a ``LineStore`` notes where lines are);
      with ``spans`` also set, a run of stream deltas ``deltas`` takes from consecutive lines of a raw log is one
      note (its lines' bytes, newlines between them included), of which ``spans`` is told first when it holds
      more than one line.

    The decoder reads where items go at the start of every feed and right after the header, so a consumer may
    route them anew between two feeds (the TUI's loader projects while it loads, then collects appends).
    """

    def __init__(
        self,
        *,
        header: Callable[[dict[str, Any]], None] | None = None,
        event: Callable[[Any], None] | None = None,
        row: Callable[[PackedRow], None] | None = None,
        chunk: ChunkSink | None = None,
        deltas: DeltaSink | None = None,
        typed: dict[str, TypedSink] | None = None,
        after: dict[str, Callable[[dict[str, Any]], None]] | None = None,
        told: dict[str, Callable[[dict[str, Any]], None]] | None = None,
        record: RecordHook | None = None,
        spans: SpanHook | None = None,
        packed_rows: bool = False,
    ) -> None:
        self.header = header
        self.event = event
        self.row = row
        self.chunk = chunk
        self.deltas = deltas
        self.typed = typed
        self.after = after
        self.told = told
        self.record = record
        self.spans = spans
        self.packed_rows = packed_rows


@record()
class DecodeBatch:
    """What one feed produced."""

    events: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    header: dict[str, Any] | None = None  # set on the batch that decoded line 1


class LogDecoder:
    """Turns the bytes of one session log into events.

    ``compressed`` selects zstd frame decoding. The header (line 1) is validated; a fatal header problem is
    kept in ``fatal`` and every later byte is ignored, because nothing after a bad header can be trusted.
    """

    def __init__(
        self,
        name: str,
        compressed: bool,
        pace: Callable[[], None] | None = None,
        consumer: Consumer | None = None,
    ) -> None:
        """Decode the log called ``name``; ``pace`` is called between slices of a multi-MB line's parse; decoded
        items go to ``consumer`` (by default each feed's batch collects every event, rows expanded)."""
        self.name = quoted_path(name)  # as the messages that name the log write it
        self.pace = pace
        self.compressed = compressed
        self.consumer = consumer if consumer is not None else Consumer()
        self.header: dict[str, Any] | None = None
        self.fatal: str | None = None
        self.next_seq = 0
        # Where items go during one feed, read from the consumer by ``_route``
        self._put: Callable[[Any], None] = _discard
        self._row_to: Callable[[PackedRow], None] | None = None  # None: a row's members go to ``_put``
        self._packed = False  # with no ``_row_to``: the row itself goes to ``_put``
        self._chunk_to: ChunkSink | None = None
        self._deltas_to: DeltaSink | None = None
        self._typed: dict[str, TypedSink] = {}
        self._after: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._told: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._record: RecordHook | None = self.consumer.record
        self._spans: SpanHook | None = self.consumer.spans
        self._explicit_seq: bool | None = None
        self._seq_shift = 0  # declared seq minus position, after a reported discontinuity
        # the first line of the last run of stream deltas handed to ``Consumer.deltas`` (a chunk event or a packed
        # row, as parsed; ``LineStore.run_head`` makes its first event of it without reading it back)
        self.run_head: dict[str, Any] | None = None
        self._partial = bytearray()
        # where ``_partial`` starts: its file offset (raw) or that of its zstd frame, and its place in the data fed
        # (one attribute: a 30th would cost every attribute look-up of a decoder its fast path)
        self._partial_at = (0, 0)
        self._offset = 0  # raw: file offset of the next byte fed
        self._frames: FrameStream | None = None
        if compressed:
            from core.log.frames import FrameStream  # a zstd log's alone: a raw one never imports it

            self._frames = FrameStream(streamed=True)
        self._warned_types: set[str] = set()
        self._session_id = ""  # the header's id, once line 1 is decoded (legacy upgrades name it per event)
        self._pos = 0  # zstd: where the line being decoded starts in its frame's data
        self._len = 0  # bytes of the line being decoded
        # the data whose lines ``_lines`` decodes: the line of an event a ``Consumer.typed`` sink took, noted at
        # ``start`` with ``length`` (``RecordNote``), is ``fed[start : start + length]`` while ``after`` is told of it
        # (a piece of a streamed zstd frame is sliced by where in the frame's data its lines are: ``Shifted``)
        self.fed: bytes | Shifted = b""

    @classmethod
    def for_records(cls, name: str, header: dict[str, Any]) -> LogDecoder:
        """A decoder of the log ``name`` already past its header, for ``decode_record``."""
        decoder = cls(name, False, consumer=Consumer(packed_rows=True))
        decoder.header = header
        decoder._session_id = decoder.session_id
        return decoder

    @property
    def at_boundary(self) -> bool:
        """True when every byte fed so far is decoded: no line (nor zstd frame) waits for the rest of it, so a
        decoder ``resumed`` from ``state()`` at the bytes fed goes on exactly as this one would."""
        frames = self._frames
        return (
            not self._partial
            and (frames is None or not frames.pending and frames.damage is None)
            and not self.fatal
        )

    @property
    def bytes_fed(self) -> int:
        """Bytes of the file fed so far."""
        if self._frames is None:
            return self._offset
        return self._frames.pending_offset + self._frames.pending

    def no_header(self, path: str | os.PathLike[str]) -> LogFormatError:
        """Why the log at ``path``, fed to its end, gave no session header: it is empty, or it ends inside its first
        line or frame (a copy cut short: ``zstd`` writes a whole log as one frame)."""
        what = "empty log" if self.bytes_fed == 0 else "no complete first line or frame"
        return LogFormatError(f"{quoted_path(path)}: {what} (no session header)")

    def state(self) -> dict[str, Any]:
        """What a later decoder needs to go on from here (``resumed``), as plain data; only ``at_boundary``."""
        return {
            "header": self.header,
            "nextSeq": self.next_seq,
            "explicitSeq": self._explicit_seq,
            "seqShift": self._seq_shift,
            "warned": sorted(self._warned_types),
        }

    @classmethod
    def resumed(
        cls, name: str, compressed: bool, state: dict[str, Any], offset: int, consumer: Consumer
    ) -> LogDecoder:
        """A decoder that goes on at file ``offset`` as the one ``state()`` described would; raises ValueError
        when ``state`` is not such a description."""
        header, next_seq = state["header"], state["nextSeq"]
        explicit, shift, warned = state["explicitSeq"], state["seqShift"], state["warned"]
        if (
            type(header) is not dict
            or type(next_seq) is not int
            or type(shift) is not int
            or explicit not in (None, True, False)
            or type(warned) is not list
            or not all(type(name) is str for name in warned)
            or next_seq < 0
            or offset < 0
        ):
            raise ValueError("not a decoder state")
        decoder = cls(name, compressed, consumer=consumer)
        decoder.header, decoder._session_id = header, str(header.get("id", ""))
        decoder.next_seq, decoder._explicit_seq, decoder._seq_shift = next_seq, explicit, shift
        decoder._warned_types = set(warned)
        decoder._offset = offset
        if compressed:
            from core.log.frames import FrameStream

            decoder._frames = FrameStream(offset, streamed=True)
        return decoder

    def decode_record(self, raw: bytes, seq: int) -> list[dict[str, Any] | PackedRow]:
        """What one record line yields when the stream reaches it at ``seq`` (rows kept packed, diagnostics
        dropped): reads back an event from where ``Consumer.record`` said its line is."""
        self.next_seq = seq
        out = DecodeBatch()
        self._route(out)
        self._line(raw, 0, out)
        return out.events  # type: ignore[return-value]

    def _route(self, out: DecodeBatch) -> None:
        """Read where the consumer wants items to go (once a feed, and again once the header is decoded)."""
        consumer = self.consumer
        self._put = consumer.event or out.events.append
        self._row_to, self._packed, self._chunk_to = consumer.row, consumer.packed_rows, consumer.chunk
        self._deltas_to = consumer.deltas if consumer.chunk is not None and consumer.row is not None else None
        self._typed, self._after, self._told = consumer.typed or {}, consumer.after or {}, consumer.told or {}
        self._record = consumer.record
        self._spans = consumer.spans if consumer.record is not None else None

    @property
    def session_id(self) -> str:
        """The header's session id (empty before line 1 is decoded)."""
        return str((self.header or {}).get("id", ""))

    def feed(self, data: bytes) -> DecodeBatch:
        """Decode every complete line (raw) or frame (zstd) now available."""
        out = DecodeBatch()
        if self.fatal or not data:
            return out
        self._route(out)
        if self._frames is None:
            self._feed_lines(data, self._offset, out)
            self._offset += len(data)
        else:
            fresh = self.header is None and not self._frames.pending_offset and not self._frames.pending
            if fresh and data[:1] == b"{":
                self.fatal = f"{self.name}: holds uncompressed JSON lines, but its name says zstd"
                return out
            self._decode_frames(self._frames.feed(data), out)
            # bytes that are no frame from the log's start on: not waited on to their end
            damage = self._frames.damage
            if damage is not None and damage[0] == 0 and self.header is None and not self.fatal:
                from core.log.frames import DecodedFrame

                self._decode_frames([DecodedFrame(0, 0, None, damage[1])], out)
        return out

    def _decode_frames(self, frames: Iterable[DecodedFrame], out: DecodeBatch) -> None:
        """Decode the lines of complete zstd ``frames``, reporting a corrupt one (fatal when it is the first)."""
        for frame in frames:
            if frame.error is not None and self.header is None and frame.offset == 0:
                self.fatal = f"{self.name}: the first zstd frame is unreadable ({frame.error}), so no header"
                return
            if frame.error is not None:
                out.diagnostics.append(
                    Diagnostic("corrupt-frame", f"{frame.error}; {frame.length} bytes skipped", frame.offset)
                )
                continue
            for at, piece in frame.pieces():  # a frame past a window: a window at a time
                self._feed_lines(piece, frame.offset, out, fixed_offset=True, at=at)
                if self.fatal:
                    return

    def finish(self) -> DecodeBatch:
        """End of input: recover or report a torn final line or frame."""
        out = DecodeBatch()
        if self.fatal:
            return out
        self._route(out)
        if self._frames is not None:
            self._decode_frames(self._frames.finish(), out)  # a run of bytes that is no frame, to the end
            if self.fatal:
                return out
        if self._frames is not None and self._frames.pending:
            offset, pending = self._frames.pending_offset, self._frames.pending
            from core.log.frames import recovered_frame

            # the held-back bytes themselves: a torn frame of hundreds of MB (``zstd FILE`` cut short) is not copied
            recovered, n_lines = recovered_frame(self._frames.pending_buffer, offset)
            out.diagnostics.append(
                Diagnostic(
                    "torn-frame",
                    f"incomplete final zstd frame ({pending} bytes); recovered {n_lines} complete line(s)",
                    offset,
                    self.next_seq,
                    "warning",
                )
            )
            for at, piece in recovered.pieces():  # its complete lines, a window at a time past one
                if piece:
                    self._feed_lines(piece, offset, out, fixed_offset=True, at=at)
        if self._partial:
            rest = bytes(self._partial)
            self._partial.clear()
            try:
                orjson.loads(rest)
            except orjson.JSONDecodeError as exc:
                if self.header is None:
                    self.fatal = f"{self.name}: {_first_line_problem(rest, exc)}"
                    return out
                out.diagnostics.append(
                    Diagnostic(
                        "torn-line",
                        f"last line is incomplete ({len(rest)} bytes, no newline); ignored",
                        self._partial_at[0],
                        self.next_seq,
                        "warning",
                    )
                )
            else:
                offset, self._pos = self._partial_at
                self._line(rest, offset, out)
        return out

    def _feed_lines(
        self, data: bytes, base: int, out: DecodeBatch, fixed_offset: bool = False, at: int = 0
    ) -> None:
        """Decode the lines of ``data``: file offset ``base`` on (raw), or of the zstd frame at ``base``
        (``fixed_offset``), where ``data`` starts ``at`` bytes into what the frame decodes to."""
        start = 0
        if self._partial:
            nl = data.find(b"\n")
            if nl < 0:
                self._partial += data
                return
            # completed in place and parsed from the bytearray: a multi-MB line is never copied whole
            self._partial += memoryview(data)[:nl]
            line, self._partial = self._partial, bytearray()
            offset, self._pos = self._partial_at
            self._line(line, offset, out)
            start = nl + 1
        while self.header is None and not self.fatal:  # line 1 and any blank lines before it
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            self._pos = start + at
            self._line(data[start:nl], base if fixed_offset else base + start, out)
            start = nl + 1
        if self.fatal:  # the rest of a chunk after a fatal header problem is ignored; the first message stays
            return
        start = self._lines(data, start, base, fixed_offset, out, at)
        if start < len(data):
            self._partial += memoryview(data)[start:]  # one copy, not a slice and a copy
            self._partial_at = (base if fixed_offset else base + start, start + at)

    def _lines(
        self, data: bytes, start: int, base: int, fixed_offset: bool, out: DecodeBatch, at: int = 0
    ) -> int:
        """Decode every complete line of ``data`` from ``start`` on (the header is known); return where the
        partial rest begins. ``base`` is the file offset of ``data[0]``, or of every line when ``fixed_offset``;
        ``data`` starts ``at`` bytes into its zstd frame's data, where a note says a line starts.

        The hot loop: a line orjson parses into an object goes straight to ``_row``/``_event``, or with the plain
        envelope to its type's ``Consumer.typed`` sink (``_event`` when it declines); anything else (a blank,
        corrupt or non-object line, a multi-MB line to parse in slices) takes ``_line``.
        """
        loads, bad_json, rows, row, event = orjson.loads, orjson.JSONDecodeError, PACKED_ROW_TYPES, self._row, self._event
        chunk_to = self._chunk_to
        chunk = self._chunk if chunk_to is not None else event
        typed, envelope, after = self._typed, ENVELOPE_KEYS, self._after
        deltas, top, record, parts = self._deltas_to, MAX_COUNTER, self._record, row_parts
        run = 0  # deltas taken for ``deltas`` and not handed over yet: from ``seq0`` on, of ``turn`` and ``step``
        seq0 = turn = step = chars = 0
        # a raw log's run is noted as one line (``Consumer.spans``): its ``lined`` lines from ``first`` on, to the
        # newline before the line that ends it (``start - 1`` then: where the run's last line ends is not kept a line
        # at a time)
        spans = self._spans is not None and not fixed_offset
        lined = first = 0
        limit = bigjson.LIMIT + 1 if self.pace is not None else len(data)  # longer lines (newline included) are parsed in slices
        end = data.rfind(b"\n", start) + 1  # the partial rest begins there
        if not end:
            return start
        self.fed = data if not at else Shifted(data, at)
        # A BytesIO hands out its lines (with their newline) in C, finding each with memchr: fewer steps a line than
        # a ``find`` and a slice (``split`` compares every byte). It shares ``data``, partial rest and all: a slice
        # without the rest would copy every byte fed (a zstd frame's lines come fed whole), so the loop stops there.
        lines = BytesIO(data)
        lines.seek(start)
        for raw in lines:
            if start == end:  # the partial rest: the next feed completes it
                break
            size = len(raw)  # the line's bytes, its newline included (``start + size``: where the next line starts)
            try:  # subscripts cost less than ``get``: a line that is no object raises TypeError, one without a type KeyError
                obj = loads(raw) if size <= limit else None
                etype = obj["type"]
            except bad_json:
                obj, etype = None, _LINE
            except KeyError:
                etype = None
            except TypeError:
                etype = _LINE
            n = 0
            if etype == CHUNK and deltas is not None:
                try:  # a stream delta that nothing is left to check about (``_chunk``'s and ``delta_of``'s checks)
                    body = obj["data"]
                    piece = body["chunk"]
                    ctype = piece["type"]
                    t, p = body["turn"], body["step"]
                    if (
                        len(obj) == 4
                        and obj["time"].__class__ is int
                        and obj["seq"] == (seq := self.next_seq) + self._seq_shift
                        and self._explicit_seq
                        and t.__class__ is int
                        and p.__class__ is int
                        # the counters of the run it joins were checked on its first line
                        and ((joins := run and t == turn and p == step) or (0 <= t <= top and 0 <= p <= top))
                    ):
                        if ctype != "finish" and ctype != "usage":
                            text = piece.get("argumentsDelta" if ctype == "tool-call-delta" else "text")
                            n, c = 1, len(text) if text.__class__ is str else 0
                        elif (  # a usage sample (``delta_of``), or a step's finish that is no error (``finish_of``)
                            ((u := piece.get("usage")) is None or u.__class__ is dict)
                            if ctype == "usage"
                            else (why := piece.get("reason")).__class__ is dict
                            and why.get("failure") is None
                            and why.get("kind") != "error"
                        ):
                            n, joins = -1, False  # projected on its own, once the run before it is
                except (KeyError, TypeError):  # no object where one is due, or a key missing: no delta
                    pass
            elif (  # a packed row numbered as expected: ``_row`` takes it without a word when it is well-formed
                deltas is not None
                and etype.__class__ is str
                and etype in rows
                and obj.get("seq0") == (seq := self.next_seq) + self._seq_shift
                and self._explicit_seq
                and ((t0 := obj.get("time0")).__class__ is int or t0 is None)  # else ``_row`` says what it is
            ):
                try:
                    _, _, members, _, t, p, c = parts(obj)
                    n, joins = len(members), run and t == turn and p == step
                except RecordError:  # ``_row`` reports it
                    n = 0
            if n:  # the deltas of one turn and step join the run; another's start a new one
                if joins:
                    run += n
                    chars += c
                else:
                    if run:
                        if lined:
                            self._note_run(seq0, run, lined, base + first, first, start - 1)
                        deltas(seq0, run, turn, step, chars)  # type: ignore[misc]
                    if n < 0:  # what ``_chunk`` does with it, its checks made above
                        run = 0
                        obj["seq"] = seq  # a declared seq may be equal without being an int (True, 1.0)
                        if record is not None:
                            record((seq, 1, base if fixed_offset else base + start, start + at, size - 1, CHUNK))
                        self.next_seq = seq + 1
                        chunk_to(obj, t, p, piece)  # type: ignore[misc]
                        start += size
                        continue
                    run, seq0, turn, step, chars = n, seq, t, p, c
                    lined, first = 0, start
                    self.run_head = obj
                if spans:
                    lined += 1
                elif record is not None:
                    record((seq, n, base if fixed_offset else base + start, start + at, size - 1, CHUNK))
                self.next_seq = seq + n
                start += size
                continue
            if run:  # a run ends before anything else is projected
                if lined:
                    self._note_run(seq0, run, lined, base + first, first, start - 1)
                    lined = 0
                deltas(seq0, run, turn, step, chars)  # type: ignore[misc]
                run = 0
            self._pos, self._len = start + at, size - 1  # where the line is, for the note of what it yields
            if etype is _LINE:
                del raw  # a multi-MB line is not held twice while it is parsed: sliced again without its newline
                self._line(data[start : start + size - 1], base if fixed_offset else base + start, out)
            elif etype == CHUNK:
                chunk(obj, base if fixed_offset else base + start, out)
            elif etype.__class__ is str and etype in rows:
                row(obj, base if fixed_offset else base + start, out)
            elif (
                etype.__class__ is str
                and (sink := typed.get(etype)) is not None
                and (
                    ((declared := obj.get("seq")) == (seq := self.next_seq) + self._seq_shift and self._explicit_seq)
                    or (declared is None and self._explicit_seq is False)  # every line so far unnumbered
                )
                and ((when := obj.get("time")).__class__ is int or when is None)
                and (body := obj.get("data")).__class__ is dict
                and envelope.issuperset(obj)  # its keys (``keys() <= envelope`` costs more)
                and sink(obj, body, seq)
            ):  # validated and projected: numbered (a declared seq may be equal without being an int) and noted
                obj["seq"] = seq
                if when is None:
                    obj["time"] = 0
                if record is not None:
                    record((seq, 1, base if fixed_offset else base + start, start + at, size - 1, etype))
                self.next_seq = seq + 1
                if (told := after.get(etype)) is not None:
                    told(obj)
            else:
                event(obj, base if fixed_offset else base + start, out)
            start += size
        if run:
            if lined:
                self._note_run(seq0, run, lined, base + first, first, start - 1)
            deltas(seq0, run, turn, step, chars)  # type: ignore[misc]
        return start

    def _note_run(self, seq0: int, n: int, lines: int, offset: int, start: int, end: int) -> None:
        """Note a raw log's run of ``n`` stream deltas from ``seq0`` on as one line: its ``lines`` lines, from
        file ``offset`` (``start`` in the data fed) to ``end``."""
        if lines > 1:
            self._spans(seq0, lines)  # type: ignore[misc]
        self._record((seq0, n, offset, start, end - start, CHUNK))  # type: ignore[misc]

    def _line(self, raw: bytes | bytearray, offset: int, out: DecodeBatch) -> None:
        if self.fatal:  # the rest of a chunk after a fatal header problem is ignored; the first message stays
            return
        self._len = len(raw)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw or raw.isspace():  # not strip(): that would copy the whole line
            return
        if self.header is None and raw.startswith(b"\xef\xbb\xbf"):
            self.fatal = f"{self.name}: starts with a UTF-8 byte order mark; a DSH log is UTF-8 without one"
            return
        try:
            # Slicing a multi-MB line only helps when another thread waits for the GIL: without a pace (a CLI
            # pass, a one-shot read) one orjson call is cheaper and gives the same result.
            obj = orjson.loads(raw) if self.pace is None else bigjson.loads(raw, self.pace)
        except orjson.JSONDecodeError as exc:
            if self.header is None:
                self.fatal = f"{self.name}: {_first_line_problem(raw, exc)}"
                return
            out.diagnostics.append(
                Diagnostic(
                    "bad-json",
                    f"line is {json_line_problem(raw, exc)}; {len(raw)} bytes skipped",
                    offset,
                    self.next_seq,
                )
            )
            return
        if self.header is None:
            try:
                self.header, warnings = validate_header(obj, self.name)
            except HeaderError as exc:
                self.fatal = str(exc)
                return
            out.header = self.header
            self._session_id = self.session_id
            out.diagnostics.extend(warnings)
            if self.consumer.header is not None:
                self.consumer.header(self.header)
                self._route(out)
            return
        if not isinstance(obj, dict):
            out.diagnostics.append(
                Diagnostic(
                    "not-an-object",
                    f"line holds {kind_of(obj)}, not an event",
                    offset,
                    self.next_seq,
                )
            )
            return
        if is_packed_row(obj):
            self._row(obj, offset, out)
        else:
            self._event(obj, offset, out)

    def _check_seq(self, declared: Any, key: str, offset: int, out: DecodeBatch) -> None:
        if declared is None:
            if self._explicit_seq:
                out.diagnostics.append(
                    Diagnostic(
                        "missing-seq", f"record has no {key}; numbered {self.next_seq}", offset, self.next_seq
                    )
                )
            elif self._explicit_seq is None:
                self._explicit_seq = False
            return
        if self._explicit_seq is None:
            self._explicit_seq = True
        expected = self.next_seq + self._seq_shift
        if declared != expected:
            code = "seq-gap" if isinstance(declared, int) and declared > expected else "seq-mismatch"
            out.diagnostics.append(
                Diagnostic(
                    code,
                    f"expected {key} {expected}, found {shown(declared)}; renumbered from {self.next_seq}",
                    offset,
                    self.next_seq,
                )
            )
            if isinstance(declared, int) and not isinstance(declared, bool):
                self._seq_shift = declared - self.next_seq

    def _row(self, row: dict[str, Any], offset: int, out: DecodeBatch) -> None:
        declared = row.get("seq0")
        if declared != self.next_seq + self._seq_shift or not self._explicit_seq:  # else nothing to check
            self._check_seq(declared, "seq0", offset, out)
        time0 = row.get("time0")
        if (bad := time_problem(time0, "time0")) is not None:
            self._bad_time(row["type"], bad, offset, self.next_seq, out)
        time0 = as_time(time0)
        try:
            packed = PackedRow(row, self.next_seq, time0)
        except RecordError as exc:
            return self._bad_row(row, time0, str(exc), offset, out)
        if self._record is not None:
            self._record((self.next_seq, packed.count, offset, self._pos, self._len, "assistant/chunk"))
        self.next_seq += packed.count
        if self._row_to is not None:
            self._row_to(packed)
        elif self._packed:
            self._put(packed)
        else:
            for member in packed.events():
                self._put(member)

    def _bad_row(self, row: dict[str, Any], time0: int, problem: str, offset: int, out: DecodeBatch) -> None:
        """A malformed row: reported, and its placeholders fill the seqs it claims (``row_placeholders``)."""
        placeholders = row_placeholders(row, self.next_seq, time0, problem)
        out.diagnostics.append(
            Diagnostic("bad-row", f"{problem}; {len(placeholders)} seq(s) kept as invalid", offset, self.next_seq)
        )
        if self._record is not None and placeholders:
            self._record((self.next_seq, len(placeholders), offset, self._pos, self._len, row["type"]))
        self.next_seq += len(placeholders)
        for placeholder in placeholders:
            self._put(placeholder)

    def _event(self, ev: dict[str, Any], offset: int, out: DecodeBatch) -> None:
        seq = self.next_seq
        declared = ev.get("seq")
        if declared != seq + self._seq_shift or not self._explicit_seq:  # else nothing to check
            self._check_seq(declared, "seq", offset, out)
        if not ev.keys() <= ENVELOPE_KEYS:
            out.diagnostics.append(
                Diagnostic(
                    "bad-envelope",
                    f"unexpected envelope key(s) {', '.join(sorted(ev.keys() - ENVELOPE_KEYS))}",
                    offset,
                    seq,
                    "warning",
                )
            )
        bad_time = time_problem(ev.get("time"), "time")
        if complete_event(ev, seq, self._session_id):
            out.diagnostics.append(
                Diagnostic("no-type", "event has no string type; kept as opaque", offset, seq)
            )
        etype = ev["type"]
        if bad_time is not None:
            self._bad_time(etype, bad_time, offset, seq, out)
        if etype in KNOWN_TYPES:
            if etype == "request/header" and isinstance(ev["data"], dict) and ev["data"].get("reason") == "fallback":
                self._rejected(etype, offset, seq, out)
        elif etype in REJECTED_LEGACY_TYPES:
            self._rejected(etype, offset, seq, out)
        elif not is_known_type(etype) and ev.get("ignorable") is not True and etype not in self._warned_types:
            self._warned_types.add(etype)
            out.diagnostics.append(
                Diagnostic(
                    "unknown-type",
                    f'unknown event type {shown(etype)} without "ignorable": true (DSH would refuse it); kept opaque',
                    offset,
                    seq,
                    "info",
                )
            )
        bad = ev.get(INVALID)
        if bad is not None:
            out.diagnostics.append(
                Diagnostic("bad-event", f"{etype}: {bad}; shown as is, left out of the projection", offset, seq)
            )
        if self._record is not None:
            self._record((seq, 1, offset, self._pos, self._len, etype))
        self.next_seq += 1
        self._put(ev)
        if (told := self._told.get(etype)) is not None:
            told(ev)

    def _chunk(self, ev: dict[str, Any], offset: int, out: DecodeBatch) -> None:
        """An ``assistant/chunk`` event line. A well-formed one (the plain envelope, numbered as the stream
        expects, integer time, valid data with integer turn and step and an object chunk) gets no diagnostic
        and its ``complete_event`` changes nothing but its seq, so it goes straight to ``Consumer.chunk`` (``validate.delta_of``,
        ``validate.finish_of``); any other, and the finish chunk of a failed stream (an error, which the session facts
        gather from the events), takes ``_event``."""
        seq = self.next_seq
        try:  # four keys, of which type, seq, time and data are there: the plain envelope
            plain = len(ev) == 4 and ev["data"].__class__ is dict and ev["time"].__class__ is int
            plain = plain and ev["seq"] == seq + self._seq_shift and self._explicit_seq
        except KeyError:
            plain = False
        if not plain:
            return self._event(ev, offset, out)
        data = ev["data"]
        delta = delta_of(data)
        if delta is None:  # a step's finish chunk; a failed stream's goes with the other events (it is news)
            delta = finish_of(data)
            if delta is None or delta[2]["reason"].get("kind") == "error":
                return self._event(ev, offset, out)
        turn, step, chunk = delta
        ev["seq"] = seq  # a declared seq may be equal without being an int (True, 1.0)
        if self._record is not None:
            self._record((seq, 1, offset, self._pos, self._len, CHUNK))
        self.next_seq = seq + 1
        self._chunk_to(ev, turn, step, chunk)  # type: ignore[misc]

    @staticmethod
    def _bad_time(etype: str, problem: str, offset: int, seq: int, out: DecodeBatch) -> None:
        """Report an event's ``time`` or a row's ``time0`` that is no integer (``problem``), read as 0."""
        out.diagnostics.append(Diagnostic("bad-time", f"{etype}: {problem}; read as 0", offset, seq, "warning"))

    @staticmethod
    def _rejected(etype: str, offset: int, seq: int, out: DecodeBatch) -> None:
        out.diagnostics.append(
            Diagnostic("rejected-legacy", f"legacy {etype} shape has no upgrade path (DSH refuses it)", offset, seq)
        )


class Shifted:
    """A piece of a zstd frame's data that starts ``at`` bytes into it, sliced by where in the whole its lines are."""

    __slots__ = ("data", "at")

    def __init__(self, data: bytes, at: int) -> None:
        self.data, self.at = data, at

    def __getitem__(self, part: slice) -> bytes:
        """The bytes of the frame's data ``part`` takes (within this piece)."""
        return self.data[part.start - self.at : part.stop - self.at]


def _discard(item: Any) -> None:
    """Where decoded items go before the first ``feed``."""


_PACKERS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}  # what other tools start a file with


def _first_line_problem(raw: bytes | bytearray, exc: orjson.JSONDecodeError) -> str:
    """Why the first line, which must be the header, did not parse: a UTF-16 byte order mark (a log saved as
    UTF-16) or the magic bytes of another compressor than zstd (a log gzipped to keep it) are named as such."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "starts with a UTF-16 byte order mark; a DSH log is UTF-8"
    packer = next((name for magic, name in _PACKERS.items() if raw.startswith(magic)), None)
    if packer is not None:
        return f"is {packer}-compressed; tapedeck reads a log as it is or zstd-compressed: decompress it first"
    return f"line 1 is {json_line_problem(raw, exc)}"
