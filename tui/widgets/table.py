"""The screens' tables: Home/g and End/G go to the first and the last row, as on the main list, and a table with
no row highlights none."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from tui.keymap import textual_bindings


class RowTable(DataTable[Any]):
    """A table whose Home/g and End/G go to its first and last row with the column labels in sight (Textual's own
    scroll sideways to the first or last column, which a row cursor leaves the operator no way to see; ← and → still
    scroll sideways); a table with no cursor scrolls to its top or its end. The cursor never goes above row 0:
    Textual's page down in a table with no row moves it to row -1 and highlights that row, whose event carries no
    row key for the screens to read."""

    BINDINGS = textual_bindings(  # Textual's table keys too, each under an id (``table.cursor_down`` …)
        DataTable,
        "table",
        [
            Binding("home,g", "first_row", "First row", show=False, id="table.first"),
            Binding("end,G", "last_row", "Last row", show=False, id="table.last"),
        ],
    )

    def validate_cursor_coordinate(self, value: Coordinate) -> Coordinate:
        """Textual's clamp, then row 0 at the least (the clamp leaves -1 in a table with no row)."""
        row, column = super().validate_cursor_coordinate(value)
        return Coordinate(max(row, 0), max(column, 0))

    def action_first_row(self) -> None:
        """The first row, the table scrolled to its top left."""
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=0)
        self.scroll_home(animate=False)

    def action_last_row(self) -> None:
        """The last row, the table scrolled to its end, its left edge in sight."""
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=self.row_count - 1)
        self.scroll_end(animate=False)
