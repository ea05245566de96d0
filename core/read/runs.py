"""A per-event column kept as runs of equal values: what ``Session``'s turn and in-turn columns hold in the TUI.

A 500 MB ``dsh-plain`` log has 5.5 M events in 2,817 turns: as an ``array("i")`` the turn column takes 22 MiB and
the in-turn ``bytearray`` 5.7 MiB, as runs a few hundred KiB. ``Runs`` answers what ``Session`` asks of either
(``append``, ``+=``, an index, ``len``) and hands the index writer its values as the array's bytes, a block at a
time (``pieces``), so the whole column is never in memory.

New values go to a plain array first (``append`` is that array's own, as fast as the column it replaces) and are
folded into runs once it holds ``BLOCK`` of them. One thread adds values; others may read at any time: a fold
adds its runs before it swaps in a new tail, and a reader takes the folded length and the tail in one read.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import TypeAlias

Tail: TypeAlias = "array[int] | bytearray"
# values a tail holds before it is folded, and per piece ``pieces`` hands out (256 KiB of turns)
BLOCK = 1 << 16


class Runs:
    """The values of an ``array(typecode)`` column (``"i"`` for turns, ``"B"`` for in-turn flags), as runs."""

    __slots__ = ("typecode", "_starts", "_values", "_split", "append")

    def __init__(self, typecode: str) -> None:
        self.typecode = typecode
        self._starts = array("q")  # the index of each run's first value
        self._values = array(typecode)  # each run's value
        tail = _tail(typecode)
        self._split: tuple[int, Tail] = (0, tail)  # (values in runs, the values after them)
        self.append: Callable[[int], None] = tail.append  # add one value at the end

    @classmethod
    def of(cls, column: array[int] | bytes | bytearray) -> Runs:
        """The runs of ``column`` (an ``array``; bytes are ``"B"`` values)."""
        runs = cls(column.typecode if isinstance(column, array) else "B")
        runs._fold(column)
        return runs

    @classmethod
    def from_bytes(cls, typecode: str, data: bytes | memoryview) -> Runs:
        """The runs of the column whose ``array(typecode)`` bytes are ``data`` (an index's section), read a block
        at a time: the whole column is never made (ValueError when ``data`` is not whole values)."""
        runs = cls(typecode)
        size = runs._values.itemsize
        if len(data) % size:
            raise ValueError("not whole values")
        for at in range(0, len(data), BLOCK * size):
            block = _tail(typecode)
            if isinstance(block, bytearray):
                block += data[at : at + BLOCK * size]
            else:
                block.frombytes(data[at : at + BLOCK * size])
            runs._fold(block)
        return runs

    def __iadd__(self, other: array[int] | bytes) -> Runs:
        """Add ``other``'s values (an array of this typecode, or bytes of ``"B"`` values) at the end."""
        tail = self._split[1]
        tail += other  # type: ignore[operator]
        if len(tail) >= BLOCK:
            self._fold()
        return self

    def _fold(self, column: array[int] | bytes | bytearray | None = None) -> None:
        """Move the tail's values into runs, or (``of``, the tail empty) ``column``'s, not copied (the writer's
        thread only)."""
        n, tail = self._split
        column = tail if column is None else column
        starts, values = self._starts, self._values
        at, end = 0, len(column)
        flags = not isinstance(column, array)
        while at < end:
            value = column[at]
            stop = -1
            if flags and value < 2:  # a flag's run: up to the other flag, when no other value is before it
                stop = column.find(b"\x00" if value else b"\x01", at)  # type: ignore[union-attr]
                stop = end if stop < 0 else stop
                if column[at:stop] != column[at : at + 1] * (stop - at):
                    stop = -1
            if stop < 0:
                stop = _run_end(column, at, value)  # type: ignore[arg-type]
            if not values or values[-1] != value:
                starts.append(n + at)
                values.append(value)
            at = stop
        fresh = _tail(self.typecode)
        self._split = (n + end, fresh)
        self.append = fresh.append

    def __len__(self) -> int:
        n, tail = self._split
        return n + len(tail)

    def __getitem__(self, index: int) -> int:
        n, tail = self._split
        if index < 0:
            index += n + len(tail)
        if index >= n:
            return tail[index - n]  # IndexError beyond the end
        if index < 0:
            raise IndexError("column index out of range")
        return self._values[bisect_right(self._starts, index) - 1]

    def __eq__(self, other: object) -> bool:
        """Equal to a column of the same values: ``Runs`` or an array of the same typecode (bytes: ``"B"``)."""
        if not isinstance(other, Runs | array | bytes | bytearray):
            return NotImplemented
        kind = other.typecode if isinstance(other, Runs | array) else "B"
        return kind == self.typecode and len(other) == len(self) and _bytes(other) == _bytes(self)

    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[int]:
        for values in self.pieces():
            yield from values

    @property
    def nbytes(self) -> int:
        """The bytes of the column as an ``array(typecode)``."""
        return len(self) * self._values.itemsize

    def pieces(self) -> Iterator[array[int] | bytearray]:
        """The column as consecutive ``array(typecode)`` blocks of at most ``BLOCK`` values (made one at a time),
        then the tail."""
        n, tail = self._split
        block = array(self.typecode)
        ends = [*self._starts[1:], n]
        for value, start, end in zip(self._values, self._starts, ends, strict=False):  # no runs: no value
            one = array(self.typecode, (value,))
            while start < end:
                k = min(end - start, BLOCK - len(block))
                block += one * k
                start += k
                if len(block) == BLOCK:
                    yield block
                    block = array(self.typecode)
        if block:
            yield block
        if tail:
            yield tail


def _bytes(column: Runs | array[int] | bytes | bytearray) -> bytes:
    """The bytes of ``column`` as an array of its typecode holds them."""
    return b"".join(map(bytes, column.pieces())) if isinstance(column, Runs) else bytes(column)


def _tail(typecode: str) -> Tail:
    """An empty tail: a ``bytearray`` for ``"B"`` values (its ``append`` is the cheapest), else an array."""
    return bytearray() if typecode == "B" else array(typecode)


def _run_end(column: array[int] | bytearray, at: int, value: int) -> int:
    """The end of the run of ``value`` from ``at``: where a sorted column's values above it start, when the values
    up to there are all ``value`` (a turn column mostly goes up); else the longest all-``value`` stretch before it,
    by halves (a stretch that ends early only splits a run, which ``Runs`` joins again)."""
    end = bisect_right(column, value, at)  # > at: column[at] is value
    # compared item by item in C, as arrays (or bytes) of one type are
    same = column[at : at + 1] * (end - at)
    if column[at:end] == same:
        return end
    lo, hi = at + 1, end - 1  # the run ends in [lo, hi]: column[at:lo] is all value, column[at:end] is not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if column[at:mid] == same[: mid - at]:
            lo = mid
        else:
            hi = mid - 1
    return lo
