"""Spool files: a section that is written ahead of where it goes in the export waits in one (in memory while it
is small, then in the temp directory)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from core.shared.errors import TapedeckError

SPOOL_MEMORY = 1 << 20  # bytes a spool holds in memory before it goes to a file


@contextmanager
def spool() -> Iterator[IO[bytes]]:
    """A spool file, removed when the block ends; a spool that cannot be written is a ``TapedeckError``."""
    try:
        with tempfile.SpooledTemporaryFile(SPOOL_MEMORY) as f:
            yield f
    except OSError as exc:
        raise TapedeckError(f"cannot write the export's spool file in {tempfile.gettempdir()} ({exc.strerror or exc})") from None


def replay(f: IO[bytes]) -> Iterator[bytes]:
    """What was written to spool ``f``, in pieces."""
    f.seek(0)
    while data := f.read(SPOOL_MEMORY):
        yield data
