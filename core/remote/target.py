"""``[user@]host:PATH``: a path on another machine, as scp and lnav write it."""

from __future__ import annotations

import os
import posixpath
import re

from core.shared.records import record
from core.shared.text import quoted


@record(frozen=True, slots=True)
class RemoteTarget:
    """A path on ``host`` (an ssh config alias or a name), reached as ``user`` (None: the ssh config's)."""

    user: str | None
    host: str
    path: str

    @property
    def where(self) -> str:
        """``user@host`` (or ``host``): what the fleet's ``where`` column shows; an IPv6 address in brackets, as scp
        writes it (``me@[::1]``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.user}@{host}" if self.user else host

    @property
    def compressed(self) -> bool:
        """A zstd log, by its name (the remote file's first bytes are not read for it)."""
        return self.path.endswith((".zstd", ".zst"))

    def at(self, path: str) -> RemoteTarget:
        """The same machine, another path."""
        return RemoteTarget(self.user, self.host, path)

    def join(self, *parts: str) -> RemoteTarget:
        """A path under this one."""
        return self.at(posixpath.join(self.path, *parts))

    def __str__(self) -> str:
        return f"{self.where}:{self.path}"


# scp's form for an IPv6 address (or any host) in brackets: [ADDRESS]:PATH, USER@[ADDRESS]:PATH
_BRACKETED = re.compile(r"(?:(?P<user>[^/]*?)@)?\[(?P<host>[^/@\[\]]+)\]:(?P<path>.*)", re.DOTALL)


def parse_remote(text: str) -> RemoteTarget | None:
    """The remote target ``text`` names, or None for a local path: a colon before any slash makes it remote
    (``host:logs``, ``me@box:/var/agents``, ``me@[::1]:logs``), unless a local file of that name exists (``./a:b``
    stays local). A relative path, or one under ``~/``, is under the login directory, where SFTP starts (as scp reads
    both). A name no local file can have (longer than this machine's paths, a NUL byte) is no local file:
    ``os.path.exists`` answers False where ``Path.exists`` raised OSError (File name too long) out of the command
    line's check. A bracketed host that is not closed before the colon (``me@[::1:logs``) is no target
    (``bracket_problem`` says why)."""
    head, colon, path = text.partition(":")
    if not colon or not head or "/" in head or os.path.exists(text):
        return None
    if _bracketed(head):
        found = _BRACKETED.fullmatch(text)
        if found is None:
            return None
        user, host, path = found["user"], found["host"], found["path"]
        if user == "":
            return None
    else:
        user, at, host = head.rpartition("@")
        if not host or (at and not user):
            return None
    if path == "~" or path.startswith("~/"):
        path = path[2:]
    return RemoteTarget(user or None, host, path or ".")


def _bracketed(head: str) -> bool:
    """Whether ``head`` (``text`` up to its first colon, with no slash) opens a bracketed host, as scp reads one."""
    return head.startswith("[") or "@[" in head


def bracket_problem(text: str) -> str | None:
    """Why ``text``, written as a bracketed remote host, names none (``me@[::1:logs``, ``[::1]/x``, ``@[::1]:p``);
    None when it is not written so, names one, or names a local file."""
    head = text.split("/", 1)[0]
    if ":" not in head or not _bracketed(head.partition(":")[0]) or parse_remote(text) is not None:
        return None
    if os.path.exists(text):
        return None
    return (f"{quoted(text)}: a host in brackets is written [ADDRESS]:PATH or USER@[ADDRESS]:PATH, the ] right before "
            "the colon, with no /, @ or bracket inside")
