"""Modal dialogs that toasts stay clear of: a toast arriving while a dialog is up must not hide its buttons or its
input lines. While one is up the toasts are shorter and stack in the rows above or below the dialog's box, wherever
there are more, the newest that fit; a dialog as tall as the screen leaves them none until it closes. The screen
beneath, which the dialog leaves in sight, draws none of its own meanwhile: each toast is drawn once."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widget import Widget

from tui.screens.stacked import while_stacked

ResultType = TypeVar("ResultType")
TOAST_RACK = "#textual-toastrack"  # the container Textual gives every screen for its toasts


class Dialog(ModalScreen[ResultType]):
    """A modal dialog whose box (``BOX``, a selector) the toasts never cover."""

    BOX: ClassVar[str]
    DEFAULT_CSS = """
    Dialog Toast {
        padding: 0 1;  /* shorter toasts while a dialog is up: more of them fit beside it */
    }
    """

    @while_stacked
    def on_mount(self) -> None:
        """Place the toasts again after every layout of the screen (a resize, a box that grew); the screens beneath
        draw none meanwhile (Textual shows them again on the screen the dialog returns to)."""
        self.screen_layout_refresh_signal.subscribe(self.query_one(self.BOX), self._place_toasts)
        for screen in self.app.screen_stack[:-1]:
            for rack in screen.query(TOAST_RACK):
                rack.display = False
                rack.remove_children()

    def _place_toasts(self, screen: Screen[object]) -> None:
        try:
            rack: Widget = self.query_one(TOAST_RACK)
        except NoMatches:  # notifications are off
            return
        box = self.query_one(self.BOX).region
        above, below = box.y, self.size.height - box.bottom
        top = above > below
        rack.styles.dock = "top" if top else "bottom"
        rack.styles.align_vertical = "top" if top else "bottom"
        rack.styles.margin = 0
        room = max(0, above if top else below)
        rack.styles.max_height = room
        for holder in reversed(rack.children):  # the newest toasts that fit are shown, the older ones wait
            height = sum(toast.outer_size.height + toast.styles.margin.top for toast in holder.children)
            holder.display = height <= room
            room -= height if holder.display else room
