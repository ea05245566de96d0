"""``[user@]host:PATH``: a path on another machine, as scp and lnav write it."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RemoteTarget:
    """A path on ``host`` (an ssh config alias or a name), reached as ``user`` (None: the ssh config's)."""

    user: str | None
    host: str
    path: str

    @property
    def where(self) -> str:
        """``user@host`` (or ``host``): what the fleet's ``where`` column shows."""
        return f"{self.user}@{self.host}" if self.user else self.host

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


def parse_remote(text: str) -> RemoteTarget | None:
    """The remote target ``text`` names, or None for a local path: a colon before any slash makes it remote
    (``host:logs``, ``me@box:/var/agents``), unless a local file of that name exists (``./a:b`` stays local). A
    relative path, or one under ``~/``, is under the login directory, where SFTP starts (as scp reads both). A
    name no local file can have (longer than this machine's paths, a NUL byte) is no local file: ``os.path.exists``
    answers False where ``Path.exists`` raised OSError (File name too long) out of the command line's check."""
    head, colon, path = text.partition(":")
    if not colon or not head or "/" in head or os.path.exists(text):
        return None
    user, at, host = head.rpartition("@")
    if not host or (at and not user):
        return None
    if path == "~" or path.startswith("~/"):
        path = path[2:]
    return RemoteTarget(user or None, host, path or ".")
