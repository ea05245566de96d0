"""Reading a file only when it is a regular file: never blocking on a FIFO, never reading a device without end; or
reading a file a user names, a pipe included, only up to a size."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from core.shared.text import quoted_path


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (``follow``: through a final symbolic link); an OSError
    otherwise, raised before anything would block or run on."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes:
    """At most ``limit + 1`` bytes of the regular file at ``path`` (one more than ``limit`` says it is longer);
    an OSError when it is no regular file or cannot be read."""
    with open_regular(path, follow=follow) as f:
        return f.read(limit + 1)


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the file a user named at ``path`` (one more than ``limit`` says it is longer): a
    pipe, such as ``<(cmd)``, is read to its end, and a device that never ends only that far; an OSError when it
    cannot be opened or read."""
    with open(path, "rb") as f:
        return f.read(limit + 1)


MAX_CONFIG_BYTES = 1 << 20  # no config file (policies, keymap, TUI settings) is near a MiB


class TooLarge(ValueError):
    """A config file past ``MAX_CONFIG_BYTES``; its message names the file and what it was read as."""


def read_config(path: str | os.PathLike[str], what: str, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the config file a user named at ``path``, read as ``what`` (``policy config``, ``keymap``): an
    OSError when it cannot be read, ``TooLarge`` past ``limit`` (a file of gigabytes is not read whole)."""
    data = read_capped(path, limit)
    if len(data) > limit:
        raise TooLarge(f"{quoted_path(path)}: larger than {limit >> 20} MiB, which no {what} is")
    return data
