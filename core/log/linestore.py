"""Events read back by seq from where their lines are, for a session projected in one streaming pass.

While the decoder reads a log it tells a ``LineStore`` where each record line sits (``Consumer.record``):
its first seq, the file offset of the line (raw) or of the zstd frame it starts in, where it starts in that
frame's data (zstd only), its length and its events' type. That is 22 bytes per line, 26 for zstd (a packed row
of hundreds of chunk deltas is one line), so a pass over a log of any size can still hand a policy any event it
asks for: the line is read again, decoded by the same code as in the pass, and kept in a small cache of recent
lines. Nothing else is held, but what a caller ``keep``s: events it reads over and over (the surface's, while
they are on it). Readers get each event through the validated view (``core.log.validate.readable``); ``raw``
gives it as decoded, for what displays it.

The decoder notes each line by extending a flat list with one tuple (a C call: the pass pays next to nothing
per line); the table takes the notes in, a column at a time, whenever it is read. In a raw log a run of stream
deltas on consecutive lines (``Consumer.spans``) is noted as one line that spans them all: the table holds a
row per run, not per delta line, and reading one of its events back decodes the run's lines (``_Run``). The decoder may be a
``Tailer``'s, which goes on noting appends; reads may come from other threads meanwhile (the TUI's workers), so
taking notes in and reading back hold a lock. Told which file the pass reads (``read_from``), it reads back from
no other: a log replaced at its path since is an error.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Collection, Iterator
from itertools import islice
from operator import itemgetter, le, lt
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from core.log.decoder import CHUNK, Consumer, LogDecoder
from core.log.records import PackedRow
from core.log.store import KeepingEvents
from core.log.validate import as_time, readable
from core.shared.errors import LogFormatError, replaced_while_read
from core.shared.records import record
from core.shared.regular import open_regular
from core.shared.text import quoted_path

if TYPE_CHECKING:
    from zstandard import ZstdDecompressor

BLOCK = 1 << 18  # bytes read at once: sequential look-ups of small lines are served from one block
SHIFT = 14  # the line table grows in blocks of 2**SHIFT lines
CACHE_BYTES = 4 << 20  # raw bytes of decoded lines kept, most recent first
CACHE_LINES = 256
HEAD = 1 << 12  # bytes of a line read to tell its turn and step without decoding it
MAX_LENGTH = 0xFFFFFFFF  # the length column's top (a longer line is reported at this length)
FIELDS = 6  # the fields of one ``RecordNote``
TYPE_IDS = 0xFFFF  # type names a 16-bit type column numbers (a log of more widens it to 32 bits)
# Placeholders the notes list holds ahead of the notes once a take brought in ``SPARE_FROM`` fields or more (a long
# pass's: a small log's table, one of the many a fleet follows, holds none): taking the notes out leaves the list at
# least half its size, so CPython keeps its storage instead of freeing it and growing it again a note at a time (a
# reallocation and a copy of the list every few notes: +7.5 M instructions on 100 MB dsh-plain). A pass takes its
# notes about every 2,600 fields (``core.read.load.NOTES_HELD`` and a 1 MiB read): room for batches up to about
# 9,500 (96 KiB).
SPARE = FIELDS << 11
SPARE_FROM = FIELDS << 8
# The turn and step a line's head gives when they lead ``data`` in DSH's key order (after type, seq and time).
_HEAD_TURN_STEP = re.compile(
    rb'\{"type":"[^"\\\n]{1,80}"(?:,"seq0?":\d+)?(?:,"time0?":-?\d+)?(?:,"data":\{"turn":(\d+)(?:,"step":(\d+))?)?'
)


class RecordSource(Protocol):
    """What decodes the log a ``LineStore`` describes: a ``LogDecoder``, or a ``Tailer`` (which hands its
    consumer to each decoder it starts)."""

    consumer: Consumer

    @property
    def header(self) -> dict[str, Any] | None:
        """The log's header once decoded, else None."""

    @property
    def compressed(self) -> bool:
        """Whether the log is zstd frames rather than raw lines."""


@record(frozen=True, slots=True)
class LineFacts:
    """What the line table says of one event's line without decoding it, plus its head's own turn and step."""

    type: str
    nbytes: int
    turn: int | None
    step: int | None


class _Column:
    """One column of the line table: numbers of one machine type in blocks of 2**SHIFT lines, each after the first
    allocated once at full size, so a table of millions of lines grows without reallocating one big array (each
    reallocation leaves a hole in the heap: +20 MB of RSS on a 500 MB log); the first grows with the lines to that
    size (a small log's table, one of the many a fleet follows, stays small)."""

    __slots__ = ("code", "blocks")

    def __init__(self, code: str) -> None:
        self.code = code
        self.blocks: list[array[int]] = []

    def put(self, start: int, values: array[int]) -> None:
        """Write ``values`` from row ``start`` (the rows filled so far) on, adding blocks as they fill up."""
        done = 0
        while done < len(values):
            k, i = divmod(start + done, 1 << SHIFT)
            if k == len(self.blocks):
                self.blocks.append(array(self.code, bytes(values.itemsize << SHIFT)) if k else array(self.code))
            take = min((1 << SHIFT) - i, len(values) - done)
            block = self.blocks[k]
            if len(block) < i + take:  # the first block, twice as big or as needed: a copy, not resized in place,
                grown = array(self.code, block)  # so that the views ``table`` gave of it stay valid
                grown.frombytes(bytes(block.itemsize * (min(max(i + take, 2 * len(block)), 1 << SHIFT) - len(block))))
                self.blocks[k] = block = grown
            block[i : i + take] = values[done : done + take]
            done += take

    def __getitem__(self, k: int) -> int:
        return self.blocks[k >> SHIFT][k & ((1 << SHIFT) - 1)]

    def __len__(self) -> int:
        return sum(map(len, self.blocks))

    def bisect_right(self, value: int, hi: int) -> int:
        """``bisect.bisect_right(self, value, 0, hi)`` of a column ascending over its first ``hi`` rows, done in C
        on the block that holds the answer (one ``__getitem__`` per row looked at costs a Python call each)."""
        if hi <= 0:
            return 0
        last = (hi - 1) >> SHIFT  # the block of row hi - 1: the ones before it are full
        k = bisect.bisect_right(self.blocks, value, 0, last + 1, key=itemgetter(0)) - 1
        if k < 0:
            return 0
        stop = hi - (k << SHIFT) if k == last else 1 << SHIFT
        return (k << SHIFT) + bisect.bisect_right(self.blocks[k], value, 0, stop)

    def widen(self, code: str) -> None:
        """Hold values of the wider machine type ``code`` from now on, the values so far kept."""
        self.blocks = [array(code, block) for block in self.blocks]
        self.code = code

    @property
    def nbytes(self) -> int:
        """Bytes of its blocks."""
        return sum(block.itemsize * len(block) for block in self.blocks)


class LineStore(KeepingEvents):
    """A read-only ``Sequence[dict]`` of a log's events (seq == position), filled by its decoder as it reads."""

    def __init__(self, path: Path, decoder: RecordSource) -> None:
        """Take down where ``decoder`` finds each record line of the log at ``path`` from now on."""
        super().__init__()
        self.path = path
        self.compressed = decoder.compressed
        self._source = decoder
        # unsigned columns: an array takes a list of unsigned ints in C, and signed ones through argument parsing
        self._seq0, self._offset, self._pos, self._type = _Column("Q"), _Column("Q"), _Column("I"), _Column("H")
        self._length = _Column("I")
        self._lines_seen = 0
        # ``_spare`` placeholders (``SPARE``), then the fields of each ``RecordNote`` not taken in yet, one after another
        self.noted: list[Any] = []
        self._spare = 0
        self._type_ids: dict[str, int] = {}
        self.type_names: list[str] = []
        self._end = 0
        self._reader: LogDecoder | None = None
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file the pass reads, once told
        self._at = _LineReader(path)  # the look-ups' reader (a scan has its own)
        self._lines: OrderedDict[int, tuple[list[Any] | _Run, int]] = OrderedDict()
        self._spans: dict[int, int] = {}  # first seq of a row that spans several lines (a run of deltas): how many
        self._cached = 0
        self.decodes = 0  # lines read back and decoded again (cache misses): what a look-up costs, counted
        self._lock = threading.Lock()
        decoder.consumer.record = self.noted.extend
        decoder.consumer.spans = self._spans.__setitem__

    def read_from(self, fd: int) -> None:
        """Read lines back only from the file open as ``fd`` (the one the pass reads): a look-up that finds another
        file at the path (the log replaced meanwhile) is an error, not a read of that file."""
        st = os.fstat(fd)
        with self._lock:
            self._identity = (st.st_dev, st.st_ino)
            self._at.close()
            self._at.identity = self._identity

    def pending(self) -> int:
        """Fields of the lines noted and not taken in yet."""
        return len(self.noted) - self._spare

    def take_notes(self) -> None:
        """Take in every line the decoder noted so far (every read does; a long pass that reads nothing back
        calls it now and then, so that notes do not pile up)."""
        if len(self.noted) > self._spare:
            with self._lock:
                self._take_notes()

    def _take_notes(self) -> None:
        """Move the noted lines into the table, a column at a time (the caller holds the lock). The decoder may
        append notes meanwhile: those after the ones taken stay for the next time."""
        noted, spare = self.noted, self._spare
        taken = len(noted)  # whole notes only: each extend adds one note's fields at once
        if taken == spare:
            return
        seq0, offsets = noted[spare:taken:FIELDS], noted[spare + 2 : taken : FIELDS]
        lengths, types = noted[spare + 4 : taken : FIELDS], noted[spare + 5 : taken : FIELDS]
        count = noted[taken - 5]  # the last note's
        pos = noted[spare + 3 : taken : FIELDS] if self.compressed else None
        del noted[spare:taken]
        if not spare and taken >= SPARE_FROM:  # a long pass's take: its list keeps its storage from now on
            noted[:0] = [None] * SPARE
            self._spare = SPARE
        try:
            tids = itemgetter(*types)(self._type_ids)
        except KeyError:  # a type not seen before: numbered in the order of its first line (not a set's hash order)
            for name in dict.fromkeys(types):
                if name not in self._type_ids:
                    self._type_ids[name] = len(self.type_names)
                    self.type_names.append(name)
            tids = itemgetter(*types)(self._type_ids)
        start = self._lines_seen
        self._seq0.put(start, _array("Q", seq0))
        self._offset.put(start, _array("Q", offsets))
        if len(self.type_names) > TYPE_IDS and self._type.code == "H":  # a log of more types than 16 bits number
            self._type.widen("I")
        tids = (tids,) if len(types) == 1 else tids
        self._type.put(start, _u16(tids) if self._type.code == "H" else array("I", tids))
        if max(lengths) > MAX_LENGTH:
            lengths = [min(length, MAX_LENGTH) for length in lengths]
        self._length.put(start, _array("I", lengths))
        if pos is not None:  # where a raw log's line starts is its offset alone
            self._pos.put(start, _array("I", pos))
        self._lines_seen = start + len(seq0)  # last: a reader that finds a line finds all of its columns
        self._end = seq0[-1] + count  # the last line's first seq and count

    def table(self) -> tuple[dict[str, Any], dict[str, list[memoryview]]]:
        """The line table as plain data and columns (each the machine integers it holds, as views of the column's
        blocks, which a column never resizes in place (a first block that grows is a new copy; a view keeps the
        one it was taken of, whose lines stay as they were): nothing is copied; a compressor
        takes ascending seqs and offsets down to about what their differences would, and building the
        differences would cost a Python integer per line), for the persistent index; ``restore`` takes it
        back."""
        with self._lock:
            self._take_notes()
            n = self._lines_seen
            columns = {name: _views(column, n) for name, column in self._columns().items()}
            spans = sorted(self._spans.items())
            return {"lines": n, "end": self._end, "types": list(self.type_names), "spans": spans}, columns

    def restore(self, table: dict[str, Any], columns: dict[str, bytes | memoryview], size: int) -> None:
        """Fill this empty table from ``table()``'s output for the first ``size`` bytes of the log; raises
        ValueError (the table is left empty) when it does not describe such a table."""
        n, end, types, spans = table["lines"], table["end"], table["types"], table["spans"]
        if type(n) is not int or type(end) is not int or type(types) is not list or n < 0 or type(spans) is not list:
            raise ValueError("not a line table")
        if not all(type(name) is str for name in types) or len(set(types)) != len(types) or len(types) > max(n, 1):
            raise ValueError("bad type names")
        if len(types) > TYPE_IDS:
            self._type.widen("I")
        values: dict[str, array[int]] = {}
        for name, column in self._columns().items():
            data = array(column.code)
            data.frombytes(columns[name])
            if len(data) != n:
                raise ValueError(f"column {name} holds {len(data)} lines, not {n}")
            # each line starts after the one before, and holds seqs after the ones before it (compared in C)
            if name in ("seq0", "offset") and not all(map(lt if name == "seq0" else le, data, islice(data, 1, None))):
                raise ValueError(f"the line table's {name} column is out of order")
            values[name] = data
        if n and (values["seq0"][-1] >= end or values["offset"][-1] >= size or max(values["type"]) >= len(types)):
            raise ValueError("the line table reaches beyond the log")
        if end and not n:
            raise ValueError("events without lines")
        seq0 = values["seq0"]
        for span in spans:  # each the first seq of a row of a raw log, and more than one line
            if type(span) is not list or len(span) != 2 or not all(type(value) is int for value in span):
                raise ValueError("not a span")
            k = bisect.bisect_left(seq0, span[0])
            if self.compressed or k == n or seq0[k] != span[0] or span[1] < 2:
                raise ValueError("a span of no row")
        for name, column in self._columns().items():
            column.put(0, values[name])
        self.type_names = list(types)
        self._type_ids = {name: i for i, name in enumerate(types)}
        self._spans.update(spans)
        self._lines_seen, self._end = n, end

    def _columns(self) -> dict[str, _Column]:
        """The table's columns by name (a zstd log's also say where each line starts in its frame)."""
        columns = {"seq0": self._seq0, "offset": self._offset, "type": self._type, "length": self._length}
        if self.compressed:
            columns["pos"] = self._pos
        return columns

    @property
    def nbytes(self) -> int:
        """Bytes held by the line table."""
        self.take_notes()
        columns = (self._seq0, self._offset, self._pos, self._type, self._length)
        return sum(column.nbytes for column in columns) + sys.getsizeof(self._spans)

    def __len__(self) -> int:
        self.take_notes()
        return self._end


    def raw(self, n: int) -> dict[str, Any]:
        """Event ``n`` as decoded, flagged or not (readers get ``readable`` of it): for what displays it."""
        if n < 0:
            n += len(self)
        kept = self._kept.get(n)
        if kept is not None:
            return kept
        k = self._line_of(n)
        with self._lock:
            seq0, items, _, _ = self._line(k, n)
        first = items[0]
        if type(first) is PackedRow:
            return first.event(n - first.seq0)
        return items[n - seq0]  # type: ignore[no-any-return]

    def run_head(self, n: int) -> dict[str, Any] | None:
        """``self[n]`` for the first seq of the run of stream deltas the decoder handed over last, made from the
        line as the decoder parsed it: a packed row's first member, or the chunk event itself (a run's chunk
        passed every check, so decoding it again changes nothing). None for any other seq, or a line numbered
        unlike its seq (it is read back)."""
        head = getattr(self._source, "run_head", None)
        if head is None or n in self._kept:
            return None
        if head.get("type") == CHUNK:
            return readable(head) if head.get("seq") == n and type(head["seq"]) is int else None
        if head.get("seq0") != n or type(head["seq0"]) is not int:
            return None
        return readable(PackedRow(head, n, as_time(head.get("time0"))).event(0))

    def _line_of(self, n: int) -> int:
        """The line table row of the line holding seq ``n`` (IndexError when no line does yet)."""
        self.take_notes()
        if not 0 <= n < self._end:
            raise IndexError(n)
        return self._seq0.bisect_right(n, self._lines_seen) - 1

    def size_of(self, n: int) -> int:
        """Bytes of the line holding seq ``n`` (a packed row's size for each of its members)."""
        k = self._line_of(n)
        if self._seq0[k] not in self._spans:
            return self._length[k]
        with self._lock:
            return self._line(k, n)[3]

    def line_facts(self, n: int) -> LineFacts:
        """Type, size, and the head's own ``data.turn``/``data.step`` of seq ``n``'s line, reading at most
        ``HEAD`` bytes of it (a zstd line: the frame it starts in): for lines too big to decode for a summary."""
        k = self._line_of(n)
        with self._lock:
            if self._seq0[k] in self._spans:  # a delta line of a run: decoded with the run, to find where it is
                _, _, offset, size = self._line(k, n)
            else:
                offset, size = self._offset[k], self._length[k]
            head = self._raw(self._at, k, HEAD) if self.compressed else self._at.read(offset, HEAD)
        turn, step = head_turn_step(head[:size])
        return LineFacts(self.type_names[self._type[k]], size, turn, step)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for n in range(len(self)):
            yield self[n]

    def seqs_of_types(self, names: Collection[str], start: int = 0) -> Iterator[int]:
        """Every seq from ``start`` on whose event type is in ``names``, from the line table alone."""
        for seqs, _ in self.lines_of_types(names, start):
            yield from seqs

    def lines_of_types(self, names: Collection[str], start: int = 0) -> Iterator[tuple[range, int]]:
        """The seqs from ``start`` on of each line whose event type is in ``names`` (a packed row's members, one
        event's seq) and the line's bytes (a run of deltas: its first line's), from the line table alone."""
        self.take_notes()
        ids = {i for i, name in enumerate(self.type_names) if name in names}
        if not ids:
            return
        seq0, types, lengths, lines = self._seq0, self._type, self._length, self._lines_seen
        for k in range(max(0, seq0.bisect_right(start, lines) - 1), lines):
            if types[k] in ids:
                stop = seq0[k + 1] if k + 1 < lines else self._end
                yield range(max(seq0[k], start), stop), lengths[k]

    def close(self) -> None:
        """Close the file handle look-ups opened (the next look-up opens it again)."""
        self._at.close()

    # reading back -----------------------------------------------------------------------------------------
    def _line(self, k: int, n: int) -> tuple[int, list[Any], int, int]:
        """The first seq, the items (a ``PackedRow``, or its events), the file offset (zstd: of its frame) and the
        bytes of the line of row ``k`` that holds seq ``n``, through the cache of recent rows (the caller holds
        the lock)."""
        hit = self._lines.get(k)
        if self._reader is None:
            self._reader = self._decoder()
        if self._seq0[k] in self._spans:  # a run: its lines decoded as far as seq ``n``
            run = hit[0] if hit is not None else _Run(self._seq0[k], self._offset[k], self._spans[self._seq0[k]])
            assert type(run) is _Run
            if hit is None or n >= run.seq:
                self._grow(run, self._at, self._reader, k, n)
                self._cache(k, run, run.nbytes)
            else:
                self._lines.move_to_end(k)
            return run.line(n)
        if hit is not None:
            self._lines.move_to_end(k)
            found = hit[0]
        else:
            raw = self._raw(self._at, k)
            found = self._decode(self._at, self._reader, raw, k)
            self.decodes += 1
            self._cache(k, found, len(raw))
        return self._seq0[k], found, self._offset[k], self._length[k]  # type: ignore[return-value]

    def _grow(self, run: _Run, reader: _LineReader, decoder: LogDecoder, k: int, n: int | None = None) -> _Run:
        """Decode the next lines of ``run``, row ``k`` (a run of stream deltas on consecutive lines of a raw log),
        up to the one that holds seq ``n`` (all of them without ``n``)."""
        while run.left and (n is None or n >= run.seq):
            raw = reader.line(run.at)
            items = self._decode(reader, decoder, raw, k, run.seq)
            self.decodes += 1
            run.add(items, min(len(raw), MAX_LENGTH), len(raw) + 1)
        stop = self._seq0[k + 1] if k + 1 < self._lines_seen else self._end
        if run.seq > stop or (not run.left and run.seq != stop):
            what = f"the lines at offset {self._offset[k]} no longer hold seqs {self._seq0[k]} to {stop}"
            raise self._gone(reader, k, what)
        return run

    def _cache(self, k: int, found: list[Any] | _Run, size: int) -> None:
        """Keep what row ``k`` decodes to (again, when a run decoded more of its lines), dropping the oldest rows
        beyond the cache's bounds."""
        old = self._lines.pop(k, None)
        if old is not None:
            self._cached -= old[1]
        self._lines[k] = (found, size)
        self._cached += size
        while self._lines and (self._cached > CACHE_BYTES or len(self._lines) > CACHE_LINES) and len(self._lines) > 1:
            _, (_, size) = self._lines.popitem(last=False)
            self._cached -= size

    def _decoder(self) -> LogDecoder:
        header = self._source.header
        assert header is not None
        return LogDecoder.for_records(str(self.path), header)

    def _decode(
        self, reader: _LineReader, decoder: LogDecoder, raw: bytes, k: int, seq: int | None = None
    ) -> list[Any]:
        """What line ``k`` (its bytes ``raw``, read through ``reader``) decodes to at its first seq (or, in a
        run, ``seq``); a line that no longer holds its seq is an error."""
        seq = self._seq0[k] if seq is None else seq
        items = decoder.decode_record(raw, seq)
        if not items:
            raise self._gone(reader, k, f"the line at offset {self._offset[k]} no longer holds seq {seq}")
        return items

    def _gone(self, reader: _LineReader, k: int, what: str) -> LogFormatError:
        """The error for row ``k``, whose line no longer holds ``what`` the pass read there: the log, as
        ``reader`` finds it, was cut short since (it ends before the line does) or written over; either way it
        is to be read again."""
        size = reader.size()
        held = self._offset[k] + (1 if self.compressed else self._length[k])
        how = f"truncated to {size:,} bytes" if size < held else "written over"
        why = f"the log was {how} since it was read: read it again"
        return LogFormatError(f"{quoted_path(self.path)}: {what} ({why})")

    def _raw(self, reader: _LineReader, k: int, limit: int | None = None) -> bytes:
        """Line ``k``'s bytes through ``reader`` (with ``limit``, zstd: at least that many of its first bytes)."""
        if self.compressed:
            return reader.frame_line(self._offset[k], self._pos[k], limit)
        return reader.line(self._offset[k])

    def iter_raw(self, start: int, stop: int) -> Iterator[dict[str, Any]]:
        """Events ``start``..``stop-1`` as ``raw`` gives them, reading their lines in order from the one that
        holds ``start`` with a reader and decoder of the scan's own (a long scan neither waits on the look-ups'
        lock nor evicts their cache)."""
        stop = min(stop, len(self))
        if start >= stop:
            return
        k = self._line_of(start)
        reader, decoder, kept = _LineReader(self.path, self._identity), self._decoder(), self._kept
        seq = start
        try:
            while seq < stop:
                if self._seq0[k] in self._spans:
                    seq0 = self._seq0[k]
                    lines = self._grow(_Run(seq0, self._offset[k], self._spans[seq0]), reader, decoder, k).lines()
                else:
                    lines = [(self._seq0[k], self._decode(reader, decoder, self._raw(reader, k), k))]
                for seq0, items in lines:
                    first = items[0]
                    row = first if type(first) is PackedRow else None
                    end = min(stop, seq0 + (row.count if row is not None else len(items)))
                    for n in range(seq, end):
                        event = kept.get(n)
                        if event is None:
                            event = row.event(n - seq0) if row is not None else items[n - seq0]
                        yield event
                    seq = max(seq, end)
                    if seq >= stop:
                        break
                k += 1
        finally:
            reader.close()


class _Run:
    """The lines of a run of stream deltas the line table holds as one row, decoded from its start as far as a
    read needed: each line's first seq, its items (a ``PackedRow``, or its events), file offset and bytes; ``seq``
    and ``at`` are where the next line starts, ``left`` how many lines are still to decode."""

    __slots__ = ("seqs", "items", "offsets", "sizes", "seq", "at", "left", "nbytes")

    def __init__(self, seq: int, at: int, lines: int) -> None:
        self.seqs: list[int] = []
        self.items: list[list[Any]] = []
        self.offsets: list[int] = []
        self.sizes: list[int] = []
        self.seq, self.at, self.left = seq, at, lines
        self.nbytes = 0  # bytes of its decoded lines (kept as they are added: a run read line by line is cached
        # again after each, and summing its sizes each time would cost the square of its length)

    def add(self, items: list[Any], size: int, step: int) -> None:
        """Add the next line: its items, its bytes, and how far on the line after it starts."""
        self.seqs.append(self.seq)
        self.items.append(items)
        self.offsets.append(self.at)
        self.sizes.append(size)
        self.nbytes += size
        self.seq += items[0].count if type(items[0]) is PackedRow else len(items)
        self.at += step
        self.left -= 1

    def line(self, n: int) -> tuple[int, list[Any], int, int]:
        """The first seq, items, file offset and bytes of the decoded line that holds seq ``n``."""
        i = bisect.bisect_right(self.seqs, n) - 1
        return self.seqs[i], self.items[i], self.offsets[i], self.sizes[i]

    def lines(self) -> list[tuple[int, list[Any]]]:
        """Each decoded line's first seq and items, in order."""
        return list(zip(self.seqs, self.items, strict=True))


class _LineReader:
    """Reads lines of a log by where the line table says they are, with a file handle and the last block (raw)
    or frame (zstd) of its own, so that lines read in order are served from one read."""

    def __init__(self, path: Path, identity: tuple[int, int] | None = None) -> None:
        """Read the log at ``path``; with ``identity`` (device, inode), only while that file is the one there."""
        self.path = path
        self.identity = identity
        self._file: BinaryIO | None = None
        self._block: tuple[int, bytes] = (0, b"")  # (file offset, bytes) of the last read
        self._frames: dict[int, bytes] = {}  # zstd: the data of the small frames the last read decoded
        self._frame: _Frame | None = None  # zstd: the big frame the last line came from, decoded as far as it
        self._context: ZstdDecompressor | None = None  # zstd: what decodes ``_frame``

    def close(self) -> None:
        """Close the file handle (the next read opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _handle(self) -> BinaryIO:
        if self._file is None:
            try:  # kept open across look-ups (close() ends it); a FIFO swapped in for the log is not waited on
                f = open_regular(self.path)
                st = os.fstat(f.fileno())
            except OSError as exc:
                raise self._unreadable(exc) from exc
            if self.identity is not None and (st.st_dev, st.st_ino) != self.identity:
                f.close()
                raise replaced_while_read(self.path)
            self._file = f
        return self._file

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes from ``offset`` (fewer at the end of the file), read now."""
        f = self._handle()
        try:  # a disk's I/O error is the log's, not the output's the command writes
            f.seek(offset)
            return f.read(size)
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def size(self) -> int:
        """The size of the file read, now."""
        try:
            return os.fstat(self._handle().fileno()).st_size
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: OSError) -> LogFormatError:
        """The error an open or read of the log that failed with ``exc`` raises."""
        return LogFormatError(f"{quoted_path(self.path)}: cannot read ({exc.strerror or exc})")

    def piece(self, offset: int) -> bytes:
        """Bytes from ``offset`` on: the rest of the last block read when it holds ``offset``, else a new block
        (empty at the end of the file)."""
        start, block = self._block
        if 0 <= offset - start < len(block):
            return block[offset - start :]
        block = self.read(offset, BLOCK)
        self._block = (offset, block)
        return block

    def view(self, offset: int) -> memoryview:
        """``piece``, as a view of the block read (not a copy of its rest)."""
        start, block = self._block
        if not 0 <= offset - start < len(block):
            block = self.read(offset, BLOCK)
            self._block = (start, block) = (offset, block)
        return memoryview(block)[offset - start :]

    def line(self, offset: int) -> bytes:
        """The line starting at file ``offset`` of a raw log, without its newline."""
        start, block = self._block
        at = offset - start
        if 0 <= at < len(block) and (nl := block.find(b"\n", at)) >= 0:
            return block[at:nl]
        parts = []
        at = offset
        while piece := self.piece(at):
            nl = piece.find(b"\n")
            if nl >= 0:
                parts.append(piece[:nl])
                break
            parts.append(piece)
            at += len(piece)
        return b"".join(parts)

    def frame_line(self, offset: int, pos: int, limit: int | None = None) -> bytes:
        """The line at ``pos`` of the data of the zstd frame at ``offset``: from there on through later frames
        (corrupt ones skipped, a torn final frame recovered) to its newline, as the decoder joined it; with
        ``limit``, at least that many of its first bytes (more when at hand). A frame whose header says it decodes
        to ``WINDOW`` bytes or less (DSH writes one per append batch) is decoded whole with those after it in the
        block read, and kept for the next lines (``_frames_line``); a bigger one, or one that does not say, only as
        far as the line (``_Frame``), and whole only when the line does not end in it."""
        data = self._frames.get(offset)
        if data is not None and (nl := data.find(b"\n", pos)) >= 0:
            return data[pos:nl]
        import zstandard  # a zstd log's alone

        from core.log.frames import WINDOW

        try:
            size = zstandard.frame_content_size(self.view(offset)[:18])  # a header is 18 bytes at most
        except zstandard.ZstdError:
            size = -1
        if 0 <= size <= WINDOW:
            return self._frames_line(offset, pos, limit)
        frame = self._frame
        if frame is None or frame.offset != offset or pos < frame.start:
            if self._context is None:
                # a context of its own: the thread's may decode other frames between two lines read from this one
                self._context = zstandard.ZstdDecompressor()
            frame = self._frame = _Frame(offset, self._context)
        line = frame.line(self, pos, limit)
        return line if line is not None else self._frames_line(offset, pos, limit)

    def _frames_line(self, offset: int, pos: int, limit: int | None) -> bytes:
        """``frame_line`` with every frame it reads decoded whole: the frame at ``offset`` and those after it
        until the line ends (those of the first block read are kept for the next lines)."""
        from core.log.frames import FrameStream, recover_lines  # a zstd log's alone

        stream = FrameStream(offset)
        parts: list[bytes] = []
        got = 0
        first = True
        at = offset
        while True:
            chunk = self.piece(at)
            at += len(chunk)
            if chunk:
                frames = [(frame.offset, frame.data) for frame in stream.feed(chunk) if frame.data is not None]
            else:
                frames = [(stream.pending_offset, recover_lines(stream.pending_bytes()))] if stream.pending else []
            if first:  # the frames of the first read: the next lines of a scan are most likely in them
                self._frames = dict(frames)
            for start, data in frames:
                if first:
                    if start != offset:
                        continue  # a corrupt frame where the line was is gone: it is not in these
                    data = data[pos:]
                    first = False
                nl = data.find(b"\n")
                if nl >= 0:
                    parts.append(data[:nl])
                    return b"".join(parts)
                parts.append(data)
                got += len(data)
                if limit is not None and got >= limit:
                    return b"".join(parts)
            if not chunk:
                return b"".join(parts)


class _Frame:
    """A zstd frame of the log (one past a ``WINDOW``, or that does not say its size) decoded from its start only
    as far as the lines read from it so far: where it starts in the file, the decompressor part way through it,
    the file offset of its compressed bytes not read yet and those read and not fed, and its decoded bytes from
    frame data position ``start`` on (about a ``WINDOW`` of them before the last line read is kept, so lines read
    in order, or a little back, go on from there)."""

    __slots__ = ("offset", "decoder", "at", "fed", "data", "start", "ended")

    def __init__(self, offset: int, context: ZstdDecompressor) -> None:
        """The frame at file ``offset``, decoded with ``context`` (its reader's: one frame at a time uses it)."""
        self.offset = offset
        self.decoder = context.decompressobj()
        self.at = offset
        self.fed = memoryview(b"")  # compressed bytes read and not fed yet (from ``at - len(fed)`` on)
        self.data = bytearray()
        self.start = 0
        self.ended = False  # decoded to its end, or the file ends inside it, or it does not decode

    def line(self, reader: _LineReader, pos: int, limit: int | None) -> bytes | None:
        """The line at ``pos`` of the frame's data up to its newline (with ``limit``: at least that many of its
        first bytes), decoding more of the frame through ``reader`` as needed; None when the frame's data (all of
        it that decodes) holds no newline after ``pos`` and falls short of ``limit``: the line is not all in this
        frame, or not there at all."""
        import zstandard

        from core.log.frames import FRAME_LIMIT, SLICE, WINDOW

        data = self.data
        seen = pos  # where in the frame's data the newline is still to be looked for
        while True:
            # what lies before the line is let go as it is decoded, but for a window's worth: a window at a time,
            # so that what is kept is moved (when ``data`` grows past what it has room for) once a window read
            if pos - self.start > 2 * WINDOW and (drop := min(pos - self.start - WINDOW, len(data))) > 0:
                del data[:drop]
                self.start += drop
            at = pos - self.start  # where the line starts in ``data``
            if len(data) > at:
                nl = data.find(b"\n", seen - self.start)
                if nl >= 0 or (limit is not None and len(data) - at >= limit):
                    with memoryview(data) as view:  # one copy (``data`` may grow again once it is let go)
                        return bytes(view[at : nl if nl >= 0 else len(data)])
                seen = self.start + len(data)
            if self.ended:
                return None
            if not self.fed:  # the next compressed bytes: the rest of the reader's block, or a new block
                self.fed = reader.view(self.at)
                if not self.fed:  # the file ends inside the frame (a torn final frame)
                    self.ended = True
                    return None
                self.at += len(self.fed)
            try:
                data += self.decoder.decompress(self.fed[:SLICE])
            except zstandard.ZstdError:
                self.ended = True
                return None
            self.fed = self.fed[SLICE:]
            if self.decoder.eof:  # decoded to its end (its checksum checked)
                self.ended = True
            elif self.start + len(data) > FRAME_LIMIT:  # the pass took it for a corrupt frame
                self.ended = True
                return None


def _array(code: str, values: list[int]) -> array[int]:
    """``array(code, values)`` through ``fromlist``, which reads the list's items directly: the constructor takes
    each through the sequence protocol (40 % slower for a take's 2,600 values)."""
    made = array(code)
    made.fromlist(values)
    return made


def _u16(values: tuple[int, ...]) -> array[int]:
    """``array("H", values)``, built in C when every value is below 256 (type ids are): the array type parses
    each member of a list of ints for a 16-bit type as a function argument."""
    try:
        small = bytes(values)
    except ValueError:
        return array("H", values)
    wide = bytearray(2 * len(small))
    wide[0 if sys.byteorder == "little" else 1 :: 2] = small
    return array("H", wide)


def _views(column: _Column, n: int) -> list[memoryview]:
    """The first ``n`` values of ``column``, as views of its blocks."""
    out: list[memoryview] = []
    for block in column.blocks:
        if n <= 0:
            break
        out.append(memoryview(block)[:n])
        n -= len(block)
    return out


def head_turn_step(head: bytes) -> tuple[int | None, int | None]:
    """The ``data.turn`` and ``data.step`` a line's first bytes give, when they lead ``data`` in DSH's key order;
    None for what the head does not say."""
    m = _HEAD_TURN_STEP.match(head)
    turn, step = m.group(1, 2) if m is not None else (None, None)
    return (int(turn) if turn is not None else None), (int(step) if step is not None else None)
