"""``SeqView``: a read-only sequence of seqs whose items are computed from a position (a frozen view over lists
that keep growing), so each view gives only its length and how to find the seq at one position."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload


class SeqView(Sequence[int]):
    """Positions ``0`` … ``_len - 1``, negative positions and slices as a list takes them; subclasses set
    ``_len`` and define ``_at`` for a position already in range."""

    _len: int

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, p: int) -> int: ...
    @overload
    def __getitem__(self, p: slice) -> list[int]: ...
    def __getitem__(self, p: int | slice) -> int | list[int]:
        if isinstance(p, slice):
            return [self._at(k) for k in range(*p.indices(self._len))]
        if p < 0:
            p += self._len
        if not 0 <= p < self._len:
            raise IndexError(p)
        return self._at(p)

    def _at(self, p: int) -> int:
        raise NotImplementedError
