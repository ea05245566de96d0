"""The filter dialog: event types, tools, a turn range, errors only and a regex."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label

from core.read.event_filter import EventFilter
from core.shared.text import printable
from tui.screens.dialog import Dialog
from tui.screens.stacked import while_stacked


class TickBox(Checkbox):
    """A checkbox that draws its X only when ticked. Textual's draws it either way, ticked or not told apart by
    colour alone, which NO_COLOR, a monochrome terminal or a pane's text capture do not show."""

    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]  # the class constant Textual draws, per value
        """The mark inside the box."""
        return "X" if self.value else " "


class FilterScreen(Dialog[EventFilter | None]):
    """Edit the list filter; dismisses with the new filter (an inactive one clears it) or None on cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="filter.cancel")]
    BOX = "#filter-dialog"

    def __init__(self, current: EventFilter, types_seen: list[str]) -> None:
        super().__init__()
        self.current = current
        self.types_seen = types_seen

    def compose(self) -> ComposeResult:
        """The form."""
        f = self.current
        turns = "" if f.turns is None else f"{f.turns[0]}-{'' if f.turns[1] is None else f.turns[1]}"
        with VerticalScroll(id="filter-dialog"):  # one line per field: the whole form fits 80x24 unscrolled
            yield Label("Filter events", id="filter-title")
            yield from self._field("Types", "types", ", ".join(f.types), "all (tool/, assistant/message …)")
            yield Label(
                "comma-separated · tool/ is a family · !assistant/chunk leaves one out",
                classes="filter-hint",
            )
            # the log's own type names, and below the message that quotes the input: text, never markup
            yield Label(self._seen(), id="filter-seen", classes="filter-hint", markup=False)
            yield from self._field("Tools", "tools", ", ".join(f.tools), "all (bash, read_file …)")
            yield from self._field("Turns", "turns", turns, "all (3, 3-7 or 3-)")
            yield from self._field("Regex", "regex", f.regex, "none (matched against the event JSON)")
            yield TickBox("Errors only", f.errors, id="filter-errors", compact=True)
            yield Label("", id="filter-error", markup=False)
            with Horizontal(id="filter-buttons"):
                yield Button("Apply", variant="primary", id="filter-apply", compact=True)
                yield Button("Clear", id="filter-clear", compact=True)
                yield Button("Cancel", id="filter-cancel", compact=True)

    def _seen(self) -> str:
        return printable("seen: " + ", ".join(self.types_seen[:14]))  # types named in the log

    def show_types(self, types_seen: list[str]) -> None:
        """The event types the log holds now (it grew, or was replaced, while the dialog was up)."""
        if types_seen != self.types_seen:
            self.types_seen = types_seen
            self.query_one("#filter-seen", Label).update(self._seen())

    @staticmethod
    def _field(label: str, name: str, value: str, placeholder: str) -> ComposeResult:
        """A labelled one-line input."""
        with Horizontal(classes="filter-field"):
            yield Label(label, classes="filter-label")
            yield Input(value, placeholder=placeholder, id=f"filter-{name}", compact=True)

    @while_stacked
    def on_mount(self) -> None:
        """Typing goes to the first field at once (the form stays scrolled to its title)."""
        self.query_one("#filter-types", Input).focus(scroll_visible=False)

    def _value(self, name: str) -> str:
        return self.query_one(f"#filter-{name}", Input).value

    def _apply(self) -> None:
        try:
            result = EventFilter.parse(
                self._value("types"),
                self._value("tools"),
                self._value("turns"),
                self.query_one("#filter-errors", Checkbox).value,
                self._value("regex"),
            )
        except ValueError as exc:
            error = self.query_one("#filter-error", Label)
            error.update(str(exc))
            self.call_after_refresh(error.scroll_visible, animate=False)  # below the fold on a small terminal
            return
        self.dismiss(result)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in any field applies."""
        event.stop()
        self._apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Apply, clear or cancel."""
        if event.button.id == "filter-apply":
            self._apply()
        elif event.button.id == "filter-clear":
            self.dismiss(EventFilter())
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        """Close without changes."""
        self.dismiss(None)
