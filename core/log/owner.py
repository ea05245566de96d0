"""Who owns a session log right now: its live writer holds an exclusive ``flock`` on the log file itself.

The lock lives on the log's inode, so deleting or replacing any side file cannot hand the log to a second
writer, and the kernel drops it the moment the writer's process dies (crash or SIGKILL included). A reader asks
``is_owned`` without racing a starting writer: its probe is a non-blocking *shared* lock released at once, and a
writer retries its exclusive lock for a moment before concluding that another writer holds the log.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

ACQUIRE_SECONDS = 1.0  # how long a writer waits out readers' momentary probes before giving up
_RETRY_SECONDS = 0.005


def acquire(fd: int) -> bool:
    """Take the exclusive owner lock on the open log ``fd``; False when another writer holds it."""
    deadline = time.monotonic() + ACQUIRE_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_RETRY_SECONDS)


def is_owned(path: str | os.PathLike[str]) -> bool:
    """Whether a live writer holds the log at ``path`` (False for a missing or unreadable file)."""
    try:
        fd = os.open(Path(path), os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # closing drops the probe's shared lock
    return False
