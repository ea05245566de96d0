"""Snapshots of the fleet and the screens it opens at 80x24, the terminal operators reach over SSH."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
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


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_fleets_alerts_at_80_and_60_columns(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The fleet's alerts: the session of each named (its title cut to the room), an alert of another day dated;
    no sideways scroll."""
    from core.alerts.engine import Alert
    from tui.screens.alerts import AlertsScreen

    root = _root(tmp_path)
    calm = str(root / "p" / "calm-a" / "session.jsonl")
    app = _app([root])

    async def run(pilot: Pilot[Any]) -> None:
        await _loaded(pilot, 3)
        await until(pilot, lambda: len(app.board.alerts) == 1)  # broken-b's, of 2096: dated by its year
        # of a fixed day of 1970: dated by its year whatever day the test runs
        alert = Alert(
            "calm-a", calm, "rewind-guard", 345, "critical", "the rewind would drop a pinned step", 1
        )
        app.board.add(alert, calm, "Write the changelog for the 2.0 release")
        await until(pilot, lambda: bool(app._notifications))  # the alerts' history toast, taken off
        app.clear_notifications()
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        await until(pilot, lambda: app.screen.query_one("#alerts-table", DataTable).row_count == 2)
        await quiet(pilot)
        assert app.screen.query_one("#alerts-table", DataTable).max_scroll_x == 0

    assert snap_compare(app, terminal_size=size, run_before=run)
