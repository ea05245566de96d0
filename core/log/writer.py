"""The DSH-compatible appender: exact layout, header key order, contiguous seq, one batch per write, fsync.

One live writer per session: the writer holds an exclusive ``flock`` on the log file itself (``core.log.owner``,
which readers also ask whether a live writer owns a log) on the descriptor every batch is written through, so a
second writer fails with a clear message even when ``<session dir>/.writer.lock`` (which guards creation and names
the holder's pid) has been deleted; before each batch the writer checks that the path still names the file it
holds, and that the file is as long as the writer left it (not cut short or written to by another program). The
first write publishes the file DSH's way (temp file, fsync, hard
link), so a reader never sees a log without its header. Raw mode appends each batch as text ending in a newline;
zstd mode appends each batch as one checksummed frame. A failed write is truncated back to the previous size.

Reopening a log keeps every event a reader can see: a torn final frame gives back its complete lines, a final
line that only lacks its newline is kept. Damage before the end (a corrupt frame, a bad line, a seq gap) is never
cut off: ``resume`` refuses such a log and names ``tapedeck repair`` (``core.log.repair``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shlex
import signal
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import zstandard

from core.log import owner
from core.log.frames import ZSTD_MAGIC, FrameError, frame_end, recover_lines
from core.log.layout import is_compressed, log_path, resolve_log_path
from core.log.reader import LogData, read_log
from core.log.vocabulary import ENVELOPE_KEYS, SURFACE_TYPES, is_known_type
from core.shared.diagnostics import Diagnostic
from core.shared.errors import LogFormatError, WriterLockedError
from core.shared.fdwrite import write_all
from core.shared.regular import read_regular
from core.shared.text import quoted_path

HEADER_ORDER = ("type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin",
                "delegationDepth", "agentPreset")  # fmt: skip
EVENT_ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")
LOCK_NAME = ".writer.lock"
_STOPS = {signal.SIGINT, signal.SIGTERM}  # the signals that stop a run (``signals_held``)
# Reader diagnostics that mean events before the end were lost or renumbered: appending after them would
# continue from a wrong seq, so such a log is repaired first.
DAMAGE_CODES = frozenset(
    {"corrupt-frame", "bad-json", "not-an-object", "seq-gap", "seq-mismatch", "missing-seq", "bad-row"}
)


class DamagedLogError(LogFormatError):
    """The log is damaged before its end; ``tapedeck repair`` fills the hole and keeps every intact event."""


def make_header(
    session_id: str,
    *,
    cwd: str | None,
    created_at: int | None = None,
    parent_session: str | None = None,
    seed_length: int | None = None,
    origin: str | None = None,
    delegation_depth: int = 0,
    agent_preset: str | None = None,
) -> dict[str, Any]:
    """A version-0 header in DSH's key order; optional fields are omitted, never null."""
    values = {
        "type": "session",
        "version": 0,
        "id": session_id,
        "createdAt": int(time.time() * 1000) if created_at is None else created_at,
        "cwd": cwd,
        "parentSession": parent_session,
        "seedLength": seed_length,
        "origin": origin,
        "delegationDepth": delegation_depth,
        "agentPreset": agent_preset,
    }
    return {k: values[k] for k in HEADER_ORDER if values[k] is not None}


def encode_event(event: dict[str, Any]) -> bytes:
    """Compact JSON for one event, keys in DSH's order (reading a line's turn and step from its head relies on it)."""
    ordered = {k: event[k] for k in EVENT_ORDER if k in event}
    return orjson.dumps(ordered)


class SessionWriter:
    """Appends events to one session log. Use ``create`` for a new session and ``resume`` for an existing one."""

    def __init__(
        self, path: Path, header: dict[str, Any], next_seq: int, last_time: int, lock_fd: int, log_fd: int
    ) -> None:
        self.path = path
        self.header = header
        self.compressed = is_compressed(path) or path.name.endswith(".zstd")
        self.next_seq = next_seq
        self._last_time = last_time
        self._lock_fd = lock_fd
        self._log_fd = log_fd
        self._size = os.fstat(log_fd).st_size if log_fd >= 0 else 0  # the bytes the log holds as this writer left it
        self._writing = threading.RLock()  # a check never sees a batch written but not yet counted
        self._failed: str | None = None  # why a batch could not be appended: nothing more is then
        self.published: list[dict[str, Any]] = []  # the events ``create`` published with the header
        self._compressor = zstandard.ZstdCompressor(write_checksum=True) if self.compressed else None

    # opening ----------------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        root: str | os.PathLike[str],
        header: dict[str, Any],
        *,
        compressed: bool = False,
        first: Sequence[dict[str, Any]] = (),
    ) -> SessionWriter:
        """Create a new session log at its DSH path under ``root`` and publish it.

        The published file holds the header and the ``first`` events (stored in ``published``): a crash can
        never leave the log without them. In zstd the header is alone in frame 1 and ``first`` in frame 2.
        """
        path = log_path(Path(root), header.get("cwd"), str(header["id"]), compressed)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file where a directory must be, no permission, a read-only file system …
            why = exc.strerror or exc
            raise LogFormatError(f"cannot create the session directory {quoted_path(path.parent)}: {why}") from None
        lock_fd = _lock(path)
        if path.exists():
            os.close(lock_fd)
            raise LogFormatError(f"{quoted_path(path)}: a session log already exists here; resume it instead")
        writer = cls(path, header, 0, 0, lock_fd, -1)
        writer.compressed = compressed
        writer._compressor = zstandard.ZstdCompressor(write_checksum=True) if compressed else None
        try:
            stored, payload = writer._batch(first)
            blob = writer._pack(orjson.dumps(header) + b"\n") + writer._pack(payload)
            writer._log_fd = publish(path, blob)
        except BaseException:
            os.close(lock_fd)
            raise
        writer._size = len(blob)
        writer._commit(stored)
        writer.published = stored
        return writer

    @classmethod
    def resume(cls, path: str | os.PathLike[str]) -> tuple[SessionWriter, LogData]:
        """Open an existing log for appending, after settling its tail as DSH does.

        A torn final line or frame is cut off, and the complete lines a torn frame held are written back as one
        new frame; a final line missing only its newline gets it. A log damaged before its end is refused with
        ``DamagedLogError`` and left exactly as it was. ``path`` is the log or its session directory; a FIFO, a
        device or a socket is refused before anything opens it.
        """
        p = resolve_log_path(path)
        log_fd, lock_fd = acquire(p)
        try:
            data = read_log(p)
            check_intact(data)  # before the tail is settled: a refused log keeps every byte
            if _repair_tail(p, log_fd):
                data = read_log(p)
        except BaseException:
            os.close(lock_fd)
            os.close(log_fd)
            raise
        last_time = max((e.get("time", 0) for e in data.events[-1:]), default=0)
        return cls(p, data.header, len(data.events), int(last_time), lock_fd, log_fd), data

    # writing ----------------------------------------------------------------------------------------------
    def append(self, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Assign seq/time, validate and durably append one batch; return the stored events."""
        if not events:
            return []
        stored, payload = self._batch(events)
        with signals_held():  # a batch written is counted before a SIGTERM or Ctrl-C may stop the run
            self._write(payload)
            self._commit(stored)
        return stored

    def _batch(self, events: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], bytes]:
        """The stored form of a batch (seq, time, validated) and its bytes (empty for no events)."""
        now = max(int(time.time() * 1000), self._last_time)
        stored = [self._envelope(event, self.next_seq + n, now) for n, event in enumerate(events)]
        return stored, b"".join(encode_event(e) + b"\n" for e in stored)

    def _commit(self, stored: list[dict[str, Any]]) -> None:
        if stored:
            self.next_seq = stored[-1]["seq"] + 1
            self._last_time = stored[-1]["time"]

    def _pack(self, payload: bytes) -> bytes:
        """One batch as written: the text itself, or one checksummed frame (nothing for no text)."""
        return self._compressor.compress(payload) if self._compressor and payload else payload

    def close(self) -> None:
        """Release the writer locks."""
        for fd in (self._log_fd, self._lock_fd):
            if fd >= 0:
                os.close(fd)
        self._log_fd = self._lock_fd = -1

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _envelope(self, event: dict[str, Any], seq: int, now: int) -> dict[str, Any]:
        extra = set(event) - ENVELOPE_KEYS
        if extra:
            raise ValueError(f"event has non-envelope key(s): {', '.join(sorted(extra))}")
        etype = event.get("type")
        if not isinstance(etype, str) or not etype:
            raise ValueError("event needs a string type")
        if etype in SURFACE_TYPES and "surfaceOp" not in event:
            raise ValueError(f"{etype} needs a surfaceOp")
        if etype not in SURFACE_TYPES and ("surfaceOp" in event or "sourceEventSeqs" in event):
            raise ValueError(f"{etype} is log-only and cannot carry surfaceOp/sourceEventSeqs")
        out = {**event, "seq": seq, "time": now}
        out.setdefault("data", {})
        if not is_known_type(etype):
            out["ignorable"] = True
        return out

    def check_held(self) -> None:
        """Raise LogFormatError when this writer is closed, or could not append a batch, or its log was replaced or
        removed under it, or cut short or written to by another program (appending then would number events after
        ones it no longer holds, or after bytes that are no events of it)."""
        with self._writing:
            if self._log_fd < 0:
                raise LogFormatError(f"{quoted_path(self.path)}: this writer is closed")
            if self._failed is not None:
                raise LogFormatError(self._failed)
            held = os.fstat(self._log_fd)
            try:
                same = os.path.samestat(held, os.stat(self.path))
            except FileNotFoundError:
                same = False
            if not same:
                raise LogFormatError(
                    f"{quoted_path(self.path)} was replaced or removed while this writer held it; nothing more is appended"
                )
            if held.st_size != self._size:
                change = (
                    f"was truncated from {self._size:,} to {held.st_size:,} bytes"
                    if held.st_size < self._size
                    else f"grew by {held.st_size - self._size:,} bytes it did not write"
                )
                raise LogFormatError(f"{quoted_path(self.path)} {change} while this writer held it; nothing more is appended: "
                                     "`tapedeck run --resume` takes the log as it is now")  # fmt: skip

    def _write(self, payload: bytes) -> None:
        with self._writing:
            self.check_held()
            blob = self._pack(payload)
            try:
                append_synced(self._log_fd, blob)
            except OSError as exc:  # a full disk, a quota, an I/O error: the log ends at its last whole batch
                self._failed = (
                    f"{quoted_path(self.path)}: could not be appended to ({exc.strerror or exc}); nothing more is appended: it "
                    "holds every event before that batch, and `tapedeck run --resume` goes on once it can be written"
                )
                raise LogFormatError(self._failed) from exc
            self._size += len(blob)


def check_intact(data: LogData) -> None:
    """Raise ``DamagedLogError`` when ``data`` lost or renumbered events before its end."""
    damage = [d for d in data.diagnostics if d.code in DAMAGE_CODES]
    if damage:
        raise DamagedLogError(damage_message(data.path, damage))


def damage_message(path: Path, damage: Sequence[Diagnostic]) -> str:
    """The refusal that names the damage and the repair command."""
    return (
        f"{quoted_path(path)} is damaged before its end ({len(damage)} problem(s), first: {damage[0]}); appending after "
        f"a hole would corrupt the session, so nothing was changed. Run `tapedeck repair {shlex.quote(quoted_path(path))}`: it keeps a "
        "byte-for-byte copy, stands in for the lost events and keeps every intact one; then resume again."
    )


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Within: SIGINT and SIGTERM wait, and reach the process's handlers on leaving. The CLI takes each as an
    exception raised wherever its main thread stands, which inside here would split a batch's bytes from the count
    of them. Python runs handlers in the main thread whichever thread the kernel gave the signal to, so it is their
    handlers that wait (a signal mask holds one thread only); on another thread nothing needs holding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = {sig: handler for sig in _STOPS if (handler := signal.getsignal(sig)) is not None}  # None: set from C
    for sig in held:
        signal.signal(sig, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


def append_synced(fd: int, blob: bytes) -> None:
    """Write all of ``blob`` at the end of ``fd`` and fsync; on failure cut the file back to its old size."""
    size = os.fstat(fd).st_size
    try:
        write_all(fd, blob)
        os.fsync(fd)
    except OSError:
        os.ftruncate(fd, size)
        raise


def publish(path: Path, blob: bytes) -> int:
    """Create ``path`` holding ``blob`` the way DSH publishes a new log (temp file, fsync, hard link).

    Returns an appending descriptor that owns the file (its exclusive ``flock`` was taken before the link, so
    no reader ever sees the new log unowned).
    """
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a fresh inode nobody else can hold yet
        append_synced(fd, blob)
        try:
            os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except BaseException:
        os.close(fd)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return fd


def _no_lock_file(lock_path: Path, why: str) -> LogFormatError:
    return LogFormatError(
        f"{lock_path}: cannot be the writer's lock file ({why}; a symbolic link is never followed); nothing was "
        "written: remove it and try again"
    )


def _holder(path: Path) -> str:
    try:
        text = read_regular(path.parent / LOCK_NAME, 32, follow=False).decode(errors="replace")
    except OSError:
        return "unknown"
    return text.strip()[:32] or "unknown"


def _locked(path: Path) -> WriterLockedError:
    return WriterLockedError(
        f"{quoted_path(path)} is already open for writing by another process (pid {_holder(path)}); "
        "a session has one live writer"
    )


def _hold(path: Path) -> int:
    """Open the log for appending under an exclusive ``flock`` of the file itself (no lock file to delete)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    except FileNotFoundError:
        raise LogFormatError(f"{quoted_path(path)}: no session log here") from None
    if not owner.acquire(fd):
        os.close(fd)
        raise _locked(path)
    return fd


def acquire(path: Path) -> tuple[int, int]:
    """Take both writer locks of an existing log: its own ``flock``, then the lock file (fds, in that order)."""
    log_fd = _hold(path)
    try:
        return log_fd, _lock(path)
    except BaseException:
        os.close(log_fd)
        raise


def _lock(path: Path) -> int:
    """Take the lock file beside the log (created, a plain file: each writer truncates it and writes its pid, so it
    is never opened through a link, nor waited on as a FIFO)."""
    lock_path = path.parent / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(lock_path, flags, 0o644)
    except OSError as exc:
        raise _no_lock_file(lock_path, exc.strerror or str(exc)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _no_lock_file(lock_path, "not a regular file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _locked(path) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _repair_tail(path: Path, fd: int) -> bool:
    """Settle the end of the log: keep what a reader sees, drop only bytes no reader can decode. True when the
    file changed."""
    data = path.read_bytes()
    if is_compressed(path):
        return _repair_zstd_tail(path, fd, data)
    keep = data.rfind(b"\n") + 1
    if keep == len(data) or keep == 0:
        return False
    try:
        complete = isinstance(orjson.loads(data[keep:]), dict)
    except orjson.JSONDecodeError:
        complete = False
    if complete:  # a whole event that only lacks its newline
        append_synced(fd, b"\n")
    else:
        _truncate(fd, keep)
    return True


def _repair_zstd_tail(path: Path, fd: int, data: bytes) -> bool:
    pos = 0
    while pos < len(data):
        try:
            end = frame_end(data, pos)
        except FrameError:
            return False  # damage, not a torn tail: read_log reports it and resume refuses
        if end is None:
            break
        pos = end
    if pos == len(data) or pos == 0:
        return False
    torn = data[pos:]
    if torn.find(ZSTD_MAGIC.to_bytes(4, "little"), 4) >= 0:
        # Frames may follow a frame whose header claims more bytes than remain: never cut them off.
        raise DamagedLogError(
            damage_message(path, [Diagnostic("corrupt-frame", "a frame overruns later frames", pos)])
        )
    recovered = recover_lines(torn)
    _truncate(fd, pos)
    if recovered:  # the complete lines a reader already saw go back as one whole frame
        append_synced(fd, zstandard.ZstdCompressor(write_checksum=True).compress(recovered))
    return True


def _truncate(fd: int, size: int) -> None:
    os.ftruncate(fd, size)
    os.fsync(fd)
