"""The Router screen's record of the selected decision reads right in a narrow pane: a nested value (the caps, the
step budgets, the pruned seqs) wraps between its members, never inside a number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from tests.tui.screens_policy.harness import LogBuilder, PolicyHarness, settle
from tests.tui.screens_policy.test_cut_cells import drawn
from tui.screens.router import RouterScreen

pytestmark = pytest.mark.anyio
ROUTE = {
    "turn": 1,
    "step": 1,
    "taskClass": "read",
    "phase": "normal",
    "caps": {"maxTokens": 16384},
    "budgets": {"soft": 4, "hard": 8},
    "risk": None,
    "pruneLevel": "critical",
    "pressure": 0.77035,
    "charsRemoved": 36456,
    "prunedSeqs": [123456, 234567, 345678, 456789],
}


def _routed(directory: Path) -> Path:
    log = LogBuilder()
    log.start_turn("Read the parser.")
    log.add({"type": "tapedeck/route", "data": ROUTE, "ignorable": True})
    log.say("Done.")
    return log.write(directory)


@pytest.mark.parametrize("width", [80, 200])
async def test_a_nested_value_wraps_between_members_not_inside_a_number(tmp_path: Path, width: int) -> None:
    """At 80 columns the record's pane is 24 cells wide, and ``caps: {"maxTokens":16384}`` was drawn as
    ``{"maxTokens":1638`` over ``4}``: a cap of 1638 at a glance. Every number of the record is drawn whole."""
    app = PolicyHarness(_routed(tmp_path / "s"), RouterScreen)
    async with app.run_test(size=(width, 30)) as pilot:
        table = app.screen.query_one(DataTable)
        await settle(pilot, lambda: table.row_count == 1)
        detail = app.screen.query_one("#router-detail", Static)
        await settle(pilot, lambda: "caps" in "".join(drawn(app, detail)))
        shown = " ".join(line.strip() for line in drawn(app, detail))
        numbers = {int(n) for n in re.findall(r"\d+", shown)}
        for whole in (16384, 36456, 123456, 234567, 345678, 456789):
            assert whole in numbers, drawn(app, detail)
        assert "maxTokens" in shown and "soft" in shown and "hard" in shown, drawn(app, detail)
