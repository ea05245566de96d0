"""Folds screen papercuts: the cursor row's line says each thing once, and a table emptied by a rewind keeps its
header whole and says why it is empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from core.policies.checkpoint import plan_checkpoint
from core.policies.fold import plan_fold, plan_unfold
from core.policies.report import ExtractiveReportWriter
from core.policies.rewind import plan_rewind
from core.read.load import load_session
from tests.tui.logs import release_hosts
from tests.tui.pilot import make_app, quiet, until
from tests.tui.pilot import settle as settle_app
from tests.tui.screens_policy.harness import (
    LogBuilder,
    PolicyHarness,
    append_events,
    read_inbox,
    settle,
    text,
)
from tests.tui.screens_policy.scenarios import CONFIG, demo, table_text
from tests.tui.screens_policy.test_cut_cells import drawn
from tui.live import SessionUpdated
from tui.screens.confirm import ConfirmScreen
from tui.screens.folds import COLUMNS, NARROW, FoldsScreen

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


def emptied(directory: Path) -> Path:
    """A checkpoint, then two read results the fold folded: a rewind to the checkpoint takes every tool result off
    the surface."""
    log = LogBuilder()
    log.start_turn("Which scores went stale?")
    log.plan(lambda s: plan_checkpoint(s, "find the stale scores", by="operator"))
    log.calls(
        [("read_file", {"path": f"data/{name}.csv"}, table_text(name, 120), False) for name in ("a", "b")]
    )
    log.end_step()
    log.start_step()
    log.plan(lambda s: plan_fold(s, CONFIG.slice))
    log.say("Both tables read.")
    return log.write(directory)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_table_emptied_by_a_rewind_keeps_its_header_and_says_why(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The rewind that took the last tool results off the surface left the columns as wide as the rows they had
    held (a table only widens them): at 80 columns the header ran past the screen, its note label cut, over blank
    rows and a sideways scrollbar. The columns now fit the rows shown, the header is whole and the line under the
    empty table says why it is empty."""
    path = emptied(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=size) as pilot:
        table = app.screen.query_one("#folds-table", DataTable)
        await settle(pilot, lambda: table.row_count == 2)
        plan = plan_rewind(load_session(path), CONFIG.rewind, ExtractiveReportWriter(), by="operator")
        append_events(path, plan.events)
        await settle(pilot, lambda: table.row_count == 0)
        await quiet(pilot)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels == list(COLUMNS if size[0] >= 80 else COLUMNS[:NARROW]), labels
        assert table.virtual_size.width <= table.scrollable_content_region.width, (
            table.virtual_size,
            table.size,
        )
        header = drawn(app, table)[0].split()
        assert header == labels, header
        said = " ".join(text(app.screen.query_one("#folds-selected", Static)).split())
        assert "No tool result is on the surface" in said, said
        assert app.screen.query_one("#folds-selected-box").display


class StaleFolds(PolicyHarness):
    """The harness whose screens stop hearing of the log's changes once ``deaf`` is set: the Folds table keeps the
    rows it drew while the live session takes what lands after (as when a rewind lands between a derivation and the
    operator's key)."""

    deaf = False

    def on_session_updated(self, message: SessionUpdated) -> None:
        """Once ``deaf``, the harness's handler (Textual calls it after this one) forwards no update."""
        if self.deaf:
            message.prevent_default()


async def rewound(pilot: Pilot[None], path: Path) -> None:
    """Append a rewind to the log's checkpoint, then wait until the live session holds it."""
    app = pilot.app
    plan = plan_rewind(load_session(path), CONFIG.rewind, ExtractiveReportWriter(), by="operator")
    append_events(path, plan.events)
    lines = len(path.read_bytes().splitlines()) - 1
    await until(pilot, lambda: app.live.session.next_seq == lines)  # type: ignore[attr-defined]


def message(app: App[Any]) -> str:
    """What the Folds screen's message line says."""
    screen = next(s for s in app.screen_stack if isinstance(s, FoldsScreen))
    return " ".join(text(screen.query_one("#policy-message", Static)).split())


async def test_an_expand_is_not_offered_for_a_result_a_rewind_took_off_the_surface(tmp_path: Path) -> None:
    """A rewind landed after the table was drawn: ``x`` on a folded row it took off the surface offered to expand it,
    for the host to refuse. The newest projection is now asked first, and the screen says the result is gone."""
    path = emptied(tmp_path / "s")
    app = StaleFolds(path, FoldsScreen, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.screen.query_one("#folds-table", DataTable)
        await settle(pilot, lambda: table.row_count == 2)
        app.deaf = True
        await rewound(pilot, path)
        await pilot.press("x")
        await until(pilot, lambda: "no longer on the surface" in message(app))
        assert not isinstance(app.screen, ConfirmScreen)
        assert message(app).startswith(
            "Nothing to expand: the tool result at seq 7 is no longer on the surface"
        )
        assert read_inbox(path) == []


async def confirm_up(pilot: Pilot[None], app: PolicyHarness) -> None:
    """Once both folds are listed, press ``x`` on the first and wait for the expand's confirm."""
    table = app.screen.query_one("#folds-table", DataTable)
    await settle(pilot, lambda: table.row_count == 2)
    await pilot.press("x")
    await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))


async def test_an_expand_confirmed_after_a_rewind_took_the_result_off_is_not_sent(tmp_path: Path) -> None:
    """The confirm was up when a rewind took the result off the surface: ``y`` sent the expand, for the host to
    refuse. The newest projection is asked again, and nothing is sent."""
    path = emptied(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await confirm_up(pilot, app)
        await rewound(pilot, path)
        await pilot.press("y")
        await until(pilot, lambda: "no longer on the surface" in message(app))
        assert message(app).startswith("Not sent: the tool result at seq 7 is no longer on the surface")
        await settle(pilot)
        assert read_inbox(path) == []


async def test_an_expand_of_a_result_still_on_the_surface_is_sent(tmp_path: Path) -> None:
    """The check lets through what is still on the surface: the request goes out as before."""
    path = emptied(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await confirm_up(pilot, app)
        await pilot.press("y")
        await until(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert (request["op"], request["args"]) == ("expand", {"seq": 7})


def dialog_says(dialog: ConfirmScreen) -> str:
    """The confirm dialog's warning line and body, as one line of words."""
    said = [text(static) for static in dialog.query(Static) if static.display]
    return " ".join(" ".join(said).split())


async def test_the_expand_confirm_follows_a_result_the_host_expanded_while_it_was_up(tmp_path: Path) -> None:
    """The host expanded the result (another operator's request) while the expand confirm was up: the dialog still
    offered to put it back, and ``y`` sent an expand of an expanded result for the host to refuse. The dialog now
    says the result is expanded and that confirming sends nothing, and ``y`` sends nothing."""
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, FoldsScreen, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "x")  # the folded archive read, seq 16
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and "seq 16" in dialog_says(dialog)
        assert "sends nothing" not in dialog_says(dialog)
        append_events(path, plan_unfold(load_session(path), 16))
        await until(pilot, lambda: "sends nothing" in dialog_says(dialog))
        assert "Seq 16 is expanded now" in dialog_says(dialog), dialog_says(dialog)
        assert app.screen is dialog
        await pilot.press("y")
        await until(pilot, lambda: "Not sent" in message(app))
        assert message(app) == "Not sent: seq 16 is expanded now, changed while the dialog was up."
        await settle(pilot)
        assert read_inbox(path) == []


async def test_the_expand_confirm_says_at_once_that_the_host_exited(tmp_path: Path) -> None:
    """The session's host exited while the expand confirm was up: the dialog still offered the expand, and only
    ``y`` found out. It says so while it is up, as the pause, message and stop dialogs do, and ``y`` sends
    nothing."""
    path = demo(tmp_path / "s")
    app = make_app(path, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle_app(pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, FoldsScreen))
        table = app.screen.query_one("#folds-table", DataTable)
        await until(pilot, lambda: table.row_count > 2)
        await pilot.press("down", "down", "x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and "sends nothing" not in dialog_says(dialog)
        release_hosts()
        await until(pilot, lambda: "nothing is sent" in dialog_says(dialog))
        assert "no live host" in dialog_says(dialog) and app.screen is dialog, dialog_says(dialog)
        await pilot.press("y")
        await until(pilot, lambda: "Not sent" in message(app))
        assert "no live host" in message(app)
        assert read_inbox(path) == []
