"""At 60x20, the smallest terminal the TUI is laid out for, and at 80x24, every part of a policy screen keeps rows
it can show: no line of text of any length, and no table of few rows, takes the room another table needs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.app import App
from textual.widgets import DataTable, Input, Static

from core.alerts.engine import Alert
from core.policies.checkpoint import plan_checkpoint
from tests.conftest import FIXTURES
from tests.tui.pilot import quiet, until
from tests.tui.screens_policy.harness import AlertsHarness, LogBuilder, PolicyHarness, settle, tab_to, text
from tests.tui.screens_policy.scenarios import demo
from tests.tui.screens_policy.test_cut_cells import drawn
from tui.alerts import AlertBoard
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.folds import FoldsScreen
from tui.screens.tape import TapeScreen

pytestmark = pytest.mark.anyio
SMALL = [(60, 20), (80, 24)]


def _rows(app: App[Any], table: DataTable[Any]) -> list[str]:
    """The table's rows drawn on the screen (its column labels left out)."""
    return [line for line in drawn(app, table)[table.header_height :] if line.strip()]


def _many_changes(directory: Path, count: int) -> Path:
    log = LogBuilder()
    log.start_turn("Tune the digest.")
    for n in range(count):
        changes = {"slice.digest.headLines": {"old": 10 + n, "new": 11 + n}}
        log.add({"type": "tapedeck/config", "data": {"changes": changes, "by": "operator"}, "ignorable": True})
    log.say("Done.")
    return log.write(directory)


@pytest.mark.parametrize("count", [1, 12])
async def test_the_logged_changes_get_rows_at_60x20(tmp_path: Path, count: int) -> None:
    """Below 70 columns the Config screen's side pane goes under the key table and took half the body; the selected
    key, the editor, the check line and the title left the logged changes one row, their column labels: no change
    was in sight and no key brought one. The side pane now takes what it needs, the changes up to a cap (they
    scroll), and the key table the rest."""
    app = PolicyHarness(_many_changes(tmp_path / "s", count), ConfigScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        keys = app.screen.query_one("#config-keys", DataTable)
        history = app.screen.query_one("#config-history", DataTable)
        await settle(pilot, lambda: keys.row_count > 0 and history.row_count == count)
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert len([row for row in _rows(app, history) if "→" in row]) >= min(count, 3), screen
        assert len(_rows(app, keys)) >= 3, screen


async def test_a_long_key_and_a_long_check_leave_the_logged_changes_rows_at_80x24(tmp_path: Path) -> None:
    """From 70 columns the Config screen's side pane stands beside the key table, and the selected key's box and
    the check's box could each take half of it: a long dotted key (typed with 'a') and a long value's refusal took
    the whole pane between them, and the logged changes, their title with them, were not drawn at all. Each box now
    takes at most a quarter of the pane (both scroll), and the changes keep the rest."""
    app = PolicyHarness(_many_changes(tmp_path / "s", 12), ConfigScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        keys = app.screen.query_one("#config-keys", DataTable)
        history = app.screen.query_one("#config-history", DataTable)
        await settle(pilot, lambda: keys.row_count > 0 and history.row_count == 12)
        app.screen._select("slice." + ".".join(f"segment{n}" for n in range(40)))  # type: ignore[attr-defined]
        app.screen.query_one("#config-value", Input).value = '"' + "x" * 900 + '"'
        check = app.screen.query_one("#config-check", Static)
        await settle(pilot, lambda: "Unknown" in text(check))
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert "Logged changes" in screen, screen
        assert len([row for row in _rows(app, history) if "→" in row]) >= 3, screen


async def test_a_read_only_logs_value_is_in_sight_at_60x20() -> None:
    """A DSH log no bridge runs has its Config screen give, under a read-only note, the value the log records for
    the selected key; the note's box took at most half the pane under the key table, two rows at 60x20, and the
    value was never in sight. With nothing else in the pane, the box now takes the whole pane."""
    app = PolicyHarness(FIXTURES / "compaction-recovery.session.jsonl", ConfigScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot, lambda: "provider:" in text(app.screen.query_one("#config-selected", Static)))
        await quiet(pilot)
        side = " ".join(drawn(app, app.screen.query_one("#config-selected-box")))
        assert 'provider: "deepseek-official"' in side, "\n".join(drawn(app, app.screen))


def _unpaired(directory: Path, turns: int) -> Path:
    """``turns`` completed turns, every second one with a tool call whose result never came: sealing plans an entry
    for each of the others and warns of each of these."""
    log = LogBuilder()
    for n in range(turns):
        log.start_turn(f"Task {n}.")
        if n % 2:
            call = {"type": "tool-call", "id": f"lost-{n}", "name": "bash", "arguments": orjson.dumps({}).decode()}
            log._assistant([call])
        else:
            log.call("bash", {"command": "ls"}, "a.txt")
        log.end_step()
        log.start_step()
        log.say(f"Done {n}.")
        log.end_step()
        log.end_turn()
    return log.write(directory)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_seal_warnings_leave_the_tape_table_its_rows(tmp_path: Path, size: tuple[int, int]) -> None:
    """The Tape screen's summary under the table gives every warning the next seal would report, whole; ten of them
    took the whole pane and left the table its column labels, no entry in sight. The summary now takes at most 40% of
    the pane and scrolls in its box (Tab to it, End to its last warning); the table keeps rows."""
    app = PolicyHarness(_unpaired(tmp_path / "s", 20), TapeScreen)
    async with app.run_test(size=size) as pilot:
        table = app.screen.query_one("#tape-table", DataTable)
        await settle(pilot, lambda: table.row_count == 10)
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert "kept raw" in screen, screen
        assert len(_rows(app, table)) >= 3, screen
        box = app.screen.query_one("#tape-summary-box")
        await tab_to(pilot, box)
        await pilot.press("end")
        await until(pilot, lambda: "lost-19" in "".join(drawn(app, box)))  # the box scrolls on the next frames


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


async def test_a_long_read_only_reason_leaves_the_table_its_rows_at_60x20(tmp_path: Path) -> None:
    """The read-only banner over a policy screen's body says why actions are disabled, whole and with no bound; for a
    DSH log whose bridge.json cannot be used the reason names that file, and under a deep directory the banner took
    seventeen rows of twenty: the Folds table kept its labels, the outcome panel went off the screen. The banner now
    takes at most 30% of the screen and scrolls in its box (a disabled key, pressed, says the whole reason too)."""
    directory = tmp_path.joinpath(*["sessions-of-a-project-with-a-long-name" * 5] * 3)
    directory.mkdir(parents=True)
    path = directory / "session.jsonl"
    shutil.copyfile(FIXTURES / "bash-spill.session.jsonl", path)
    (directory / "bridge.json").write_text("[]")
    app = PolicyHarness(path, FoldsScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.screen.query_one("#folds-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1 and app.screen.read_only_reason is not None)  # type: ignore[attr-defined]
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert "Read-only" in screen, screen
        assert len(_rows(app, table)) == 1, screen


async def test_the_newest_request_stays_in_sight_in_the_outcome_panel(tmp_path: Path) -> None:
    """The outcome panel lists the last four requests, newest last, in at most five rows; the reasons of older ones
    (a host's error, wrapped at 60 columns) filled them and cut the newest off, the request just sent. The panel now
    scrolls in its box and keeps its end, the newest request, in sight."""
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        screen = app.screen
        requests = screen.requests  # type: ignore[attr-defined]
        for n in range(4):
            item = requests.add("config.set", f"config.set request {n}")
            requests.failed(item, "the inbox could not be written: " + "no room left on the device " * 2)
        screen.show_outcomes(requests.items())  # type: ignore[attr-defined]
        await quiet(pilot)
        rows = drawn(app, screen)
        panel = rows[max(i for i, row in enumerate(rows) if row.startswith("▔")) + 1 : -1]  # under its rule
        assert "request 3" in " ".join(panel), "\n".join(rows)


def _marks(directory: Path, count: int) -> Path:
    log = LogBuilder()
    log.start_turn("Fix the parser.")
    for n in range(count):
        log.plan(lambda s, n=n: plan_checkpoint(s, f"step {n}", by="operator"))
        log.call("bash", {"command": f"pytest -q tests/test_{n}.py"}, f"{n} passed")
        log.end_step()
        log.start_step()
    log.say("Found it.")
    return log.write(directory)


@pytest.mark.parametrize("count", [1, 15])
async def test_the_marks_table_takes_its_rows_in_the_narrow_layout(tmp_path: Path, count: int) -> None:
    """Below 70 columns the Checkpoints screen's preview goes under the marks, and the marks table took half the
    body whatever it held: one mark left six blank rows over a preview cut to two of its nodes. The table now
    takes its rows, up to a cap (more scroll), and the preview the rest."""
    app = PolicyHarness(_marks(tmp_path / "s", count), CheckpointsScreen)
    async with app.run_test(size=(60, 20)) as pilot:
        marks = app.screen.query_one("#marks-table", DataTable)
        region = app.screen.query_one("#region-table", DataTable)
        await settle(pilot, lambda: marks.row_count == count and region.row_count > 0)
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert marks.region.height <= marks.header_height + min(count, 6), screen
        assert len(_rows(app, marks)) >= min(count, 3), screen
        assert len(_rows(app, region)) >= min(region.row_count, 3), screen


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_long_alert_leaves_the_alerts_list_in_sight(tmp_path: Path, size: tuple[int, int]) -> None:
    """The Alerts screen gives the selected alert's reason whole under the table, with no bound: a reason of a few
    thousand characters (a loop alert quoting a tool call's arguments) took every row, the list and the count went
    off the screen. The reason now takes at most 40% of the body and scrolls in its box (Tab to it, End to its end)."""
    board = AlertBoard()
    for n in range(5):
        reason = f"the same call {n} times: " + "x" * 3000 + " END" if n == 4 else f"reason {n}"
        board.add(
            Alert("t-1", str(tmp_path / "session.jsonl"), "loop", n, "warning", reason, 1_000 + n), "log"
        )
    app = AlertsHarness(board)
    async with app.run_test(size=size) as pilot:
        table = app.screen.query_one("#alerts-table", DataTable)
        await until(pilot, lambda: table.row_count >= 5)
        await pilot.press("end")
        await quiet(pilot)
        screen = "\n".join(drawn(app, app.screen))
        assert len(_rows(app, table)) >= 3, screen
        assert "5 alerts" in screen, screen
        box = app.screen.query_one("#alerts-selected-box")
        await tab_to(pilot, box)
        await pilot.press("end")
        await until(pilot, lambda: "END" in "".join(drawn(app, box)))  # the box scrolls on the next frames
