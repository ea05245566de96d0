"""Where the toasts sit on the policy screens: over the main table's rows, clear of the side pane (the value the
operator types on Config), the message line, the outcome panel and the footer, also while a dialog is up."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input
from textual.widgets._toast import Toast

from tests.tui.pilot import make_app, quiet, settled_main_screen, until
from tests.tui.screens_policy.harness import settle
from tests.tui.screens_policy.scenarios import demo
from tests.tui.test_toasts import shown
from tui.screens.config import ConfigScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.folds import FoldsScreen
from tui.screens.policy_screen import PolicyScreen
from tui.widgets.footer import PriorityFooter

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (120, 40)]
KEPT = ("#policy-heading", "#policy-message", "#policy-outcomes-box", PriorityFooter)


async def open_screen(pilot: Pilot[None], key: str) -> PolicyScreen:
    """The policy screen ``key`` opens from the main screen, once it shows the log."""
    await settled_main_screen(pilot)
    await pilot.press(key)
    await settle(pilot, lambda: isinstance(pilot.app.screen, PolicyScreen))
    screen = pilot.app.screen
    assert isinstance(screen, PolicyScreen)
    return screen


async def toasts_up(pilot: Pilot[None], screen: Screen[object]) -> list[Toast]:
    """A request's answer, then an alert, raised while ``screen`` is on top: the toasts drawn once they settled."""
    pilot.app.notify("Checkpoint: find the bug.", title="Applied", timeout=60)
    pilot.app.notify("cache hit rate fell to 12% (seq 30, this session)", title="Alert: cache", severity="warning",
                     timeout=60)  # fmt: skip
    await until(pilot, lambda: len(screen.query(Toast)) == 2)
    await quiet(pilot)
    toasts = shown(list(screen.query(Toast)))
    assert toasts, "no toast shown"
    return toasts


def assert_clear(toasts: list[Toast], screen: PolicyScreen, *selectors: object) -> None:
    """No toast covers a widget of ``screen`` that ``selectors`` name (those the screen shows)."""
    for selector in selectors:
        for widget in screen.query(selector):  # type: ignore[arg-type]
            for toast in toasts:
                assert not toast.region.overlaps(widget.region), (selector, toast.region, widget.region)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_config_toasts_leave_the_value_being_typed(tmp_path: Path, size: tuple[int, int]) -> None:
    """The toasts stacked over the side pane, hiding the value box while the operator typed a new value and the
    check under it; they now sit over the key table's rows, clear of the whole side pane."""
    app = make_app(demo(tmp_path / "s"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = await open_screen(pilot, "C")
        assert isinstance(screen, ConfigScreen)
        await pilot.press("e", "backspace", "4")
        await settle(pilot, lambda: "✓" in str(screen.query_one("#config-check").content))
        assert screen.query_one("#config-value", Input).has_focus
        toasts = await toasts_up(pilot, screen)
        table = screen.query_one("#config-keys").region
        for toast in toasts:
            assert table.contains_region(toast.region), (toast.region, table)
        assert_clear(toasts, screen, "#config-side", *KEPT)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_folds_toasts_leave_the_outcomes_while_a_dialog_is_up(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """With the expand confirm up, the toasts stacked in the rows under its box, over the outcome panel and the
    footer of the Folds screen beneath; they now sit over the table's rows beside the box."""
    app = make_app(demo(tmp_path / "s"), follow=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        folds = await open_screen(pilot, "o")
        assert isinstance(folds, FoldsScreen)
        await pilot.press("down", "down", "x")
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        toasts = await toasts_up(pilot, dialog)
        table = folds.query_one("#folds-table").region
        for toast in toasts:
            assert table.contains_region(toast.region), (toast.region, table)
        assert_clear(toasts, folds, "#folds-selected-box", "#folds-totals", *KEPT)
        assert_clear(toasts, dialog, ".policy-dialog-box")  # type: ignore[arg-type]
