"""Following a session log while another process writes it, and reading its last events.

``Tailer.poll`` is non-blocking: it stats the file, reads whatever complete lines or frames are new, and keeps
the partial rest for the next poll. A file that shrinks or changes inode (truncated, rewritten, replaced) is
re-read from the start and reported with ``reset=True`` and a diagnostic; each read checks that the file it opened
is the one the poll's stat measured, so one renamed over it in between is left for the next poll (``_opened_as``).
A file that does not exist yet is waited for; one that disappears is reported with ``reset`` too (whatever comes
back is read from its start). ``follow`` turns polls into a stream, woken by ``wakeups``: ``watchfiles`` with a
polling fallback.
``tail_events`` reads the last events of a log from the end of the file (``events_at_end``: never more than that).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import zstandard

from core.log.decoder import Consumer, LogDecoder
from core.log.frames import FrameError, FrameTooLarge, decode_frame, frame_end
from core.log.layout import is_compressed, resolve_log_path
from core.log.records import complete_event, expand_row, is_packed_row
from core.log.validate import as_time
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError, removed_while_read, replaced_while_read, truncated_while_read
from core.shared.fingerprint import FINGERPRINT, remembered, still_holds
from core.shared.regular import open_regular
from core.shared.text import quoted_path

# A followed file is checked with one stat call every FOLLOW_INTERVAL seconds: on average half of it is added to
# append-to-screen. 2 ms instead of 5 ms took ~2 ms off the p50 in bench/tui.py for about 1.2% more of a core
# while idle (4.8% against 3.6%, whole app, measured in tmux); watchfiles' own 20 ms settle window would cost more.
FOLLOW_INTERVAL = 0.002
READ_CHUNK = 1 << 20  # bytes per read and decode call: a loader thread leaves the GIL to the UI between them


@dataclass
class TailUpdate:
    """What one poll found. After ``reset`` the events restart at seq 0 and replace everything seen before."""

    events: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reset: bool = False
    header: dict[str, Any] | None = None
    waiting: bool = False
    fatal: str | None = None
    # on a reset of a file that was cut, replaced, rewritten or removed under the reader: the error a one-off read
    # gives
    changed: LogFormatError | None = None

    def __bool__(self) -> bool:
        return bool(self.events or self.diagnostics or self.reset or self.header or self.fatal)


@dataclass(frozen=True, slots=True)
class FileState:
    """What a poll needs of a followed file: its size, last change (ns), identity (device and inode; ``(0, 0)``
    where the file system does not say) and whether it is a regular file."""

    size: int
    changed_ns: int
    identity: tuple[int, int]
    regular: bool


class Tailer:
    """Incremental reader of one log path (raw or zstd); ``_stat``, ``_file_chunks``, ``_read_at`` and
    ``_rewritten`` are where it touches the file (``core.remote.tail`` reads one on another machine)."""

    def __init__(
        self, path: str | os.PathLike[str], pace: Callable[[], None] | None = None, consumer: Consumer | None = None
    ) -> None:
        """Follow ``path``; ``pace`` is called between reads of one poll (see ``core.log.pace``).

        Decoded items go to ``consumer`` (see ``Consumer``), which the tailer hands to the decoder it starts;
        by default they come in each ``TailUpdate.events``, rows as their member events. Once the file is reset
        (rewritten or replaced), the new file's items come in the updates whatever the consumer.
        """
        self.path = Path(path)
        self.pace = pace
        self.consumer = consumer if consumer is not None else Consumer()
        self._decoder: LogDecoder | None = None
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._fatal_reported = False
        self._seen: tuple[int, int] | None = None  # size and mtime at the last poll
        self._head = b""  # fingerprint of the consumed bytes: the first ones …
        self._tail = b""  # … and the last ones
        self._was_reset = False  # the file was reset: its items now come in the updates whatever the consumer
        self._start: tuple[int, dict[str, Any]] | None = None  # ``start_at`` before its first line came
        self._early = b""  # bytes past the offset read already (``start_at``'s look for a seq), decoded first

    @property
    def offset(self) -> int:
        """Bytes of the file consumed so far."""
        return self._offset

    @property
    def size_seen(self) -> int | None:
        """The file's size at the last poll (None: not polled yet, or no file)."""
        return self._seen[0] if self._seen is not None else None

    @property
    def compressed(self) -> bool:
        """True for a zstd log (by its name)."""
        return is_compressed(self.path)

    @property
    def header(self) -> dict[str, Any] | None:
        """The decoded header, once line 1 has been read."""
        return self._decoder.header if self._decoder else None

    @property
    def decoder(self) -> LogDecoder | None:
        """The decoder of the file being followed (None before the first poll)."""
        return self._decoder

    def resume(self, decoder: LogDecoder, offset: int) -> None:
        """Go on from file ``offset`` with ``decoder`` (a ``LogDecoder.resumed`` at that offset, its consumer
        this tailer's): the bytes before it count as read, as a log's index says they were. The file followed is
        the one the tailer saw first (``start_at``'s), else the one there now."""
        if self._identity is None:
            st = os.stat(self.path)
            self._identity = (st.st_dev, st.st_ino)
        head = tail = b""  # a file put in its place since: the next poll reads that one from its start
        with _opened_as(self.path, self._identity) as f:
            if f is not None:
                head = f.read(min(offset, FINGERPRINT))
                f.seek(max(0, offset - FINGERPRINT))
                tail = f.read(min(offset, FINGERPRINT))
        self._decoder, self._offset = decoder, offset
        self._head, self._tail = head, tail

    def start_at(self, offset: int, header: dict[str, Any]) -> None:
        """Follow a raw log from ``offset`` on (where a line starts) without reading what is before it: only what
        is appended from there is wanted (the outcome of a request about to be sent). The first line there gives
        the seq the events go on from (a log whose lines declare none is read from its start after all)."""
        if self.compressed:
            raise ValueError("a zstd log is followed from its start")
        self._start = (offset, header)

    def follow_from_end(self, header: dict[str, Any]) -> None:
        """Follow only what is appended from now on, without reading what the log holds: a raw log from its end
        now (``start_at``; ``header`` is its header); a zstd one is followed from its start."""
        if not self.compressed:
            st = self._stat()
            self.start_at(st.size if st is not None else 0, header)
            self._identity = st.identity if st is not None else None  # the file that end is of

    def _started(self) -> bool:
        """Start the decoder at the ``start_at`` offset once a whole line is there; False while none is yet. An offset
        inside a line (the end taken while a writer's line was not all on disk) goes on from the next line: that one
        began before, and the bytes read past its end are the ones decoded, not read again."""
        assert self._start is not None
        offset, header = self._start
        st = self._stat()
        if st is not None and self._identity not in (None, st.identity):  # replaced: the poll reads the new one whole
            self._start = None
            return True
        if st is None or st.size <= offset:
            return False
        self._identity = st.identity  # what is read from here on is of this file (``_opened_as``)
        back = 1 if offset > 0 else 0  # the byte before the offset says whether a line starts there
        data = self._read_at(offset - back, min(READ_CHUNK, st.size - offset) + back)
        if back and data[:1] != b"\n":
            end = data.find(b"\n")
            if end < 0:  # the next poll goes on looking after the bytes read (the last of them read again)
                self._start = (max(offset, offset - back + len(data)), header)
                return False
            offset, data = offset - back + end + 1, data[end + 1 :]
            self._start = (offset, header)
        else:
            data = data[back:]
        end = data.find(b"\n")
        if end < 0:
            return False
        try:
            first = orjson.loads(data[:end])
        except orjson.JSONDecodeError:
            first = None
        declared = first.get("seq", first.get("seq0")) if isinstance(first, dict) else None
        if not isinstance(declared, int) or isinstance(declared, bool) or declared < 0:
            self._start = None
            return True  # nothing says where the seqs are: read from the start
        state = {"header": header, "nextSeq": declared, "explicitSeq": True, "seqShift": 0, "warned": []}
        self._go_on(LogDecoder.resumed(str(self.path), False, state, offset, self.consumer), offset, data, st)
        self._start = None  # only once gone on from there: a read that failed (a remote one) starts there again
        return True

    def _read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes of the file from ``offset``, none when another file has taken its place (a subclass
        reads another kind of file)."""
        with _opened_as(self.path, self._identity) as f:
            if f is None:
                return b""
            f.seek(offset)
            return f.read(size)

    def _go_on(self, decoder: LogDecoder, offset: int, data: bytes, st: FileState) -> None:
        """Go on from ``offset`` with ``decoder`` (``data``: the file's bytes from there, decoded next, not read
        again; ``st``: its state)."""
        self.resume(decoder, offset)
        self._early = data

    def poll(self, max_bytes: int | None = None) -> TailUpdate:
        """Read what is new since the last poll (at most ``max_bytes`` when given)."""
        if self._start is not None:
            try:
                started = self._started()
            except OSError as exc:  # the read where it starts failed: the next poll starts there again
                return TailUpdate(diagnostics=[self._read_error(exc)])
            if not started:
                return TailUpdate()
        update = TailUpdate()
        st = self._stat()
        if st is None:
            if self._identity is not None:
                update.diagnostics.append(
                    Diagnostic(
                        "file-removed",
                        f"{quoted_path(self.path)} disappeared; waiting for it to come back",
                        None,
                        None,
                        "warning",
                    )
                )
                update.reset = True
                update.changed = removed_while_read(self.path)
                self._restart()
            update.waiting = True
            return update
        if not st.regular:  # reading a FIFO or device swapped in would block the follower
            if not self._fatal_reported:
                self._fatal_reported = True
                update.fatal = f"{quoted_path(self.path)}: is no longer a regular file; following stopped"
            return update
        changed = (st.size, st.changed_ns) != self._seen
        # what the file held: what was read of it, or more when a poll saw it bigger (a slice read stops short)
        held = max(self._offset, self._seen[0] if self._seen is not None and self._identity is not None else 0)
        self._seen = (st.size, st.changed_ns)
        if self._identity is None:
            self._identity = st.identity
        elif (
            st.identity != self._identity
            or st.size < held
            or (self._offset and self._rewritten(changed))
        ):
            if st.identity != self._identity:
                what = "replaced by a new file"
                update.changed = replaced_while_read(self.path)
            elif st.size < held:
                what = f"truncated to {st.size} bytes"
                update.changed = truncated_while_read(self.path, st.size, held)
            else:
                what = "rewritten in place (same inode, different bytes where it was already read)"
                update.changed = replaced_while_read(self.path, "its bytes already read were rewritten in place")
            update.diagnostics.append(
                Diagnostic(
                    "log-reset",
                    f"{quoted_path(self.path)} was {what}; re-reading from the start",
                    self._offset,
                    None,
                    "warning",
                )
            )
            update.reset = True
            self._restart()
            self._identity = st.identity
        if self._decoder is None:
            consumer = Consumer() if self._was_reset else self.consumer
            self._decoder = LogDecoder(str(self.path), self.compressed, self.pace, consumer)
        if st.size > self._offset:
            self._read(update, st.size if max_bytes is None else min(st.size, self._offset + max_bytes))
        if self._decoder.fatal and not self._fatal_reported:
            self._fatal_reported = True
            update.fatal = self._decoder.fatal
        return update

    def _stat(self) -> FileState | None:
        """The file's state now; None when it does not exist (a subclass reads another kind of file)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return FileState(st.st_size, st.st_mtime_ns, (st.st_dev, st.st_ino), stat.S_ISREG(st.st_mode))

    def finish(self) -> TailUpdate:
        """Treat the current end of file as final: recover or report a torn tail."""
        update = TailUpdate()
        if self._decoder is not None:
            batch = self._decoder.finish()
            update.events, update.diagnostics = batch.events, batch.diagnostics
        return update

    def _restart(self) -> None:
        self._was_reset = True
        self._decoder = None
        self._identity = None
        self._offset = 0
        self._fatal_reported = False
        self._head = b""
        self._tail = b""
        self._early = b""

    def _rewritten(self, changed: bool) -> bool:
        """True when the bytes already consumed are no longer in the file: its head or the last ones read
        (checked when the file's size or mtime moved: ``changed``).

        An append never changes them; ``cat other > log`` or a truncate-and-regrow between two polls does, on
        the same inode and possibly at a size past the consumed offset.
        """
        if not changed:
            return False
        try:
            with _opened_as(self.path, self._identity) as f:
                if f is None:  # replaced since the poll's stat: the next poll sees the new file
                    return False
                return not still_holds(f.fileno(), self._head, self._tail, self._offset)
        except OSError:
            return False  # an unreadable file is reported by the read that follows

    def _remember(self, chunk: bytes) -> None:
        """Keep the fingerprint of what was consumed: the first FINGERPRINT bytes and the last ones."""
        self._head, self._tail = remembered(self._head, self._tail, chunk)

    def _read(self, update: TailUpdate, end: int) -> None:
        assert self._decoder is not None
        try:
            for chunk in self._chunks(end):
                self._offset += len(chunk)
                self._remember(chunk)
                batch = self._decoder.feed(chunk)
                update.events.extend(batch.events)
                update.diagnostics.extend(batch.diagnostics)
                if batch.header is not None:
                    update.header = batch.header
                if self.pace is not None:
                    self.pace()
        except OSError as exc:
            update.diagnostics.append(self._read_error(exc))

    def _read_error(self, exc: OSError) -> Diagnostic:
        """The ``read-error`` diagnostic of a read of the file that failed with ``exc``."""
        return Diagnostic("read-error", f"cannot read {quoted_path(self.path)}: {exc}", self._offset)

    def _chunks(self, end: int) -> Iterator[bytes]:
        """The file's bytes from the consumed offset up to ``end``, at most READ_CHUNK at a time (the offset moves
        on as each is consumed): first those read ahead already, then the file's (``_file_chunks``)."""
        if self._early:
            n = end - self._offset
            early, self._early = self._early[:n], self._early[n:]
            yield early
        if self._offset < end:
            yield from self._file_chunks(end)

    def _file_chunks(self, end: int) -> Iterator[bytes]:
        """``_chunks`` read from the file, none when another file has taken its place since the poll's stat (the next
        poll sees it replaced; a subclass reads another kind of file)."""
        with _opened_as(self.path, self._identity) as f:
            if f is None:
                return
            f.seek(self._offset)
            while self._offset < end:
                chunk = f.read(min(READ_CHUNK, end - self._offset))
                if not chunk:
                    return
                yield chunk


@contextlib.contextmanager
def _opened_as(path: Path, identity: tuple[int, int] | None) -> Iterator[BinaryIO | None]:
    """``path`` opened for reading (``open_regular``) when it is the file of ``identity`` (device and inode, as a stat
    of it said), else None: a file renamed over it between that stat and this open is never read as if it were the
    one that stat measured."""
    with open_regular(path) as f:
        st = os.fstat(f.fileno())
        yield f if identity is None or (st.st_dev, st.st_ino) == identity else None


def follow(
    path: str | os.PathLike[str],
    stop: threading.Event,
    *,
    interval: float = 0.25,
    use_watchfiles: bool = True,
) -> Iterator[TailUpdate]:
    """Yield every non-empty update for ``path`` until ``stop`` is set.

    Change notification comes from ``watchfiles`` on the parent directory (so creation and replacement are
    seen); if it cannot run, or between its events, the file is polled every ``interval`` seconds.
    """
    tailer = Tailer(path)
    first = tailer.poll()
    if first:
        yield first
    for _ in wakeups(Path(path), stop, interval, use_watchfiles):
        update = tailer.poll()
        if update:
            yield update


def wakeups(
    path: str | os.PathLike[str], stop: threading.Event, interval: float, use_watchfiles: bool = True
) -> Iterator[None]:
    """Yield once each time ``path`` may have changed, until ``stop`` is set; the caller then polls a ``Tailer``.

    With ``use_watchfiles`` the parent directory is watched (so creation and replacement are seen) and a wake-up
    also comes every ``interval`` seconds without a change; if ``watchfiles`` cannot run, or when it is not
    wanted, the generator simply yields every ``interval`` seconds. Wake-ups may be spurious; none is lost.
    """
    target = Path(path)
    parent = target.parent if target.parent.exists() else Path(target.anchor or "/")
    if use_watchfiles:
        yield from _watch(parent, stop, interval, recursive=False, debounce_ms=20, on_timeout=True)
    else:
        yield from _poll(stop, interval)


def changes_under(
    root: str | os.PathLike[str], stop: threading.Event, interval: float, debounce_ms: int
) -> Iterator[None]:
    """Yield once per settled burst of changes anywhere under ``root``, until ``stop`` is set.

    Changes are gathered for at most ``debounce_ms`` before one wake-up. Where ``watchfiles`` cannot run (or
    ``root`` does not exist yet), the generator yields every ``interval`` seconds instead. Wake-ups may be spurious.
    """
    base = Path(root)
    if base.is_dir():
        yield from _watch(base, stop, interval, recursive=True, debounce_ms=debounce_ms, on_timeout=False)
    else:
        yield from _poll(stop, interval)


def _watch(
    directory: Path, stop: threading.Event, interval: float, recursive: bool, debounce_ms: int, on_timeout: bool
) -> Iterator[None]:
    try:
        import watchfiles

        for _changes in watchfiles.watch(
            directory,
            stop_event=stop,
            rust_timeout=int(interval * 1000),
            yield_on_timeout=on_timeout,
            debounce=debounce_ms,
            step=20,
            recursive=recursive,
            raise_interrupt=False,
            watch_filter=None,
        ):
            yield None
        return
    except (OSError, RuntimeError, ImportError):
        pass  # fall back to plain polling below
    yield from _poll(stop, interval)


def _poll(stop: threading.Event, interval: float) -> Iterator[None]:
    while not stop.wait(interval):
        yield None


def tail_events(path: str | os.PathLike[str], n: int = 200) -> list[dict[str, Any]]:
    """The last ``n`` events of a log, read from the end of the file when possible (``events_at_end``); a log
    whose lines give no seqs (DSH writes none: only a full count can number them) is decoded whole."""
    p = resolve_log_path(path)
    events = events_at_end(p, n)
    return events if events is not None else _tail_decoded(p, n)


def events_at_end(path: Path, n: int, have: tuple[int, bytes] | None = None) -> list[dict[str, Any]] | None:
    """The last ``n`` events of the log at ``path``, read from the end of the file in growing blocks (the last
    frames of a zstd log), so the cost depends on ``n``, not on the file size; None when the lines there carry no
    seq. ``have``: the bytes of a raw log from an offset to its end, read already (decoded first, not read again)."""
    return _tail_zstd(path, n) if is_compressed(path) else _tail_raw(path, n, have)


def _tail_decoded(path: Path, n: int) -> list[dict[str, Any]]:
    """The last ``n`` events of a whole pass of the decoder over the log, keeping only those."""
    last: deque[dict[str, Any]] = deque(maxlen=n)
    decoder = LogDecoder(str(path), is_compressed(path), consumer=Consumer(event=last.append))
    try:
        with open_regular(path) as f:  # a FIFO swapped in since the log was found is not waited on
            while chunk := f.read(READ_CHUNK):
                decoder.feed(chunk)
    except OSError as exc:
        raise LogFormatError(f"{quoted_path(path)}: cannot read ({exc.strerror or exc})") from exc
    decoder.finish()
    if decoder.fatal:
        raise LogFormatError(decoder.fatal)
    if decoder.header is None:
        raise decoder.no_header(path)
    return list(last)


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
    are in (each frame decoded once). A magic number inside compressed data cannot pass the chaining check by
    accident in practice."""
    magic = (0xFD2FB528).to_bytes(4, "little")
    # what each frame decoded to, by its file offset: a bigger window decodes only the frames the smaller ones did not
    decoded: dict[int, bytes] = {}
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
        if bounds is not None:  # frame 1 holds the header, alone or (``zstd FILE``) with every event
            texts: list[bytes] = []
            lines = 0
            try:
                for a, b in reversed(bounds):
                    text = decoded.get(start + a)
                    if text is None:
                        text = decoded[start + a] = decode_frame(data[a:b])
                    texts.append(text)
                    lines += text.count(b"\n")
                    if lines >= n:
                        break
            except (zstandard.ZstdError, FrameTooLarge):
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
            events.extend(expand_row(obj, obj["seq0"], as_time(obj.get("time0")))[0])
        else:
            if not isinstance(obj.get("seq"), int):
                return None
            complete_event(obj, obj["seq"], "")
            events.append(obj)
    return events[-n:] if n else []


def _tail_windows(path: Path, have: tuple[int, bytes] | None = None) -> Iterator[tuple[int, bytes]]:
    """``(start, bytes from start to the end of the file)`` for windows growing 4× from 64 KiB (from ``have``: the
    bytes from an offset to the end, read already) to the whole file; each reads only the bytes before the last."""
    size = os.path.getsize(path)
    start, data = have if have is not None else (size, b"")
    if data or not size:
        yield start, data
    block = 1 << 16
    with open_regular(path) as f:
        while start > 0:
            earlier = max(0, size - block)
            block *= 4
            if earlier < start:
                f.seek(earlier)
                start, data = earlier, f.read(start - earlier) + data
                yield start, data


def _tail_raw(path: Path, n: int, have: tuple[int, bytes] | None = None) -> list[dict[str, Any]] | None:
    for start, data in _tail_windows(path, have):
        lines = data[: data.rfind(b"\n") + 1].split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first line may be cut
        events = _events_from_lines(lines, n)
        if events is None or len(events) >= n or start == 0:
            return events
    return None
