"""Folds screen papercuts: the cursor row's line says each thing once, and a table emptied by a rewind keeps its
header whole and says why it is empty."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from tests.tui.screens_policy.harness import PolicyHarness, settle, text
from tests.tui.screens_policy.scenarios import demo
from tui.screens.folds import FoldsScreen

pytestmark = pytest.mark.anyio


async def test_the_cursor_rows_line_says_already_sent_once(tmp_path: Path) -> None:
    """At 80 columns the line under the table gave a raw result sent to the model as ``policy already sent · … ·
    already sent to the model``: the label and the core's reason said it twice. It is now said once, in a
    sentence."""
    app = PolicyHarness(demo(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#folds-table", DataTable)
        await pilot.press(*["down"] * 4)  # seq 30, grep's result, sent with the request after it
        await settle(pilot, lambda: table.cursor_row == 4)
        said = " ".join(text(app.screen.query_one("#folds-selected", Static)).split())
        assert said.startswith("seq 30 · "), said
        assert said.lower().count("already sent") == 1, said
        assert "Already sent to the model" in said and said.endswith("."), said
