"""What a reader keeps of the bytes it consumed from a file, to notice the file was written again in place: the
first ``FINGERPRINT`` bytes and the last ones. An append changes neither; a truncate-and-regrow, or another file
given the same inode, does (the log tailer, the control inbox's reader and the bridge's outcome reader check it)."""

from __future__ import annotations

import os
from collections.abc import Callable

FINGERPRINT = 256  # bytes kept from the start and from the end of what was read


def remembered(head: bytes, tail: bytes, chunk: bytes) -> tuple[bytes, bytes]:
    """The fingerprint ``(head, tail)`` once ``chunk``, the next bytes read, is consumed too."""
    if len(head) < FINGERPRINT:
        head += chunk[: FINGERPRINT - len(head)]
    return head, (tail + chunk[-FINGERPRINT:])[-FINGERPRINT:]


def holds(read: Callable[[int, int], bytes | None], head: bytes, tail: bytes, offset: int) -> bool:
    """Whether the file ``read(offset, length)`` reads (None: it is gone) still holds ``head`` at its start and
    ``tail`` just before ``offset``, where its reader stands."""
    if read(0, len(head)) != head:
        return False
    return offset <= len(head) or read(offset - len(tail), len(tail)) == tail


def still_holds(fd: int, head: bytes, tail: bytes, offset: int) -> bool:
    """``holds`` for the file open as ``fd``."""
    return holds(lambda at, length: os.pread(fd, length, at), head, tail, offset)
