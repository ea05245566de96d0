"""The fleet table of one sessions root (``tapedeck watch ROOT``) follows it: new sessions and new turns show
without a key; a directory it cannot read is noted."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import DataTable

import core.log.sessions
import tui.app
from core.fleet.row import COLUMNS
from core.shared.text import quoted_path
from tests.tui.logs import Log, policy_log
from tests.tui.pilot import NO_KEYMAP, QUIET, make_app, settle, until
from tui.app import TapedeckApp
from tui.screens.fleet import FleetScreen

WAIT = 20.0  # generous: the watcher debounces and the machine is shared


@pytest.fixture(autouse=True)
def _quick_rescans(monkeypatch: pytest.MonkeyPatch) -> None:
    """The roots listed again every 0.2 s, not every 5: a session that comes or goes is seen by the next listing,
    which each test here waits for (five of them spent 5 to 10 s on those waits alone)."""
    monkeypatch.setattr("core.fleet.follow.RESCAN_SECONDS", 0.2)


def _write(root: Path, name: str, turns: int = 1) -> Path:
    log = Log({**policy_log().header, "id": name})
    for n in range(1, turns + 1):
        log.turn(n, f"prompt {n} of {name}", "ok")
    return log.write(root / "--w--" / name / "session.jsonl")


def _cell(screen: FleetScreen, key: str, column: str) -> str:
    return str(screen.query_one(DataTable).get_row(key)[COLUMNS.index(column)])


@pytest.mark.anyio
async def test_a_session_created_after_opening_appears_and_keeps_the_cursor(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    first = _write(root, "first-1")
    os.utime(first, (1_000_000, 1_000_000))
    app = make_app(root)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and screen.shown == [str(first)]
        new = _write(root, "second-2")  # newest: sorts above the one under the cursor
        await until(pilot, lambda: str(new) in screen.shown, timeout=WAIT)
        await settle(pilot)
        table = screen.query_one(DataTable)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == str(first)


@pytest.mark.anyio
async def test_a_growing_session_shows_its_new_turn(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = _write(root, "grow-1")
    app = make_app(root)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and _cell(screen, str(path), "turn").startswith("1")
        _write(root, "grow-1", turns=40)
        await until(pilot, lambda: _cell(screen, str(path), "turn").startswith("40"), timeout=WAIT)


class _StyledBeforehand(TapedeckApp):
    """The app with its stylesheet read up front: once the test drops to ``nobody``, the checkout itself may be
    unreadable (a clone under a 0700 directory), and only the session tree should be refused."""

    CSS_PATH = None
    CSS = (Path(tui.app.__file__).parent / TapedeckApp.CSS_PATH).read_text(encoding="utf-8")  # type: ignore[operator]


@pytest.fixture
def nobody() -> Iterator[int]:
    """The uid to drop to for a read that root would not be refused."""
    if os.geteuid() != 0:
        yield os.geteuid()
        return
    try:
        yield pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("running as root and there is no 'nobody' user to drop privileges to")


@pytest.mark.anyio
async def test_an_unreadable_project_directory_is_noted(nobody: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="tapedeck-fleet-"))  # not under pytest's root-only 0700 tmp dir
    try:
        os.chmod(base, 0o755)
        root = base / "sessions"
        _write(root, "fine-1")
        locked = root / "--locked--"
        locked.mkdir()
        for d in (root, root / "--w--", root / "--w--" / "fine-1"):
            os.chmod(d, 0o755)
        os.chmod(root / "--w--" / "fine-1" / "session.jsonl", 0o644)
        # The same table opened once before the drop loads every module the app and its workers import lazily:
        # `nobody` may not read the interpreter's own library (one under a 0700 /root), as run alone it would.
        warm = _StyledBeforehand(root, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP)
        async with warm.run_test(size=(150, 40)) as pilot:
            await until(pilot, lambda: isinstance(warm.screen, FleetScreen) and warm.screen.loaded)
        os.chmod(locked, 0)
        app = _StyledBeforehand(root, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP)
        os.seteuid(nobody)  # every thread of the process: the scan worker cannot list the locked directory
        try:
            async with app.run_test(size=(150, 40)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
                screen = app.screen
                assert isinstance(screen, FleetScreen) and len(screen.shown) == 1
                status = str(screen.query_one("#fleet-status").render())
                assert f"skipped {locked}" in status and "ermission denied" in status
        finally:
            os.seteuid(os.getuid())
    finally:
        locked = base / "sessions" / "--locked--"
        if locked.exists():
            os.chmod(locked, 0o755)
        shutil.rmtree(base)


@pytest.mark.anyio
async def test_a_session_that_appeared_while_one_was_open_above_the_table_is_listed_on_return(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    first = _write(root, "first-1")
    app = make_app(root)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        fleet = app.screen
        assert isinstance(fleet, FleetScreen)
        await pilot.press("enter")  # open the session: the table is hidden beneath it
        await until(pilot, lambda: app.screen is not fleet)
        await settle(pilot)
        assert not fleet.feed.showing.is_set()  # no rows are posted to a hidden table
        new = _write(root, "second-2")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is fleet)
        await until(pilot, lambda: str(new) in fleet.shown, timeout=WAIT)
        assert str(first) in fleet.shown and fleet.feed.showing.is_set()


@pytest.mark.anyio
async def test_an_empty_root_says_it_has_no_sessions_yet_then_lists_the_first(tmp_path: Path) -> None:
    # a root whose name holds ESC: the title and the status line name it as `tapedeck sessions` does (quoted_path)
    root = tmp_path / "sess\x1bions"
    root.mkdir()
    app = make_app(root)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        status = str(screen.query_one("#fleet-status").render())
        assert f"no sessions under {quoted_path(root)} yet" in status, status
        title = str(screen.query_one("#fleet-title").render())
        assert title.endswith(" · sess\\u001bions"), title
        first = _write(root, "first-1")
        await until(pilot, lambda: screen.shown == [str(first)], timeout=WAIT)
        assert "no sessions" not in str(screen.query_one("#fleet-status").render())


@pytest.mark.anyio
async def test_a_project_directory_given_for_a_root_says_so_and_how_to_open_its_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ROOT/PROJECT given for ROOT showed 'no sessions under … yet' for ever, its session directories right there
    (as `tapedeck sessions` says since 75cda6d). The note is worked out before the app runs: the fleet screen
    listed the roots' trees for it on the UI thread, as the app opened it, where a large root held the first
    paint."""
    project = tmp_path / "sessions" / "--w--"
    _write(tmp_path / "sessions", "first-1")
    on_ui: list[Path] = []
    listing, running = core.log.sessions.session_logs, threading.Event()

    def watched(root: Path) -> list[Path]:
        if threading.current_thread() is threading.main_thread() and running.is_set():
            on_ui.append(root)
        return listing(root)

    monkeypatch.setattr(core.log.sessions, "session_logs", watched)
    app = make_app(project)
    running.set()  # from here on the test's thread is the app's
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and not screen.shown
        status = str(screen.query_one("#fleet-status").render())
        assert "one project's directory" in status and f"tapedeck fleet {tmp_path / 'sessions'}" in status, status
    assert on_ui == []


@pytest.mark.anyio
async def test_a_session_removed_while_the_table_is_open_leaves_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    kept, gone = _write(root, "kept-1"), _write(root, "gone-2")
    app = make_app(root)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.shown) == 2)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        shutil.rmtree(gone.parent)  # the operator cleaned up an old session
        await until(pilot, lambda: screen.shown == [str(kept)], timeout=WAIT)
        assert "1 session," in str(screen.query_one("#fleet-title").render())


@pytest.mark.anyio
async def test_a_log_given_on_its_own_and_removed_is_noted_and_the_other_roots_go_on(tmp_path: Path) -> None:
    """``tapedeck fleet LOG ROOT``: the log removed is a root that cannot be read (its row leaves, the status line
    says why), not an error that stops every later scan: a session new under ROOT still appears."""
    root = tmp_path / "sessions"
    alone = _write(tmp_path / "elsewhere", "alone-1")
    first = _write(root, "first-2")
    app = TapedeckApp(alone, follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP,
                      config=QUIET, fleet_roots=[alone, root])  # fmt: skip
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.shown) == 2)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        shutil.rmtree(alone.parent)
        await until(pilot, lambda: screen.shown == [str(first)], timeout=WAIT)
        new = _write(root, "second-3")
        await until(pilot, lambda: str(new) in screen.shown, timeout=WAIT)
        status = str(screen.query_one("#fleet-status").render())
        assert f"{alone}: no such file or directory" in status, status
        assert not screen.problems, screen.problems


@pytest.mark.anyio
async def test_roots_of_the_same_name_are_told_apart_in_the_title(tmp_path: Path) -> None:
    """``tapedeck fleet a/sessions b/sessions``: the title named both 'sessions'; roots sharing a name are given
    as the operator gave them, a root whose name is its own keeps its name."""
    roots = [tmp_path / "a" / "sessions", tmp_path / "b" / "sessions", tmp_path / "mine"]
    for n, root in enumerate(roots):
        _write(root, f"s-{n}")
    app = TapedeckApp(roots[0], follow=False, interval=0.02, use_watchfiles=False, keymap_file=NO_KEYMAP,
                      config=QUIET, fleet_roots=roots)  # fmt: skip
    async with app.run_test(size=(200, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.shown) == 3)
        title = str(app.screen.query_one("#fleet-title").render())
        assert title.endswith(f"attention · {roots[0]}, {roots[1]}, mine"), title
