"""The session browser: every session under a sessions root, subagent children under their parents."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.log.layout import SessionRef, discover_sessions, session_tree
from core.summary import human_chars
from tui.widgets.footer import PriorityFooter


def created_label(ms: int) -> str:
    """The header's ``createdAt`` as a UTC date and time (``-`` when unset)."""
    if ms <= 0:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M")


class BrowserScreen(Screen[None]):
    """Pick a session; Enter opens it, ``R`` rescans the root."""

    BINDINGS = [
        Binding("enter", "open", "Open", id="browser.open"),
        Binding("R", "rescan", "Rescan", id="browser.rescan"),
    ]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.paths: dict[str, Path] = {}
        self.scanning = False  # a rescan is running; the table shows the previous result until it lands

    def compose(self) -> ComposeResult:
        """Title, table, footer."""
        yield Static(f"Sessions under {self.root.name or self.root}", id="browser-title")
        table: DataTable[str] = DataTable(cursor_type="row", id="browser-table")
        table.add_columns("session", "origin", "cwd", "size", "created (UTC)")
        yield table
        yield Static("", id="browser-status")
        yield PriorityFooter()

    def on_mount(self) -> None:
        """Scan the root."""
        self.query_one(DataTable).focus()
        self.action_rescan()

    def action_rescan(self) -> None:
        """Look for sessions again (in a worker: it reads every log's header)."""
        self.query_one("#browser-status", Static).update("scanning…")
        self.scanning = True
        self._scan()

    @work(thread=True, exclusive=True, group="browse", exit_on_error=False)
    def _scan(self) -> None:
        refs = discover_sessions(self.root)
        self.app.call_from_thread(self._show, session_tree(refs))

    def _show(self, rows: list[tuple[SessionRef, int]]) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.paths = {}
        for ref, depth in rows:
            key = str(ref.path)
            self.paths[key] = ref.path
            label = ("  " * depth + "└ " if depth else "") + ref.id
            table.add_row(
                label,
                ref.origin or "-",
                ref.cwd or "-",
                human_chars(ref.size),
                created_label(ref.created_at),
                key=key,
            )
        status = f"{len(rows)} session{'' if len(rows) == 1 else 's'}" if rows else f"no sessions found under {self.root}"
        self.query_one("#browser-status", Static).update(status)
        self.scanning = False

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter or click on a row opens it."""
        self._open(event.row_key.value)

    def action_open(self) -> None:
        """Open the session under the cursor."""
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self._open(key)

    def _open(self, key: str | None) -> None:
        path = self.paths.get(key or "")
        if path is not None:
            self.app.open_session(path)  # type: ignore[attr-defined]
