"""Which event types a comma list picks: the one parser behind ``events --type`` and the TUI's filter dialog.

An item is an event type (``tool/result``), a family (``tool/`` or ``tool*``: every type starting so), or either
with ``!`` in front to leave it out. ``events --type`` takes the items comma-separated, in one value or several;
the dialog takes them comma-separated in its field.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from core.shared.records import record


def _matches(etype: str, item: str) -> bool:
    if item.endswith("*"):
        return etype.startswith(item[:-1])
    return etype == item or (item.endswith("/") and etype.startswith(item))


@record(frozen=True)
class TypeSelection:
    """The items of a type list, in order; ``etype in selection`` tells whether an event type is picked."""

    items: tuple[str, ...] = ()

    @classmethod
    def parse(cls, texts: str | Iterable[str]) -> TypeSelection:
        """Items from one comma-separated text or several (blanks and empty items dropped)."""
        values = [texts] if isinstance(texts, str) else list(texts)
        return cls(tuple(part.strip() for text in values for part in text.split(",") if part.strip()))

    @cached_property
    def wanted(self) -> tuple[str, ...]:
        """The items that pick types (none: every type not left out)."""
        return tuple(item for item in self.items if not item.startswith("!"))

    @cached_property
    def unwanted(self) -> tuple[str, ...]:
        """The items that leave types out, without their ``!``."""
        return tuple(item[1:] for item in self.items if item.startswith("!"))

    def __contains__(self, etype: object) -> bool:
        if not isinstance(etype, str):
            return False
        wanted = self.wanted
        if wanted and not any(_matches(etype, item) for item in wanted):
            return False
        return not any(_matches(etype, item) for item in self.unwanted)

    def __bool__(self) -> bool:
        return bool(self.items)
