"""The TUI papercuts the last review left: each as the operator meets it, driven through the keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from core.control.config import validate_config
from tests.alerts.crafted import HEADER, Log
from tests.tui.pilot import NO_KEYMAP, settle, until
from tui.alerts import AlertRaised
from tui.app import TapedeckApp
from tui.screens.alerts import COLUMNS, AlertsScreen

pytestmark = pytest.mark.anyio


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.mark.parametrize("title", ["Fix the\nflaky parser", None], ids=["titled", "untitled"])
async def test_the_alerts_list_names_a_session_by_its_title(
    tmp_path: Path, title: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The alerts screen's session column gave the head of the session's id ('crafted-') even for a session with a
    title, which is what the fleet table and the header call it by: the title now travels with the alert (on its
    ``AlertRaised``), and the row shows it on one line; the id's head only for a session with no title."""
    log = Log()
    if title is not None:
        log.add("session/title", {"title": title})
    log.turn(1)
    failed = log.result(True)
    path = tmp_path / "session.jsonl"
    _write(path, [HEADER, *log.events])
    posted: list[AlertRaised] = []
    handle = TapedeckApp.on_alert_raised

    def record(app: TapedeckApp, message: AlertRaised) -> None:
        posted.append(message)
        handle(app, message)

    monkeypatch.setattr(TapedeckApp, "on_alert_raised", record)
    config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 1}}})
    app = TapedeckApp(
        path, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP, config=config
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
        await settle(pilot)
        assert [(m.alert.seq, m.title) for m in posted] == [(failed, title)]
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count == 1)
        cell = str(table.get_row_at(0)[COLUMNS.index("session")])
        assert cell == ("Fix the flaky parser" if title is not None else "crafted-")

