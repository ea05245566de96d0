"""Spool files: a section that is written ahead of where it goes in the export waits in one (in memory while it
is small, then in the temp directory)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, Protocol, TypeVar, runtime_checkable

from core.shared.errors import TapedeckError

SPOOL_MEMORY = 1 << 20  # bytes a spool holds in memory before it goes to a file
WRITE_CHUNK = 1 << 20  # rows are written in joined chunks of about this many bytes
T = TypeVar("T")


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
    """A spool file, removed when the block ends; a spool that cannot be written is a ``TapedeckError`` (what else
    fails in the block, such as a write of the export itself, is not the spool's)."""
    try:
        f = tempfile.SpooledTemporaryFile(SPOOL_MEMORY)  # noqa: SIM115 - closed by the block below
    except OSError as exc:
        raise _failed(exc) from None
    with f:
        yield Spool(f)


def waiting(where: str | os.PathLike[str] | None = None) -> IO[bytes]:
    """A file, without a name, for what waits for something written before it (in the directory ``where``, else
    the temp directory), gone once closed."""
    try:
        return tempfile.TemporaryFile(dir=where)
    except OSError as exc:
        raise _failed(exc, where) from None


def _failed(exc: OSError, where: str | os.PathLike[str] | None = None) -> TapedeckError:
    where = tempfile.gettempdir() if where is None else os.fspath(where)
    return TapedeckError(f"cannot write the export's spool file in {where} ({exc.strerror or exc})")


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

    joined: bool  # its sections take pieces joined into blocks (each piece carries what goes between it and the last)

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

    def span(self, start: int, end: int) -> Iterator[bytes]:
        """The bytes from ``start`` to ``end``, in blocks of about ``SPOOL_MEMORY`` bytes (none when they meet)."""
        while start < end:
            data = self.read(start, min(end - start, SPOOL_MEMORY))
            yield data
            start += len(data)


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

    def rows_of(self, seqs: Iterable[int], joined: bool = False) -> Iterator[bytes | int]:
        """For each of ``seqs`` in turn, the piece of its row when it was kept (none when it projects no message),
        else its seq (its row is to be made). For a ``joined`` writer (or with ``joined``) the pieces of nodes kept
        one after the other come joined, read a block at a time."""
        where, joined, start, end = self.where, joined or self.render.joined, 0, 0
        for seq in seqs:
            at = where.get(seq)
            if at is None:
                yield from self.rows.span(start, end)
                start = end = 0
                yield seq
            elif not joined:
                if at[1] >= 0:
                    yield self.rows.read(at[0], at[1])
            else:
                if at[0] != end:
                    yield from self.rows.span(start, end)
                    start = at[0]
                end = at[0] + max(at[1], 0)
        yield from self.rows.span(start, end)

    def messages_of(
        self, nodes: Iterable[tuple[int | None, T]], count: Callable[[tuple[int, ...]], object] | None
    ) -> Iterator[bytes | tuple[int | None, T]]:
        """For each of ``nodes`` (a seq, None for no node, and anything) in turn, the pieces of its messages when
        it was kept, joined as ``rows_of`` joins rows, with ``count`` told what redacting them replaced (where
        anything), else the node as it came (its messages are to be made)."""
        where, found, joined, start, end = self.where, self.found, self.render.joined, 0, 0
        for node in nodes:
            at = where.get(node[0]) if node[0] is not None else None
            if at is None:
                yield from self.messages.span(start, end)
                start = end = 0
                yield node
                continue
            if count is not None and node[0] in found:
                count(found[node[0]])
            if not joined:
                data, done = self.messages.read(at[2], sum(at[3])), 0
                for length in at[3]:
                    yield data[done : done + length]
                    done += length
                continue
            if at[2] != end:
                yield from self.messages.span(start, end)
                start = at[2]
            end = at[2] + sum(at[3])
        yield from self.messages.span(start, end)


class RowChunks:
    """Where a writer's rows go as the pass hands them out (``ahead``), each as ``writer.row`` makes it, joined
    into chunks of about ``WRITE_CHUNK`` bytes; ``pending``, what is held, starts with ``first``."""

    def __init__(self, writer: Any, ahead: IO[bytes], first: bytes | None = None) -> None:
        self.writer = writer
        self.ahead = ahead
        self.pending = [] if first is None else [first]
        self.held = 0

    def put(self, row: dict[str, Any]) -> None:
        """Take ``row``."""
        data = self.writer.row(row)
        self.pending.append(data)
        self.held += len(data)
        if self.held >= WRITE_CHUNK:
            self.ahead.write(b"".join(self.pending))
            self.pending.clear()
            self.held = 0

    def rest(self) -> bytes:
        """What is held (the rows after the last chunk written)."""
        return b"".join(self.pending)
