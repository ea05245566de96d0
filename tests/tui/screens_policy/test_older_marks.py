"""Rewind to any active checkpoint: the cursor picks the mark, the preview and the confirm show that mark's
region, the request names it; a rewind that cannot happen is one plain sentence for the operator."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from core.policies.checkpoint import plan_checkpoint
from core.policies.rewind import preview_rewind
from core.read.load import load_session
from tests.conftest import FIXTURES
from tests.tui.screens_policy.harness import LogBuilder, PolicyHarness, plain, read_inbox, settle, text
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.confirm import ConfirmScreen

SIZE = (140, 40)
pytestmark = pytest.mark.anyio


def two_marks(directory: Path) -> Path:
    """Checkpoint 1, a grep, checkpoint 2, a read: both marks active, each with its own region."""
    log = LogBuilder()
    log.start_turn("Find why the parser fails on empty input.")
    log.plan(lambda s: plan_checkpoint(s, "look at the parser", by="operator"))
    log.call("grep", {"pattern": "def parse", "path": "src"}, "src/parser.py:12:def parse(text):")
    log.end_step()
    log.start_step()
    log.plan(lambda s: plan_checkpoint(s, "look at the tests", by="operator"))
    log.call("read_file", {"path": "tests/test_parser.py"}, "def test_empty():\n    parse('')\n")
    log.end_step()
    log.start_step()
    log.say("The test passes an empty string; parse indexes its first token.")
    return log.write(directory)


async def test_the_cursor_on_an_older_mark_previews_and_rewinds_that_mark(tmp_path: Path) -> None:
    path = two_marks(tmp_path / "s")
    session = load_session(path)
    older, newer = preview_rewind(session, 1), preview_rewind(session, 2)
    assert len(older.region.shadowed_seqs) > len(newer.region.shadowed_seqs)
    app = PolicyHarness(path, CheckpointsScreen, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        summary = screen.query_one("#region-summary", Static)
        region = screen.query_one("#region-table", DataTable)
        assert text(summary).startswith(f"Rewinding to checkpoint 2 folds {len(newer.region.shadowed_seqs)} nodes")
        await pilot.press("down")  # the older mark
        await settle(pilot, lambda: "checkpoint 1" in text(summary))
        assert text(summary).startswith(f"Rewinding to checkpoint 1 folds {len(older.region.shadowed_seqs)} nodes")
        assert region.row_count == len(older.region.shadowed_seqs)
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        body = plain(app.screen.body)  # type: ignore[attr-defined]
        assert "Checkpoint 1 (look at the parser)" in body and "result grep" in body and "result read_file" in body
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        assert request["args"]["markId"] == 1
        assert request["args"]["preview"]["nodes"] == len(older.region.shadowed_seqs)


async def test_a_dsh_log_without_marks_says_so_plainly(tmp_path: Path) -> None:
    app = PolicyHarness(FIXTURES / "tool-call-turn.session.jsonl", CheckpointsScreen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = text(app.screen.query_one("#region-summary", Static))
        assert said == "Nothing to rewind: this session has no checkpoint mark."
        assert "call `checkpoint`" not in said and "[" not in said
