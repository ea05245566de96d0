"""The retained event store of an in-memory session: events by seq, packed chunk rows kept packed.

Nearly every event of a real log is an ``assistant/chunk`` delta that arrived in a packed row. The store keeps
such a row once (one reference per member seq) and builds a member's event dict only when it is read, so a
projection of a chunk-heavy log holds a small fraction of the objects a list of expanded events would.

Readers get each event through the validated view (``core.log.validate.readable``): an event the decoder
flagged is an opaque stand-in. ``raw`` gives the event as decoded, for what displays it.

``KeptEvents`` is the store of a session projected from events handed to it one by one (no file to read them
back from) for a pass that reads back only what it asked to keep: it holds those events alone. ``BorrowedEvents``
is the store of a session projected from what another reader hands it: it reads any event back through that
reader's store and holds only what a pass asked to keep.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Iterator, Sequence
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


class KeepingEvents(ValidatedEvents):
    """Events a pass can ask to serve from memory (``keep``) until it lets them go (``forget``): the surface's
    events while they are on it, for a pass that rebuilds requests (``core.rebuild.request.RequestPass``)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[int, dict[str, Any]] = {}

    def keep(self, seq: int, event: dict[str, Any]) -> None:
        """Serve ``event`` (the caller's copy, as it is) for ``seq`` from memory until ``forget(seq)``."""
        self._kept[seq] = event

    def forget(self, seq: int) -> None:
        """Stop serving ``seq`` from memory."""
        self._kept.pop(seq, None)

    @property
    def kept(self) -> int:
        """How many events are kept."""
        return len(self._kept)


class KeptEvents(KeepingEvents):
    """Events by seq (seq == position) of which only the kept ones are held: ``append`` and ``append_row`` count
    the rest. Reading a seq that is not kept is a LookupError (its reader should have kept it)."""

    __slots__ = ("_count",)

    def __init__(self) -> None:
        super().__init__()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, event: dict[str, Any]) -> None:
        """Count one event (kept only if ``keep`` is asked)."""
        self._count += 1

    def append_row(self, row: PackedRow) -> None:
        """Count the members of a packed row."""
        self._count += row.count

    def raw(self, n: int) -> dict[str, Any]:
        """Kept event ``n`` as it was kept."""
        seq = n if n >= 0 else n + self._count
        event = self._kept.get(seq)
        if event is None:
            raise LookupError(f"event {seq} was not kept (of {self._count})")
        return event

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for seq in sorted(self._kept):
            yield self[seq]

    def seqs_of_types(self, names: Collection[str], start: int = 0) -> Iterator[int]:
        """The kept seqs from ``start`` on whose event type is in ``names``, in order."""
        return iter(sorted(seq for seq, event in self._kept.items() if seq >= start and event.get("type") in names))


class BorrowedEvents(KeepingEvents):
    """Events by seq read back through another reader's store (``source``: a ``core.log.linestore.LineStore``
    reads its file again, an ``EventStore`` holds them already), of which only the kept ones are held here. The
    source may be swapped for another reader's of the same log (``source`` is public); it must hold every seq
    read here by then."""

    __slots__ = ("source",)

    def __init__(self, source: ValidatedEvents) -> None:
        super().__init__()
        self.source = source

    def __len__(self) -> int:
        return len(self.source)

    def raw(self, n: int) -> dict[str, Any]:
        """Event ``n`` as kept here, else as the source gives it."""
        kept = self._kept.get(n)
        return kept if kept is not None else self.source.raw(n)


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
