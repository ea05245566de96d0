"""The policy screens' tables fit their columns to the rows they show: a table filled again narrows a column whose
widest cell went (Textual only ever widens one), as the Folds table alone did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from core.policies.checkpoint import plan_checkpoint
from tests.tui.screens_policy.harness import HEADER, LogBuilder, PolicyHarness, settle
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.policy_screen import fill_table
from tui.widgets.table import RowTable

pytestmark = pytest.mark.anyio
LONG = "find which of the nightly jobs rewrote the stale scores table"


class OneTable(App[None]):
    """A table and nothing else."""

    def compose(self) -> ComposeResult:
        """The table, its columns labelled ``name`` and ``note``."""
        table = RowTable(cursor_type="row")
        table.add_columns("name", "note")
        yield table


def widths(table: DataTable[Any]) -> list[int]:
    """Each column's width, its padding left out."""
    return [column.content_width for column in table.ordered_columns]


async def test_fill_table_narrows_a_column_once_its_widest_row_goes() -> None:
    """The widest row gone, the table filled again kept its note column that wide, over blank cells; each column is
    as wide as its label and its widest cell shown now."""
    app = OneTable()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(DataTable)
        fill_table(table, [("a", ["parser", LONG]), ("b", ["lexer", "short"])])
        await pilot.pause()
        assert widths(table) == [len("parser"), len(LONG)]
        fill_table(table, [("b", ["lexer", "short"])])
        await pilot.pause()
        assert widths(table) == [len("lexer"), len("short")]
        fill_table(table, [])
        await pilot.pause()
        assert widths(table) == [len("name"), len("note")]
        assert table.virtual_size.width == sum(len(label) + 2 for label in ("name", "note"))


def checkpointed(directory: Path, session: str, objective: str) -> Path:
    """A log of session ``session`` whose one checkpoint has ``objective``."""
    log = LogBuilder({**HEADER, "id": session})
    log.start_turn("Which scores went stale?")
    log.plan(lambda s: plan_checkpoint(s, objective, by="operator"))
    log.say("Looking.")
    return log.write(directory)


async def test_a_policy_table_narrows_a_column_once_its_widest_row_goes(tmp_path: Path) -> None:
    """The Checkpoints marks table, as every policy table but Folds, kept its objective column as wide as a mark of
    the log read before (replaced since by a log whose marks say less): it now fits the marks shown."""
    path = checkpointed(tmp_path / "s", "demo-1", LONG)
    other = checkpointed(tmp_path / "other", "demo-2", "stale scores")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#marks-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1 and widths(table)[-1] == len(LONG))
        other.replace(path)
        await settle(pilot, lambda: app.live.session.id == "demo-2" and table.row_count == 1)
        await pilot.pause()
        assert str(table.get_row_at(0)[-1]) == "stale scores"
        assert widths(table)[-1] == len("stale scores"), widths(table)
