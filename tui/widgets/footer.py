"""The footer with Help and Quit first, so a narrow terminal still shows them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

PRIORITY_ACTIONS = ("help", "quit")  # shown first, in this order; the rest keep their order


class PriorityFooter(Footer):
    """Textual's footer, with the keys of ``PRIORITY_ACTIONS`` moved to the front."""

    def compose(self) -> ComposeResult:
        """The footer keys, priority actions first."""
        items = list(super().compose())

        def rank(item: object) -> int:
            action = getattr(item, "action", None)
            return PRIORITY_ACTIONS.index(action) if action in PRIORITY_ACTIONS else len(PRIORITY_ACTIONS)

        yield from sorted(items, key=rank)  # sorted is stable: the others keep their order
