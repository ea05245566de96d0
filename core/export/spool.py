"""Spool files: a section that is written ahead of where it goes in the export waits in one (in memory while it
is small, then in the temp directory)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from core.shared.errors import TapedeckError

SPOOL_MEMORY = 1 << 20  # bytes a spool holds in memory before it goes to a file


class Spool:
    """A spool file that takes many small writes: they are joined into pieces of about ``SPOOL_MEMORY`` bytes
    before they go to the file."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.pending: list[bytes] = []
        self.held = 0

    def write(self, data: bytes) -> None:
        """Add ``data``."""
        self.pending.append(data)
        self.held += len(data)
        if self.held >= SPOOL_MEMORY:
            self.flush()

    def flush(self) -> None:
        """Write what is held to the file."""
        if self.pending:
            self.f.write(b"".join(self.pending))
            self.pending.clear()
            self.held = 0


@contextmanager
def spool() -> Iterator[Spool]:
    """A spool file, removed when the block ends; a spool that cannot be written is a ``TapedeckError``."""
    try:
        with tempfile.SpooledTemporaryFile(SPOOL_MEMORY) as f:
            yield Spool(f)
    except OSError as exc:
        raise TapedeckError(f"cannot write the export's spool file in {tempfile.gettempdir()} ({exc.strerror or exc})") from None


def replay(spooled: Spool) -> Iterator[bytes]:
    """What was written to ``spooled``, in pieces."""
    spooled.flush()
    f = spooled.f
    f.seek(0)
    while data := f.read(SPOOL_MEMORY):
        yield data
