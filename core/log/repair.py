"""``tapedeck repair``: make a log damaged before its end resumable again without dropping an intact event.

A log can be damaged mid-file only from outside (a flipped bit, a bad copy): the writer never leaves a hole. The
repair keeps the damaged file byte for byte under a new name, then rewrites the log with every intact event as
it was, and one ``tapedeck/lost`` placeholder (ignorable, log-only) for each seq the damage swallowed, so seqs
are contiguous again and every ``sourceEventSeqs`` still points at the right event. Damage at the very end
(a complete frame that fails its checksum, an unparsable last line) has no later event to number from: it is
dropped from the log and stays in the copy.

A line is intact when the readers would take it where it stands: a JSON object (a packed row that validates)
with a usable seq. A line whose seq is not a non-negative integer (a string, a float, past 2**63), or is missing
from a log that numbers its lines, is damage. Intact lines are written in seq order, so lines that swapped
places both stay; up to ``WINDOW`` lines wait for the ones that belong before them. A seq ahead of the next one
expected means lost events when the line fits where it stands (it continues the line before it, or the line
after it continues it), when it is near (a swap), or when damage right before it could have held them, and
never more than the file could hold: otherwise the seq itself is the damage, and the line goes to the copy like
any damaged line. A header the
readers refuse is refused here too, before anything is written.

The file is read in slices, never whole: once to find the damage (an intact log is left as it is; a second time
when its first line and most of the others disagree on carrying seqs), once to write the repaired log. That log
has no name until it is whole, and the copy of the damaged one is named only then: a repair killed midway leaves the
log and its directory as they were.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import zstandard

from core.log.frames import ZSTD_MAGIC, FrameError, decode_frame, frame_end, recover_lines
from core.log.layout import DAMAGED, REPAIR_SUFFIX, is_compressed, resolve_log_path
from core.log.reader import read_log_header
from core.log.records import PackedRow, RecordError, is_packed_row
from core.log.vocabulary import LOST_EVENT
from core.log.writer import acquire, append_synced, encode_event
from core.shared.errors import LogFormatError
from core.shared.fdwrite import name_file, unnamed_file
from core.shared.regular import open_regular
from core.shared.text import quoted_path, shown

MAGIC = ZSTD_MAGIC.to_bytes(4, "little")
CHUNK = 1 << 20  # bytes read at a time, and written per frame of a repaired zstd log
WINDOW = 256  # intact lines held back at most (and WINDOW_BYTES of them) for the lines that belong before them
WINDOW_BYTES = 16 << 20
MAX_SEQ = (1 << 63) - 1
ZSTD_RATIO = 64  # a bound on how many bytes of lines one byte of a zstd log holds (for the events it could hold)


@dataclass
class Hole:
    """A damaged stretch of the file and the seqs it held."""

    offset: int
    length: int
    reason: str
    seqs: list[int] = field(default_factory=list)
    trailing: bool = False  # it lies after every intact line, so nothing numbers what it may have held


@dataclass
class RepairReport:
    """What ``repair_log`` did."""

    path: Path
    backup: Path | None
    events: int
    holes: list[Hole]
    dropped_duplicates: int
    reordered: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for ``--json`` output."""
        return {
            "path": str(self.path),
            "backup": str(self.backup) if self.backup else None,
            "events": self.events,
            "holes": [vars(h) for h in self.holes],
            "droppedDuplicates": self.dropped_duplicates,
            "reordered": self.reordered,
        }


@dataclass
class _Piece:
    """Either a decoded line (``line``) or damage (``hole``), in file order; a line's ``offset`` and ``length`` are the
    bytes of the file it lies in (a zstd log's: those of its frame, whose text is not in the file byte for byte)."""

    offset: int
    length: int = 0
    line: bytes | None = None
    hole: Hole | None = None


def _pieces(f: IO[bytes], compressed: bool) -> Iterator[_Piece]:
    """The lines and the damage of a log file, in file order, read in slices."""
    return _zstd_pieces(f) if compressed else _raw_pieces(f)


def _lines(blob: bytes, offset: int, frame: int | None = None) -> Iterator[_Piece]:
    """The lines of ``blob``, which starts at ``offset``: a raw log's each where it lies, or those of a zstd frame
    ``frame`` bytes long each at that frame."""
    start = 0
    for raw in blob.split(b"\n"):
        here = offset + start
        start += len(raw) + 1
        if raw.strip():
            yield _Piece(here, len(raw), line=raw) if frame is None else _Piece(offset, frame, line=raw)


def _raw_pieces(f: IO[bytes]) -> Iterator[_Piece]:
    base, carry = 0, b""
    while chunk := f.read(CHUNK):
        blob = carry + chunk
        cut = blob.rfind(b"\n") + 1
        yield from _lines(blob[: cut - 1], base) if cut else ()
        base, carry = base + cut, blob[cut:]
    yield from _lines(carry, base)


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
            yield from _lines(decoded, base + pos, end - pos)
            pos = end
            continue
        # A frame that fails is never trusted for its length: frames go on at the next magic number.
        while (nxt := buf.find(MAGIC, pos + 1)) < 0 and more():
            pass
        stop = nxt if nxt >= 0 else len(buf)
        if nxt < 0 and reason == "incomplete frame":  # a torn final frame: keep the lines a reader saw
            yield from _lines(recover_lines(buf[pos:]), base + pos, stop - pos)
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
    read_log_header(path)  # a header the readers refuse (not JSON, not a session, another version) stops here
    compressed = is_compressed(path)
    ratio = ZSTD_RATIO if compressed else 1
    explicit = None
    for _ in range(2):  # again when most lines say otherwise than the first (a damaged first line lost its seq)
        try:
            with open_regular(path) as f:  # a FIFO swapped in since the header was read is not waited on
                scan = _Rebuild(path, ratio, None, explicit)
                events, holes, duplicates, moved = scan.run(_pieces(f, compressed))
        except OSError as exc:
            raise LogFormatError(f"{quoted_path(path)}: cannot read ({exc.strerror or exc})") from exc
        if scan.explicit == (explicit := scan.numbered > scan.unnumbered):
            break
    if not holes and not duplicates and not moved:
        return RepairReport(path, None, events, [], 0)
    try:
        out = _Output(path, compressed)
    except OSError as exc:  # a directory it may not write in, say
        raise _unfinished(path, exc) from exc
    backup: Path | None = None
    try:
        with open_regular(path) as f:  # the log itself: its writer lock keeps every tapedeck writer out meanwhile
            events, holes, duplicates, moved = _Rebuild(path, ratio, out.write, explicit).run(_pieces(f, compressed))
        out.flush()
        backup = _keep_damaged(path)
        out.install()
    except OSError as exc:  # a full disk, say: the log is still the damaged one; the part written and the copy go
        out.discard()
        if backup is not None:
            backup.unlink(missing_ok=True)
        raise _unfinished(path, exc) from exc
    finally:
        out.close()
    return RepairReport(path, backup, events, holes, duplicates, moved)


def _unfinished(path: Path, exc: OSError) -> LogFormatError:
    return LogFormatError(f"{quoted_path(path)}: the repair could not be finished ({exc.strerror or exc}); the log is left as it "
                          "was: run `tapedeck repair` again once that is fixed")  # fmt: skip


def _keep_damaged(path: Path) -> Path:
    """Link the damaged log to ``<log>.damaged-<time>`` (``-2``, ``-3`` … after a name a repair killed within the
    same second left), so its bytes stay untouched under the new name; that name."""
    stem = f"{path.name}{DAMAGED}{time.strftime('%Y%m%dT%H%M%S')}"
    backup, n = path.with_name(stem), 1
    while True:
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            n += 1
            backup = path.with_name(f"{stem}-{n}")


class _Output:
    """The repaired log, written as it is rebuilt: the header in its own frame, then ~``CHUNK`` bytes at a time, into
    a file of the log's directory that has no name until ``install`` puts it in the log's place, so that a repair
    killed midway leaves nothing beside the log. Where the file system cannot make such a file (no ``O_TMPFILE``,
    or no ``/proc`` to name it by), it is ``<log>.repair``, which the next repair replaces."""

    def __init__(self, log: Path, compressed: bool) -> None:
        self.log = log
        self.compressed = compressed
        self.named = log.with_name(f"{log.name}{REPAIR_SUFFIX}")
        self.fd = unnamed_file(log.parent, os.O_WRONLY | os.O_APPEND, 0o644)
        if self.fd is None:
            self.named.unlink(missing_ok=True)  # what a repair killed on such a file system left
            self.fd = os.open(self.named, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        else:
            self.named = None
        self.started = False
        self.batch: list[bytes] = []
        self.size = 0

    def write(self, line: bytes) -> None:
        """Add the next line of the log."""
        if not self.started:
            self.started = True
            append_synced(self.fd, _encode([line], self.compressed))
            return
        self.batch.append(line)
        self.size += len(line)
        if self.size >= CHUNK:
            self.flush()

    def flush(self) -> None:
        """Write out the lines added since the last flush."""
        if self.batch:
            append_synced(self.fd, _encode(self.batch, self.compressed))
        self.batch, self.size = [], 0

    def install(self) -> None:
        """Put the written file in the log's place."""
        if self.named is None:  # a name of its own, for the moment until it takes the log's
            self.named = self.log.with_name(f".{self.log.name}.{secrets.token_hex(6)}{REPAIR_SUFFIX}")
            name_file(self.fd, self.named)
        os.replace(self.named, self.log)
        self.named = None

    def discard(self) -> None:
        """Take back the name the written file has, if it has one."""
        if self.named is not None:
            with contextlib.suppress(OSError):  # a directory of that name, say, which is not ours
                self.named.unlink(missing_ok=True)

    def close(self) -> None:
        """Close the file (written or not)."""
        os.close(self.fd)


@dataclass(order=True)
class _Line:
    """An intact line, ordered by seq; of two lines with one seq, one that fits where it stands comes first, then
    one with fewer unexplained jumps (a seq ahead of its neighbour's with no damage between to have held the rest)."""

    seq: int
    misfit: bool
    jumps: int
    off: int  # how far its seq is from the ones its neighbours imply (the nearer of the two)
    order: int  # its place among the file's intact lines
    count: int = field(compare=False)  # the seqs it fills (a packed row's members)
    offset: int = field(compare=False)
    length: int = field(compare=False)  # its bytes in the file (a zstd log's: its frame's)
    raw: bytes = field(compare=False)
    time: int | None = field(compare=False)
    damage: list[Hole] = field(compare=False, default_factory=list)  # what lies between it and the line before

    @property
    def end(self) -> int:
        """The seq right after it."""
        return self.seq + self.count


class _Rebuild:
    """One walk of the pieces as the repaired log holds them, handing each of its lines to ``write``."""

    def __init__(
        self, path: Path, ratio: int, write: Callable[[bytes], None] | None, explicit: bool | None = None
    ) -> None:
        self.path = path
        self.ratio = ratio  # bytes of lines one byte of the file holds at most
        self.capacity = path.stat().st_size * ratio  # more lost events than this the file could never have held
        self.out = write or (lambda line: None)
        self.holes: list[Hole] = []
        self.leftover: list[Hole] = []  # damage with no intact line after it
        self.heap: list[_Line] = []
        self.held = 0  # bytes of the lines in the heap
        self.expected = 0
        self.last_time = 0
        self.duplicates = 0
        self.moved = 0  # lines written out of file order
        self.written = -1  # order of the last line written
        self.farthest = -1  # offset of the intact line written that lies farthest into the file
        self.explicit = explicit  # whether the log numbers its lines (unless told, the first one decides)
        self.numbered = 0  # lines with a seq, and without: what most of them do is what the log does
        self.unnumbered = 0

    def run(self, pieces: Iterator[_Piece]) -> tuple[int, list[Hole], int, int]:
        """Walk ``pieces`` (the header first); the events, the holes, the dropped duplicates, the lines moved."""
        header = next(pieces, None)
        if header is None or header.line is None:
            raise LogFormatError(f"{quoted_path(self.path)}: the header itself is damaged; there is nothing to repair from")
        self.out(header.line)
        before: _Line | None = None  # the last intact line read, waiting for the next to tell whether it fits
        after: list[Hole] = []  # damage met since then
        order = 0
        for piece in pieces:
            line = piece.hole or self._line(piece, order, before)
            if isinstance(line, Hole):
                after.append(line)
                continue
            order += 1
            left = self.expected if before is None else before.end
            if before is not None:
                before.misfit = before.misfit and before.end != line.seq
                before.jumps += _jump(before.end, line.seq, after)
                before.off = min(before.off, abs(line.seq - before.end))
                after[:0] = self._hold(before)
            line.damage, after = after, []
            line.misfit = before is None or before.end != line.seq
            line.jumps = _jump(left, line.seq, line.damage)
            line.off = abs(line.seq - left)
            before = line
        if before is not None:
            after[:0] = self._hold(before)
        self._drain(final=True)
        self.holes += self.leftover + after  # damage at the end: nothing after it to number from
        self.holes.sort(key=lambda hole: hole.offset)  # in file order, not in the order the lines after them went out
        for hole in self.holes:
            hole.trailing = not hole.seqs and hole.offset > self.farthest
        return self.expected, self.holes, self.duplicates, self.moved

    def _line(self, piece: _Piece, order: int, before: _Line | None) -> _Line | Hole:
        """The intact line ``piece`` holds, or the damage it is."""
        raw = piece.line
        assert raw is not None
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return Hole(piece.offset, piece.length, f"not JSON: {exc}")
        if not isinstance(event, dict):
            return Hole(piece.offset, piece.length, "not an event object")
        count, key = 1, "seq"
        if is_packed_row(event):
            key = "seq0"
            try:
                count = PackedRow(event, 0, 0).count
            except RecordError as exc:
                return Hole(piece.offset, piece.length, str(exc))
        seq = event.get(key)
        if self.explicit is None:
            self.explicit = seq is not None
        self.numbered += seq is not None
        self.unnumbered += seq is None
        if seq is None and not self.explicit:
            seq = self.expected if before is None else before.end  # a log without seqs numbers by position
        elif seq is None:
            return Hole(piece.offset, piece.length, f"no {key}")
        elif type(seq) is not int or not 0 <= seq <= MAX_SEQ:
            return Hole(piece.offset, piece.length, f"{key} {shown(seq)} is not an integer from 0 to {MAX_SEQ}")
        stamp = event.get("time0" if key == "seq0" else "time")
        return _Line(seq, False, 0, 0, order, count, piece.offset, piece.length, raw, stamp if type(stamp) is int else None)

    def _hold(self, line: _Line) -> list[Hole]:
        """Hold ``line`` until its turn comes; the damage it is (with what stood before it) when its seq is too
        far ahead to be a swap and nothing before it could have held the seqs it skips."""
        if line.misfit and line.seq - self.expected > 2 * WINDOW and not self._credible(line):
            return [*line.damage, self._out_of_place(line)]
        heapq.heappush(self.heap, line)
        self.held += len(line.raw)
        self._drain(final=False)
        return []

    def _drain(self, final: bool) -> None:
        """Write every held line whose turn has come; at a gap, wait (while the window has room) for the lines
        that belong in it, then fill it with placeholders or drop the line after it as damage."""
        heap = self.heap
        while heap:
            top = heap[0]
            if top.seq < self.expected:  # a seq already taken: the first line stays, the copy keeps both
                self._drop(top.damage)
                self.duplicates += 1
                continue
            if top.seq > self.expected:
                if not final and len(heap) <= WINDOW and self.held <= WINDOW_BYTES:
                    return
                if not self._credible(top):
                    self._drop([*top.damage, self._out_of_place(top)])
                    continue
            self._write(self._pop())

    def _drop(self, damage: list[Hole]) -> None:
        """Leave the top line out; ``damage`` goes with the line after it (or to the end)."""
        self._pop()
        if self.heap:
            self.heap[0].damage[:0] = damage
        else:
            self.leftover += damage

    def _credible(self, line: _Line) -> bool:
        """Whether the seqs between the next one expected and ``line``'s were lost (else its seq is damaged)."""
        gap = line.seq - self.expected
        if gap > self.capacity:
            return False
        return not line.misfit or gap <= 2 * WINDOW or gap <= sum(hole.length for hole in line.damage) * self.ratio

    def _out_of_place(self, line: _Line) -> Hole:
        return Hole(line.offset, line.length, f"seq {line.seq} out of place (expected about {self.expected})")

    def _pop(self) -> _Line:
        line = heapq.heappop(self.heap)
        self.held -= len(line.raw)
        return line

    def _write(self, line: _Line) -> None:
        if line.damage or line.seq > self.expected:
            lost = f"seq {self.expected} is" if line.seq - 1 == self.expected else f"seqs {self.expected}-{line.seq - 1} are"
            damage = line.damage or [Hole(line.offset, 0, f"seq gap: {lost} missing")]
            hole = damage[0] if len(damage) == 1 else _merge(damage)
            hole.seqs = list(range(self.expected, line.seq))
            for s in hole.seqs:
                self.out(_placeholder(s, self.last_time, hole))
            self.holes.append(hole)
        self.out(line.raw)
        self.moved += line.order < self.written
        self.written = max(self.written, line.order)
        self.farthest = max(self.farthest, line.offset)
        self.expected = line.end
        self.last_time = line.time if line.time is not None else self.last_time


def _jump(end: int, seq: int, damage: list[Hole]) -> bool:
    """Whether a line at ``seq`` next to one ending at ``end`` skips seqs with no damage between to have held
    them (a skip too far to be a swap says more of the line that makes it than of its neighbour)."""
    return 0 < seq - end <= 2 * WINDOW and not damage


def _merge(holes: list[Hole]) -> Hole:
    """One hole from its first offset to its last end (a dropped line's damage may be handed to a line that lies
    before it in the file), its reasons in file order."""
    holes = sorted(holes, key=lambda hole: hole.offset)
    end = max(hole.offset + hole.length for hole in holes)
    return Hole(holes[0].offset, end - holes[0].offset, "; ".join(dict.fromkeys(h.reason for h in holes)))


def _encode(lines: list[bytes], compressed: bool) -> bytes:
    blob = b"".join(line + b"\n" for line in lines)
    return zstandard.ZstdCompressor(write_checksum=True).compress(blob) if compressed and blob else blob
