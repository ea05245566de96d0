"""Every screen and dialog at 160x45, 80x24 and 60x20: the main view and the surface, each policy screen, the request
view, the alerts, each dialog (the fleet table at 60x20 is in tests/fleet/test_fleet_tui.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.command import CommandPalette
from textual.pilot import Pilot

from core.alerts.config import RULE_KEYS
from core.control.config import validate_config
from tests.tui.logs import policy_log, streaming_log
from tests.tui.pilot import make_app
from tests.tui.pilot import settle as settle_app
from tests.tui.screens_policy.harness import PolicyHarness, settle
from tests.tui.screens_policy.scenarios import demo
from tests.tui.test_live_bad_input import bad_events
from tui.screens.alerts import AlertsScreen
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.confirm import AskScreen, ConfirmScreen
from tui.screens.diagnostics import DiagnosticsScreen
from tui.screens.folds import FoldsScreen
from tui.screens.prolong import ProlongScreen
from tui.screens.request import RequestScreen
from tui.screens.router import RouterScreen
from tui.screens.tape import TapeScreen

SIZES = [(160, 45), (80, 24), (60, 20)]


def main_app(tmp_path: Path) -> App[Any]:
    return make_app(policy_log().write(tmp_path / "demo" / "session.jsonl"))


def alerting_app(tmp_path: Path) -> App[Any]:
    """``main_app`` whose error-streak rule fires at one failed tool result: turn 3's error, a real alert of a fixed
    time (its event's), is listed on the alerts screen."""
    rules: dict[str, Any] = {key: {"enabled": False} for key in RULE_KEYS.values()}
    config = validate_config({"alerts": {**rules, "errorStreak": {"count": 1}, "bell": False, "notify": False}})
    log = policy_log()
    for event in log.events:  # times the rules take (theirs are before 2000): the alert's is its event's, not now
        event["time"] += 1_796_492_553_000  # 2026-12-05T17:42:34Z, and a ms a seq
    return make_app(log.write(tmp_path / "demo" / "session.jsonl"), config=config)


async def history_told(pilot: Pilot[Any]) -> None:
    """Wait until the log's history raised its alert and its toast is up, and take the toast down (it would stay
    in the picture for as long as the run took)."""
    await settle(pilot, lambda: bool(pilot.app.board.alerts and pilot.app._notifications))
    pilot.app.clear_notifications()


def streaming_app(tmp_path: Path) -> App[Any]:
    """A followed log whose last model stream is still coming in: one growing row."""
    return make_app(streaming_log().write(tmp_path / "demo" / "session.jsonl"), follow=True)


def damaged_app(tmp_path: Path) -> App[Any]:
    """A log with events the readers refused and a line that is no JSON: the Diagnostics screen's long messages."""
    log = policy_log()
    bad_events(log)
    path = log.write(tmp_path / "demo" / "session.jsonl")
    with open(path, "ab") as f:
        f.write(b'{"type": "user/message", "seq": torn\n')
    return make_app(path)


def policy_app(screen: type) -> Callable[[Path], App[Any]]:
    return lambda tmp_path: PolicyHarness(demo(tmp_path / "s"), screen)


# name -> (app builder, keys to press, screen to wait for)
Step = str | Callable[[Pilot[Any]], Awaitable[None]]  # a key to press, or what to do instead
CASES: dict[str, tuple[Callable[[Path], App[Any]], tuple[Step, ...], type | None]] = {
    "main": (main_app, (), None),
    "main-streaming": (streaming_app, (), None),
    "main-streaming-expanded": (streaming_app, ("enter",), None),
    "tape": (policy_app(TapeScreen), (), None),
    "folds": (policy_app(FoldsScreen), ("down",), None),
    "checkpoints": (policy_app(CheckpointsScreen), (), None),
    "router": (policy_app(RouterScreen), (), None),
    "prolong": (policy_app(ProlongScreen), (), None),
    "config": (policy_app(ConfigScreen), (), None),
    "filter-dialog": (main_app, ("f",), None),
    "help-dialog": (main_app, ("question_mark",), None),
    "diagnostics": (damaged_app, ("D",), DiagnosticsScreen),
    "rewind-dialog": (policy_app(CheckpointsScreen), ("w",), ConfirmScreen),
    "config-dialog": (policy_app(ConfigScreen), ("e", "backspace", "4", "enter"), ConfirmScreen),
    "surface": (main_app, ("s",), None),
    "request-view": (main_app, ("R",), RequestScreen),
    "alerts": (alerting_app, (history_told, "A"), AlertsScreen),
}
# the other dialogs and screens over a screen, at 80x24 alone
CASES_80x24: dict[str, tuple[Callable[[Path], App[Any]], tuple[Step, ...], type | None]] = {
    "note-dialog": (main_app, ("a",), AskScreen),
    "checkpoint-dialog": (main_app, ("K",), AskScreen),
    "message-dialog": (main_app, ("m",), AskScreen),
    "stop-dialog": (main_app, ("S",), ConfirmScreen),
    "palette": (main_app, ("ctrl+p",), CommandPalette),
    "expand-dialog": (policy_app(FoldsScreen), ("down", "down", "x"), ConfirmScreen),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", list(CASES))
def test_screen_fits(snap_compare: Any, tmp_path: Path, case: str, size: tuple[int, int]) -> None:
    app, run = _shown(tmp_path, *CASES[case])
    assert snap_compare(app, terminal_size=size, run_before=run)


@pytest.mark.parametrize("case", list(CASES_80x24))
def test_dialog_fits_80x24(snap_compare: Any, tmp_path: Path, case: str) -> None:
    app, run = _shown(tmp_path, *CASES_80x24[case])
    assert snap_compare(app, terminal_size=(80, 24), run_before=run)


def _shown(
    tmp_path: Path, build: Callable[[Path], App[Any]], pressed: tuple[Step, ...], wait_for: type | None
) -> tuple[App[Any], Callable[[Pilot[Any]], Any]]:
    """The app and the steps that show the case: its keys pressed (and other steps taken), the screen they open
    up."""

    async def run(pilot: Pilot[Any]) -> None:
        await settle_app(pilot)
        for key in pressed:
            await (pilot.press(key) if isinstance(key, str) else key(pilot))
            await settle_app(pilot)
        if wait_for is not None:
            await settle(pilot, lambda: isinstance(pilot.app.screen, wait_for))

    return build(tmp_path), run
