"""Snapshots of the operator's control dialogs: a message to the agent, stopping it, expanding a folded result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.logs import policy_log
from tests.tui.pilot import make_app, settle, until
from tests.tui.screens_policy.harness import PolicyHarness
from tests.tui.screens_policy.harness import settle as settle_policy
from tests.tui.screens_policy.scenarios import demo
from tui.screens.confirm import AskScreen
from tui.screens.folds import FoldsScreen

SIZE = (150, 42)
Snap = Callable[..., bool]


def _keys(*keys: str) -> Callable[[Pilot[None]], object]:
    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.1)

    return run


def test_message_dialog(snap_compare: Snap, tmp_path: Path) -> None:
    """``m``: a text box for a message the model reads at its next step."""
    path = policy_log().write(tmp_path / "session.jsonl")

    async def typed(pilot: Pilot[None]) -> None:
        await _keys("m")(pilot)  # type: ignore[misc]
        await until(pilot, lambda: _typed(pilot.app) is not None)
        await pilot.press(*"prefer small diffs")
        await until(pilot, lambda: _typed(pilot.app) == "prefer small diffs")
        await pilot.pause(0.1)

    assert snap_compare(make_app(path), terminal_size=SIZE, run_before=typed)


def _typed(app: object) -> str | None:
    screen = getattr(app, "screen", None)
    return screen.query_one(Input).value if isinstance(screen, AskScreen) else None


def test_stop_confirm(snap_compare: Snap, tmp_path: Path) -> None:
    """``S``: stopping asks first and says what happens to the call in flight."""
    path = policy_log().write(tmp_path / "session.jsonl")
    assert snap_compare(make_app(path), terminal_size=SIZE, run_before=_keys("S"))


def test_expand_confirm_shows_the_chars_going_back(snap_compare: Snap, tmp_path: Path) -> None:
    """``x`` on Folds: how many chars go back into the model's context, before anything is sent."""
    path = demo(tmp_path / "s")

    async def run(pilot: Pilot[None]) -> None:
        await settle_policy(pilot)
        await pilot.press("down", "down", "x")
        await pilot.pause(0.1)

    assert snap_compare(PolicyHarness(path, FoldsScreen), terminal_size=(140, 40), run_before=run)
