"""The search bar: a query line at the bottom of the main screen and the match counter beside it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label


class SearchBar(Horizontal):
    """Hidden until ``/``; Enter searches in the background, Escape closes it."""

    BINDINGS = [Binding("escape", "close", "Close search", id="search.close")]

    class Search(Message):
        """Run a search for ``query`` (empty clears the matches)."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Closed(Message):
        """The bar was closed."""

    def compose(self) -> ComposeResult:
        """A query input and a counter."""
        yield Label("/", id="search-prompt")
        yield Input(
            placeholder="text to find in events (case-insensitive), Enter to search", id="search-input"
        )
        yield Label("", id="search-count")

    def open(self) -> None:
        """Show the bar and focus the query."""
        self.display = True
        self.query_one(Input).focus()

    def action_close(self) -> None:
        """Hide the bar (matches stay; n/N keep working)."""
        self.display = False
        self.post_message(self.Closed())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Start the search."""
        event.stop()
        self.post_message(self.Search(event.value.strip()))

    def set_count(self, text: str) -> None:
        """Show the match counter (``3/17``, ``searching 40%``, ``no matches``)."""
        self.query_one("#search-count", Label).update(text)
