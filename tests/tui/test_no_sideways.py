"""At 60x20 and 80x24 no screen scrolls sideways: every table fits its width, what it leaves out or cuts shown whole
beside it (the Router screen's record, the editor of a config value, a mark's objective), and the other widgets
wrap or cut their lines. The snapshots of these screens at 60x20 are in tests/snapshot/test_sizes.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

from tests.fleet.test_fleet_tui import _app as fleet_app
from tests.fleet.test_fleet_tui import _loaded, _root
from tests.tui.logs import HEADER, Log, append, policy_log, release_hosts
from tests.tui.pilot import make_app, quiet, settle, until
from tests.tui.test_live_bad_input import bad_events
from tui.widgets.footer import PriorityFooter

pytestmark = pytest.mark.anyio
SIZES = [(60, 20), (80, 24)]
# the keys that open each screen from the main view
KEYS = {"main": (), "surface": ("s",), "tape": ("t",), "folds": ("o",), "checkpoints": ("c",), "router": ("r",),
        "prolong": ("p",), "config": ("C",), "diagnostics": ("D",), "request": ("R",), "alerts": ("A",),
        "help": ("question_mark",), "filter": ("f",)}  # fmt: skip


def turns_to_append(tmp_path: Path) -> tuple[Log, Path, int]:
    """The demo log written with three turns, and five more turns kept in ``log`` for ``append`` from ``start``."""
    log = policy_log()
    path = log.write(tmp_path / "demo" / "session.jsonl")
    start = len(log.events)
    for turn in range(4, 9):
        log.turn(turn, f"step {turn}", "ok")
    return log, path, start


async def open_screen(pilot: Pilot[Any], screen: str) -> None:
    """Press the keys that open ``screen`` from the main view (``KEYS``), settling after each."""
    for key in KEYS[screen]:
        await pilot.press(key)
        await settle(pilot)


async def settled_sideways(pilot: Pilot[Any]) -> list[str]:
    """``sideways`` once the screen on top is quiet (``quiet``): checked before that, a table still at its old
    columns, its refit to the width due after a refresh, was taken for one too wide."""
    await quiet(pilot)
    return sideways(pilot.app)


def sideways(app: App[Any]) -> list[str]:
    """The widgets of the screen on top that scroll sideways, and by how much."""
    return [f"{type(w).__name__}#{w.id}: {w.max_scroll_x} cells past {w.size.width}"
            for w in app.screen.query("*")
            if isinstance(w, Widget) and w.display and w.allow_horizontal_scroll and w.max_scroll_x > 0]  # fmt: skip


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(KEYS))
async def test_no_screen_scrolls_sideways(tmp_path: Path, screen: str, size: tuple[int, int]) -> None:
    app = make_app(policy_log().write(tmp_path / "demo" / "session.jsonl"))
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await open_screen(pilot, screen)
            assert await settled_sideways(pilot) == []
    finally:
        release_hosts()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_event_list_does_not_scroll_sideways_after_an_append(tmp_path: Path, size: tuple[int, int]) -> None:
    """The list gave itself a virtual width of its whole content width, the vertical scrollbar's two cells included:
    once rows came after the layout had settled (an append while following, or a slow load), it could be scrolled
    two cells sideways past its rows. Its rows are always cut to the width it shows, so it has no width to scroll."""
    log, path, start = turns_to_append(tmp_path)
    app = make_app(path, follow=True)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            events = app.screen.query_one("#events")
            rows = events.virtual_size.height
            append(path, log, start)
            await until(pilot, lambda: events.virtual_size.height > rows)
            assert await settled_sideways(pilot) == []
    finally:
        release_hosts()


def painted_footers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The footers wider than their screen in every frame painted from now on: Textual's screen paints through
    ``_compositor_refresh``, which is wrapped to look at the footers first (and then paint as it would)."""
    wide: list[str] = []
    paint = Screen._compositor_refresh

    def looked_at(screen: Screen[Any]) -> None:
        wide.extend(f"{type(screen).__name__}: {footer.max_scroll_x} cells past {footer.size.width}"
                    for footer in screen.query(PriorityFooter) if footer.max_scroll_x > 0)  # fmt: skip
        paint(screen)

    monkeypatch.setattr(Screen, "_compositor_refresh", looked_at)
    return wide


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(KEYS))
async def test_no_frame_shows_a_footer_wider_than_its_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, screen: str, size: tuple[int, int]
) -> None:
    """The footer fitted its keys to the width only after the screen was laid out with all of them: each time the
    bindings changed (the app starting, a screen opening, an append changing what a key does), one frame showed
    every key, the last cut at the edge, and the footer could be scrolled sideways until the fit came (the test
    above saw it once, at 60x20, when a loaded machine ran it just then). Now no painted frame has one."""
    log, path, start = turns_to_append(tmp_path)
    wide = painted_footers(monkeypatch)
    app = make_app(path, follow=True)
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await open_screen(pilot, screen)
            append(path, log, start)
            await until(pilot, lambda: app.live is not None and app.live.session.next_seq == len(log.events))
            await quiet(pilot)
            assert wide == []
    finally:
        release_hosts()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_fleet_does_not_scroll_sideways(tmp_path: Path, size: tuple[int, int]) -> None:
    app = fleet_app([_root(tmp_path)])
    try:
        async with app.run_test(size=size) as pilot:
            await _loaded(pilot, 3)
            await settle(pilot)
            assert await settled_sideways(pilot) == []
    finally:
        release_hosts()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_diagnostics_of_a_damaged_log_do_not_scroll_sideways(tmp_path: Path, size: tuple[int, int]) -> None:
    """A diagnostic's code is as wide as ``header-relative-cwd``: at 60 columns the table kept its message 20 cells
    wide beside the four other columns and scrolled 8 cells sideways, the right of every wrapped message line past
    the edge; the offset (then the seq) is left out while the message would get less than 20 cells."""
    log = policy_log()
    log.header = {**HEADER, "cwd": "work/demo"}  # a relative cwd: the header's own warning
    bad_events(log)
    app = make_app(log.write(tmp_path / "demo" / "session.jsonl"))
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("D")
            await settle(pilot)
            table = app.screen.query_one("#diagnostics-table")
            assert table.row_count >= 5  # type: ignore[attr-defined]
            assert await settled_sideways(pilot) == []
    finally:
        release_hosts()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_alerts_screen_with_an_alert_does_not_scroll_sideways(tmp_path: Path, size: tuple[int, int]) -> None:
    """An alert's reason ('2 tool calls failed in a row (seq 7, crafted-)') made the alerts table 96 cells wide, so it
    scrolled sideways at 80 columns; the reason is cut to the room the other columns leave (the line under the table
    gives the selected one whole)."""
    from core.control.config import validate_config
    from tests.alerts.crafted import HEADER as CRAFTED
    from tests.alerts.crafted import Log as Crafted
    from tests.tui.pilot import NO_KEYMAP
    from tui.app import TapedeckApp
    from tui.screens.alerts import AlertsScreen

    log = Crafted()
    log.turn(1)
    log.result(True)
    log.result(True)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [CRAFTED, *log.events]))
    config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 2}}})
    app = TapedeckApp(path, follow=False, interval=0.02, keymap_file=NO_KEYMAP, config=config)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: len(app.board.alerts) == 1)
        await settle(pilot)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        assert await settled_sideways(pilot) == []
        assert "2 tool calls failed in a row" in str(app.screen.query_one("#alerts-selected").render())
