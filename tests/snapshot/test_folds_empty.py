"""Snapshot of the Folds screen after a rewind took every tool result off the surface: the header whole, the line
under the empty table saying why (tests/tui/test_folds_papercuts.py checks the columns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from core.policies.report import ExtractiveReportWriter
from core.policies.rewind import plan_rewind
from core.read.load import load_session
from tests.tui.pilot import quiet
from tests.tui.screens_policy.harness import PolicyHarness, append_events, settle
from tests.tui.screens_policy.scenarios import CONFIG
from tests.tui.test_folds_papercuts import emptied
from tui.screens.folds import FoldsScreen


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_folds_emptied_by_a_rewind(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    path = emptied(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)

    async def run(pilot: Pilot[Any]) -> None:
        table = pilot.app.screen.query_one("#folds-table", DataTable)
        await settle(pilot, lambda: table.row_count == 2)
        plan = plan_rewind(load_session(path), CONFIG.rewind, ExtractiveReportWriter(), by="operator")
        append_events(path, plan.events)
        await settle(pilot, lambda: table.row_count == 0)
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)
