"""Rows printed in an order known only at the end of a pass, rendered while their events are in hand.

``surface`` prints a row per surface node, but which nodes the surface holds is known only once the log is read
(a later replacement may drop any of them). Keeping each node's event until then holds the whole surface (most
of a log that is never cut); reading it back from the file when the row is printed decodes it a second time.
A ``RowSpool`` instead takes each row's rendered bytes as its event goes by and writes them to a temporary
file, ``BATCH`` bytes or more a write (a system call per row, of a few kB, cost the kernel twice the time on a
100 MB log); at the end ``print`` copies the chosen rows out in the order asked for, in long runs where they lie
one after another in the file (by ``os.sendfile`` when stdout is a file descriptor), and renders only the rows
it was never given (events a persistent index restored without decoding them).
"""

from __future__ import annotations

import bisect
import codecs
import os
import sys
from array import array
from collections.abc import Callable, Iterable
from typing import IO

from core.cli.common import output_failed

COPY = 1 << 20  # bytes copied at a time when stdout is no file descriptor
BATCH = 1 << 16  # bytes of rows held before they are written to the spool file in one piece


class RowSpool:
    """Rendered rows by seq, spooled to ``file`` (a temporary file, empty and open for reading and writing)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._seqs = array("q")  # the seqs given, ascending
        self._ends = array("q")  # where each one's bytes end in the file (they start where the one before ends)
        self._size = 0
        self._held: list[bytes | memoryview] = []  # small pieces not written yet
        self._pending = 0  # their bytes

    def put(self, seq: int, *pieces: bytes | memoryview) -> None:
        """The bytes of the row of ``seq`` (none for a seq that prints no row), seqs given in ascending order."""
        for piece in pieces:
            size = len(piece)
            self._size += size
            if size < BATCH:
                self._held.append(piece)
                self._pending += size
            else:  # a big piece is written as it is, right after what is held
                self._write_held()
                self._file.write(piece)
        self._seqs.append(seq)
        self._ends.append(self._size)
        if self._pending >= BATCH:
            self._write_held()

    def _write_held(self) -> None:
        if self._held:
            self._file.write(b"".join(self._held))
            self._held.clear()
            self._pending = 0

    def _span(self, seq: int, hint: int) -> tuple[int, int, int] | None:
        """``(start, end, position)`` of the bytes of ``seq`` in the file, or None when it was never given;
        ``hint`` is the position to try first (the one after the last seq found)."""
        seqs = self._seqs
        k = hint if hint < len(seqs) and seqs[hint] == seq else bisect.bisect_left(seqs, seq)
        if k == len(seqs) or seqs[k] != seq:
            return None
        return (self._ends[k - 1] if k else 0), self._ends[k], k

    def print(
        self,
        seqs: Iterable[int],
        render: Callable[[int], bytes],
        head: bytes = b"",
        skip: int = 0,
        indent: Callable[[int], bytes] | None = None,
    ) -> int:
        """Print the rows of ``seqs`` in that order (``render(seq)`` gives the bytes of a row never put) and return
        how many were not empty. ``head`` goes before the first of them, of which the first ``skip`` bytes are
        left out (a JSON list's opening bracket, in place of the comma that leads each member); ``indent(seq)``,
        when given, goes before each row that is not empty (the spaces that widen a column its row was rendered
        too narrow for)."""
        self._write_held()
        self._file.flush()
        out = _Out(self._file.fileno())
        count, run_start, run_end, hint = 0, 0, 0, 0
        for seq in seqs:
            span = self._span(seq, hint)
            if span is None:
                start, end, data = 0, 0, render(seq)
            else:
                start, end, hint = span
                hint += 1
                data = None
            if start == end and not data:
                continue
            if not count:
                out.write(head)
                if data is not None:
                    data = data[skip:]
                else:
                    start += skip
            count += 1
            lead = indent(seq) if indent is not None else b""
            if data is None and start == run_end and not lead:
                run_end = end
                continue
            out.copy(run_start, run_end)
            out.write(lead)
            run_start = run_end = start if data is None else end
            if data is not None:
                out.write(data)
            else:
                run_end = end
        out.copy(run_start, run_end)
        out.flush()
        return count


class _Out:
    """stdout for ``RowSpool.print``: bytes written, and ranges of the spool file copied."""

    def __init__(self, spool: int) -> None:
        self._spool = spool
        sys.stdout.flush()
        self._buffer = getattr(sys.stdout, "buffer", None)
        self._text = codecs.getincrementaldecoder("utf-8")()  # a copied piece may end inside a character
        self._fd: int | None = None
        if self._buffer is not None:
            try:
                self._fd = self._buffer.fileno()
            except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's capture)
                self._fd = None

    def write(self, data: bytes) -> None:
        if not data:
            return
        try:
            if self._buffer is None:
                sys.stdout.write(self._text.decode(data))
            else:
                self._buffer.write(data)
        except OSError as exc:
            raise output_failed(exc) from None

    def copy(self, start: int, end: int) -> None:
        """Copy bytes ``start`` … ``end - 1`` of the spool file out."""
        if start >= end:
            return
        if self._fd is not None:
            self.flush()
            try:
                while start < end:
                    sent = os.sendfile(self._fd, self._spool, start, end - start)
                    if not sent:
                        break
                    start += sent
                if start >= end:
                    return
            except OSError:  # a descriptor sendfile cannot write to: copied through memory
                pass
        while start < end:
            piece = os.pread(self._spool, min(COPY, end - start), start)
            if not piece:
                raise OSError("the spool file ended early")
            self.write(piece)
            start += len(piece)

    def flush(self) -> None:
        try:
            if self._buffer is not None:
                self._buffer.flush()
            sys.stdout.flush()
        except OSError as exc:
            raise output_failed(exc) from None
