"""The Config screen on a DSH log no bridge runs: what the log records about the session's settings, read-only."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Static

from tests.conftest import FIXTURES
from tests.tui.screens_policy.harness import PolicyHarness, cells, settle, text
from tui.screens.config import ConfigScreen

SIZE = (140, 40)
pytestmark = pytest.mark.anyio


async def test_a_dsh_log_shows_its_recorded_settings_with_no_editor() -> None:
    path = FIXTURES / "compaction-recovery.session.jsonl"
    app = PolicyHarness(path, ConfigScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.screen.query_one("#config-keys", DataTable).row_count > 0)
        screen = app.screen
        keys = screen.query_one("#config-keys", DataTable)
        assert cells(keys, "provider") == ["provider", '"deepseek-official"']
        assert cells(keys, "model") == ["model", '"deepseek-v4-flash"']
        assert cells(keys, "context window")[1] == "128000 tokens"
        assert cells(keys, "tools")[1].startswith("15: bash, edit,")
        assert cells(keys, "system prompt")[1] == "2,584 chars"
        assert not screen.query_one("#config-value", Input).display
        assert text(screen.query_one("#config-selected", Static)).startswith("Read-only: what this DSH log records")
        assert "records" in screen.heading()
        for key in ("e", "a", "ctrl+s"):
            assert screen.check_action({"e": "edit", "a": "other_key", "ctrl+s": "submit"}[key], ()) is None
        await pilot.press("e", "x", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfigScreen) and not (path.parent / "control.jsonl").exists()
