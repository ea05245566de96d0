"""The footer with Help and Quit first, so a narrow terminal still shows them, and only keys that fit whole."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

PRIORITY_ACTIONS = ("help", "quit")  # shown first, in this order; the rest keep their order
PALETTE = "-command-palette"  # the class of the palette's key, docked at the right end


class PriorityFooter(Footer):
    """Textual's footer, with the keys of ``PRIORITY_ACTIONS`` moved to the front; the keys that would not fit whole
    beside the palette's are left out (Textual's footer cut the last one mid-word)."""

    def compose(self) -> ComposeResult:
        """The footer keys, priority actions first."""
        items = list(super().compose())

        def rank(item: object) -> int:
            action = getattr(item, "action", None)
            return PRIORITY_ACTIONS.index(action) if action in PRIORITY_ACTIONS else len(PRIORITY_ACTIONS)

        yield from sorted(items, key=rank)  # sorted is stable: the others keep their order

    def on_mount(self) -> None:
        """Fit the keys again after every layout of the screen (a resize, keys that changed)."""
        self.screen.screen_layout_refresh_signal.subscribe(self, self._fit)

    def _fit(self, screen: Screen[object]) -> None:
        room = self.content_region.width
        keys = [key for key in self.children if not key.has_class(PALETTE)]
        room -= sum(key.outer_size.width for key in self.children if key.has_class(PALETTE))
        for key in keys:  # a key hidden before keeps the size it was last laid out at
            width = key.outer_size.width + key.styles.margin.width
            key.display = width <= room
            room = room - width if key.display else 0
