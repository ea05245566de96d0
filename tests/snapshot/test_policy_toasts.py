"""Snapshots of the policy screens with toasts up: over the main table's rows, clear of the side pane, the outcome
panel and the footer (tests/tui/test_policy_toasts.py checks the regions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from tests.tui.pilot import make_app, quiet, settled_main_screen, until
from tests.tui.screens_policy.harness import settle
from tests.tui.screens_policy.scenarios import demo
from tests.tui.test_toasts import shown
from tui.screens.confirm import ConfirmScreen
from tui.screens.policy_screen import PolicyScreen

SIZES = [(80, 24), (120, 40)]


async def toasts_after(pilot: Pilot[Any], screen_key: str, *pressed: str) -> None:
    """Open the policy screen ``screen_key`` names, press ``pressed``, then raise a request's answer and an alert and
    wait until they are drawn."""
    app = pilot.app
    await settled_main_screen(pilot)
    await pilot.press(screen_key)
    await settle(pilot, lambda: isinstance(app.screen, PolicyScreen))
    await pilot.press(*pressed)
    await settle(pilot)
    app.notify("Checkpoint: find the bug.", title="Applied", timeout=60)
    app.notify("cache hit rate fell to 12% (seq 30, this session)", title="Alert: cache", severity="warning",
               timeout=60)  # fmt: skip
    await until(pilot, lambda: len(shown(list(app.screen.query(Toast)))) >= 1)
    await quiet(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_config_toasts_while_typing_a_value(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Config with a new value typed: the toasts over the key table's last rows, the value box and its check in
    sight."""
    app = make_app(demo(tmp_path / "s"), follow=True)

    async def run(pilot: Pilot[Any]) -> None:
        await toasts_after(pilot, "C", "e", "backspace", "4")
        assert "✓" in str(pilot.app.screen.query_one("#config-check").content)

    assert snap_compare(app, terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_folds_toasts_beside_the_expand_confirm(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """Folds with the expand confirm up: the toasts over the table's rows beside the dialog, the outcome panel and
    the footer in sight."""
    app = make_app(demo(tmp_path / "s"), follow=True)

    async def run(pilot: Pilot[Any]) -> None:
        await toasts_after(pilot, "o", "down", "down", "x")
        assert isinstance(pilot.app.screen, ConfirmScreen)

    assert snap_compare(app, terminal_size=size, run_before=run)
