"""Writing a whole buffer to a file descriptor: ``os.write`` may write less than it is given."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, calling ``os.write`` until none is left."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
