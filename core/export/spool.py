"""Spool files: a section that is written ahead of where it goes in the export waits in one (in memory while it
is small, then in the temp directory)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, Protocol, runtime_checkable

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
        """Write what is held to the file (also while a log is read: an error says it is the spool's)."""
        if self.pending:
            try:
                self.f.write(b"".join(self.pending))
            except OSError as exc:
                raise _failed(exc) from None
            self.pending.clear()
            self.held = 0


@contextmanager
def spool() -> Iterator[Spool]:
    """A spool file, removed when the block ends; a spool that cannot be written is a ``TapedeckError``."""
    try:
        with tempfile.SpooledTemporaryFile(SPOOL_MEMORY) as f:
            yield Spool(f)
    except OSError as exc:
        raise _failed(exc) from None


def _failed(exc: OSError) -> TapedeckError:
    return TapedeckError(f"cannot write the export's spool file in {tempfile.gettempdir()} ({exc.strerror or exc})")


def replay(spooled: Spool) -> Iterator[bytes]:
    """What was written to ``spooled``, in pieces."""
    spooled.flush()
    f = spooled.f
    f.seek(0)
    while data := f.read(SPOOL_MEMORY):
        yield data


@runtime_checkable
class Pieces(Protocol):
    """How a writer writes a surface row and a request message (each alone, the same wherever it comes from)."""

    def surface_piece(self, row: dict[str, Any]) -> bytes:
        """The bytes of one surface row."""
        ...

    def message_piece(self, message: dict[str, Any]) -> bytes:
        """The bytes of one request message."""
        ...


class _Reader:
    """Reads a spool back by offset, a window of about ``SPOOL_MEMORY`` bytes at a time: what is read back is
    mostly read in the order it was written, so most reads are slices of the last window."""

    def __init__(self, spooled: Spool) -> None:
        self.spooled = spooled
        self.size = 0  # bytes written so far
        self._window: tuple[int, bytes] = (0, b"")  # where the last read began, and what it read

    def write(self, data: bytes) -> None:
        """Add ``data`` at offset ``size``."""
        self._window = (0, b"")
        self.spooled.write(data)
        self.size += len(data)

    def read(self, start: int, length: int) -> bytes:
        """``length`` bytes from ``start``."""
        at, window = self._window
        if at <= start and start + length <= at + len(window):
            return window[start - at : start + length - at]
        self.spooled.flush()
        f = self.spooled.f
        f.seek(start)
        window = f.read(max(length, SPOOL_MEMORY))
        self._window = (start, window)
        return window[:length]


class NodeSpool:
    """What the export writes of each surface node (its surface row and its redacted wire messages, as the
    writer's pieces, and what redacting the messages replaced), made while the pass has the node's event and kept
    by seq in two spools (the rows, the messages), so that the sections written at the end need not read the
    event back from the log and decode it again, nor decode and render what the spools hold; each section reads
    its own spool in order."""

    def __init__(self, rows: Spool, messages: Spool, render: Pieces) -> None:
        self.rows = _Reader(rows)
        self.messages = _Reader(messages)
        self.render = render
        # seq: where its row starts and its length (-1: it projects no message), where its messages start and theirs
        self.where: dict[int, tuple[int, int, int, tuple[int, ...]]] = {}
        self.found: dict[int, tuple[int, ...]] = {}  # what redacting a node's wire messages replaced, where anything

    def put(self, seq: int, row: dict[str, Any] | None, messages: list[Any], found: tuple[int, ...] | None) -> None:
        """Keep ``seq``'s row (None: it projects no message), its wire messages and what redacting them replaced
        (nothing when a row or a message is no JSON: the node is read back, as the writer then finds it)."""
        render = self.render
        try:
            head = render.surface_piece(row) if row is not None else b""
            pieces = [render.message_piece(message) for message in messages]
        except TypeError:
            return
        self.where[seq] = (self.rows.size, len(head) if row is not None else -1, self.messages.size,
                           tuple(map(len, pieces)))  # fmt: skip
        self.rows.write(head)
        for piece in pieces:
            self.messages.write(piece)
        if found is not None:
            self.found[seq] = found

    def row(self, seq: int) -> tuple[bool, bytes | None]:
        """``(True, piece)`` for a node kept (its piece None when it projects no message), else ``(False, None)``."""
        where = self.where.get(seq)
        if where is None:
            return False, None
        return True, self.rows.read(where[0], where[1]) if where[1] >= 0 else None

    def wire(self, seq: int) -> tuple[list[bytes], tuple[int, ...] | None] | None:
        """``(pieces, found)`` of the messages of a node kept, else None."""
        where = self.where.get(seq)
        if where is None:
            return None
        lengths = where[3]
        data = self.messages.read(where[2], sum(lengths))
        pieces, done = [], 0
        for length in lengths:
            pieces.append(data[done : done + length])
            done += length
        return pieces, self.found.get(seq)
