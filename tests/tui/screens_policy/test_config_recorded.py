"""The Config screen on a DSH log no bridge runs: what the log records about the session's settings, read-only."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from textual.widgets import DataTable, Input, Static

from tests.conftest import FIXTURES
from tests.tui.pilot import quiet
from tests.tui.screens_policy.harness import PolicyHarness, cells, settle, text
from tests.tui.screens_policy.test_cut_cells import drawn
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


async def test_a_long_recorded_value_can_be_read_to_its_end_at_80x24(tmp_path: Path) -> None:
    """A DSH log's tools (95 here: an MCP server's add dozens) are listed whole beside the table when selected; at
    80x24 the list ran past the pane's end, cut there with no way to its end. It scrolls in its box: Tab, then End
    bring the last tool in sight."""
    events = [orjson.loads(line) for line in (FIXTURES / "compaction-recovery.session.jsonl").read_bytes().splitlines()]
    for event in events:
        if event.get("type") == "request/header":
            tools = event["data"]["header"]["tools"]
            tools += [{**tools[0], "name": f"mcp__server__tool_{i}"} for i in range(80)]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    app = PolicyHarness(path, ConfigScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        keys = app.screen.query_one("#config-keys", DataTable)
        await settle(pilot, lambda: keys.row_count > 0)
        keys.move_cursor(row=next(i for i in range(keys.row_count) if str(keys.get_row_at(i)[0]) == "tools"))
        await pilot.press("tab", "end")
        await quiet(pilot)
        assert any("mcp__server__tool_79" in line for line in drawn(app, app.screen)), "\n".join(drawn(app, app.screen))
