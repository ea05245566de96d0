"""Snapshots of the fleet and the screens it opens at 80x24, the terminal operators reach over SSH."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.fleet.test_fleet_tui import _app, _hosts, _loaded, _root
from tests.tui.pilot import quiet, until

__all__ = ["_hosts"]  # the fleet tests' fixture: the hosts they hold are released


def test_a_row_actions_refusal_toast_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    """S on a session nobody runs: the toast names the request as an open session's do ('The stop to …'), whole."""
    root = _root(tmp_path)
    app = _app([root])
    app.NOTIFICATION_TIMEOUT = 600  # the toast stays up however long a loaded machine takes to draw it

    async def run(pilot: Pilot[Any]) -> None:
        screen = await _loaded(pilot, 3)
        await until(pilot, lambda: bool(app._notifications))  # the alerts' history toast, taken off
        app.clear_notifications()
        screen.query_one(DataTable).move_cursor(
            row=screen.shown.index(str(root / "p" / "calm-a" / "session.jsonl"))
        )
        await pilot.press("S")
        await until(pilot, lambda: any(n.title == "Not sent" for n in app._notifications))
        await quiet(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run)
