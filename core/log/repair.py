"""``tapedeck repair``: make a log damaged before its end resumable again without dropping an intact event.

A log can be damaged mid-file only from outside (a flipped bit, a bad copy): the writer never leaves a hole. The
repair keeps the damaged file byte for byte under a new name, then rewrites the log with every intact event as
it was, and one ``tapedeck/lost`` placeholder (ignorable, log-only) for each seq the damage swallowed, so seqs
are contiguous again and every ``sourceEventSeqs`` still points at the right event. Damage at the very end
(a complete frame that fails its checksum, an unparsable last line) has no later event to number from: it is
dropped from the log and stays in the copy.

The file is read twice in slices, never whole: once to find the damage (an intact log is left as it is), once
to write the repaired log.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import zstandard

from core.log.frames import ZSTD_MAGIC, FrameError, decode_frame, frame_end, recover_lines
from core.log.layout import is_compressed, resolve_log_path
from core.log.records import is_packed_row, row_member_count
from core.log.writer import acquire, append_synced, encode_event, publish
from core.shared.errors import LogFormatError

LOST_EVENT = "tapedeck/lost"
MAGIC = ZSTD_MAGIC.to_bytes(4, "little")
CHUNK = 1 << 20  # bytes read at a time, and written per frame of a repaired zstd log


@dataclass
class Hole:
    """A damaged stretch of the file and the seqs it held."""

    offset: int
    length: int
    reason: str
    seqs: list[int] = field(default_factory=list)


@dataclass
class RepairReport:
    """What ``repair_log`` did."""

    path: Path
    backup: Path | None
    events: int
    holes: list[Hole]
    dropped_duplicates: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return {
            "path": str(self.path),
            "backup": str(self.backup) if self.backup else None,
            "events": self.events,
            "holes": [vars(h) for h in self.holes],
            "droppedDuplicates": self.dropped_duplicates,
        }


@dataclass
class _Piece:
    """Either a decoded line (``line``) or damage (``hole``), in file order."""

    offset: int
    line: bytes | None = None
    hole: Hole | None = None


def _pieces(f: IO[bytes], compressed: bool) -> Iterator[_Piece]:
    """The lines and the damage of a log file, in file order, read in slices."""
    return _zstd_pieces(f) if compressed else _raw_pieces(f)


def _lines(blob: bytes, offset: int, fixed: bool) -> Iterator[_Piece]:
    start = 0
    for raw in blob.split(b"\n"):
        here = offset if fixed else offset + start
        start += len(raw) + 1
        if raw.strip():
            yield _Piece(here, line=raw)


def _raw_pieces(f: IO[bytes]) -> Iterator[_Piece]:
    base, carry = 0, b""
    while chunk := f.read(CHUNK):
        blob = carry + chunk
        cut = blob.rfind(b"\n") + 1
        yield from _lines(blob[: cut - 1], base, fixed=False) if cut else ()
        base, carry = base + cut, blob[cut:]
    yield from _lines(carry, base, fixed=False)


def _zstd_pieces(f: IO[bytes]) -> Iterator[_Piece]:
    buf, base, pos = b"", 0, 0  # buf holds the file from offset base on; pos is where the next frame starts

    def more() -> bool:
        nonlocal buf, base, pos
        chunk = f.read(CHUNK)
        buf, base, pos = buf[pos:] + chunk, base + pos, 0
        return bool(chunk)

    while pos < len(buf) or more():
        try:
            end = frame_end(buf, pos)
            while end is None and more():  # the frame goes on past what has been read
                end = frame_end(buf, pos)
            decoded = decode_frame(buf[pos:end]) if end is not None else None
        except (FrameError, zstandard.ZstdError) as exc:
            end, decoded, reason = None, None, str(exc)
        else:
            reason = "incomplete frame"
        if decoded is not None and end is not None:
            yield from _lines(decoded, base + pos, fixed=True)
            pos = end
            continue
        # A frame that fails is never trusted for its length: frames go on at the next magic number.
        while (nxt := buf.find(MAGIC, pos + 1)) < 0 and more():
            pass
        stop = nxt if nxt >= 0 else len(buf)
        if nxt < 0 and reason == "incomplete frame":  # a torn final frame: keep the lines a reader saw
            yield from _lines(recover_lines(buf[pos:]), base + pos, fixed=True)
        yield _Piece(base + pos, hole=Hole(base + pos, stop - pos, reason))
        pos = stop


def _placeholder(seq: int, when: int, hole: Hole) -> bytes:
    event = {
        "type": LOST_EVENT,
        "seq": seq,
        "time": when,
        "data": {"offset": hole.offset, "bytes": hole.length, "reason": hole.reason},
        "ignorable": True,
    }
    return encode_event(event)


def repair_log(path: str | os.PathLike[str]) -> RepairReport:
    """Rewrite a damaged log in place (under the writer lock), keeping a copy; see the module docstring."""
    p = resolve_log_path(path)
    fds = acquire(p)
    try:
        return _repair(p)
    finally:
        for fd in fds:
            os.close(fd)


def _repair(path: Path) -> RepairReport:
    compressed = is_compressed(path)
    with open(path, "rb") as f:
        events, holes, duplicates = _rebuild(_pieces(f, compressed), path, None)
    if not holes and not duplicates:
        return RepairReport(path, None, events, [], 0)
    backup = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    os.link(path, backup)  # the damaged bytes stay, untouched, under the new name
    tmp = path.with_name(f"{path.name}.repair")
    tmp.unlink(missing_ok=True)
    out = _Output(tmp, compressed)
    try:
        with open(backup, "rb") as f:
            events, holes, duplicates = _rebuild(_pieces(f, compressed), path, out.write)
        out.flush()
    finally:
        out.close()
    os.replace(tmp, path)
    return RepairReport(path, backup, events, holes, duplicates)


class _Output:
    """The repaired log, written as it is rebuilt: the header in its own frame, then ~``CHUNK`` bytes at a time."""

    def __init__(self, path: Path, compressed: bool) -> None:
        self.path = path
        self.compressed = compressed
        self.fd: int | None = None
        self.batch: list[bytes] = []
        self.size = 0

    def write(self, line: bytes) -> None:
        """Add the next line of the log."""
        if self.fd is None:
            self.fd = publish(self.path, _encode([line], self.compressed))
            return
        self.batch.append(line)
        self.size += len(line)
        if self.size >= CHUNK:
            self.flush()

    def flush(self) -> None:
        """Write out the lines added since the last flush."""
        if self.batch and self.fd is not None:
            append_synced(self.fd, _encode(self.batch, self.compressed))
        self.batch, self.size = [], 0

    def close(self) -> None:
        """Close the file (written or not)."""
        if self.fd is not None:
            os.close(self.fd)


def _rebuild(
    pieces: Iterator[_Piece], path: Path, write: Callable[[bytes], None] | None
) -> tuple[int, list[Hole], int]:
    """Walk the pieces as the repaired log would hold them, handing each of its lines to ``write`` (header first);
    returns the events it holds, the holes and the dropped duplicates."""
    header = next(pieces, None)
    if header is None or header.line is None:
        raise LogFormatError(f"{path}: the header itself is damaged; there is nothing to repair from")
    out = write or (lambda line: None)
    out(header.line)
    holes: list[Hole] = []
    pending: list[Hole] = []  # damage met since the last intact event
    expected, last_time, duplicates = 0, 0, 0
    for piece in pieces:
        if piece.hole is not None:
            pending.append(piece.hole)
            continue
        assert piece.line is not None
        try:
            event = orjson.loads(piece.line)
        except orjson.JSONDecodeError as exc:
            pending.append(Hole(piece.offset, len(piece.line), f"not JSON: {exc}"))
            continue
        if not isinstance(event, dict):
            pending.append(Hole(piece.offset, len(piece.line), "not an event object"))
            continue
        packed = is_packed_row(event)
        seq = event.get("seq0" if packed else "seq")
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else expected
        if seq < expected:  # a seq already taken (a second writer): the first one stays, the copy keeps both
            duplicates += 1
            continue
        if seq > expected and not pending:
            pending.append(Hole(piece.offset, 0, f"seq gap: {expected} to {seq - 1} missing"))
        if pending:
            hole = pending[0] if len(pending) == 1 else _merge(pending)
            hole.seqs = list(range(expected, seq))
            for s in hole.seqs:
                out(_placeholder(s, last_time, hole))
            holes.append(hole)
            pending = []
        out(piece.line)
        expected = seq + (row_member_count(event) if packed else 1)
        stamp = event.get("time0" if packed else "time")
        last_time = stamp if isinstance(stamp, int) else last_time
    holes.extend(pending)  # damage at the end: nothing after it to number from
    return expected, holes, duplicates


def _merge(holes: list[Hole]) -> Hole:
    end = holes[-1].offset + holes[-1].length
    return Hole(holes[0].offset, end - holes[0].offset, "; ".join(dict.fromkeys(h.reason for h in holes)))


def _encode(lines: list[bytes], compressed: bool) -> bytes:
    blob = b"".join(line + b"\n" for line in lines)
    return zstandard.ZstdCompressor(write_checksum=True).compress(blob) if compressed and blob else blob
