"""Writing whole buffers: to a file descriptor (``os.write`` may write less than it is given), and to a file
that is replaced in one step (readers see the old bytes or the new, never part of them)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, calling ``os.write`` until none is left."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_file(
    path: Path, data: bytes | Iterable[bytes], *, prefix: str, suffix: str = "", sync: bool = False
) -> None:
    """Write ``data`` (bytes, or pieces written one after another) to a temporary file beside ``path`` (named
    ``prefix…suffix``), fsynced first when ``sync``, then rename it over ``path``; the temporary file is removed
    when anything fails."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines([data] if isinstance(data, bytes) else data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise
