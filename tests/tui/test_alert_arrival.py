"""An alert that arrives while the Alerts screen is being put up (pushed, its widgets not built yet), during the
app's start-up or later, is listed once the screen is up: never lost, and never an exception that ends the TUI."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from core.alerts.engine import Alert
from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, raised_toasts, settle, until
from tui.alerts import AlertRaised, SessionRenamed
from tui.screens.alerts import AlertsScreen

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("when", ["start-up", "settled"])
async def test_an_alert_raised_while_the_alerts_screen_is_pushed_is_listed_once_it_is_up(
    tmp_path: Path, when: str
) -> None:
    """The app handed the new alert to every Alerts screen on the stack, one just pushed too, whose table was not
    built yet: ``NoMatches`` ended the TUI. The screen lists the board's alerts as it mounts, the new one among
    them, and the toast still goes up."""
    path = policy_log().write(tmp_path / "session.jsonl")
    app = make_app(path)
    toasts = raised_toasts(app)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        if when == "settled":
            await settle(pilot)
        app.action_alerts()  # pushed: the handlers below run before the screen is built
        screen = app.screen_stack[-1]
        assert isinstance(screen, AlertsScreen) and not screen.is_mounted
        alert = Alert("t-1", str(path), "loop", 3, "warning", "the same call three times", 1_000)
        app.on_alert_raised(AlertRaised(alert, str(path), title="Port the parser"))
        app.on_session_renamed(SessionRenamed(str(path), "t-1", "Port the parser, again"))
        await until(
            pilot, lambda: screen.is_mounted and screen.query_one("#alerts-table", DataTable).row_count == 1
        )
        await settle(pilot)
        table = screen.query_one("#alerts-table", DataTable)
        assert app.screen is screen and table.row_count == 1
        assert "seq 3:" in str(screen.query_one("#alerts-selected").render())
        assert [t.title for t in toasts] == ["Alert: loop"]
