"""The operator's papercuts (issue 23): each flow as the operator meets it, driven through the keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.logs import policy_log
from tests.tui.pilot import main_screen, make_app, settle
from tui.screens.filter import FilterScreen
from tui.screens.main import MainScreen

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


async def test_the_filter_dialog_takes_typing_at_once(tmp_path: Path) -> None:
    log = policy_log()
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press(*"tool/result", "enter")
        await settle(pilot)
        screen = main_screen(app)
        assert isinstance(app.screen, MainScreen) and screen is not None
        assert list(screen.events.view.base) == [e["seq"] for e in log.events if e["type"] == "tool/result"]
