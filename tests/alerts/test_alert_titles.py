"""An alert's session is named by the newest title tapedeck knows for it, not by the one known when it was raised:
a DSH session's title is logged after its first events, and a session can be renamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import DataTable

from core.alerts.follow import AlertFollower, Titles
from core.control.config import validate_config
from tests.alerts.crafted import HEADER, Log
from tests.tui.pilot import NO_KEYMAP, raised_toasts, settle, until
from tui.app import TapedeckApp
from tui.screens.alerts import COLUMNS, AlertsScreen

ALERTS = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 1}}})
FUTURE_MS = 4_000_000_000_000  # event times after the test's clock: no clock rule fires meanwhile


def _write(path: Path, events: list[dict[str, Any]], mode: str = "wb") -> None:
    with open(path, mode) as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in events))


def _failing(title: str | None = None) -> Log:
    """A turn whose tool call failed (an error streak of one), its session titled ``title`` first when given."""
    log = Log(start_ms=FUTURE_MS)
    if title is not None:
        log.add("session/title", {"title": title})
    log.turn(1)
    log.result(True)
    return log


def _session_cells(app: TapedeckApp) -> list[str]:
    table = app.screen.query_one("#alerts-table", DataTable)
    return [str(table.get_row_at(row)[COLUMNS.index("session")]) for row in range(table.row_count)]


def test_titles_tell_a_sessions_new_title_once_and_only_for_that_session(tmp_path: Path) -> None:
    """``Titles`` gives an alert's session's title as it is when the alert is raised, then each later title its
    watch reads, once; none for a session whose log another session replaced."""
    path = tmp_path / "session.jsonl"
    log = _failing()
    _write(path, [HEADER, *log.events])
    follower = AlertFollower([path], ALERTS)
    titles = Titles(follower.watch_for)
    (alert,) = follower.poll(now=FUTURE_MS)
    assert titles.named(alert) is None
    assert titles.renamed(follower.retitled.take()) == []
    for title, told in [("Fix the parser", True), ("Fix the parser", False), ("Fix the flaky parser", True)]:
        log.add("session/title", {"title": title})
        _write(path, log.events[-1:], "ab")
        assert follower.poll(now=FUTURE_MS) == []
        assert titles.renamed(follower.retitled.take()) == ([(alert, title)] if told else [])
    other = _failing("Another session")
    _write(path, [{**HEADER, "id": "crafted-2"}, *other.events])  # replaced: another session at that path
    assert [a.session for a in follower.poll(now=FUTURE_MS)] == ["crafted-2"]
    assert titles.renamed(follower.retitled.take()) == []


@pytest.mark.anyio
async def test_the_alerts_list_follows_a_title_logged_after_the_alert(tmp_path: Path) -> None:
    """A row kept the title known when its alert was raised: a DSH session whose title came after its first events
    stayed the head of its id ('crafted-') on the Alerts screen. The row follows the newest title, while the screen
    is open and after."""
    path = tmp_path / "session.jsonl"
    log = _failing()
    _write(path, [HEADER, *log.events])
    app = TapedeckApp(
        path, follow=True, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP, config=ALERTS
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
        await settle(pilot)
        await pilot.press("A")
        await until(
            pilot, lambda: isinstance(app.screen, AlertsScreen) and _session_cells(app) == ["crafted-"]
        )
        log.add("session/title", {"title": "Fix the\nflaky parser"})
        _write(path, log.events[-1:], "ab")
        await until(pilot, lambda: _session_cells(app) == ["Fix the flaky parser"])
        await pilot.press("escape")
        log.add("session/title", {"title": "Port the CLI"})
        _write(path, log.events[-1:], "ab")
        await until(pilot, lambda: app.board.session_name(app.board.alerts[0]) == "Port the CLI")
        await settle(pilot)
        await pilot.press("A")
        await until(
            pilot, lambda: isinstance(app.screen, AlertsScreen) and _session_cells(app) == ["Port the CLI"]
        )


@pytest.mark.anyio
async def test_a_renamed_fleet_session_is_named_by_its_new_title(tmp_path: Path) -> None:
    """On the fleet, a session renamed after its alert was listed kept its old title on the Alerts screen (and in
    the toast of its next alert); both name it by its new title."""
    root = tmp_path / "sessions"
    path = root / "p" / "renamed-a" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = _failing("Write the changelog")
    _write(path, [{**HEADER, "id": "renamed-a"}, *log.events])
    app = TapedeckApp(
        root, follow=False, interval=0.02, keymap_file=NO_KEYMAP, fleet_roots=[root], config=ALERTS
    )
    toasts = raised_toasts(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
        await settle(pilot)
        await pilot.press("A")
        await until(
            pilot,
            lambda: isinstance(app.screen, AlertsScreen) and _session_cells(app) == ["Write the changelog"],
        )
        log.add("session/title", {"title": "Fix the flaky parser"})
        _write(path, log.events[-1:], "ab")
        await until(pilot, lambda: _session_cells(app) == ["Fix the flaky parser"])
        toasts.clear()
        log.result(False)  # the streak ends: the next failure is a new one
        failed = log.result(True)
        _write(path, log.events[-2:], "ab")
        await until(pilot, lambda: len(app.board.alerts) == 2 and bool(toasts))
        assert _session_cells(app) == ["Fix the flaky parser"] * 2
        assert [t.message for t in toasts] == [
            f"1 tool call failed in a row (seq {failed}, Fix the flaky parser)"
        ]
