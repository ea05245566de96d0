"""At 60x20, the smallest terminal the TUI is laid out for, and at 80x24, every part of a policy screen keeps rows
it can show: no line of text of any length, and no table of few rows, takes the room another table needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.screens_policy.harness import PolicyHarness, settle
from tests.tui.screens_policy.scenarios import demo
from tests.tui.screens_policy.test_cut_cells import drawn
from tui.screens.config import ConfigScreen

pytestmark = pytest.mark.anyio


async def test_an_empty_message_line_takes_no_row(tmp_path: Path) -> None:
    """The message line over the outcome panel (why a request was not sent, a view that could not be derived) took
    a blank row on every policy screen while it had nothing to say, one of the twenty at 60x20; it now
    shows only while it says something."""
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        screen = app.screen
        line = screen.query_one("#policy-message")
        assert line.region.height == 0, line.region
        screen.say("Not sent: the host is gone.", error=True)  # type: ignore[attr-defined]
        await pilot.pause()
        assert "Not sent: the host is gone." in "".join(drawn(app, line))
        screen.say("")  # type: ignore[attr-defined]
        await pilot.pause()
        assert line.region.height == 0, line.region
