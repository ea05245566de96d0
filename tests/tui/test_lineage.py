"""Parent and child: from a subagent spawn row into the child session, and from the child back to its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.log.lineage import is_spawn
from tests.core.test_lineage import CHILD_ID, PARENT_ID, lay_out
from tests.tui.pilot import main_screen, make_app, settle, settled_main_screen, until
from tui.screens.main import MainScreen
from tui.widgets.header import SessionHeader

pytestmark = pytest.mark.anyio


def header_text(app) -> str:  # type: ignore[no-untyped-def]
    screen = main_screen(app)
    assert screen is not None
    return str(screen.query_one(SessionHeader).render())


async def test_spawn_row_opens_child_and_child_goes_back_to_parent(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, child = lay_out(fixtures_dir, tmp_path)
    app = make_app(parent)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and app.live is not None
        assert "child of" not in header_text(app)
        live = app.live
        spawn = next(s for s in live.session.seqs_of(["tool/call"]) if is_spawn(live.event(s)))
        assert screen.events.go_seq(spawn)
        await pilot.press("J")
        await until(pilot, lambda: app.live is not None and app.live.path == child)
        await settle(pilot)
        assert f"child of {PARENT_ID}" in header_text(app)
        assert sum(isinstance(s, MainScreen) for s in app.screen_stack) == 1  # switched, not stacked
        await pilot.press("u")
        await until(pilot, lambda: app.live is not None and app.live.path == parent)
        await settle(pilot)
        assert "child of" not in header_text(app)
        assert app.live.session.id == PARENT_ID


async def test_open_child_on_an_ordinary_row_says_so(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, _child = lay_out(fixtures_dir, tmp_path)
    app = make_app(parent)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        screen.events.go_seq(0)
        await pilot.press("J")
        await until(pilot, lambda: any("not a subagent spawn" in str(n.message) for n in app._notifications))
        assert app.live is not None and app.live.path == parent
        await pilot.press("u")
        await until(pilot, lambda: any("no parent" in str(n.message) for n in app._notifications))
        assert CHILD_ID not in str(app.live.path)
