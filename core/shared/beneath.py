"""Opening paths beneath a trusted directory without following any symbolic link on the way.

Each component is opened relative to the descriptor of the one before it, with ``O_NOFOLLOW`` (and
``O_DIRECTORY`` for directories), so a component that is, or is swapped for, a symbolic link makes the open
fail instead of leading elsewhere. The workspace tools and the prolong log writer open their files this way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence

OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Files are opened without following a final link and without blocking on a FIFO (callers fstat the result).
OPEN_FILE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class LinkRefused(OSError):
    """A component of the path is a symbolic link."""


def _refusal(exc: OSError, fd: int, part: str) -> OSError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                return LinkRefused(errno.ELOOP, "a symbolic link is in the way (links are not followed)", part)
    return exc


def open_dir(root: str | os.PathLike[str], parts: Sequence[str], *, create: bool = False) -> int:
    """A descriptor of ``root/parts...`` (the caller closes it); ``create`` makes missing directories.

    Raises LinkRefused when a component is a symbolic link, else the OSError of the failing open.
    """
    fd = os.open(root, OPEN_DIR)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                step = os.open(part, OPEN_DIR, dir_fd=fd)
            except OSError as exc:
                raise _refusal(exc, fd, part) from exc
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
    """Open ``name`` in the directory ``dir_fd`` without following a link (``flags`` added to ``OPEN_FILE``)."""
    try:
        return os.open(name, flags | OPEN_FILE, mode, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(exc, dir_fd, name) from exc
