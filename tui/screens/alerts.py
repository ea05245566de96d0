"""The Alerts screen: every alert raised since the TUI started, newest last, the selected one's reason whole under
the table (the reason column is cut on a narrow terminal, the session's title to the room left, never out);
``enter`` goes to its event, or, opened from the fleet, opens the session of another's.

It shows what ``tui.alerts.AlertBoard`` holds: the rules themselves run in core, on a worker thread.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.alerts.engine import Alert
from core.shared.clock import utc_time
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
# left out while the reason would get less than REASON_MIN; the session stays (a fleet's alerts are of many), its
# title cut to the room the other columns leave, but no shorter than SESSION_MIN
LEAST_NEEDED = ("severity",)
REASON_MIN = 10  # a reason is cut no shorter than this (the line under the table gives the selected one whole)
SESSION_MIN = 12


def today() -> str:
    """Today's date in UTC (``2026-12-07``), which an alert of another day is dated against."""
    return time.strftime("%Y-%m-%d", time.gmtime())


def alert_time(at: int | None) -> str:
    """An alert's epoch-ms time in UTC, as every time the app shows (``clock``): ``18:04:05`` today,
    ``12-06 18:04`` on an earlier day of this year, ``2025-12-06`` before it (narrow enough for 60 columns);
    ``-`` when unknown."""
    if not at:
        return "-"
    day, now = utc_time(at, "%Y-%m-%d"), today()
    if day is None or day == now:
        return clock(at)  # a time no clock gives is marked as a row's is
    return day if day[:4] != now[:4] else utc_time(at, "%m-%d %H:%M") or day


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
        # the columns shown, and the cells of the session's title and of the reason
        self._layout: tuple[list[str], int, int] = ([], 0, 0)

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
        least = {"session": SESSION_MIN + 2, "reason": REASON_MIN + 2}
        least = {c: min(widths[c], cells) for c, cells in least.items()}
        columns = fitting({**widths, **least}, room, LEAST_NEEDED)
        others = sum(widths[c] for c in columns if c not in least)
        # the session's title takes the room left, up to its whole, then the reason (each cut, its padding off)
        session = max(least["session"], min(widths["session"], room - others - least["reason"]))
        layout = (columns, session - 2, room - others - session - 2)
        if kept and layout != self._layout:  # the rows shown need other cells
            kept, new = 0, [(a, self._cells(a)) for a in alerts]
        self._widths, self._layout, self._last = widths, layout, alerts[-1] if alerts else None
        room_of = {"session": layout[1], "reason": layout[2]}
        rows = [(str(id(a)), [cut(cells[c], room_of[c]) if c in room_of else cells[c] for c in columns])
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
        """``enter``: back to the main view, on the alert's event (when that session is the one open); opened from
        the fleet, an alert of another session opens that session, as Enter on its row does."""
        alert = self._rows.get(event.row_key.value or "")
        if alert is None:
            return
        from tui.screens.fleet import FleetScreen
        from tui.screens.main import MainScreen

        main = next((s for s in reversed(self.app.screen_stack) if isinstance(s, MainScreen)), None)
        live = getattr(self.app, "live", None)
        # the open session's: its log's key (found by a worker), else the path it was opened by (a fleet row's key)
        here = live is not None and (live.key == self.board.keys[id(alert)] or str(live.path) == alert.path)
        fleet = next((s for s in self.app.screen_stack if isinstance(s, FleetScreen)), None)
        if here and id(alert) in self.board.replaced:
            self.notify("That alert is about the log this one replaced: its event is gone.", timeout=3)
        elif here and main is not None:
            main.show_seq(alert.seq)  # closes this screen and any other above the session's
        elif fleet is None:
            self.notify("That alert is about another session: open it from the fleet table.", timeout=3)
        elif not fleet.open_row(alert.path):
            self.notify("That alert is about a session no longer in the fleet table.", timeout=3)

    def action_close(self) -> None:
        """Leave the screen."""
        self.dismiss(None)
