"""The retained event store of an in-memory session: events by seq, packed chunk rows kept packed.

Nearly every event of a real log is an ``assistant/chunk`` delta that arrived in a packed row. The store keeps
such a row once (one reference per member seq) and builds a member's event dict only when it is read, so a
projection of a chunk-heavy log holds a small fraction of the objects a list of expanded events would.

Readers get each event through the validated view (``core.log.validate.readable``): an event the decoder
flagged is an opaque stand-in. ``raw`` gives the event as decoded, for what displays it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, overload

from core.log.records import PackedRow
from core.log.validate import readable


class ValidatedEvents(Sequence[dict[str, Any]]):
    """Events by seq through the validated view: item ``n`` is ``readable(raw(n))``."""

    __slots__ = ()

    @abstractmethod
    def raw(self, n: int) -> dict[str, Any]:
        """Event ``n`` as decoded, flagged or not."""

    @overload
    def __getitem__(self, n: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, n: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, n: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        return readable(self.raw(n))


class EventStore(ValidatedEvents):
    """A ``Sequence[dict]`` of events (seq == position) that grows by ``append`` and ``append_row``."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list[dict[str, Any] | PackedRow] = []

    def __len__(self) -> int:
        return len(self._items)

    def append(self, event: dict[str, Any]) -> None:
        """Add one decoded event."""
        self._items.append(event)

    def append_row(self, row: PackedRow) -> None:
        """Add the members of a packed row, unexpanded (expanded at once if they do not start here)."""
        if row.seq0 == len(self._items):
            self._items.extend(repeat(row, row.count))
        else:
            self._items.extend(row.events())


    def raw(self, n: int) -> dict[str, Any]:
        """Event ``n`` as decoded, flagged or not: for what displays it, never for a policy reader."""
        item = self._items[n]
        if type(item) is PackedRow:
            return item.event((n if n >= 0 else n + len(self._items)) - item.seq0)
        return item  # type: ignore[return-value]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        items = self._items
        n = 0
        while n < len(items):
            item = items[n]
            if type(item) is PackedRow:
                yield from map(readable, item.events())
                n += item.count
            else:
                yield readable(item)  # type: ignore[arg-type]
                n += 1

    def is_row_member(self, n: int) -> bool:
        """True when event ``n`` is the member of a packed row (an ``assistant/chunk`` delta)."""
        return type(self._items[n]) is PackedRow
