"""The Alerts screen: every alert raised since the TUI started, newest last, the selected one's reason whole under
the table (the reason column is cut on a narrow terminal); ``enter`` goes to its event.

It shows what ``tui.alerts.AlertBoard`` holds: the rules themselves run in core, on a worker thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.shared.text import printable, short_session
from tui.alerts import AlertBoard
from tui.cells import cut, fitting, show_columns
from tui.screens.policy_screen import column_widths, fill_table
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
    HEADING = "Alerts — what needed the operator, newest last; enter: go to the event"

    def __init__(self, board: AlertBoard) -> None:
        super().__init__(classes="policy-screen")
        self.board = board
        self._rows: dict[str, Any] = {}

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

    def show_alerts(self) -> None:
        """Refill the table from the board (the app calls this when an alert arrives)."""
        alerts = self.board.alerts
        self._rows = {str(k): a for k, a in enumerate(alerts)}
        rows = [
            {"time": alert_time(a.at), "severity": Text(a.severity, style=SEVERITY_STYLE.get(a.severity, "")),
             "cause": printable(a.cause), "session": printable(short_session(a.session) or a.path), "seq": str(a.seq),
             "reason": printable(a.reason)}
            for a in alerts
        ]  # fmt: skip
        table = self.query_one("#alerts-table", DataTable)
        widths = {c: column_widths([c], [[row[c]] for row in rows]) for c in COLUMNS}
        room = table.size.width - table.styles.scrollbar_size_vertical
        shown = fitting({**widths, "reason": min(widths["reason"], REASON_MIN + 2)}, room, LEAST_NEEDED)
        left = room - sum(widths[c] for c in shown if c != "reason") - 2  # the reason's padding (whole below)
        show_columns(table, shown)
        fill_table(table, [(str(k), [cut(row[c], left) if c == "reason" else row[c] for c in shown])
                           for k, row in enumerate(rows)])  # fmt: skip
        count = len(alerts)
        self.query_one("#alerts-summary", Static).update(
            Text(f"{count} alert{'' if count == 1 else 's'}" if count else "No alerts yet.", style="dim")
        )
        self._show_selected()

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
        if main is None or live is None or str(live.path.resolve()) != str(Path(alert.path).resolve()):
            self.notify("That alert is about another session: open it from the fleet table.", timeout=3)
            return
        main.show_seq(alert.seq)  # closes this screen and any other above the session's

    def action_close(self) -> None:
        """Leave the screen."""
        self.dismiss(None)
