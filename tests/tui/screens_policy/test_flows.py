"""Operator flows on the policy screens, driven with a pilot against a followed log.

Each test plays the host by hand: it reads the request the TUI wrote to ``control.jsonl``, runs the core
planner the host would run, and appends the planned events plus the ``tapedeck/control`` outcome to the log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from core.control.inbox import outcome_event
from core.policies.checkpoint import plan_checkpoint
from core.policies.fold import plan_unfold
from core.policies.report import ExtractiveReportWriter
from core.policies.rewind import plan_rewind
from core.read.load import load_session
from core.read.summary import human_chars
from tests.conftest import FIXTURES
from tests.tui.pilot import quiet
from tests.tui.screens_policy.harness import (
    LogBuilder,
    PolicyHarness,
    append_events,
    cells,
    panel,
    plain,
    read_inbox,
    rewind_rejected,
    settle,
    text,
)
from tests.tui.screens_policy.scenarios import CONFIG, STARTED_WITH, WIDE_PATHS, configured, demo, wide_paths
from tui.live import READ_ONLY_DSH
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.folds import FoldsScreen, ResultScreen
from tui.screens.prolong import ProlongScreen

SIZE = (140, 40)
pytestmark = pytest.mark.anyio


def _said(dialog: Screen[object]) -> str:
    """Everything a dialog shows, as plain text."""
    return " ".join(plain(static.content) for static in dialog.query(Static))


async def test_the_rewind_dialog_says_at_once_that_the_agent_folded_its_mark_and_sends_nothing(tmp_path: Path) -> None:
    """The agent folded the checkpoint (its own rewind) while the operator's rewind dialog was up: the dialog still
    offered the rewind until ``y`` (only then was the session looked at again), and ``y`` sent it, for the host to
    refuse; the dialog says so while it is up, and ``y`` sends nothing, the screen saying why."""
    log = LogBuilder()
    log.start_turn("look around")
    log.plan(lambda s: plan_checkpoint(s, None, by="operator"))
    log.call("bash", {"command": "ls"}, "a.txt")
    log.end_step()
    log.start_step()
    log.say("Nothing else to see.")
    path = log.write(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert "already folded" not in _said(dialog)
        before = len(log.events)
        log.add(*plan_rewind(log.session(), CONFIG.rewind, ExtractiveReportWriter(), by="model").events)
        append_events(path, log.events[before:])
        await settle(pilot, lambda: "checkpoint 1 was already folded" in _said(dialog))
        assert app.screen is dialog and "confirming sends nothing" in _said(dialog), _said(dialog)
        await settle(pilot, lambda: "folded at" in " ".join(cells(screen.query_one("#marks-table", DataTable), "1")))
        await pilot.press("y")
        await settle(pilot, lambda: app.screen is screen)
        message = text(screen.query_one("#policy-message", Static))
        assert "Not sent" in message and "checkpoint 1 was already folded" in message, message
        assert read_inbox(path) == []


async def test_a_rewind_confirmed_after_the_log_was_deleted_says_it_was_deleted(tmp_path: Path) -> None:
    """The log deleted while the rewind dialog was up: ``y`` sent nothing, saying the log was "truncated or
    replaced"; it says the log was deleted."""
    from tests.tui.pilot import until

    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        epoch = app.live.epoch
        path.unlink()
        await until(pilot, lambda: app.live.log_deleted and app.live.epoch != epoch)
        await pilot.press("y")
        await until(pilot, lambda: app.screen is screen and bool(text(screen.query_one("#policy-message", Static))))
        message = text(screen.query_one("#policy-message", Static))
        assert message.startswith("Not sent: the log was deleted while the dialog was up"), message
        assert not path.exists() or read_inbox(path) == []


async def test_the_rewind_dialog_shows_the_preview_of_the_log_as_it_grows(tmp_path: Path) -> None:
    """The agent ran on while the rewind dialog was up: it kept the preview of the log as ``w`` found it; it shows
    the region as it is now, and ``y`` sends that preview, the one the operator saw."""
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        seq = app.live.session.next_seq
        assert "4 nodes (seq 28..35)" in _said(dialog) and f"previewed at seq {seq})" in _said(dialog)
        log = LogBuilder(host=False)
        log.turn, log.step = 1, 3
        log.call("bash", {"command": "ls"}, "a.txt")
        append_events(path, log.events)
        await settle(pilot, lambda: f"previewed at seq {seq + 3})" in _said(dialog))
        assert "5 nodes (seq 28..38)" in _said(dialog), _said(dialog)
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert request["args"]["preview"]["seq"] == seq + 3 and request["args"]["preview"]["nodes"] == 5


@pytest.mark.parametrize("change", ["replaced", "deleted"])
@pytest.mark.parametrize(("screen_type", "keys"), [(CheckpointsScreen, ("w",)), (FoldsScreen, ("down", "down", "x"))])
async def test_the_confirm_dialogs_say_at_once_that_the_log_changed(
    tmp_path: Path, change: str, screen_type: type[Screen[None]], keys: tuple[str, ...]
) -> None:
    """A log replaced or deleted while a confirm dialog (rewind, expand) was up: the dialog described the old log
    until ``y``, which alone said what became of it; the dialog says it while it is up."""
    from tests.tui.pilot import until

    path, other = _demo_and_another(tmp_path)
    app = PolicyHarness(path, screen_type, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        if change == "replaced":
            other.replace(path)
        else:
            path.unlink()
        await until(pilot, lambda: "while this dialog was up" in _said(dialog))
        said = _said(dialog)
        assert f"The log was {'deleted' if change == 'deleted' else 'truncated or replaced'}" in said, said
        assert "confirming sends nothing" in said and app.screen is dialog


async def test_rewind_preview_confirm_request_and_outcome(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        summary = text(screen.query_one("#region-summary", Static))
        assert summary.startswith("Rewinding to checkpoint 1 folds 4 nodes (seq 28..35)")
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert "The host will replace 4 nodes (seq 28..35)" in plain(dialog.body)
        assert read_inbox(path) == []
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1 and "pending" in panel(app))
        (request,) = read_inbox(path)
        seq = app.live.session.next_seq
        assert request["op"] == "rewind" and request["args"]["markId"] == 1
        assert request["args"]["preview"]["seq"] == seq and request["args"]["preview"]["nodes"] == 4
        assert panel(app) == "pending   rewind checkpoint 1 — waiting for the host"

        plan = plan_rewind(load_session(path), CONFIG.rewind, ExtractiveReportWriter(), by="operator")
        detail = {**plan.result, "seq": seq + 3, "preview": {**request["args"]["preview"], "stepsSince": 0}}
        append_events(path, [*plan.events, outcome_event(request, "applied", detail=detail)])
        await settle(pilot, lambda: "applied" in panel(app))
        chars = request["args"]["preview"]["chars"]
        assert f"previewed 4 nodes / {human_chars(chars)} chars at seq {seq}; applied 4 / " in panel(app)
        assert panel(app).endswith("nothing changed in between")
        marks = screen.query_one("#marks-table", DataTable)
        assert cells(marks, "1")[4] == f"folded at {app.live.session.next_seq - 2}"
        assert "already folded" in text(screen.query_one("#region-summary", Static))


async def test_rewind_rejected_by_the_host_shows_why(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        error = "rewind: the fold region changed during summarization"
        await rewind_rejected(pilot, path, error)
        assert panel(app) == f"rejected  rewind checkpoint 1 — {error}"


async def test_cancelled_rewind_sends_nothing(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        assert read_inbox(path) == []
        assert panel(app) == "No operator requests sent from this TUI yet."


async def test_place_checkpoint_with_an_objective(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"try the fix", "enter")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert (request["op"], request["args"]) == ("checkpoint", {"objective": "try the fix"})
        session = load_session(path)
        append_events(
            path, [*plan_checkpoint(session, "try the fix", by="operator"), outcome_event(request, "applied")]
        )
        await settle(pilot, lambda: "applied" in panel(app))
        marks = app.screen.query_one("#marks-table", DataTable)
        assert cells(marks, "2")[3:] == ["operator", "active", "try the fix"]
        assert cells(marks, "1")[4] == "active"


@contextlib.asynccontextmanager
async def _config_screen(tmp_path: Path) -> AsyncIterator[tuple[PolicyHarness, Pilot[None], Screen[None], Path]]:
    """The config screen on a demo session's log, followed and settled: the app, its pilot, the screen, the log."""
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, ConfigScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        yield app, pilot, app.screen, path


async def test_config_edit_rejected_inline_and_by_the_host(tmp_path: Path) -> None:
    async with _config_screen(tmp_path) as (app, pilot, screen, path):
        check = screen.query_one("#config-check", Static)
        box = screen.query_one("#config-value", Input)
        assert box.value == "1"  # slice.history.keepRecentTurns, changed to 1 in the log
        await pilot.press("e", "backspace", "minus", "1")
        await settle(pilot, lambda: text(check).startswith("✗"))
        assert text(check) == "✗ slice.history.keepRecentTurns must be from 0 to 10,000 (got -1)"
        await pilot.press("enter")
        await settle(pilot)
        assert text(screen.query_one("#policy-message", Static)) == (
            "Not sent: slice.history.keepRecentTurns must be from 0 to 10,000 (got -1)"
        )
        assert not isinstance(app.screen, ConfirmScreen)
        assert read_inbox(path) == []

        await pilot.press("backspace", "backspace", "2")
        await settle(pilot, lambda: text(check).startswith("✓"))
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        diff = app.screen.body.plain  # type: ignore[union-attr]
        assert "- slice.history.keepRecentTurns = 1\n+ slice.history.keepRecentTurns = 2\n" in diff
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert (request["op"], request["args"]) == (
            "config.set",
            {"key": "slice.history.keepRecentTurns", "value": 2},
        )
        error = "config.set is not allowed while a seal is pending"
        append_events(path, [outcome_event(request, "rejected", error=error)])
        await settle(pilot, lambda: "rejected" in panel(app))
        assert panel(app) == f"rejected  config.set slice.history.keepRecentTurns = 2 — {error}"


async def test_config_draft_survives_a_live_update_before_its_keystroke_is_handled(tmp_path: Path) -> None:
    """A live update (a new event re-derives the screen) that landed after a keystroke changed the editor's text but
    before the screen handled its Changed message took the editor for untouched and put the live value back over the
    operator's draft; the draft stays."""
    async with _config_screen(tmp_path) as (app, pilot, screen, path):
        box = screen.query_one("#config-value", Input)
        assert box.value == "1"
        await pilot.press("e")
        box.value = "5"  # what a keystroke does; its Changed message is still queued …
        screen.show(screen._view)  # type: ignore[attr-defined]  # … when the live update lands
        await settle(pilot)
        assert box.value == "5"
        check = screen.query_one("#config-check", Static)
        await settle(pilot, lambda: text(check).startswith("✓"))
        assert "1 → 5" in text(check)


async def test_config_change_applied_updates_values_and_history(tmp_path: Path) -> None:
    async with _config_screen(tmp_path) as (app, pilot, screen, path):
        table = screen.query_one("#config-keys", DataTable)
        await pilot.press("down", "down")  # slice.fold.pinSteps
        await settle(pilot)
        assert screen.query_one("#config-value", Input).value == "0"
        await pilot.press("enter", "backspace", "3", "enter")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        change = {
            "type": "tapedeck/config",
            "data": {
                "changes": {"slice.fold.pinSteps": {"old": 0, "new": 3}},
                "by": "operator",
                "requestId": request["id"],
            },
            "ignorable": True,
        }
        append_events(path, [change, outcome_event(request, "applied")])
        await settle(pilot, lambda: "applied" in panel(app))
        assert cells(table, "slice.fold.pinSteps") == ["slice.fold.pinSteps", "3"]
        history = screen.query_one("#config-history", DataTable)
        assert history.row_count == 2


def _demo_and_another(tmp_path: Path) -> tuple[Path, Path]:
    """A demo log, and another session's log to write over it (the same run with another session id)."""
    path = demo(tmp_path / "s")
    other = demo(tmp_path / "other")
    other.write_bytes(other.read_bytes().replace(b'"demo-1"', b'"demo-2"'))
    return path, other


async def test_a_confirm_answered_after_the_log_was_replaced_sends_nothing(tmp_path: Path) -> None:
    """The expand dialog names a seq of the log as it was when ``x`` opened it; a log truncated and rewritten (here
    with another session) while it was up still got ``expand`` of that seq, another event of another session now,
    on 'y'. What the dialog described is gone: nothing is sent, and the message line says why."""
    path, other = _demo_and_another(tmp_path)
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("down", "down", "x")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        other.replace(path)
        await settle(pilot, lambda: app.live.session.id == "demo-2")
        await pilot.press("y")
        await settle(pilot, lambda: app.screen is screen)
        assert read_inbox(path) == []
        assert "truncated or replaced" in text(screen.query_one("#policy-message", Static))


async def test_expand_a_folded_result_for_the_model(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#folds-table", DataTable)
        await pilot.press("x")  # the first row is expanded already: nothing is sent
        await settle(pilot)
        assert "Only folded results can be expanded" in text(screen.query_one("#policy-message", Static))
        await pilot.press("down", "down")  # the folded archive read
        await pilot.press("x")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        body = app.screen.body.plain  # type: ignore[union-attr]
        assert "chars go back into the context" in body and "seq 16" in body
        assert read_inbox(path) == []  # nothing is sent before the operator confirms
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert (request["op"], request["args"]) == ("expand", {"seq": 16})
        append_events(path, [*plan_unfold(load_session(path), 16), outcome_event(request, "applied")])
        await settle(pilot, lambda: "applied" in panel(app))
        row = next(
            cells(table, k.value) for k in table.rows if cells(table, k.value)[6] == "data/archive.csv"
        )
        assert row[3] == "expanded"


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_folds_fit_a_narrow_terminal_and_say_the_rest_of_the_row(tmp_path: Path, size: tuple[int, int]) -> None:
    """At 80 columns the Folds table ran past the screen (its note column cut, reached by scrolling sideways); below
    the width its columns need it now leaves out the policy, backoff and note, which a line under it gives for the
    cursor row, whole; widened, the table has every column again."""
    app = PolicyHarness(demo(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#folds-table", DataTable)
        await pilot.press("down")  # the error result of bash
        await settle(pilot)
        assert table.virtual_size.width <= table.scrollable_content_region.width, (table.virtual_size, table.size)
        selected = " ".join(text(screen.query_one("#folds-selected", Static)).split())
        assert "Error results are never folded." in selected, selected
        await pilot.resize_terminal(160, 45)
        await settle(pilot, lambda: len(table.columns) == 10)
        assert cells(table, "9")[-1] == "error results are never folded"
        assert not screen.query_one("#folds-selected-box").display


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_folds_rows_line_up_with_wide_characters_in_paths(tmp_path: Path, size: tuple[int, int]) -> None:
    """A path of CJK or emoji characters (two cells each) was clipped to as many characters as the column had cells,
    so its cells ran past the table's width and the row broke the layout; it is now clipped to the cells it has."""
    app = PolicyHarness(wide_paths(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#folds-table", DataTable)
        assert table.row_count == len(WIDE_PATHS)
        assert table.virtual_size.width <= table.scrollable_content_region.width, (table.virtual_size, table.size)
        path_column = [column.key.value for column in table.columns.values()].index("path")
        width = table.ordered_columns[path_column].get_render_width(table) - 2 * table.cell_padding
        for key in table.rows:
            path = str(table.get_cell(key, "path"))
            assert cell_len(path) <= width, (path, cell_len(path), width)
            assert any(full.endswith(path.lstrip("…")) for full in WIDE_PATHS), path


async def test_a_live_append_leaves_the_table_where_the_operator_scrolled_it(tmp_path: Path) -> None:
    """Every append of a live session refilled the policy screens' tables, which put the cursor back on its row
    but scrolled the view from the top down to it: a cursor in the middle of the view jumped to its bottom row
    (the rows above it shifting) at each event the host wrote. The rows stay where they were; a new row comes in
    below them."""
    log = LogBuilder()
    log.start_turn("read everything")
    for i in range(60):  # two pages down stay well short of the last one, whatever the layout gives the table
        log.call("read_file", {"path": f"src/f{i}.py"}, f"body {i}\n" * 5)
    path = log.write(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#folds-table", DataTable)
        await pilot.press("pagedown", "pagedown", *["up"] * 4)  # the cursor mid-view, the view scrolled
        await settle(pilot)
        before = (table.cursor_row, table.scroll_y, table.row_count)
        assert 0 < before[1] < table.max_scroll_y, before
        written = len(log.events)
        log.call("read_file", {"path": "src/late.py"}, "late\n")  # what the host writes next
        append_events(path, log.events[written:])
        await settle(pilot, lambda: table.row_count == before[2] + 1)
        await quiet(pilot)  # any scroll the new row brings (after a refresh) has run
        await settle(pilot)
        assert (table.cursor_row, table.scroll_y) == before[:2]


async def test_view_the_full_original_of_a_folded_result(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "v")
        await settle(pilot, lambda: isinstance(app.screen, ResultScreen))
        result = app.screen
        assert isinstance(result, ResultScreen)
        assert result.heading.startswith("read_file data/archive.csv · seq 16")
        assert "149,beta-149" in result.text
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, FoldsScreen))


@pytest.mark.parametrize("change", ["replaced", "deleted"])
async def test_the_full_view_says_when_the_log_changed_under_it(tmp_path: Path, change: str) -> None:
    """The full result view (``v``) kept calling its text the result at seq 16 of the open log after the log was
    truncated and rewritten with another session, whose seq 16 is another event, until closed; its title now says
    the text is what the log held before. A log deleted under it was said to be "truncated or replaced"; the title
    says it was deleted."""
    from tests.tui.pilot import until

    path, other = _demo_and_another(tmp_path)
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "v")
        await settle(pilot, lambda: isinstance(app.screen, ResultScreen))
        result = app.screen
        title = result.query_one(".policy-dialog-title", Static)
        assert text(title).startswith("read_file data/archive.csv · seq 16") and "replaced" not in text(title)
        if change == "replaced":
            other.replace(path)
            await settle(pilot, lambda: app.live.session.id == "demo-2")
            await settle(pilot, lambda: "the log was truncated or replaced" in text(title))
        else:
            path.unlink()
            await until(pilot, lambda: "the log was" in text(title))  # no log to settle on: its title alone
            assert "the log was deleted since" in text(title) and "replaced" not in text(title), text(title)
        assert app.screen is result and "149,beta-149" in result.text


async def test_the_full_view_of_a_huge_result_shows_its_head_and_counts_the_rest(tmp_path: Path) -> None:
    """``v`` on a result of one 5 MB line (minified JSON, a log written without newlines) gave Textual's text area
    the whole of it, which it wrapped on the UI thread: the TUI stood still for 17 s on opening (13 s more on End),
    the log's appends and the keys waiting. The view now holds the result's first ``RESULT_LIMIT`` chars and says
    how many it leaves out."""
    from tests.tui.screens_policy.harness import LogBuilder
    from tui.screens.folds import RESULT_LIMIT

    log = LogBuilder()
    log.start_turn("dump it")
    log.calls([("bash", {"command": "cat dump.json"}, "word " * 1_000_000, False)])
    app = PolicyHarness(log.write(tmp_path / "s"), FoldsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot, lambda: isinstance(app.screen, ResultScreen))
        result = app.screen
        assert isinstance(result, ResultScreen)
        assert result.text.startswith("word word ") and len(result.text) < RESULT_LIMIT + 200, len(result.text)
        left_out = 5_000_000 - RESULT_LIMIT
        assert result.text.endswith(f"{human_chars(left_out)} more chars of the result are left out here.]"), result.text[-200:]


async def test_dsh_log_is_read_only_and_sends_nothing(tmp_path: Path) -> None:
    path = FIXTURES / "tool-call-turn.session.jsonl"
    app = PolicyHarness(path, CheckpointsScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        banner = screen.query_one("#policy-readonly", Static)
        assert banner.display
        assert text(banner) == f"Read-only — actions are disabled: {READ_ONLY_DSH}"
        await pilot.press("K", "w")
        await settle(pilot)
        assert isinstance(app.screen, CheckpointsScreen)
        assert not (path.parent / "control.jsonl").exists()
        assert screen.check_action("rewind", ()) is None
        assert "no checkpoint mark" in text(screen.query_one("#region-summary", Static))


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_rewind_preview_columns_fit_beside_the_marks(tmp_path: Path, size: tuple[int, int]) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), CheckpointsScreen)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#region-table", DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        assert "kind" in labels and table.max_scroll_x == 0  # no column cut, no sideways scrollbar
        kinds = [cells(table, key)[labels.index("kind")] for key in table.rows]
        assert "result read_file" in kinds
        await pilot.resize_terminal(160, 45)
        await settle(pilot, lambda: len(table.columns) == 5)


async def test_config_key_being_edited_wraps_after_a_dot_at_80_columns(tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.screen.query_one("#config-selected", Static)
        shown = [strip.text.strip() for strip in line.render_lines(Region(0, 0, *line.outer_size))]
        assert shown == ["Editing slice.history.", "keepRecentTurns"]  # 22 columns beside the keys


async def test_config_key_not_listed_can_be_set(tmp_path: Path) -> None:
    async with _config_screen(tmp_path) as (app, pilot, screen, path):
        check = screen.query_one("#config-check", Static)
        await pilot.press("a")
        await settle(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.press(*"slice.history.entryMaxChars", "enter")
        await settle(pilot, lambda: app.screen is screen)
        assert plain(screen.query_one("#config-selected", Static).content).strip() == "Editing slice.history.entryMaxChars"
        assert text(check) == "not set here: its default applies"
        box = screen.query_one("#config-value", Input)
        assert box.has_focus and box.value == "null"
        await pilot.press(*["backspace"] * 4, *"255")
        await settle(pilot, lambda: text(check).startswith("✗"))
        assert text(check) == "✗ slice.history.entryMaxChars must be from 256 to 100,000,000 (got 255)"
        await pilot.press("backspace", "6", "enter")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "+ slice.history.entryMaxChars = 256" in app.screen.body.plain  # type: ignore[union-attr]


async def test_config_screen_opens_on_the_config_the_session_ran_with(tmp_path: Path) -> None:
    app = PolicyHarness(configured(tmp_path / "s", STARTED_WITH), ConfigScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.screen.query_one("#config-keys", DataTable).row_count > 0)
        table = app.screen.query_one("#config-keys", DataTable)
        assert cells(table, "slice.history.keepRecentTurns") == ["slice.history.keepRecentTurns", "2"]
        assert cells(table, "slice.fold.pinSteps") == ["slice.fold.pinSteps", "2"]
        assert cells(table, "prolong.registerCommand") == ["prolong.registerCommand", "false"]
        await pilot.press("down", "down")  # slice.fold.pinSteps: the editor starts from the logged value
        await settle(pilot)
        assert app.screen.query_one("#config-value", Input).value == "2"


async def test_prolong_screen_says_status_is_off_for_a_session_without_the_command(tmp_path: Path) -> None:
    app = PolicyHarness(configured(tmp_path / "s", STARTED_WITH), ProlongScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: bool(text(app.screen.query_one("#prolong-report", Static))))
        report = text(app.screen.query_one("#prolong-report", Static))
        assert report.startswith("prolong-memory status: off for this session")
        assert "writable=" not in report


async def test_prolong_screen_of_a_host_whose_log_file_is_a_directory_says_writable_no(tmp_path: Path) -> None:
    import json

    from core.control.config import validate_config
    from core.host.loop import AgentHost, HostOptions
    from core.host.providers.scripted import ScriptedModel

    workspace = tmp_path / "ws"
    (workspace / "log.txt").mkdir(parents=True)  # a directory where the log file should be
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [{"text": "ok"}]}))
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=workspace, progress=lambda _: None), tasks=["hello"])  # fmt: skip
    host.run()
    host.close()
    app = PolicyHarness(host.writer.path, ProlongScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: bool(text(app.screen.query_one("#prolong-report", Static))))
        report = text(app.screen.query_one("#prolong-report", Static))
        assert "writable=NO sections=0 lastSeq=-" in report, report
        assert "note: the log file cannot be read (it is not a regular file)" in report
        assert "hint: suspect a permission/sandbox plugin" in report


async def test_a_rejected_value_is_shown_printable(tmp_path: Path) -> None:
    """A value the operator pastes from a log (an escape sequence in it) comes back in the section's refusal: the
    line under the editor shows it printable, not as a sequence that reaches the terminal."""
    async with _config_screen(tmp_path) as (_app, pilot, screen, _path):
        check = screen.query_one("#config-check", Static)
        screen._select("adaptive.pruneSchedule")  # type: ignore[attr-defined]
        await pilot.press("e")
        screen.query_one("#config-value", Input).value = '"\\u001b[2Jstep\\u202e"'
        await settle(pilot, lambda: text(check).startswith("✗"))
        assert "pruneSchedule must be one of" in text(check)
        assert "\x1b" not in text(check) and "\u202e" not in text(check)
        assert '(got "\\u001b[2Jstep\\u202e")' in text(check)  # the refusal writes them as escapes
