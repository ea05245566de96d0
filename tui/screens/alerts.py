"""The Alerts screen: every alert raised since the TUI started, newest last, the selected one's reason whole under
the table (the reason column is cut on a narrow terminal); ``enter`` goes to its event.

It shows what ``tui.alerts.AlertBoard`` holds: the rules themselves run in core, on a worker thread.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.alerts.engine import Alert
from core.shared.text import printable
from tui.alerts import AlertBoard
from tui.cells import cut, fitting, show_columns
from tui.screens.policy_screen import add_rows, column_widths, fill_table
from tui.screens.stacked import while_stacked
from tui.screens.toasts import stack_under_labels
from tui.widgets.footer import PriorityFooter
from tui.widgets.rows import clock
from tui.widgets.table import RowTable

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "dim"}
COLUMNS = ("time", "severity", "cause", "session", "seq", "reason")
LEAST_NEEDED = ("severity", "session")  # left out in this order while the reason would get less than REASON_MIN
REASON_MIN = 10  # a reason is cut no shorter than this (the line under the table gives the selected one whole)


def alert_time(at: int | None) -> str:
    """``18:04:05`` (UTC) of an alert's epoch-ms time (as a row's, ``clock``), or ``-``."""
    return clock(at) if at else "-"


class AlertsScreen(Screen[None]):
    """The alerts list."""

    CSS_PATH = "policy.tcss"
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "close", "Back", id="alerts.close")]
    HEADING = "Alerts — newest last; enter goes to the alert's event"

    def __init__(self, board: AlertBoard) -> None:
        super().__init__(classes="policy-screen")
        self.board = board
        self._rows: dict[str, Alert] = {}  # row key -> its alert, in the board's order
        self._last: Alert | None = None  # the last row's alert
        self._widths: dict[str, int] = {}  # each column's cells, padding included, over every row
        self._layout: tuple[list[str], int] = ([], 0)  # the columns shown and the reason's cells

    def compose(self) -> ComposeResult:
        """Heading, the table, the selected alert's reason, a count and the footer."""
        yield Static(Text(self.HEADING), id="policy-heading")
        with Vertical(classes="policy-body"):
            yield RowTable(id="alerts-table", cursor_type="row", classes="policy-table")
            with VerticalScroll(id="alerts-selected-box"):  # a reason of any length leaves the table rows
                yield Static(id="alerts-selected")
            yield Static(id="alerts-summary")
        yield PriorityFooter()

    @while_stacked
    def on_mount(self) -> None:
        """Columns, then the rows; the toasts kept off the newest alerts."""
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)
        self.query_one("#alerts-table", DataTable).add_columns(*COLUMNS)
        self.show_alerts()

    def on_resize(self) -> None:
        """Fit the table to the new width."""
        self.call_after_refresh(self.show_alerts)

    def _place_toasts(self, screen: Screen[object]) -> None:
        """The toasts stack under the table's column labels, over the upper half of its rows (the oldest alerts):
        the heading, the labels, the newest alerts, the selected one's reason, the count and the footer stay."""
        stack_under_labels(self, self.query_one("#alerts-table", DataTable), share=0.5)

    def show_alerts(self, again: bool = False) -> None:
        """Show what the board holds (the app calls this at every alert). The alerts after the last row's are rows
        added under it; the table is filled again only when an alert went between rows, a column must widen or the
        width changed, so a history of thousands of alerts is not drawn again whole at each new one; and with
        ``again``, when the rows shown need other cells (a session's new title)."""
        alerts = self.board.alerts
        table = self.query_one("#alerts-table", DataTable)
        shown = len(self._rows)  # the alerts of the rows stay where they are when the last is still at its place
        in_place = shown and shown <= len(alerts) and alerts[shown - 1] is self._last
        kept = shown if in_place and not again else 0
        new = [(a, self._cells(a)) for a in alerts[kept:]]
        widths = {c: max([self._widths[c] if kept else column_widths([c], []),
                          *(column_widths([c], [[cells[c]]]) for _, cells in new)]) for c in COLUMNS}  # fmt: skip
        room = table.size.width - table.styles.scrollbar_size_vertical
        columns = fitting({**widths, "reason": min(widths["reason"], REASON_MIN + 2)}, room, LEAST_NEEDED)
        layout = (columns, room - sum(widths[c] for c in columns if c != "reason") - 2)  # the reason's padding
        if kept and layout != self._layout:  # the rows shown need other cells
            kept, new = 0, [(a, self._cells(a)) for a in alerts]
        self._widths, self._layout, self._last = widths, layout, alerts[-1] if alerts else None
        left = layout[1]
        rows = [(str(id(a)), [cut(cells[c], left) if c == "reason" else cells[c] for c in columns])
                for a, cells in new]  # fmt: skip
        if not kept:
            self._rows = {}
        self._rows.update((key, a) for (key, _), (a, _) in zip(rows, new, strict=True))
        if kept:
            add_rows(table, rows)
        else:
            show_columns(table, columns)
            fill_table(table, rows)
        count = len(alerts)
        self.query_one("#alerts-summary", Static).update(
            Text(f"{count} alert{'' if count == 1 else 's'}" if count else "No alerts yet.", style="dim")
        )
        self._show_selected()

    def _cells(self, alert: Alert) -> dict[str, str | Text]:
        """An alert's row: each column's cell, whole but the session's title."""
        severity = Text(alert.severity, style=SEVERITY_STYLE.get(alert.severity, ""))
        return {"time": alert_time(alert.at), "severity": severity, "cause": printable(alert.cause),
                "session": self.board.session_name(alert),
                "seq": str(alert.seq), "reason": printable(alert.reason)}  # fmt: skip

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved: give that alert's reason whole."""
        self._show_selected()

    def _show_selected(self) -> None:
        table = self.query_one("#alerts-table", DataTable)
        alert = None
        if table.row_count:
            alert = self._rows.get(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or "")
        said = Text.assemble((f"{alert.cause} at seq {alert.seq}: ", "bold"), printable(alert.reason)) if alert else ""
        self.query_one("#alerts-selected", Static).update(said)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """``enter``: back to the main view, on the alert's event (when that session is the one open)."""
        alert = self._rows.get(event.row_key.value or "")
        if alert is None:
            return
        if id(alert) in self.board.replaced:
            self.notify("That alert is about the log this one replaced: its event is gone.", timeout=3)
            return
        from tui.screens.main import MainScreen

        main = next((s for s in reversed(self.app.screen_stack) if isinstance(s, MainScreen)), None)
        live = getattr(self.app, "live", None)
        if main is None or live is None or live.key != self.board.keys[id(alert)]:  # both found by workers
            self.notify("That alert is about another session: open it from the fleet table.", timeout=3)
            return
        main.show_seq(alert.seq)  # closes this screen and any other above the session's

    def action_close(self) -> None:
        """Leave the screen."""
        self.dismiss(None)
