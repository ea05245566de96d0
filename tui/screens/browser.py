"""The session browser: every session under a sessions root, subagent children under their parents."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Static

from core.control.host_state import read_host_state, state_label
from core.log.sessions import SessionRef, discover_sessions, session_tree
from core.log.tail import changes_under
from core.read.outcome import session_outcome
from core.read.summary import human_chars
from core.shared.errors import TapedeckError
from tui.screens.control import HOST_POLL_SECONDS
from tui.widgets.footer import PriorityFooter

Outcomes = dict[str, tuple[tuple[int, int], tuple[str, str]]]  # path -> ((size, mtime ns), (turns, outcome))


def _state(path: Path, outcomes: Outcomes) -> tuple[str, str, str, str]:
    """The host state of a log, its turns, how its last turn ended and its last write (UTC), as the browser shows
    them (the log's end is read again only when the file changed)."""
    try:
        stat = path.stat()
        active = dt.datetime.fromtimestamp(stat.st_mtime, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        stamp = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        active, stamp = "-", (-1, -1)
    known = outcomes.get(str(path))
    if known is None or known[0] != stamp:
        try:
            turns, outcome = session_outcome(path)
        except (TapedeckError, OSError):
            turns, outcome = None, "?"
        known = outcomes[str(path)] = (stamp, ("-" if turns is None else str(turns), outcome))
    host = read_host_state(path)
    return (state_label(host.state, host.kind), *known[1], active)


def created_label(ms: int) -> str:
    """The header's ``createdAt`` as a UTC date and time (``-`` when unset)."""
    if ms <= 0:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M")


# Without change notification (no watchfiles, or the root does not exist yet) the root is rescanned this often.
ROOT_POLL_SECONDS = 2.0


class BrowserScreen(Screen[None]):
    """Pick a session; Enter opens it, ``R`` rescans the root; any change under the root rescans it by itself."""

    BINDINGS = [
        Binding("enter", "open", "Open", id="browser.open"),
        Binding("R", "rescan", "Rescan", id="browser.rescan"),
    ]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.paths: dict[str, Path] = {}
        self.scanning = False  # a rescan is running; the table shows the previous result until it lands
        self.states: dict[str, tuple[str, str, str, str]] = {}  # path -> (host, turns, outcome, last activity)
        self._outcomes: Outcomes = {}  # what each log's end said, and when it was read
        self._rescan_due = False  # the root changed while a scan was running: scan again when it lands
        self._stop_watch: threading.Event | None = None  # set: the watcher of the root ends (None: not watching)
        self._state_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        """Title, table, footer."""
        yield Static(f"Sessions under {self.root.name or self.root}", id="browser-title")
        table: DataTable[str] = DataTable(cursor_type="row", id="browser-table")
        self._columns = table.add_columns("session", "host", "turns", "outcome", "last activity (UTC)", "origin",
                                          "cwd", "size", "created (UTC)")[1:5]  # fmt: skip
        yield table
        yield Static("", id="browser-status")
        yield PriorityFooter()

    def on_mount(self) -> None:
        """Scan the root and watch it."""
        self.query_one(DataTable).focus()
        self.query_one("#browser-status", Static).update("scanning…")
        self._state_timer = self.set_interval(HOST_POLL_SECONDS, self._poll_states)
        self._resume()  # the first showing: a resume that arrived before the table was mounted did nothing

    def on_screen_resume(self) -> None:
        """Shown again (a session or dialog above it closed): rescan once and watch the root again."""
        self._resume()

    def on_screen_suspend(self) -> None:
        """Hidden under an open session or a dialog: no watcher, no rescans, no host polls until shown again."""
        if self._stop_watch is not None:
            self._stop_watch.set()
            self._stop_watch = None
        if self._state_timer is not None:
            self._state_timer.pause()

    def on_unmount(self) -> None:
        """Stop watching the root."""
        self.on_screen_suspend()

    @property
    def watching(self) -> bool:
        """True while the root is watched (the browser is on screen)."""
        return self._stop_watch is not None

    def _resume(self) -> None:
        if self._stop_watch is not None or self._state_timer is None:
            return
        self._stop_watch = threading.Event()
        self._watch_root(self._stop_watch)
        if self._state_timer is not None:
            self._state_timer.resume()
        self._root_changed()  # what changed while hidden: one quiet rescan

    def action_rescan(self) -> None:
        """Look for sessions again (in a worker: it reads every log's header)."""
        self.query_one("#browser-status", Static).update("scanning…")
        self.scanning = True
        self._scan()

    @work(thread=True, group="browse-watch", exit_on_error=False)
    def _watch_root(self, stop: threading.Event) -> None:
        for _ in changes_under(self.root, stop, ROOT_POLL_SECONDS):
            if stop.is_set():
                return
            self.app.call_from_thread(self._root_changed)

    def _root_changed(self) -> None:
        if not self.watching:
            return  # hidden: the rescan waits until the browser is shown again
        if self.scanning:
            self._rescan_due = True
        else:
            self.scanning = True  # the status line keeps the last result: a live rescan is quiet
            self._scan()

    @work(thread=True, exclusive=True, group="browse", exit_on_error=False)
    def _scan(self) -> None:
        skipped: list[str] = []
        refs = discover_sessions(self.root, skipped)
        states = {str(r.path): _state(r.path, self._outcomes) for r in refs}
        self.app.call_from_thread(self._show, session_tree(refs), states, skipped)

    def _poll_states(self) -> None:
        if not self.scanning and self.paths:
            self._read_states(dict(self.paths))

    @work(thread=True, exclusive=True, group="browse-host", exit_on_error=False)
    def _read_states(self, paths: dict[str, Path]) -> None:
        states = {key: _state(path, self._outcomes) for key, path in paths.items()}
        self.app.call_from_thread(self._update_states, states)

    def _update_states(self, states: dict[str, tuple[str, str, str, str]]) -> None:
        table = self.query_one(DataTable)
        for key, shown in states.items():
            if self.states.get(key) != shown and key in self.paths:
                self.states[key] = shown
                for column, value in zip(self._columns, shown, strict=True):
                    table.update_cell(key, column, value)

    def _show(
        self, rows: list[tuple[SessionRef, int]], states: dict[str, tuple[str, str, str, str]], skipped: list[str]
    ) -> None:
        table = self.query_one(DataTable)
        current = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
        table.clear()
        self.paths = {}
        self.states = dict(states)
        for ref, depth in rows:
            key = str(ref.path)
            self.paths[key] = ref.path
            label = ("  " * depth + "└ " if depth else "") + ref.id
            table.add_row(
                label,
                *states.get(key, ("?", "-", "-", "-")),
                ref.origin or "-",
                ref.cwd or "-",
                human_chars(ref.size),
                created_label(ref.created_at),
                key=key,
            )
        if current in self.paths:
            table.move_cursor(row=table.get_row_index(current), scroll=False)
        status = f"{len(rows)} session{'' if len(rows) == 1 else 's'}" if rows else f"no sessions found under {self.root}"
        self.query_one("#browser-status", Static).update("; ".join([status, *skipped]))
        self.scanning = False
        if self._rescan_due:
            self._rescan_due = False
            self._root_changed()

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
