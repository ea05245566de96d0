"""The DSH-compatible appender: exact layout, header key order, contiguous seq, one batch per write, fsync.

One live writer per session: the writer holds an exclusive ``flock`` on the log file itself for as long as it is
open (``core.log.owner``, which readers also ask whether a live writer owns a log), and a second writer fails with a
clear message naming the first one's pid (kept in ``<session dir>/.writer.lock``). The first write publishes the file DSH's way (temp file, fsync, hard link), so a
reader never sees a log without its header. Raw mode appends each batch as text ending in a newline; zstd mode
appends each batch as one checksummed frame. A failed write is truncated back to the previous size.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import zstandard

from core.errors import LogFormatError, WriterLockedError
from core.log import owner
from core.log.frames import FrameError, frame_end
from core.log.layout import is_compressed, log_path
from core.log.reader import LogData, read_log
from core.log.vocabulary import ENVELOPE_KEYS, SURFACE_TYPES, is_known_type

HEADER_ORDER = ("type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin",
                "delegationDepth", "agentPreset")  # fmt: skip
EVENT_ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")
LOCK_NAME = ".writer.lock"


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
    """Compact JSON for one event, keys in DSH's order (the index's fast path relies on it)."""
    ordered = {k: event[k] for k in EVENT_ORDER if k in event}
    return orjson.dumps(ordered)


class SessionWriter:
    """Appends events to one session log. Use ``create`` for a new session and ``resume`` for an existing one."""

    def __init__(
        self, path: Path, header: dict[str, Any], next_seq: int, last_time: int, lock_fd: int
    ) -> None:
        self.path = path
        self.header = header
        self.compressed = is_compressed(path) or path.name.endswith(".zstd")
        self.next_seq = next_seq
        self._last_time = last_time
        self._lock_fd = lock_fd
        self._owner_fd = -1
        self._compressor = zstandard.ZstdCompressor(write_checksum=True) if self.compressed else None

    # opening ----------------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls, root: str | os.PathLike[str], header: dict[str, Any], *, compressed: bool = False
    ) -> SessionWriter:
        """Create a new session log at its DSH path under ``root`` and publish it holding just the header."""
        path = log_path(Path(root), header.get("cwd"), str(header["id"]), compressed)
        path.parent.mkdir(parents=True, exist_ok=True)
        lock_fd = _lock(path)
        if path.exists():
            os.close(lock_fd)
            raise LogFormatError(f"{path}: a session log already exists here; resume it instead")
        writer = cls(path, header, 0, 0, lock_fd)
        writer.compressed = compressed
        writer._compressor = zstandard.ZstdCompressor(write_checksum=True) if compressed else None
        writer._owner_fd = writer._publish(orjson.dumps(header) + b"\n")
        return writer

    @classmethod
    def resume(cls, path: str | os.PathLike[str]) -> tuple[SessionWriter, LogData]:
        """Open an existing log for appending; a torn final line or frame is cut off first (as DSH does)."""
        p = Path(path)
        lock_fd = _lock(p)
        owner_fd = -1
        try:
            owner_fd = _own(p)
            _repair_tail(p)
            data = read_log(p)
        except Exception:
            os.close(lock_fd)
            if owner_fd >= 0:
                os.close(owner_fd)
            raise
        last_time = max((e.get("time", 0) for e in data.events[-1:]), default=0)
        writer = cls(p, data.header, len(data.events), int(last_time), lock_fd)
        writer._owner_fd = owner_fd
        return writer, data

    # writing ----------------------------------------------------------------------------------------------
    def append(self, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Assign seq/time, validate and durably append one batch; return the stored events."""
        if not events:
            return []
        stored: list[dict[str, Any]] = []
        now = max(int(time.time() * 1000), self._last_time)
        seq = self.next_seq
        for event in events:
            stored.append(self._envelope(event, seq, now))
            seq += 1
        payload = b"\n".join(encode_event(e) for e in stored) + b"\n"
        self._write(payload)
        self.next_seq = seq
        self._last_time = now
        return stored

    def close(self) -> None:
        """Release the writer locks (the log's owner lock first: readers then see the host gone)."""
        if self._owner_fd >= 0:
            os.close(self._owner_fd)
            self._owner_fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

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

    def _write(self, payload: bytes) -> None:
        blob = self._compressor.compress(payload) if self._compressor else payload
        size = os.path.getsize(self.path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, blob)
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, size)
            raise
        finally:
            os.close(fd)

    def _publish(self, header_line: bytes) -> int:
        """Publish the log holding ``header_line``, owned (locked) before any reader can see it; the lock's fd."""
        blob = self._compressor.compress(header_line) if self._compressor else header_line
        tmp = self.path.with_name(f"{self.path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a fresh inode nobody else can hold yet
            os.write(fd, blob)
            os.fsync(fd)
            os.link(tmp, self.path)
        except BaseException:
            os.close(fd)
            raise
        finally:
            tmp.unlink(missing_ok=True)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return fd


def _lock(path: Path) -> int:
    lock_path = path.parent / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise WriterLockedError(
            f"{path} is already open for writing by another process (pid {holder}); a session has one live writer"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _own(path: Path) -> int:
    """An fd of the log holding its owner lock, or WriterLockedError when a live writer already owns it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    if not owner.acquire(fd):
        os.close(fd)
        raise WriterLockedError(f"{path} is already open for writing by another process; a session has one live writer")
    return fd


def _repair_tail(path: Path) -> int:
    """Truncate an incomplete final line (raw) or frame (zstd); return the bytes removed."""
    data = path.read_bytes()
    if is_compressed(path):
        pos = 0
        while pos < len(data):
            try:
                end = frame_end(data, pos)
            except FrameError:
                end = None
            if end is None:
                break
            pos = end
        keep = pos
    else:
        keep = data.rfind(b"\n") + 1
    removed = len(data) - keep
    if removed and keep > 0:
        with open(path, "r+b") as f:
            f.truncate(keep)
            os.fsync(f.fileno())
    return removed if keep > 0 else 0
