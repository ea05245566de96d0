"""The offset index: random access to event N of a huge log without keeping decoded events in memory.

Building the index does not JSON-parse ordinary lines. One compiled regular expression walks every newline
of the decompressed stream in C and captures, from the start of each line, the event type, ``seq``, and the
``turn``/``step`` that lead ``data`` in DSH's key order; packed chunk rows give their member count from the
``dt`` array. Only lines that do not fit that shape fall back to ``orjson``. Per event the index stores
20 bytes: offset (8), turn/step/type id packed in 8, and packed-row member/flags in 4; a line's length
is the distance to the next line's offset.

The file is read in 1 MB slices so that no single C call (copy, regex scan) holds the GIL for long. A line
longer than a slice is kept in pieces, never re-joined, and indexed from its first 64 KB, unless that head
cannot say what the line is (then it is joined and parsed as before).

zstd logs are indexed over their decompressed stream; a small frame table maps stream offsets back to frames,
and ``event(n)`` decompresses only the frame that holds the line (with a small LRU of decoded frames).
"""

from __future__ import annotations

import bisect
import os
import re
from array import array
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson
import zstandard

from core.log import bigjson
from core.log.decoder import LogDecoder
from core.log.frames import FrameError, FrameStream, decode_frame, frame_end
from core.log.layout import is_compressed, resolve_log_path
from core.log.records import complete_event, expand_row, is_packed_row, row_member_count
from core.log.vocabulary import PACKED_ROW_TYPES
from core.shared.errors import LogFormatError

_LINE = re.compile(
    rb'\n(?:\{"type":"([^"\\\n]{1,80})"'
    rb'(?:,"seq0?":(\d+))?(?:,"time0?":-?\d+)?'
    rb'(?:,"data":\{"turn":(\d+)(?:,"step":(\d+))?'
    rb'(?:,"index":\d+(?:,"id":"[^"\\\n]*")?(?:,"name":"[^"\\\n]*")?,"dt":\[([-\d,]*)\])?)?)?'
)
FLAG_ROW = 1
FLAG_FALLBACK = 2
FLAG_SURFACE = 4
_SURFACE = (b"user/message", b"assistant/message", b"tool/result")
CHUNK = 1 << 20  # bytes per read: each C call over a buffer (copy, regex scan) stays around a millisecond
LONG_LINE = CHUNK  # a partial line longer than this is kept in pieces: its head is enough to index it
HEAD = 1 << 16
HEAD_MARGIN = 64  # real bytes needed after the pattern's match in a head: its optional groups were decided
MAX_TURN = 0xFFFFFFFF  # the turn field of a packed meta word (larger turns are invalid events anyway)
ZSTD_CHUNK = 1 << 20  # compressed input per read: frames are small, and big buffers only fragment the heap
ProgressFn = Callable[[int, int], None]


class OffsetIndex:
    """Compact per-event metadata plus the means to decode any event on demand."""

    def __init__(self, path: Path, compressed: bool) -> None:
        self.path = path
        self.compressed = compressed
        self.header: dict[str, Any] | None = None
        self._offsets = array("Q")  # stream offset of the line holding the event
        self._meta = array("Q")  # turn << 32 | step << 16 | type id
        self._info = array("I")  # packed-row member << 16 | flags
        self.type_names: list[str] = []
        self._type_ids: dict[bytes, int] = {}
        self._frame_raw = array("Q")  # decompressed offset of each frame
        self._frame_file = array("Q")  # file offset of each frame
        self._frame_len = array("Q")  # compressed length of each frame
        self._frame_cache: OrderedDict[int, bytes] = OrderedDict()
        self._turn = 0
        self._step = 0
        self._stream_pos = 0  # decompressed bytes indexed so far (complete lines only)
        self._file_pos = 0  # file bytes consumed
        self._carry = b""  # incomplete final line (raw or decompressed) …
        self._long: list[bytes] | None = None  # … or its pieces, once it is longer than LONG_LINE
        self._frames = FrameStream() if compressed else None
        self.corrupt_frames = 0
        self._head_cache: dict[tuple[bytes | None, ...], tuple[int, int]] = {}
        self._row_info: dict[int, array[int]] = {}
        self._chunk_id = self._intern(b"assistant/chunk")
        self._turn_start_id = self._intern(b"turn/start")
        self._step_start_id = self._intern(b"step/start")
        self._step_end_id = self._intern(b"step/end")

    # size ------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index arrays (the per-frame table of a zstd log included)."""
        arrays = (self._offsets, self._meta, self._info, self._frame_raw, self._frame_file, self._frame_len)
        return sum(a.itemsize * len(a) for a in arrays)

    @property
    def file_offset(self) -> int:
        """File bytes consumed (for progress)."""
        return self._file_pos

    # per-event metadata -----------------------------------------------------------------------------------
    def type_of(self, n: int) -> str:
        """Event type of event ``n`` (``assistant/chunk`` for packed-row members)."""
        return self.type_names[self._meta[n] & 0xFFFF]

    def turn_of(self, n: int) -> int:
        """The turn in force at event ``n`` (its own ``data.turn`` when it has one)."""
        return self._meta[n] >> 32

    def step_of(self, n: int) -> int:
        """The step in force at event ``n`` (0 outside steps)."""
        return (self._meta[n] >> 16) & 0xFFFF

    def size_of(self, n: int) -> int:
        """Bytes of the line that holds event ``n`` (a packed row's size for each of its members)."""
        off = self._offsets[n]
        nxt = bisect.bisect_right(self._offsets, off)
        end = self._offsets[nxt] if nxt < len(self._offsets) else self._stream_pos
        return end - off - 1

    def is_surface(self, n: int) -> bool:
        """True for user/assistant/tool-result messages."""
        return bool(self._info[n] & FLAG_SURFACE)

    def find_type(self, names: set[str], start: int = 0, step: int = 1) -> int | None:
        """The first event index from ``start`` (moving by ``step``) whose type is in ``names``."""
        ids = {i for i, name in enumerate(self.type_names) if name in names}
        n = start
        meta = self._meta
        while 0 <= n < len(meta):
            if meta[n] & 0xFFFF in ids:
                return n
            n += step
        return None

    def seqs_of_types(self, names: Collection[str], start: int = 0) -> Iterator[int]:
        """Every event index from ``start`` on whose type is in ``names``, read from the index alone."""
        ids = {i for i, name in enumerate(self.type_names) if name in names}
        if not ids:
            return
        for n in range(start, len(self._meta)):
            if self._meta[n] & 0xFFFF in ids:
                yield n

    # decoding -----------------------------------------------------------------------------------------------
    def line(self, n: int) -> bytes:
        """The raw bytes of the line holding event ``n``."""
        off, length = self._offsets[n], self.size_of(n)
        if not self.compressed:
            with open(self.path, "rb") as f:
                f.seek(off)
                data = f.read(length)
        else:
            k = bisect.bisect_right(self._frame_raw, off) - 1
            out = bytearray(self._frame(k)[off - self._frame_raw[k] :])
            while len(out) < length and k + 1 < len(self._frame_raw):  # a line spanning frames (legal, rare)
                k += 1
                out += self._frame(k)
            data = bytes(out[:length])
        cut = data.find(b"\n")  # a skipped corrupt or blank line may follow before the next event
        return data if cut < 0 else data[:cut]

    def event(self, n: int) -> dict[str, Any]:
        """Decode event ``n`` (seq == n) in full: rows expanded, legacy shapes upgraded, envelope synthesized."""
        if n < 0:
            n += len(self)
        if not 0 <= n < len(self):
            raise IndexError(n)
        obj = bigjson.loads(self.line(n))
        info = self._info[n]
        if info & FLAG_ROW:
            member = info >> 16
            time0 = obj.get("time0")
            return expand_row(obj, n - member, time0 if isinstance(time0, int) else 0)[0][member]
        complete_event(obj, n, str((self.header or {}).get("id", "")))
        return obj

    def events(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Decode events ``start``..``stop-1``."""
        return [self.event(n) for n in range(max(0, start), min(stop, len(self)))]

    def _frame(self, k: int) -> bytes:
        cached = self._frame_cache.get(k)
        if cached is not None:
            self._frame_cache.move_to_end(k)
            return cached
        with open(self.path, "rb") as f:
            f.seek(self._frame_file[k])
            data = decode_frame(f.read(self._frame_len[k]))
        self._frame_cache[k] = data
        if len(self._frame_cache) > 8:
            self._frame_cache.popitem(last=False)
        return data

    # building ------------------------------------------------------------------------------------------------
    def extend(
        self,
        progress: ProgressFn | None = None,
        max_bytes: int | None = None,
        pace: Callable[[], None] | None = None,
    ) -> int:
        """Index whatever complete data was appended since the last call; return the number of new events.

        ``pace`` is called between reads (see ``core.log.pace``: a loader that leaves the GIL to the UI).
        """
        before = len(self)
        try:
            size = os.path.getsize(self.path)
        except OSError as exc:
            raise LogFormatError(f"{self.path}: cannot read ({exc})") from exc
        end = size if max_bytes is None else min(size, self._file_pos + max_bytes)
        with open(self.path, "rb") as f:
            f.seek(self._file_pos)
            while self._file_pos < end:
                chunk = f.read(min(CHUNK if self._frames is None else ZSTD_CHUNK, end - self._file_pos))
                if not chunk:
                    break
                self._file_pos += len(chunk)
                if self._frames is None:
                    self._scan(chunk)
                else:
                    self._feed_frames(chunk)
                if progress:
                    progress(self._file_pos, size)
                if pace is not None:
                    pace()
        return len(self) - before

    def _feed_frames(self, chunk: bytes) -> None:
        assert self._frames is not None
        for frame in self._frames.feed(chunk):
            if frame.data is None:
                self.corrupt_frames += 1
                continue
            self._frame_raw.append(self._stream_pos + self._pending)
            self._frame_file.append(frame.offset)
            self._frame_len.append(frame.length)
            self._scan(frame.data)

    def _scan(self, data: bytes) -> None:
        """Index every complete line of ``carry + data`` (a long partial line is kept in pieces, not copied)."""
        nl = data.find(b"\n")
        if nl < 0:
            self._hold(data)
            return
        if self._long is not None:
            parts, self._long = self._long, None
            pending = sum(map(len, parts))
            if self._long_line(parts, data[:nl]):
                self._stream_pos += pending + nl + 1
                data = data[nl + 1 :]
                if not data:
                    return
            else:  # the head alone cannot say what the line holds: index it from the whole line
                self._carry = b"".join(parts)
        buf = b"\n" + self._carry + data
        base = self._stream_pos - 1  # stream offset of buf[0] (the synthetic newline)
        last_nl = buf.rfind(b"\n")
        if last_nl <= 0:
            self._carry = b""
            self._hold(buf[1:])
            return
        self._carry = buf[last_nl + 1 :]
        if self.header is None:
            first = buf.find(b"\n", 1)
            self._read_header(buf[1:first])
            start = first
        else:
            start = 0
        self._lines(buf, start, last_nl, base)
        self._stream_pos = base + last_nl + 1

    def _hold(self, data: bytes) -> None:
        """Keep ``data`` as (more of) the partial final line."""
        if self._long is not None:
            self._long.append(data)
        elif len(self._carry) + len(data) > LONG_LINE:
            self._long, self._carry = [self._carry, data] if self._carry else [data], b""
        else:
            self._carry += data

    @property
    def _pending(self) -> int:
        """Bytes of the partial final line."""
        return len(self._carry) if self._long is None else sum(map(len, self._long))

    def _long_line(self, parts: list[bytes], end: bytes) -> bool:
        """Index one long line (``parts`` + ``end``) from its head alone; False when the head is not enough."""
        head = b"".join(parts)[:HEAD] if len(parts[0]) < HEAD else parts[0][:HEAD]
        if len(head) < HEAD:
            head = (head + end)[:HEAD]
        buf = b"\n" + head
        m = _LINE.match(buf)
        if self.header is None or m is None or len(buf) - m.end() < HEAD_MARGIN:
            return False  # the pattern may have stopped where the head was cut, not where the line said
        tname, turn, dt = m.group(1), m.group(3), m.group(5)
        if tname is None or (tname == b"turn/start" and turn is None):
            return False  # these read the line itself (fallback parse, turn lookup)
        if dt is None and (tname in PACKED_ROW_TYPE_BYTES or buf.startswith(b',"index":', m.end())):
            return False  # a packed row's member list may run past the head
        self._lines(buf + b"\n", 0, len(buf), self._stream_pos - 1)
        return True

    def _lines(self, buf: bytes, start: int, last_nl: int, base: int) -> None:
        """Index the lines that start after each newline of ``buf[start:last_nl]``; the hot loop of the module.

        ``base`` is the stream offset of ``buf[0]``.
        """
        offsets_append, meta_append, info_append = self._offsets.append, self._meta.append, self._info.append
        ids, rows, surface = self._type_ids, PACKED_ROW_TYPE_BYTES, _SURFACE
        turn_start, step_start, step_end = self._turn_start_id, self._step_start_id, self._step_end_id
        cur_turn, cur_step = self._turn, self._step
        # Events that carry their own turn and step need no state: their (meta, info) is cached per head.
        cache = self._head_cache
        base1 = base + 1
        # Newlines are found with ``find`` (memchr) and the pattern is only tried at each one: ``finditer`` would
        # walk every byte of the buffer in the regex engine, several times slower on lines of long payloads.
        find, match = buf.find, _LINE.match
        nl = start - 1
        while (nl := find(b"\n", nl + 1, last_nl)) >= 0:
            m = match(buf, nl, last_nl)
            assert m is not None  # every newline starts a match: all that follows it in the pattern is optional
            g = m.group(1, 3, 4, 5)
            hit = cache.get(g)
            if hit is not None:
                offsets_append(m.start() + base1)
                meta_append(hit[0])
                info_append(hit[1])
                continue
            tname, turn, step, dt = g
            pos = m.start() + 1
            if tname is None or (dt is None and tname in rows):
                self._turn, self._step = cur_turn, cur_step
                self._fallback(buf, pos, base + pos)
                cur_turn, cur_step = self._turn, self._step
                continue
            tid = ids.get(tname)
            if tid is None:
                tid = self._intern(tname)
            if tid == turn_start:
                cur_turn, cur_step = (
                    (min(int(turn), MAX_TURN) if turn is not None else self._parse_turn(buf, pos, cur_turn)),
                    0,
                )
                t, s = cur_turn, 0
            else:
                t = min(int(turn), MAX_TURN) if turn is not None else cur_turn
                s = int(step) if step is not None else cur_step
                if tid == step_start:
                    cur_step = s
                elif tid == step_end:
                    cur_step = 0
            if dt is not None and tname in rows:  # a "dt" array under another type is no row
                self._append_row(base + pos, t, s, dt.count(b",") + 2 if dt else 1)
                continue
            meta = (t << 32) | (min(s, 0xFFFF) << 16) | tid
            info = FLAG_SURFACE if tname in surface else 0
            offsets_append(base + pos)
            meta_append(meta)
            info_append(info)
            if (
                turn is not None
                and step is not None
                and tid not in (step_start, step_end)
                and len(cache) < 65536
            ):
                cache[g] = (meta, info)
        self._turn, self._step = cur_turn, cur_step

    def _append_row(self, off: int, turn: int, step: int, count: int) -> None:
        self._offsets.extend(array("Q", (off,)) * count)
        self._meta.extend(array("Q", ((turn << 32) | (min(step, 0xFFFF) << 16) | self._chunk_id,)) * count)
        info = self._row_info.get(count)
        if info is None:
            info = self._row_info[count] = array("I", ((k << 16) | FLAG_ROW for k in range(count)))
        self._info.extend(info)

    def _intern(self, tname: bytes) -> int:
        tid = len(self.type_names)
        self._type_ids[tname] = tid
        self.type_names.append(tname.decode("utf-8", "replace"))
        return tid

    @staticmethod
    def _line_at(buf: bytes, pos: int) -> bytes:
        end = buf.find(b"\n", pos)
        return buf[pos : end if end >= 0 else len(buf)]

    def _parse_turn(self, buf: bytes, pos: int, default: int) -> int:
        try:
            turn = orjson.loads(self._line_at(buf, pos)).get("data", {}).get("turn")
        except (orjson.JSONDecodeError, AttributeError):
            return default
        return _counter(turn, MAX_TURN, default)

    def _read_header(self, line: bytes) -> None:
        decoder = LogDecoder(str(self.path), False)
        decoder.feed(line + b"\n")
        if decoder.fatal:
            raise LogFormatError(decoder.fatal)
        self.header = decoder.header

    def _fallback(self, buf: bytes, pos: int, off: int) -> None:
        """Slow path for a line the fast pattern does not describe: parse it for real."""
        line = self._line_at(buf, pos)
        if not line.strip():
            return
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            return  # a corrupt line holds no event; the decoder reports it as a diagnostic
        if not isinstance(obj, dict):
            return
        tname = str(obj.get("type") or "?").encode()
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        turn = _counter(data.get("turn"), MAX_TURN, self._turn)
        step = _counter(data.get("step"), 0xFFFF, self._step)
        if tname == b"turn/start":
            self._turn, self._step, step = turn, 0, 0
        elif tname == b"step/start":
            self._step = step
        elif tname == b"step/end":
            self._step = 0
        if tname in PACKED_ROW_TYPE_BYTES:
            span = row_member_count(obj)
            if span:
                self._append_row(off, turn, step, span)
            return
        tid = self._type_ids.get(tname)
        self._offsets.append(off)
        self._meta.append(
            (turn << 32) | (min(step, 0xFFFF) << 16) | (tid if tid is not None else self._intern(tname))
        )
        self._info.append(FLAG_FALLBACK | (FLAG_SURFACE if tname in _SURFACE else 0))


PACKED_ROW_TYPE_BYTES = frozenset(t.encode() for t in PACKED_ROW_TYPES)


def head_turn_step(head: bytes) -> tuple[int | None, int | None]:
    """The ``data.turn`` and ``data.step`` a line's first bytes give, when they lead ``data`` in DSH's key order
    (as the index reads them); None for what the head does not say."""
    m = _LINE.match(b"\n" + head)
    turn, step = m.group(3, 4) if m is not None else (None, None)
    return (int(turn) if turn is not None else None), (int(step) if step is not None else None)


def _counter(value: Any, top: int, default: int) -> int:
    """A turn or step number as the index stores it: ``default`` unless a non-negative int, capped at ``top``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return default
    return min(value, top)


def build_index(path: str | os.PathLike[str], progress: ProgressFn | None = None) -> OffsetIndex:
    """Index a whole log file or session directory."""
    p = resolve_log_path(path)
    index = OffsetIndex(p, is_compressed(p))
    index.extend(progress)
    if index.header is None:
        raise LogFormatError(f"{p}: empty log (no session header)")
    return index


class IndexStore(Sequence[dict[str, Any]]):
    """A read-only ``Sequence[dict]`` over an index, with an LRU of decoded events, for ``Session(retain=False)``."""

    def __init__(self, index: OffsetIndex, cache_size: int = 512) -> None:
        self.index = index
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._cache_size = cache_size

    def __len__(self) -> int:
        return len(self.index)

    @overload
    def __getitem__(self, n: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, n: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, n: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        if n < 0:
            n += len(self)
        cached = self._cache.get(n)
        if cached is not None:
            self._cache.move_to_end(n)
            return cached
        event = self.index.event(n)
        self._cache[n] = event
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return event

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for n in range(len(self)):
            yield self[n]

    def seqs_of_types(self, names: Collection[str], start: int = 0) -> Iterator[int]:
        """Every event index from ``start`` on whose type is in ``names``, without decoding the others."""
        return self.index.seqs_of_types(names, start)


def tail_events(path: str | os.PathLike[str], n: int = 200) -> list[dict[str, Any]]:
    """The last ``n`` events of a log, read from the end of the file when possible.

    Raw logs with explicit ``seq`` are read backwards in growing blocks, so the cost depends on ``n``, not on
    the file size. zstd logs and envelope-free fixtures (whose seqs only a full count can give) are indexed.
    """
    p = resolve_log_path(path)
    events = _tail_zstd(p, n) if is_compressed(p) else _tail_raw(p, n)
    if events is not None:
        return events
    index = build_index(p)
    return index.events(len(index) - n, len(index))


def _frames_to_end(data: bytes, start: int) -> list[tuple[int, int]] | None:
    """Frame bounds from ``start`` chained exactly to the end of ``data`` (a torn last frame is dropped)."""
    bounds: list[tuple[int, int]] = []
    pos = start
    while pos < len(data):
        try:
            end = frame_end(data, pos)
        except FrameError:
            return None
        if end is None:
            return bounds if bounds else None
        bounds.append((pos, end))
        pos = end
    return bounds


def _tail_zstd(path: Path, n: int) -> list[dict[str, Any]] | None:
    """Decode only the last frames: find frame starts near the end of the file by their magic number, keep
    the earliest one whose frames chain exactly to the end of the file, and grow the window until ``n`` events
    are in. A magic number inside compressed data cannot pass the chaining check by accident in practice."""
    magic = (0xFD2FB528).to_bytes(4, "little")
    for start, data in _tail_windows(path):
        candidates = []
        at = data.find(magic)
        while at >= 0:
            candidates.append(at)
            at = data.find(magic, at + 1)
        for cand in candidates:
            bounds = _frames_to_end(data, cand)
            if bounds is not None:
                break
        else:
            bounds = None
        if bounds is not None:
            if start + bounds[0][0] == 0:
                bounds = bounds[1:]  # frame 1 holds the header
            texts: list[bytes] = []
            lines = 0
            try:
                for a, b in reversed(bounds):
                    texts.append(decode_frame(data[a:b]))
                    lines += texts[-1].count(b"\n")
                    if lines >= n:
                        break
            except zstandard.ZstdError:
                return None
            events = _events_from_lines(b"".join(reversed(texts)).split(b"\n"), n)
            if events is None or len(events) >= n or start == 0:
                return events
        elif start == 0:
            return None
    return None


def _events_from_lines(lines: list[bytes], n: int) -> list[dict[str, Any]] | None:
    """Decode complete lines into events (rows expanded); None when a line lacks an explicit seq."""
    events: list[dict[str, Any]] = []
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or obj.get("type") == "session":
            continue
        if is_packed_row(obj):
            if not isinstance(obj.get("seq0"), int):
                return None
            time0 = obj.get("time0")
            events.extend(expand_row(obj, obj["seq0"], time0 if isinstance(time0, int) else 0)[0])
        else:
            if not isinstance(obj.get("seq"), int):
                return None
            complete_event(obj, obj["seq"], "")
            events.append(obj)
    return events[-n:] if n else []


def _tail_windows(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(start, bytes from start to the end of the file)`` for windows growing 4× from 64 KiB to the whole file."""
    size = os.path.getsize(path)
    block = 1 << 16
    while True:
        start = max(0, size - block)
        with open(path, "rb") as f:
            f.seek(start)
            yield start, f.read(size - start)
        if start == 0:
            return
        block *= 4


def _tail_raw(path: Path, n: int) -> list[dict[str, Any]] | None:
    for start, data in _tail_windows(path):
        lines = data[: data.rfind(b"\n") + 1].split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first line may be cut
        events = _events_from_lines(lines, n)
        if events is None or len(events) >= n or start == 0:
            return events
    return None
