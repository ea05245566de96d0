"""The Diagnostics screen: every problem the readers found in the live log, kept current while it is followed.

A bad event, a torn line or frame, a seq gap, a replace that names no surface node, a log rewritten under the
follower: each is a ``core.shared.diagnostics.Diagnostic`` with its seq and byte offset, listed here in log order.
``enter`` goes to the event in the main view. The list is copied under the live session's lock in a worker;
the UI thread never reads the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from core.shared.diagnostics import Diagnostic
from tui.cells import fitting, show_columns
from tui.screens.policy_screen import PolicyScreen, column_widths, fill_table
from tui.screens.stacked import while_stacked
from tui.widgets.table import RowTable

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
COLUMNS = ("severity", "code", "seq", "offset", "message")
MESSAGE_MIN = 20  # the message column's cells however narrow the screen (the table scrolls sideways then)
LEAST_NEEDED = ("offset", "seq")  # left out in this order while the message would get less (enter still goes there)


@dataclass(frozen=True, slots=True)
class DiagnosticsView:
    """The diagnostics of the projection and the follower's notices (resets, a removed file)."""

    diagnostics: list[Diagnostic]
    notices: list[Diagnostic]


def summary_line(diagnostics: list[Diagnostic]) -> str:
    """``3 errors, 1 warning`` (info entries are not counted), or ``no problems found``."""
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    if not errors and not warnings:
        return "no problems found" + (f" ({len(diagnostics)} note(s))" if diagnostics else "")
    return f"{errors} error(s), {warnings} warning(s)"


class DiagnosticsScreen(PolicyScreen):
    """What the readers reported about this log: bad events, torn tails, seq gaps, resets."""

    # short enough for its key hint to stay in sight at 80 columns, beside ``· session ID``
    HEADING = "Diagnostics — what the readers found wrong; enter: go to it"

    def __init__(self) -> None:
        super().__init__()
        self._seqs: dict[str, int | None] = {}
        self._view: DiagnosticsView | None = None  # the entries shown, drawn again for a new width

    def compose_body(self) -> ComposeResult:
        """The table and a one-line count."""
        with Vertical(classes="policy-body"):
            yield RowTable(id="diagnostics-table", cursor_type="row", classes="policy-table")
            yield Static(id="diagnostics-summary")

    @while_stacked
    def on_mount(self) -> None:
        """Set up the table, then derive."""
        table = self.query_one("#diagnostics-table", DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label)
        super().on_mount()

    def on_resize(self) -> None:
        """Fit the messages to the new width."""
        if self._view is not None:
            self.call_after_refresh(self.show, self._view)

    def derive(self, live: Any) -> DiagnosticsView:
        """Copies of the lists (worker thread, under the live lock)."""
        return DiagnosticsView(list(live.session.diagnostics), list(live.notices))

    def show(self, view: DiagnosticsView) -> None:
        """Refill the table: the follower's notices first, then the log's diagnostics in order, each message wrapped
        in the width the other columns leave."""
        self._view = view
        entries = [*view.notices, *view.diagnostics]
        self._seqs = {str(k): d.seq for k, d in enumerate(entries)}
        rows = [
            (
                str(k),
                (
                    Text(d.severity, style=_SEVERITY_STYLE.get(d.severity, "")),
                    d.code,
                    "" if d.seq is None else str(d.seq),
                    "" if d.offset is None else str(d.offset),
                    d.message,
                ),
            )
            for k, d in enumerate(entries)
        ]
        table = self.query_one("#diagnostics-table", DataTable)
        room = self.size.width - table.styles.scrollbar_size_vertical
        widths = {c: column_widths([c], [[cells[i]] for _, cells in rows]) for i, c in enumerate(COLUMNS)}
        shown = fitting({**widths, "message": MESSAGE_MIN + 2}, room, LEAST_NEEDED)
        show_columns(table, shown)
        message = table.columns["message"]  # type: ignore[index]
        message.width = max(room - sum(widths[c] for c in shown if c != "message") - 2, MESSAGE_MIN)
        message.auto_width = False
        keep = [COLUMNS.index(c) for c in shown]
        fill_table(table, [(key, [cells[i] for i in keep]) for key, cells in rows], height=None)
        self.query_one("#diagnostics-summary", Static).update(Text(summary_line(entries)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """``enter``: back to the main view, on the event of the selected diagnostic."""
        seq = self._seqs.get(event.row_key.value or "")
        if seq is None:
            self.notify("This diagnostic is not tied to one event.", timeout=3)
            return
        from tui.screens.main import MainScreen

        main = next((s for s in reversed(self.app.screen_stack) if isinstance(s, MainScreen)), None)
        if main is None:
            self.dismiss(None)
        else:
            main.show_seq(seq)  # closes this screen and any other above the session's
