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
from tui.screens.folds import LEGEND, FoldsScreen
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen

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
        assert isinstance(app.screen, HelpScreen) and app.screen.legend == MainScreen.LEGEND
        await pilot.press("escape", "o")
        await settle(pilot, lambda: isinstance(app.screen, FoldsScreen))
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.legend == LEGEND
        assert "backoffAfterExpansions" in dict(LEGEND)["backoff"]
        assert "policy.folds.expand" in {entry.binding_id for entry in app.screen.entries}


async def test_page_down_in_an_empty_tape_table_keeps_the_app(fixtures_dir: Path) -> None:
    """A DSH log has no tape entries: page down in the Tape screen's empty table highlights row -1, whose event
    carries no row key, and reading its value raised AttributeError out of the app (found by a Pilot run that
    followed a growing log)."""
    from tests.tui.pilot import make_app, settled_main_screen
    from tui.screens.tape import TapeScreen

    app = make_app(fixtures_dir / "error-finish.session.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TapeScreen)
        for key in ("pagedown", "pageup", "end", "home", "down"):
            await pilot.press(key)
            await settle(pilot)
        assert "No tape entries yet." in str(app.screen.query_one("#tape-text").render())
    assert app._exception is None


async def test_page_down_in_an_empty_config_table_keeps_the_app(tmp_path: Path, fixtures_dir: Path) -> None:
    """A DSH session just started (its log holds only its header) shows an empty table on the Config screen: page
    down there highlights row -1, whose event carries no row key, and reading its value raised AttributeError out
    of the app."""
    from tests.tui.pilot import make_app, settled_main_screen
    from tui.screens.config import ConfigScreen

    log = tmp_path / "session.jsonl"
    log.write_bytes((fixtures_dir / "error-finish.session.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n")
    app = make_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await settled_main_screen(pilot)
        await pilot.press("C")
        await settle(pilot)
        assert isinstance(app.screen, ConfigScreen)
        for key in ("tab", "pagedown", "tab", "pagedown", "tab", "pagedown"):
            await pilot.press(key)
            await settle(pilot)
        assert isinstance(app.screen, ConfigScreen)
    assert app._exception is None
