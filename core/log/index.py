"""The offset index: random access to event N of a huge log without keeping decoded events in memory.

Building the index does not JSON-parse ordinary lines. One compiled regular expression walks every newline
of the decompressed stream in C and captures, from the start of each line, the event type, ``seq``, and the
``turn``/``step`` that lead ``data`` in DSH's key order; packed chunk rows give their member count from the
``dt`` array. Only lines that do not fit that shape fall back to ``orjson``. Per event the index stores
24 bytes: offset (8), line length (4), turn (4), step (2), type id (2), packed-row member (2) and flags (2).

zstd logs are indexed over their decompressed stream; a small frame table maps stream offsets back to frames,
and ``event(n)`` decompresses only the frame that holds the line (with a small LRU of decoded frames).
"""

from __future__ import annotations

import bisect
import os
import re
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from core.errors import LogFormatError
from core.log.decoder import LogDecoder
from core.log.frames import FrameStream
from core.log.layout import is_compressed, resolve_log_path
from core.log.records import expand_row, upgrade_legacy
from core.log.vocabulary import PACKED_ROW_TYPES

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
CHUNK = 16 << 20
ProgressFn = Callable[[int, int], None]


class OffsetIndex:
    """Compact per-event metadata plus the means to decode any event on demand."""

    def __init__(self, path: Path, compressed: bool) -> None:
        self.path = path
        self.compressed = compressed
        self.header: dict[str, Any] | None = None
        self._offsets = array("Q")
        self._lengths = array("I")
        self._turns = array("I")
        self._steps = array("H")
        self._types = array("H")
        self._members = array("H")
        self._flags = array("H")
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
        self._carry = b""  # incomplete final line (raw or decompressed)
        self._frames = FrameStream() if compressed else None
        self.corrupt_frames = 0

    # size ------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def nbytes(self) -> int:
        """Bytes held by the per-event arrays (the frame table is per frame, not per event, and is included)."""
        arrays = (
            self._offsets,
            self._lengths,
            self._turns,
            self._steps,
            self._types,
            self._members,
            self._flags,
        )
        frames = (self._frame_raw, self._frame_file, self._frame_len)
        return sum(a.itemsize * len(a) for a in arrays + frames)

    @property
    def file_offset(self) -> int:
        """File bytes consumed (for progress)."""
        return self._file_pos

    # per-event metadata -----------------------------------------------------------------------------------
    def type_of(self, n: int) -> str:
        """Event type of event ``n`` (``assistant/chunk`` for packed-row members)."""
        return self.type_names[self._types[n]]

    def turn_of(self, n: int) -> int:
        """The turn in force at event ``n`` (its own ``data.turn`` when it has one)."""
        return self._turns[n]

    def step_of(self, n: int) -> int:
        """The step in force at event ``n`` (0 outside steps)."""
        return self._steps[n]

    def size_of(self, n: int) -> int:
        """Bytes of the line that holds event ``n`` (a packed row's size for each of its members)."""
        return self._lengths[n]

    def is_surface(self, n: int) -> bool:
        """True for user/assistant/tool-result messages."""
        return bool(self._flags[n] & FLAG_SURFACE)

    def find_type(self, names: set[str], start: int = 0, step: int = 1) -> int | None:
        """The first event index from ``start`` (moving by ``step``) whose type is in ``names``."""
        ids = {i for i, name in enumerate(self.type_names) if name in names}
        n = start
        types = self._types
        while 0 <= n < len(types):
            if types[n] in ids:
                return n
            n += step
        return None

    # decoding -----------------------------------------------------------------------------------------------
    def line(self, n: int) -> bytes:
        """The raw bytes of the line holding event ``n``."""
        off, length = self._offsets[n], self._lengths[n]
        if not self.compressed:
            with open(self.path, "rb") as f:
                f.seek(off)
                return f.read(length)
        k = bisect.bisect_right(self._frame_raw, off) - 1
        data = self._frame(k)
        start = off - self._frame_raw[k]
        if start + length <= len(data):
            return data[start : start + length]
        # A line that spans frames (not written by DSH, but legal): stitch the following frames.
        out = bytearray(data[start:])
        while len(out) < length:
            k += 1
            out += self._frame(k)
        return bytes(out[:length])

    def event(self, n: int) -> dict[str, Any]:
        """Decode event ``n`` (seq == n) in full: rows expanded, legacy shapes upgraded, envelope synthesized."""
        if n < 0:
            n += len(self)
        if not 0 <= n < len(self):
            raise IndexError(n)
        obj = orjson.loads(self.line(n))
        member = self._members[n]
        if self._flags[n] & FLAG_ROW:
            return expand_row(
                obj, n - member, obj.get("time0", 0) if isinstance(obj.get("time0"), int) else 0
            )[member]
        obj["seq"] = n
        if not isinstance(obj.get("time"), int):
            obj["time"] = 0
        obj.setdefault("data", {})
        upgrade_legacy(obj, str((self.header or {}).get("id", "")))
        return obj

    def events(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Decode events ``start``..``stop-1``."""
        return [self.event(n) for n in range(max(0, start), min(stop, len(self)))]

    def _frame(self, k: int) -> bytes:
        cached = self._frame_cache.get(k)
        if cached is not None:
            self._frame_cache.move_to_end(k)
            return cached
        from core.log.frames import decode_frame

        with open(self.path, "rb") as f:
            f.seek(self._frame_file[k])
            data = decode_frame(f.read(self._frame_len[k]))
        self._frame_cache[k] = data
        if len(self._frame_cache) > 8:
            self._frame_cache.popitem(last=False)
        return data

    # building ------------------------------------------------------------------------------------------------
    def extend(self, progress: ProgressFn | None = None, max_bytes: int | None = None) -> int:
        """Index whatever complete data was appended since the last call; return the number of new events."""
        before = len(self)
        try:
            size = os.path.getsize(self.path)
        except OSError as exc:
            raise LogFormatError(f"{self.path}: cannot read ({exc})") from exc
        end = size if max_bytes is None else min(size, self._file_pos + max_bytes)
        with open(self.path, "rb") as f:
            f.seek(self._file_pos)
            while self._file_pos < end:
                chunk = f.read(min(CHUNK, end - self._file_pos))
                if not chunk:
                    break
                self._file_pos += len(chunk)
                if self._frames is None:
                    self._scan(chunk)
                else:
                    self._feed_frames(chunk)
                if progress:
                    progress(self._file_pos, size)
        return len(self) - before

    def _feed_frames(self, chunk: bytes) -> None:
        assert self._frames is not None
        for frame in self._frames.feed(chunk):
            if frame.data is None:
                self.corrupt_frames += 1
                continue
            self._frame_raw.append(self._stream_pos + len(self._carry))
            self._frame_file.append(frame.offset)
            self._frame_len.append(frame.length)
            self._scan(frame.data)

    def _scan(self, data: bytes) -> None:
        buf = b"\n" + self._carry + data
        base = self._stream_pos - 1  # stream offset of buf[0] (the synthetic newline)
        last_nl = buf.rfind(b"\n")
        if last_nl <= 0 and self._carry + data:
            self._carry += data
            return
        self._carry = buf[last_nl + 1 :]
        type_ids = self._type_ids
        prev_start = -1
        prev_match: re.Match[bytes] | None = None
        for m in _LINE.finditer(buf, 0, last_nl + 1):
            start = m.start() + 1
            if prev_match is not None:
                self._add(buf, prev_match, prev_start, start - 1, base, type_ids)
            prev_start, prev_match = start, m
        # the final match is the newline that ends the last complete line: nothing starts after it
        self._stream_pos = base + last_nl + 1

    def _add(
        self, buf: bytes, m: re.Match[bytes], start: int, end: int, base: int, type_ids: dict[bytes, int]
    ) -> None:
        length = end - start
        if length <= 0 or (buf[start] in b" \t\r" and not buf[start:end].strip()):
            return
        if self.header is None:
            self._read_header(buf[start:end])
            return
        tname, seq, turn, step, dt = m.groups()
        if tname is None or (tname in PACKED_ROW_TYPE_BYTES and dt is None):
            self._fallback(buf[start:end], base + start, length)
            return
        tid = type_ids.get(tname)
        if tid is None:
            tid = self._intern(tname)
        if turn is not None:
            t = int(turn)
        elif tname == b"turn/start":
            t = self._parse_turn(buf[start:end])
        else:
            t = self._turn
        s = int(step) if step is not None else self._step
        if tname == b"turn/start":
            self._turn, self._step = t, 0
        elif tname == b"step/start":
            self._step = s
        elif tname == b"step/end":
            self._step = 0
        off = base + start
        if tname in PACKED_ROW_TYPE_BYTES:
            count = dt.count(b",") + 2 if dt else 1
            self._append_many(off, length, t, s, self._chunk_type_id(), count)
            return
        self._offsets.append(off)
        self._lengths.append(length)
        self._turns.append(t)
        self._steps.append(min(s, 0xFFFF))
        self._types.append(tid)
        self._members.append(0)
        self._flags.append(FLAG_SURFACE if tname in _SURFACE else 0)

    def _append_many(self, off: int, length: int, turn: int, step: int, tid: int, count: int) -> None:
        self._offsets.extend([off] * count)
        self._lengths.extend([length] * count)
        self._turns.extend([turn] * count)
        self._steps.extend([min(step, 0xFFFF)] * count)
        self._types.extend([tid] * count)
        self._members.extend(range(count))
        self._flags.extend([FLAG_ROW] * count)

    def _chunk_type_id(self) -> int:
        tid = self._type_ids.get(b"assistant/chunk")
        return tid if tid is not None else self._intern(b"assistant/chunk")

    def _intern(self, tname: bytes) -> int:
        tid = len(self.type_names)
        self._type_ids[tname] = tid
        self.type_names.append(tname.decode("utf-8", "replace"))
        return tid

    def _parse_turn(self, line: bytes) -> int:
        try:
            turn = orjson.loads(line).get("data", {}).get("turn")
        except (orjson.JSONDecodeError, AttributeError):
            return self._turn
        return turn if isinstance(turn, int) else self._turn

    def _read_header(self, line: bytes) -> None:
        decoder = LogDecoder(str(self.path), False)
        decoder.feed(line + b"\n")
        if decoder.fatal:
            raise LogFormatError(decoder.fatal)
        self.header = decoder.header

    def _fallback(self, line: bytes, off: int, length: int) -> None:
        """Slow path for a line the fast pattern does not describe: parse it for real."""
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            return  # a corrupt line holds no event; the decoder reports it as a diagnostic
        if not isinstance(obj, dict):
            return
        tname = str(obj.get("type") or "?").encode()
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        turn = data.get("turn") if isinstance(data.get("turn"), int) else self._turn
        step = data.get("step") if isinstance(data.get("step"), int) else self._step
        if tname == b"turn/start":
            self._turn, self._step = turn, 0
        elif tname == b"step/start":
            self._step = step
        if tname in PACKED_ROW_TYPE_BYTES:
            pieces = data.get("args" if tname == b"tool-call-chunks" else "texts")
            count = len(pieces) if isinstance(pieces, list) else 0
            self._append_many(off, length, turn, step, self._chunk_type_id(), count)
            return
        tid = self._type_ids.get(tname)
        self._offsets.append(off)
        self._lengths.append(length)
        self._turns.append(turn)
        self._steps.append(min(step, 0xFFFF))
        self._types.append(tid if tid is not None else self._intern(tname))
        self._members.append(0)
        self._flags.append(FLAG_FALLBACK | (FLAG_SURFACE if tname in _SURFACE else 0))


PACKED_ROW_TYPE_BYTES = frozenset(t.encode() for t in PACKED_ROW_TYPES)


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


def tail_events(path: str | os.PathLike[str], n: int = 200) -> list[dict[str, Any]]:
    """The last ``n`` events of a log, read from the end of the file when possible.

    Raw logs with explicit ``seq`` are read backwards in growing blocks, so the cost depends on ``n``, not on
    the file size. zstd logs and envelope-free fixtures (whose seqs only a full count can give) are indexed.
    """
    p = resolve_log_path(path)
    if not is_compressed(p):
        events = _tail_raw(p, n)
        if events is not None:
            return events
    index = build_index(p)
    return index.events(len(index) - n, len(index))


def _tail_raw(path: Path, n: int) -> list[dict[str, Any]] | None:
    size = os.path.getsize(path)
    block = 1 << 16
    while True:
        start = max(0, size - block)
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(size - start)
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")[:-1]
        if start > 0:
            lines = lines[1:]  # the first line may be cut
        events: list[dict[str, Any]] = []
        for raw in lines:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(obj, dict) or obj.get("type") == "session":
                continue
            if obj.get("type") in PACKED_ROW_TYPES:
                if not isinstance(obj.get("seq0"), int):
                    return None
                events.extend(expand_row(obj, obj["seq0"], obj.get("time0", 0)))
            else:
                if not isinstance(obj.get("seq"), int):
                    return None
                upgrade_legacy(obj, "")
                events.append(obj)
        if len(events) >= n or start == 0:
            return events[-n:] if n else []
        block *= 4
