"""Modal dialogs that toasts stay clear of: a toast arriving while a dialog is up must not hide its buttons or its
input lines. While one is up the toasts stack in the rows above or below the dialog's box, wherever there are more,
the newest that fit; a dialog as tall as the screen leaves them none until it closes. The screen
beneath, which the dialog leaves in sight, draws none of its own meanwhile: each toast is drawn once."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from rich.text import Text
from textual.geometry import Region
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.screens.stacked import while_stacked
from tui.screens.toasts import TOAST_RACK, stack_in

ResultType = TypeVar("ResultType")


class Dialog(ModalScreen[ResultType]):
    """A modal dialog whose box (``BOX``, a selector) the toasts never cover."""

    BOX: ClassVar[str]

    @while_stacked
    def on_mount(self) -> None:
        """Place the toasts again after every layout of the screen (a resize, a box that grew); the screens beneath
        draw none meanwhile (Textual shows them again on the screen the dialog returns to)."""
        self.screen_layout_refresh_signal.subscribe(self.query_one(self.BOX), self._place_toasts)
        for screen in self.app.screen_stack[:-1]:
            for rack in screen.query(TOAST_RACK):
                rack.display = False
                rack.remove_children()

    warning: str | None = None  # what ``warn`` said last: a warning line composed after it starts with it

    def warn(self, warning: str | None) -> None:
        """Say ``warning`` on the dialog's warning line (``warning_line``), above what it asks; None hides it. Said
        before the dialog is composed (a host poll answered right after its push), the line shows it once built."""
        self.warning = warning
        for line in self.query("#dialog-warning").results(Static):
            _say(line, warning)

    def warning_line(self) -> Static:
        """The dialog's line for what changed under it while it is up (hidden until ``warn`` says something)."""
        line = Static(id="dialog-warning", classes="policy-dialog-warning")
        _say(line, self.warning)
        return line

    def toast_band(self) -> Region:
        """Where the toasts may go, beside the box: in the band the screen beneath keeps for its own (a policy
        screen's table rows, so its side pane, outcomes and footer stay in sight), else anywhere."""
        stack = self.app.screen_stack
        beneath = stack[stack.index(self) - 1] if self in stack[1:] else None
        band = getattr(beneath, "toast_band", None)
        return band() if callable(band) else self.region

    def _place_toasts(self, screen: Screen[object]) -> None:
        box, band = self.query_one(self.BOX).region, self.toast_band()
        above = Region.from_corners(band.x, band.y, band.right, max(min(box.y, band.bottom), band.y))
        below_top = min(max(box.bottom, band.y), band.bottom)
        below = Region.from_corners(band.x, below_top, band.right, band.bottom)
        stack_in(self, above if above.height > below.height else below, top=above.height > below.height)


def _say(line: Static, warning: str | None) -> None:
    line.display = warning is not None
    line.update(Text(warning or "", style="bold red"))  # it may quote a log: no markup
