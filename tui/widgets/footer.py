"""The footer with Help and Quit first, so a narrow terminal still shows them, and only keys that fit whole."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
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

    async def recompose(self) -> None:
        """Compose the keys again (the screen's bindings changed) and fit them before the screen is laid out: fitted
        only once that layout was done, one frame showed every key, the last cut at the edge and the footer wider
        than the screen, so it could be scrolled sideways for a moment."""
        async with self.batch():
            await super().recompose()
            if self.is_attached:  # not when the screen was taken down meanwhile
                self._fit(self.screen)

    def on_mount(self) -> None:
        """Fit the keys again after every layout of the screen (a resize, keys that changed)."""
        self.screen.screen_layout_refresh_signal.subscribe(self, self._fit)

    def _fit(self, screen: Screen[object]) -> None:
        """Show the keys that fit whole: when they do not all fit, the screen's ``FOOTER_LEAST`` actions are left
        out first (in that order), then the last ones. Each key is measured by its own text, never by the size it
        was last laid out at (a key hidden before kept a stale one), so one width always shows the same keys."""
        room = self.content_region.width
        keys = [key for key in self.children if not key.has_class(PALETTE)]
        room -= sum(self._width(key) for key in self.children if key.has_class(PALETTE))
        least = getattr(screen, "FOOTER_LEAST", ())
        dropped = set()
        for action in least:  # left out, least needed first, until the others fit
            if sum(self._width(key) for key in keys if key not in dropped) <= room:
                break
            dropped |= {key for key in keys if getattr(key, "action", None) == action}
        for key in keys:
            width = self._width(key)
            key.display = key not in dropped and width <= room
            if key.display:
                room -= width
            elif key not in dropped:
                room = 0  # the keys after one that does not fit are left out too: the order is kept

    def _width(self, key: Widget) -> int:
        """The cells ``key`` takes: its content as measured from its text, its padding and border, its margins."""
        return key.get_content_width(self.size, self.app.size) + key.styles.gutter.width + key.styles.margin.width
