"""Parent and child: from a subagent spawn row into the child session, and from the child back to its parent."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.log.lineage import is_spawn
from tests.conftest import no_read_file
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
        if (unreadable := no_read_file()) is not None:  # a child's log it cannot read is named, in the listing's words
            child.unlink()
            child.symlink_to(unreadable)
            screen = main_screen(app)
            assert screen is not None and screen.events.go_seq(spawn)
            await pilot.press("J")
            note = f"skipped {child}: cannot read (Permission denied)"
            await until(pilot, lambda: any(note in str(n.message) for n in app._notifications))
            assert [str(n.message) for n in app._notifications if note in str(n.message)] == [
                f"No child session for this spawn under this sessions root; {note}."]


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


async def test_open_child_says_why_when_the_log_cannot_be_read(
    fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``J`` reads the spawn calls back from the log (those off the surface are not kept in memory); when that read
    failed (a disk's I/O error, a log gone unreadable) the worker's error vanished: no child, no word. The
    operator is told what went wrong."""
    import errno

    import tui.live
    from core.log.linestore import LineStore

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)  # events are read back from the file on demand …
    monkeypatch.setattr("core.log.linestore.CACHE_LINES", 1)  # … and hardly any stay decoded in memory
    parent, _child = lay_out(fixtures_dir, tmp_path)
    app = make_app(parent)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        live = app.live
        assert live is not None
        spawn = next(s for s in live.session.seqs_of(["tool/call"]) if is_spawn(live.event(s)))
        result = next(c.result_seq for c in live.session.tool_calls.values() if c.call_seq == spawn)
        assert result is not None and screen.events.go_seq(result)  # its result's row: the call is not decoded
        await settle(pilot)

        def unreadable(*_: object) -> bytes:
            raise OSError(errno.EIO, "Input/output error", str(parent))

        monkeypatch.setattr(LineStore, "_raw", unreadable)
        await pilot.press("J")
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        (note,) = [n for n in app._notifications if n.severity == "error"]
        assert "Input/output error" in note.message, note.message
        assert app.is_running and app.live.path == parent
