"""Snapshots of the operator's control dialogs (a message to the agent, a checkpoint, stopping it, expanding a
folded result) and of a request whose host exited before answering, shown cancelled with the reason."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

import core.control.host_state
from core.control.host_state import write_state
from tests.tui.logs import policy_log, release_hosts
from tests.tui.pilot import make_app, quiet, settle, until
from tests.tui.screens_policy.harness import PolicyHarness
from tests.tui.screens_policy.harness import settle as settle_policy
from tests.tui.screens_policy.scenarios import demo
from tui.screens.confirm import AskScreen
from tui.screens.folds import FoldsScreen

SIZE = (150, 42)
SIZES = [(160, 45), (80, 24)]
EXITED = 1_786_000_000_000  # when the simulated host exits (epoch ms); the snapshot's clock reads a minute later
Snap = Callable[..., bool]


def _keys(*keys: str) -> Callable[[Pilot[None]], object]:
    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        await quiet(pilot)

    return run


def test_message_dialog(snap_compare: Snap, tmp_path: Path) -> None:
    """``m``: a text box for a message the model reads at its next step."""
    path = policy_log().write(tmp_path / "session.jsonl")

    async def typed(pilot: Pilot[None]) -> None:
        await _keys("m")(pilot)  # type: ignore[misc]
        await until(pilot, lambda: _typed(pilot.app) is not None)
        await pilot.press(*"prefer small diffs")
        await until(pilot, lambda: _typed(pilot.app) == "prefer small diffs")
        await quiet(pilot)

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
        await quiet(pilot)

    assert snap_compare(PolicyHarness(path, FoldsScreen), terminal_size=(140, 40), run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_checkpoint_dialog(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    """``K``: a checkpoint placed now, with an optional objective for the exploration after it."""
    path = policy_log().write(tmp_path / "session.jsonl")

    async def typed(pilot: Pilot[None]) -> None:
        await _keys("K")(pilot)  # type: ignore[misc]
        await until(pilot, lambda: _typed(pilot.app) is not None)
        await pilot.press(*"try the fixture")
        await until(pilot, lambda: _typed(pilot.app) == "try the fixture")
        await quiet(pilot)

    assert snap_compare(make_app(path), terminal_size=size, run_before=typed)


class _Clock:
    """``core.control.host_state``'s clock in these snapshots: a minute after the host exited."""

    strftime = staticmethod(time.strftime)
    gmtime = staticmethod(time.gmtime)

    @staticmethod
    def time() -> float:
        return EXITED / 1000 + 60


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_request_whose_host_exited_shows_cancelled_with_the_reason(
    snap_compare: Snap, tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``P`` was sent, then the host exited without answering: the request is withdrawn and shown cancelled."""
    monkeypatch.setattr(core.control.host_state, "time", _Clock)
    path = policy_log().write(tmp_path / "session.jsonl")
    inbox = path.parent / "control.jsonl"

    async def run(pilot: Pilot[None]) -> None:
        app = pilot.app
        await _keys("P")(pilot)  # type: ignore[misc]
        await until(pilot, lambda: inbox.exists() and inbox.read_bytes().count(b"\n") == 1)
        await until(pilot, lambda: any(n.message == "The pause was sent." for n in app._notifications))
        app.clear_notifications()
        write_state(path, "exited", os.getpid(), EXITED)
        release_hosts()  # the host is gone before it answered
        await until(pilot, lambda: any(n.title == "Cancelled" for n in app._notifications))
        await until(pilot, lambda: inbox.read_bytes().count(b"\n") == 2)  # the withdrawal
        await settle(pilot)

    assert snap_compare(make_app(path), terminal_size=size, run_before=run)
