"""One session on another machine as the TUI opens it (``tapedeck watch [user@]host:PATH``): its log found and
its header read over SFTP, a ``RemoteTailer`` feeding the same decoder and projection as a local log, its host's
state, control requests appended to its remote inbox, and a DSH bridge's outcomes read from the remote
``control.outcomes.jsonl`` from their new bytes."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.bridge.files import OutcomeReader
from core.control.host_state import HostState
from core.log.decoder import Consumer
from core.log.layout import RAW_NAME, ZSTD_NAME
from core.remote.inbox import append_remote_request, withdraw_remote_request
from core.remote.link import FileGone, SshLink, link_for
from core.remote.sessions import (
    remote_header,
    remote_host_state,
    remote_layout_note,
    remote_logs,
    session_log_of,
)
from core.remote.tail import RemoteTailer
from core.remote.target import RemoteTarget, parse_remote
from core.shared.errors import NoLogInDirectoryError, TapedeckError
from core.shared.text import quoted_path

REMOTE_INTERVAL = 0.25  # a remote log is polled at most this often (each poll is a round trip)


class NoRemoteLogError(NoLogInDirectoryError):
    """``NoLogInDirectoryError`` for a directory on another machine: its ``note`` is read over the link, when the
    refusal is shown."""

    def __init__(self, link: SshLink, target: RemoteTarget) -> None:
        super().__init__(f"{quoted_path(str(target))}: no {RAW_NAME} or {ZSTD_NAME} in this directory", str(target))
        self.link, self.target = link, target

    local = False  # its note is read over the link

    def note(self) -> str | None:
        """As a local directory's (``core.log.sessions.no_session_note``): a sessions root's sessions, else what it
        holds instead (``remote_layout_note``, which adds nothing where the machine cannot be asked: the refusal
        then stands alone)."""
        return remote_layout_note(self.link, self.target, "sessions", root_note=True)


def resolve_remote_log(link: SshLink, target: RemoteTarget) -> RemoteTarget:
    """The one session log ``target`` names (a log or a session directory); a directory with no log of its own is
    refused (``NoRemoteLogError``) as ``resolve_log_path`` refuses a local one, a sessions root even of one
    session."""
    log = session_log_of(target, remote_logs(link, target, roots=False))
    if log is None:
        raise NoRemoteLogError(link, target)
    return log


def names_one_session(target: RemoteTarget) -> bool:
    """Whether ``target`` names one session, a log (by any name) or a session directory with its log, as
    ``resolve_remote_log`` finds it there now (a log's own name costs no round trip); not a sessions root, nor a path
    the machine cannot be asked about (the fleet table says why)."""
    try:
        resolve_remote_log(link_for(target), target)
    except TapedeckError:
        return False
    return True


class RemoteOutcomes(OutcomeReader):
    """``OutcomeReader`` over SFTP: the remote ``control.outcomes.jsonl`` read from its new bytes (no inode over
    SFTP: a replaced file shows as one that shrank)."""

    def __init__(self, link: SshLink, session_dir: RemoteTarget) -> None:
        super().__init__(Path(str(session_dir)))
        self.link = link
        self.remote = session_dir.join(self.path.name)

    def _stat(self) -> tuple[tuple[int, int], int, int] | None:
        st = self.link.stat(self.remote.path, follow=False)
        return ((0, 0), st.size, st.mtime_ms) if st is not None and st.kind == "file" else None

    def _read_range(self, offset: int, length: int) -> bytes | None:
        """``length`` bytes from ``offset``; None when the file went since its stat, as a local reader's."""
        try:
            return self.link.read(self.remote.path, offset, length)
        except FileGone:
            return None


class RemoteLog:
    """The remote side of a live session: where its log is and what can be done with it over SSH."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target
        self.link = link_for(target)
        self.log: RemoteTarget | None = None  # the log itself, once found
        self.host = HostState("none")  # the host's state at the last read
        self.tail: RemoteTailer | None = None  # the tailer reading the log now

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> RemoteLog | None:
        """The remote log ``path`` names, or None for a local path."""
        target = parse_remote(str(path))
        return cls(target) if target is not None else None

    def _found(self) -> RemoteTarget:
        if self.log is None:
            self.log = resolve_remote_log(self.link, self.target)
        return self.log

    def open(self) -> tuple[Path, dict[str, Any]]:
        """The log (as a ``user@host:PATH`` path) and its header (raises as ``remote_header`` does)."""
        log = self._found()
        return Path(str(log)), remote_header(self.link, log)

    def size(self) -> int:
        """The log's size now."""
        st = self.link.stat(self._found().path)
        return st.size if st is not None else 0

    def tailer(self, pace: Callable[[], None] | None, consumer: Consumer) -> RemoteTailer:
        """A tailer of the log from its start."""
        self.tail = RemoteTailer(self.link, self._found(), pace, consumer)
        return self.tail

    def host_state(self, hosted: bool, last: HostState) -> HostState:
        """The host's state from the remote files (``last`` while the machine cannot be reached)."""
        try:
            self.host = remote_host_state(self.link, self._found(), hosted)
        except TapedeckError:
            self.host = last
        return self.host

    def outcomes(self) -> RemoteOutcomes:
        """A reader of the bridge's outcome file beside the log (or in the session directory given)."""
        named_log = posixpath.basename(self.target.path) in (RAW_NAME, ZSTD_NAME)
        return RemoteOutcomes(self.link, self.target.at(posixpath.dirname(self.target.path)) if named_log else self.target)

    def send(self, op: str, args: dict[str, Any], kind: str) -> dict[str, Any]:
        """Append a control request for the live host to the remote inbox; returns it (``RemoteHostExited`` when
        that host let go of its log first: nothing was written)."""
        return append_remote_request(self.link, self._found(), op, args, live=True, kind=kind)

    def withdraw(self, request_id: str) -> None:
        """Withdraw a request from the remote inbox."""
        withdraw_remote_request(self.link, self._found(), request_id)
