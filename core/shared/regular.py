"""Reading a file only when it is a regular file: never blocking on a FIFO, never reading a device without end."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


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
