"""Snapshots of the policy screens in their important states (deterministic: fixed logs, no paths or ids shown)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.control.inbox import outcome_event
from tests.conftest import FIXTURES
from tests.tui.pilot import make_app
from tests.tui.pilot import settle as settle_app
from tests.tui.screens_policy.harness import PolicyHarness, append_events, read_inbox, settle
from tests.tui.screens_policy.scenarios import (
    STARTED_WITH,
    backoff,
    configured,
    demo,
    long_region,
    sealed,
    wide_paths,
)
from tui.screens.checkpoints import CheckpointsScreen
from tui.screens.config import ConfigScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.folds import FoldsScreen, ResultScreen
from tui.screens.prolong import ProlongScreen
from tui.screens.router import RouterScreen
from tui.screens.tape import TapeScreen

SIZE = (140, 36)
Before = Callable[[Pilot[Any]], Awaitable[None]]


def keys(*pressed: str, until: Callable[[PolicyHarness], bool] = lambda app: True) -> Before:
    """Settle, press keys, then settle until ``until(app)``."""

    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(*pressed)
        await settle(pilot, lambda: until(pilot.app))  # type: ignore[arg-type]

    return run


def test_tape_entries_and_recall_preview(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(sealed(tmp_path / "s"), TapeScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_tape_next_seal_full_view(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(sealed(tmp_path / "s"), TapeScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("down", "down", "f"))


def test_folds_folded_expanded_and_pruned_rows(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), FoldsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("down", "down"))


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_folds_wide_character_paths(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Paths of CJK and emoji characters: at 60 columns clipped from their start to the path column's cells, every
    row as wide as the table."""
    app = PolicyHarness(wide_paths(tmp_path / "s"), FoldsScreen)
    assert snap_compare(app, terminal_size=size, run_before=keys("down"))


@pytest.mark.parametrize("size", [(80, 24), (150, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_folds_full_result(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """The full result view over the Folds screen, its own keys in the footer under it."""
    app = PolicyHarness(demo(tmp_path / "s"), FoldsScreen)
    run = keys("down", "down", "v", until=lambda app: isinstance(app.screen, ResultScreen))
    assert snap_compare(app, terminal_size=size, run_before=run)


def test_folds_resource_backoff(snap_compare: Any, tmp_path: Path) -> None:
    """One resource backed off (2 of 2 folds expanded in full), one counting (1/1 exp), the rest never folded."""
    app = PolicyHarness(backoff(tmp_path / "s"), FoldsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_folds_help_explains_the_columns(snap_compare: Any, tmp_path: Path) -> None:
    """``?`` on the Folds screen: the state, policy and backoff legend above the keys."""
    app = make_app(backoff(tmp_path / "s"))

    async def run(pilot: Pilot[Any]) -> None:
        await settle_app(pilot)
        await pilot.press("o")
        await settle(pilot, lambda: isinstance(pilot.app.screen, FoldsScreen))
        await pilot.press("question_mark")
        await settle_app(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_checkpoints_rewind_preview(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), CheckpointsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_checkpoints_rewind_confirm(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), CheckpointsScreen)
    run = keys("w", until=lambda app: isinstance(app.screen, ConfirmScreen))
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_checkpoints_rewind_rejected(snap_compare: Any, tmp_path: Path) -> None:
    path = demo(tmp_path / "s")
    app = PolicyHarness(path, CheckpointsScreen, follow=True)

    async def run(pilot: Pilot[Any]) -> None:
        await keys("w", "y", until=lambda _: len(read_inbox(path)) == 1)(pilot)
        (request,) = read_inbox(path)
        error = "rewind: the fold region changed during summarization"
        append_events(path, [outcome_event(request, "rejected", error=error)])
        await settle(pilot, lambda: app.live.session.next_seq == len(path.read_bytes().splitlines()) - 1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_checkpoints_long_objective_at_60x20(snap_compare: Any, tmp_path: Path) -> None:
    """A long objective over a twelve-node preview at 60x20: the objective scrolls in its box over the table, which
    keeps the rest of the pane (here scrolled by Tab, Tab, ↓, ↓)."""
    app = PolicyHarness(long_region(tmp_path / "s"), CheckpointsScreen)
    assert snap_compare(app, terminal_size=(60, 20), run_before=keys("tab", "tab", "down", "down"))


def test_router_decisions(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), RouterScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("down", "down"))


def test_prolong_status(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), ProlongScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_prolong_status_off(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(configured(tmp_path / "s", STARTED_WITH), ProlongScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_config_keys_as_the_session_logged_them(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(configured(tmp_path / "s", STARTED_WITH), ConfigScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_config_keys(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_config_inline_validation_error(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    run = keys(
        "e",
        "backspace",
        "minus",
        "1",
        until=lambda app: "✗" in str(app.screen.query_one("#config-check").content),
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_config_diff_before_sending(snap_compare: Any, tmp_path: Path) -> None:
    app = PolicyHarness(demo(tmp_path / "s"), ConfigScreen)
    run = keys("e", "backspace", "4", "enter", until=lambda app: isinstance(app.screen, ConfirmScreen))
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_read_only_dsh_log(snap_compare: Any) -> None:
    app = PolicyHarness(FIXTURES / "tool-call-turn.session.jsonl", FoldsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_read_only_dsh_checkpoints(snap_compare: Any) -> None:
    app = PolicyHarness(FIXTURES / "bash-spill.session.jsonl", CheckpointsScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("m"))


def test_read_only_dsh_config_shows_what_the_log_records(snap_compare: Any) -> None:
    app = PolicyHarness(FIXTURES / "compaction-recovery.session.jsonl", ConfigScreen)
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("e"))
