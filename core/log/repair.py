"""``tapedeck repair``: make a log damaged before its end resumable again without dropping an intact event.

A log can be damaged mid-file only from outside (a flipped bit, a bad copy): the writer never leaves a hole. The
repair keeps the damaged file byte for byte under a new name, then rewrites the log with every intact event as
it was, and one ``tapedeck/lost`` placeholder (ignorable, log-only) for each seq the damage swallowed, so seqs
are contiguous again and every ``sourceEventSeqs`` still points at the right event. Damage at the very end
(a complete frame that fails its checksum, an unparsable last line) has no later event to number from: it is
dropped from the log and stays in the copy.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import zstandard

from core.errors import LogFormatError
from core.log.frames import ZSTD_MAGIC, FrameError, decode_frame, frame_end
from core.log.layout import is_compressed, resolve_log_path
from core.log.records import is_packed_row, row_member_count
from core.log.writer import acquire, append_synced, encode_event, publish, recover_lines

LOST_EVENT = "tapedeck/lost"
MAGIC = ZSTD_MAGIC.to_bytes(4, "little")


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


def _pieces(data: bytes, compressed: bool) -> list[_Piece]:
    pieces: list[_Piece] = []

    def lines(blob: bytes, offset: int, fixed: bool) -> None:
        start = 0
        for raw in blob.split(b"\n"):
            here = offset if fixed else offset + start
            start += len(raw) + 1
            if raw.strip():
                pieces.append(_Piece(here, line=raw))

    if not compressed:
        lines(data, 0, fixed=False)
        return pieces
    pos = 0
    while pos < len(data):
        try:
            end = frame_end(data, pos)
            decoded = decode_frame(data[pos:end]) if end is not None else None
        except (FrameError, zstandard.ZstdError) as exc:
            end, decoded, reason = None, None, str(exc)
        else:
            reason = "incomplete frame"
        if decoded is not None and end is not None:
            lines(decoded, pos, fixed=True)
            pos = end
            continue
        # A frame that fails is never trusted for its length: frames go on at the next magic number.
        nxt = data.find(MAGIC, pos + 1)
        stop = nxt if nxt >= 0 else len(data)
        if nxt < 0 and reason == "incomplete frame":  # a torn final frame: keep the lines a reader saw
            lines(recover_lines(data[pos:]), pos, fixed=True)
        pieces.append(_Piece(pos, hole=Hole(pos, stop - pos, reason)))
        pos = stop
    return pieces


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
    data = path.read_bytes()
    pieces = _pieces(data, compressed)
    if not pieces or pieces[0].line is None:
        raise LogFormatError(f"{path}: the header itself is damaged; there is nothing to repair from")
    out: list[bytes] = [pieces[0].line]
    holes: list[Hole] = []
    pending: list[Hole] = []  # damage met since the last intact event
    expected, last_time, duplicates = 0, 0, 0
    for piece in pieces[1:]:
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
            out.extend(_placeholder(s, last_time, hole) for s in hole.seqs)
            holes.append(hole)
            pending = []
        out.append(piece.line)
        expected = seq + (row_member_count(event) if packed else 1)
        stamp = event.get("time0" if packed else "time")
        last_time = stamp if isinstance(stamp, int) else last_time
    holes.extend(pending)  # damage at the end: nothing after it to number from
    if not holes and not duplicates:
        return RepairReport(path, None, expected, [], 0)
    backup = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    os.link(path, backup)  # the damaged bytes stay, untouched, under the new name
    tmp = path.with_name(f"{path.name}.repair")
    tmp.unlink(missing_ok=True)
    fd = publish(tmp, _encode(out[:1], compressed))
    try:
        append_synced(fd, _encode(out[1:], compressed))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return RepairReport(path, backup, expected, holes, duplicates)


def _merge(holes: list[Hole]) -> Hole:
    end = holes[-1].offset + holes[-1].length
    return Hole(holes[0].offset, end - holes[0].offset, "; ".join(dict.fromkeys(h.reason for h in holes)))


def _encode(lines: list[bytes], compressed: bool) -> bytes:
    blob = b"".join(line + b"\n" for line in lines)
    return zstandard.ZstdCompressor(write_checksum=True).compress(blob) if compressed and blob else blob
