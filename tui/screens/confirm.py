"""Modal dialogs for operator actions: confirm a previewed change, or ask for a line (or lines) of text first."""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Static, TextArea

from tui.keymap import key_of
from tui.screens.dialog import Dialog
from tui.screens.stacked import while_stacked


class ConfirmScreen(Dialog[bool]):
    """Show what an action will do and return True only when the operator confirms it. While it is up, ``revise``
    shows what changed under it (a preview derived again, or why confirming would now send nothing)."""

    BOX = ".policy-dialog-box"

    CSS_PATH = "policy.tcss"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "answer(True)", "Confirm", id="policy.confirm.yes"),
        Binding("n,escape", "answer(False)", "Cancel", id="policy.confirm.no"),
    ]

    def __init__(self, title: str, body: RenderableType, confirm_label: str = "Send") -> None:
        super().__init__(classes="policy-dialog")
        self.heading = title
        self.body = body
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        """Title, the preview, and the two buttons."""
        with Vertical(classes="policy-dialog-box"):
            yield Static(Text(self.heading), classes="policy-dialog-title")  # it may quote a log: no markup
            yield self.warning_line()
            with VerticalScroll(classes="policy-dialog-body"):
                yield Static(self.body, id="confirm-body")
            with Horizontal(classes="policy-dialog-buttons"):
                yes, no = (key_of(self.app, i) for i in ("policy.confirm.yes", "policy.confirm.no"))
                yield Button(f"{self.confirm_label} ({yes})", variant="warning", id="confirm-yes")
                yield Button(f"Cancel ({no})", id="confirm-no")

    @while_stacked
    def on_mount(self) -> None:
        """Start on Cancel, so a stray Enter never confirms."""
        self.query_one("#confirm-no", Button).focus()

    def revise(self, warning: str | None, body: RenderableType | None = None) -> None:
        """Say ``warning`` above the body (None: nothing is wrong), and show ``body`` in place of the old one."""
        self.warn(warning)
        if body is not None:
            self.body = body  # a body composed after this starts with it
            for shown in self.query("#confirm-body").results(Static):
                shown.update(body)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button answers the dialog."""
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        """A key answers the dialog."""
        self.dismiss(answer)


class LinesArea(TextArea):
    """A text box of several lines where Enter answers (``Submitted``) and ctrl+j (or shift+enter, where the
    terminal tells it) starts a new line; a paste keeps every line it holds."""

    class Submitted(Message):
        """Enter: the text as it stands."""

        def __init__(self, value: str) -> None:
            super().__init__()
            self.value = value

    async def _on_key(self, event: events.Key) -> None:
        if event.key in ("enter", "ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                self.post_message(self.Submitted(self.text))
            else:
                self.replace("\n", *self.selection, maintain_selection_offset=False)
            return
        await super()._on_key(event)


class AskScreen(Dialog[str | None]):
    """Ask for one line of text (``lines``: as many as the operator writes or pastes); returns it (possibly empty)
    on Enter, or None when cancelled."""

    BOX = ".policy-dialog-box"
    CSS_PATH = "policy.tcss"
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "cancel", "Cancel", id="policy.ask.cancel")]

    def __init__(
        self, title: str, hint: str, placeholder: str = "", value: str = "", lines: bool = False
    ) -> None:
        super().__init__(classes="policy-dialog")
        self.heading = title
        self.hint = hint
        self.placeholder = placeholder
        self.value = value  # the text the line starts with (a note being edited)
        self.lines = lines

    def compose(self) -> ComposeResult:
        """Title, hint and the input line."""
        with Vertical(classes="policy-dialog-box"):
            yield Static(Text(self.heading), classes="policy-dialog-title")
            yield self.warning_line()
            yield Static(Text(self.hint), classes="policy-dialog-hint")
            if self.lines:
                area = LinesArea(self.value, id="ask-input", soft_wrap=True, placeholder=self.placeholder)
                area.move_cursor(area.document.end)
                yield area
            else:
                yield Input(self.value, placeholder=self.placeholder, id="ask-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter returns the text."""
        self.dismiss(event.value)

    def on_lines_area_submitted(self, event: LinesArea.Submitted) -> None:
        """Enter returns the text."""
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Escape returns None."""
        self.dismiss(None)
