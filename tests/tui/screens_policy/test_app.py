"""The policy screens inside the real app: opened by its keys, fed by its LiveSession, sharing outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.control.inbox import outcome_event
from core.policies.fold import plan_unfold
from core.read.load import load_session
from tests.tui.screens_policy.harness import append_events, panel, read_inbox, settle
from tests.tui.screens_policy.scenarios import demo
from tui.app import TapedeckApp
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.folds import FoldsScreen, folds_legend
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen, main_legend

pytestmark = pytest.mark.anyio


async def test_expand_from_the_app_and_see_the_outcome_on_another_screen(tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = TapedeckApp(
        path, follow=True, interval=0.02, use_watchfiles=False, keymap_file=tmp_path / "no-keymap.toml"
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot, lambda: isinstance(app.screen, FoldsScreen))
        await pilot.press("down", "down", "x")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, lambda: len(read_inbox(path)) == 1)
        (request,) = read_inbox(path)
        append_events(
            path,
            [*plan_unfold(load_session(path), request["args"]["seq"]), outcome_event(request, "applied")],
        )
        await settle(pilot, lambda: "applied" in panel(app))
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("c")
        await settle(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        assert panel(app) == "applied   expand seq 16 (read_file)"


async def test_help_on_the_folds_screen_explains_backoff(tmp_path: Path) -> None:
    app = TapedeckApp(
        demo(tmp_path / "s"), interval=0.02, use_watchfiles=False, keymap_file=tmp_path / "no-keymap.toml"
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen.legend == main_legend(app)
        await pilot.press("escape", "o")
        await settle(pilot, lambda: isinstance(app.screen, FoldsScreen))
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.legend == folds_legend(app)
        assert "backoffAfterExpansions" in dict(app.screen.legend)["backoff"]
        assert "policy.folds.expand" in {entry.binding_id for entry in app.screen.entries}

