"""What a policy screen's table cuts to fit its width stays readable: a cut key is told apart from its neighbours,
a cut objective is shown whole beside the table, and no table scrolls sideways to show what it cut."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widget import Widget
from textual.widgets import DataTable

from core.policies.checkpoint import plan_checkpoint
from tests.tui.pilot import quiet
from tests.tui.screens_policy.harness import LogBuilder, PolicyHarness, settle, tab_to
from tests.tui.screens_policy.scenarios import LONG_OBJECTIVE as OBJECTIVE
from tests.tui.screens_policy.scenarios import long_paths, long_region
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.folds import FoldsScreen

pytestmark = pytest.mark.anyio
WIDTHS = [80, 200]
KEYS = ("slice.digest.structuredBlockCap", "slice.digest.structuredBlockMin")


def drawn(app: App[Any], widget: Widget) -> list[str]:
    """The lines ``widget`` shows on the screen now, as the terminal gets them."""
    region = widget.region
    lines = ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]
    return [line[region.x : region.right] for line in lines[region.y : region.bottom]]


def _changed_keys(directory: Path) -> Path:
    log = LogBuilder()
    log.start_turn("Tune the digest.")
    changes = {KEYS[0]: {"old": 3, "new": 4}, KEYS[1]: {"old": 3, "new": 5}}
    log.add({"type": "tapedeck/config", "data": {"changes": changes, "by": "operator"}, "ignorable": True})
    log.say("Done.")
    return log.write(directory)


@pytest.mark.parametrize("width", WIDTHS)
async def test_two_long_keys_in_the_logged_changes_are_told_apart(tmp_path: Path, width: int) -> None:
    """At 80 columns the table of logged changes sat in a pane of 24 and drew both keys as ``slice.di``, the rest
    (and their values) past its edge; each key now keeps its head and its end around a ``…`` (whole where it fits,
    as at 200 columns), its change beside it, and the table fits its pane."""
    app = PolicyHarness(_changed_keys(tmp_path / "s"), ConfigScreen)
    async with app.run_test(size=(width, 30)) as pilot:
        history = app.screen.query_one("#config-history", DataTable)
        await settle(pilot, lambda: history.row_count == 2)
        await quiet(pilot)
        rows = [line for line in drawn(app, history) if "operator" in line or re.search(r"\d+ → \d", line)]
        assert len(rows) == 2, drawn(app, history)
        shown = [next(w for w in row.split() if w.startswith("slice")) for row in rows]
        assert shown[0] != shown[1], rows
        for key, cell in zip(KEYS, shown, strict=True):
            head, cut, end = cell.partition("…")
            assert (cell == key) if not cut else (key.startswith(head) and key.endswith(end) and len(end) >= 3), rows
        if width == 200:
            assert shown == list(KEYS), rows
        assert "3 → 4" in rows[0] and "3 → 5" in rows[1], rows
        assert history.max_scroll_x == 0


def _marked(directory: Path) -> Path:
    log = LogBuilder()
    log.start_turn("Fix the parser.")
    log.plan(lambda s: plan_checkpoint(s, OBJECTIVE, by="operator"))
    log.call("bash", {"command": "pytest -q"}, "F.\nFAILED tests/test_parser.py::test_empty", is_error=True)
    log.end_step()
    log.start_step()
    log.say("Found it.")
    return log.write(directory)


@pytest.mark.parametrize("width", WIDTHS)
async def test_a_marks_long_objective_can_be_read_whole(tmp_path: Path, width: int) -> None:
    """The marks table cut a long objective at its edge (and scrolled sideways to the rest, a row's cells at a time
    no wider than the table); the objective of the mark under the cursor is now drawn whole beside the table, and
    the table fits its width."""
    app = PolicyHarness(_marked(tmp_path / "s"), CheckpointsScreen)
    async with app.run_test(size=(width, 30)) as pilot:
        marks = app.screen.query_one("#marks-table", DataTable)
        await settle(pilot, lambda: marks.row_count == 1)
        await quiet(pilot)
        said = " ".join(OBJECTIVE.split())
        places = [" ".join(" ".join(drawn(app, widget)).split()) for widget in app.screen.query("*") if widget.region]
        assert any(said in place for place in places), "\n".join(drawn(app, app.screen))
        assert marks.max_scroll_x == 0


async def test_every_row_of_the_rewind_preview_can_be_reached_at_60x20(tmp_path: Path) -> None:
    """Below 70 columns the preview goes under the marks; at 60x20 a long objective, drawn whole over it, took the
    side pane's every row, and the preview table (its header and each node a rewind would fold) was left one row,
    below the pane and drawn over: no key brought a node in sight. The objective and the preview's line now take
    at most 60% of the pane, scrolled in their box, and the table the rest: Tab to it, then ↓, reaches each node."""
    app = PolicyHarness(long_region(tmp_path / "s"), CheckpointsScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        region = app.screen.query_one("#region-table", DataTable)
        await settle(pilot, lambda: region.row_count == 12)
        await quiet(pilot)
        expected = {str(key.value) for key in region.rows}
        await tab_to(pilot, region)
        seen: set[str] = set()
        for _ in range(12):
            await pilot.pause()
            seen.update(line.split()[0] for line in drawn(app, region) if line.split() and line.split()[0].isdigit())
            await pilot.press("down")
        assert seen == expected, "\n".join(drawn(app, app.screen))


async def test_a_long_path_leaves_the_folds_table_its_rows_at_60x20(tmp_path: Path) -> None:
    """At 60 columns the Folds screen gives the cursor row's path whole under the table; a path of a thousand
    characters took every row of the screen, leaving the table its header alone (no result in sight) and pushing the
    row's policy, note and the totals off the screen. The line takes at most 40% of the body and scrolls in its
    box: the table keeps rows, and Tab then End bring the line's end in sight."""
    app = PolicyHarness(long_paths(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.screen.query_one("#folds-table", DataTable)
        await settle(pilot, lambda: table.row_count == 6)
        await pilot.press("down")
        await quiet(pilot)
        rows = [line for line in drawn(app, table) if line.split() and line.split()[0].isdigit()]
        assert len(rows) >= 3, "\n".join(drawn(app, app.screen))
        totals = " ".join(" ".join(drawn(app, app.screen.query_one("#folds-totals"))).split())
        assert totals.startswith("6 folded"), "\n".join(drawn(app, app.screen))
        await pilot.press("tab", "end")
        await quiet(pilot)
        line = "".join(drawn(app, app.screen.query_one("#folds-selected-box")))
        assert "Data digest of seq" in line, "\n".join(drawn(app, app.screen))


async def test_a_long_value_leaves_the_logged_changes_in_sight_at_80x24(tmp_path: Path) -> None:
    """The Config screen's side pane gives the selected key's current value whole over the logged changes; at 80x24
    the value of ``adaptive.taskProfiles`` (five profiles of JSON) wrapped past the pane's end, cut there unread,
    and pushed the logged changes off the screen. The value takes at most half the pane and scrolls in its box
    (Tab to it, then End): the logged changes stay in sight."""
    app = PolicyHarness(_changed_keys(tmp_path / "s"), ConfigScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        keys = app.screen.query_one("#config-keys", DataTable)
        history = app.screen.query_one("#config-history", DataTable)
        await settle(pilot, lambda: keys.row_count > 0 and history.row_count == 2)
        keys.move_cursor(row=next(i for i in range(keys.row_count) if str(keys.get_row_at(i)[0]) == "adaptive.taskProfiles"))
        await quiet(pilot)
        rows = [line for line in drawn(app, history) if re.search(r"\d+ → \d", line)]
        assert len(rows) == 2, "\n".join(drawn(app, app.screen))
        box = app.screen.query_one("#config-check-box")
        await tab_to(pilot, box)
        await pilot.press("end")
        await quiet(pilot)
        assert "".join(drawn(app, box)).rstrip().endswith("]"), "\n".join(drawn(app, app.screen))
