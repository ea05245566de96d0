"""Keys typed ahead (over a slow SSH link they come in bursts) may answer a dialog before it has mounted: it is
then gone before its widgets ever were, and its own start-up must not reach for them (the fleet's P then y crashed
the app: NoMatches '#confirm-no')."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App
from textual.screen import Screen

from core.read.event_filter import EventFilter
from tests.conftest import FIXTURES
from tests.tui.pilot import make_app, settle, settled_main_screen
from tui.app import POLICY_SCREENS
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.filter import FilterScreen

pytestmark = pytest.mark.anyio

DIALOGS: dict[str, Callable[[], Screen[Any]]] = {
    "confirm": lambda: ConfirmScreen("Resume the agent?", "It goes on from where it paused.", "Resume"),
    "ask": lambda: AskScreen("Message the agent", "One line, sent at its next step."),
    "filter": lambda: FilterScreen(EventFilter(), ["tool/call", "tool/result"]),
}


@pytest.mark.parametrize("name", sorted(DIALOGS))
async def test_a_dialog_answered_before_it_mounted_leaves_the_app_running(name: str) -> None:
    answers: list[Any] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = DIALOGS[name]()
        app.push_screen(dialog, answers.append)
        dialog.dismiss(None)  # the key that answers it, handled before the dialog's own start-up
        await pilot.pause()
        await pilot.pause()
        assert app.is_running and app.screen is not dialog
        assert answers == [None]
        again = DIALOGS[name]()  # the same dialog shown in its own time still starts on its widgets
        app.push_screen(again)
        await pilot.pause()
        assert app.screen is again and app.focused is not None


@pytest.mark.parametrize("name", [name for _key, name, *_ in POLICY_SCREENS])
async def test_a_policy_screen_closed_before_it_mounted_leaves_the_app_running(name: str) -> None:
    app = make_app(FIXTURES / "tool-call-turn.session.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        main = await settled_main_screen(pilot)
        app.action_policy(name)
        opened = app.screen
        assert opened is not main
        opened.action_close()  # type: ignore[attr-defined]  # escape, typed right after the screen's key
        await settle(pilot)
        assert app.is_running and app.screen is main
        app.action_policy(name)  # opened in its own time it still shows its view
        await settle(pilot)
        assert app.screen is not main and app.focused is not None
