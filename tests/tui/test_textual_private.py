"""The TUI reaches a DataTable through Textual's public API only: a private method of it (``_get_row_region``) can
change or go in any Textual release, and the toasts' placement leaned on one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.widgets import DataTable

from tests.tui.pilot import until
from tui.screens.toasts import cursor_row, rows_of

pytestmark = pytest.mark.anyio
TUI = Path(__file__).resolve().parents[2] / "tui"


def test_no_private_member_of_data_table_is_used() -> None:
    """No module of ``tui`` names a private member DataTable defines itself (Widget's and ScrollView's are
    another matter: every widget has them)."""
    inherited = {name for cls in ScrollView.__mro__ for name in vars(cls)}
    private = {n for n in vars(DataTable) if n.startswith("_") and not n.startswith("__")} - inherited
    used = [
        f"{path.relative_to(TUI.parent)}:{node.lineno} {node.attr}"
        for path in sorted(TUI.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in private
    ]
    assert not used, used


@pytest.mark.parametrize("labels", [True, False], ids=["labels", "no-labels"])
async def test_the_cursor_row_is_where_textual_draws_it(labels: bool) -> None:
    """``toasts.cursor_row`` (public API) gives the region Textual's own row region gives, on rows one to three
    lines high, with and without column labels, the table scrolled down by a cursor on a far row."""

    class Rows(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable(cursor_type="row", show_header=labels)

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("n", "text")
            for n in range(40):
                table.add_row(str(n), "\n".join(["line"] * (1 + n % 3)), height=1 + n % 3)

    async with Rows().run_test(size=(60, 20)) as pilot:
        table = pilot.app.query_one(DataTable)
        for row_index in (0, 1, 17, 39, 25, 24):
            table.move_cursor(row=row_index, animate=False)
            await pilot.pause()
            await until(
                pilot, lambda: table.region.contains_region(cursor_row(table)) and cursor_row(table).area
            )
            textual = table._get_row_region(row_index)  # Textual's own, as the oracle
            drawn = Region(table.region.x, table.region.y + textual.y - round(table.scroll_y), table.region.width,
                           textual.height).intersection(rows_of(table))  # fmt: skip
            assert cursor_row(table) == drawn, (row_index, cursor_row(table), drawn)
            assert drawn.height == 1 + row_index % 3
