"""Toasts never hide the row the operator acts on: on a policy screen whose table fills its rows, a toast stacked
from the table's bottom edge up covered the cursor row when the cursor was on one of the last rows in sight."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.widgets._toast import Toast

from tests.tui.pilot import quiet, until
from tests.tui.screens_policy.harness import LogBuilder, PolicyHarness, settle
from tests.tui.test_toasts import shown
from tui.screens.folds import FoldsScreen
from tui.screens.policy_screen import PolicyScreen

pytestmark = pytest.mark.anyio
SIZES = [(60, 20), (80, 24), (120, 40)]


def many_results(directory: Path, count: int = 40) -> Path:
    """A turn of ``count`` small tool results: more rows than the Folds table shows at any of ``SIZES``."""
    log = LogBuilder()
    log.start_turn("Read every part of the config.")
    for n in range(count):
        log.call("read_file", {"path": f"conf/part-{n:02}.toml"}, f"key = {n}\n")
    log.say("All read.")
    return log.write(directory)


def cursor_row(table: DataTable[object]) -> Region:
    """Where ``table``'s cursor row is drawn on the screen."""
    row = table._get_row_region(table.cursor_row)
    return Region(
        table.region.x, table.region.y + row.y - round(table.scroll_y), table.region.width, row.height
    )


async def folds_table(pilot: Pilot[None]) -> tuple[PolicyScreen, DataTable[object]]:
    """The Folds screen of ``many_results``' log once settled, and its table (all 40 rows, focused)."""
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PolicyScreen)
    table = screen.query_one("#folds-table", DataTable)
    assert table.row_count == 40 and table.has_focus
    return screen, table


async def to_the_last_row(pilot: Pilot[None], table: DataTable[object]) -> None:
    """The cursor moved to ``table``'s last row (``end``)."""
    await pilot.press("end")
    await until(pilot, lambda: table.cursor_row == table.row_count - 1)


async def toasts_settled(pilot: Pilot[None], screen: PolicyScreen, count: int) -> list[Toast]:
    """The toasts drawn once ``count`` of them are up on ``screen`` and the app is quiet."""
    await until(pilot, lambda: len(screen.query(Toast)) == count)
    await settle(pilot)
    await quiet(pilot)
    toasts = shown(list(screen.query(Toast)))
    assert toasts, "no toast shown"
    return toasts


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_toast_never_hides_the_cursor_row(tmp_path: Path, size: tuple[int, int]) -> None:
    """The cursor on the last row and each of the three above it, a toast raised then (and one raised before the
    cursor moved there) covers no cell of the cursor row; the row stays in sight."""
    app = PolicyHarness(many_results(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=size, notifications=True) as pilot:
        screen, table = await folds_table(pilot)
        app.notify("Checkpoint: find the bug.", title="Applied", timeout=60)
        await toasts_settled(pilot, screen, 1)
        await to_the_last_row(pilot, table)
        for up in range(4):
            app.notify(f"cache hit rate fell to 1{up}% (seq 30, this session)", title="Alert: cache",
                       severity="warning", timeout=60)  # fmt: skip
            toasts = await toasts_settled(pilot, screen, 2 + up)
            row = cursor_row(table)
            assert table.region.contains_region(row), (row, table.region)
            for toast in toasts:
                assert not toast.region.overlaps(row), (up, toast.region, row)
            await pilot.press("up")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_toasts_move_off_the_row_the_cursor_moves_to(tmp_path: Path, size: tuple[int, int]) -> None:
    """Two toasts up, the cursor goes up from the last row to the first one in sight, one row at a time (the table
    does not scroll, so nothing is laid out again): at each row the toasts stand clear of it."""
    app = PolicyHarness(many_results(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=size, notifications=True) as pilot:
        screen, table = await folds_table(pilot)
        await to_the_last_row(pilot, table)
        app.notify("Checkpoint: find the bug.", title="Applied", timeout=60)
        app.notify("cache hit rate fell to 12% (seq 30, this session)", title="Alert: cache", severity="warning",
                   timeout=60)  # fmt: skip
        await toasts_settled(pilot, screen, 2)
        top = round(table.scroll_y)  # the first row in sight: each row takes one line
        for row_index in range(38, top - 1, -1):
            await pilot.press("up")
            await until(pilot, lambda row_index=row_index: table.cursor_row == row_index)
            await quiet(pilot)
            assert round(table.scroll_y) == top
            row = cursor_row(table)
            for toast in shown(list(screen.query(Toast))):
                assert not toast.region.overlaps(row), (row_index, toast.region, row)
