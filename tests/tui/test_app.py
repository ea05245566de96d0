"""The app shell and the watch command: targets, the fleet of a root, clipboard through tmux, CLI errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.events import MouseScrollUp

from core.shared.errors import TapedeckError
from core.shared.text import quoted_path
from tests.cli.test_sessions_cli import one_stale_copy
from tests.tui.logs import Log, policy_log
from tests.tui.pilot import main_screen, make_app, settle, settled_main_screen, until
from tui import cli
from tui.app import is_session_log_target, tmux_load_buffer
from tui.cli_watch import watch_target
from tui.screens.fleet import FleetScreen
from tui.screens.main import MainScreen


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    for name, mtime in (("old-1", 1_000_000), ("new-2", 2_000_000)):
        log = Log({**policy_log().header, "id": name})
        log.turn(1, f"prompt of {name}", "ok")
        path = log.write(root / "--w--" / name / "session.jsonl")
        os.utime(path, (mtime, mtime))
    return root


def test_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_root(tmp_path)
    assert not is_session_log_target(root)
    assert is_session_log_target(root / "--w--" / "new-2")
    assert is_session_log_target(root / "--w--" / "new-2" / "session.jsonl")
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path))
    assert watch_target(None) == root / "--w--" / "new-2" / "session.jsonl"  # the newest session
    assert watch_target(str(root)) == root
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "empty"))
    with pytest.raises(Exception, match="no sessions under"):
        watch_target(None)
    # the default root named as every message names a path (as `tapedeck sessions` names it): its ESC and newline
    # reached stderr raw
    home = tmp_path / "td\x1b]2;x\x07\nhome"
    monkeypatch.setenv("TAPEDECK_HOME", str(home))
    with pytest.raises(TapedeckError) as refused:
        watch_target(None)
    assert str(refused.value).startswith(f"no sessions under {quoted_path(home / 'sessions')}; "), refused.value
    empty_dir = tmp_path / "emptydir"
    empty_dir.mkdir()
    assert watch_target(str(empty_dir)) == empty_dir  # a (still empty) sessions root opens the fleet


def test_cli_errors_and_core_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixtures_dir: Path
) -> None:
    assert cli.main(["watch", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    zero = tmp_path / "zero.jsonl"
    zero.write_bytes(b"\x00\x01")
    assert cli.main(["watch", str(zero)]) == 2
    assert "line 1 is not valid JSON" in capsys.readouterr().err
    assert cli.main(["inspect", str(fixtures_dir / "multi-turn.session.jsonl"), "--json"]) == 0
    assert '"surface"' in capsys.readouterr().out


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[str]:
    """A private tmux server; yields the ``TMUX`` value a client inside it would see."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = tmp_path / "tmux.sock"
    subprocess.run(["tmux", "-S", str(socket), "new-session", "-d", "-s", "copy"], check=True)
    try:
        yield f"{socket},{os.getpid()},0"
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False)


def _tmux_buffer(tmux: str) -> str:
    socket = tmux.split(",")[0]
    return subprocess.run(["tmux", "-S", socket, "show-buffer"], capture_output=True, text=True).stdout


@pytest.mark.anyio
async def test_copy_inside_tmux_reaches_tmux_and_its_clipboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmux_server: str
) -> None:
    monkeypatch.setenv("TMUX", tmux_server)
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        app.copy_to_clipboard("copied · ünïcode")
        await settle(pilot)
        assert app.clipboard == "copied · ünïcode"
        # a tmux that does not take it says so in a sentence, as every toast does (it was lowercase, without a stop)
        monkeypatch.setenv("TMUX", f"{tmp_path / 'no-server.sock'},1,0")  # no server listens there
        app.copy_to_clipboard("lost")
        await until(pilot, lambda: any(n.severity == "warning" for n in app._notifications))
        (said,) = [n.message for n in app._notifications if n.severity == "warning"]
        assert said.startswith("The copy did not reach tmux: ") and "no-server.sock" in said and said.endswith("."), said
    assert _tmux_buffer(tmux_server) == "copied · ünïcode"


def test_no_follow_on_a_sessions_root_is_refused_with_the_one_shot_listing_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_root(tmp_path)
    for paths in ([str(root)], [str(root / "--w--" / "old-1"), str(root / "--w--" / "new-2")]):
        assert cli.main(["watch", "--no-follow", *paths]) == 2
        err = capsys.readouterr().err
        assert "--no-follow" in err and "fleet table" in err and "tapedeck sessions" in err


def test_tmux_load_buffer_says_what_went_wrong(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("TMUX", f"{tmp_path / 'no-server.sock'},1,0")  # no server listens there
    problem = tmux_load_buffer("x")
    assert problem is not None and "no-server.sock" in problem
    monkeypatch.setenv("PATH", str(tmp_path))  # and now no tmux binary at all
    assert tmux_load_buffer("x") == "tmux is not on PATH"


@pytest.mark.anyio
async def test_the_fleet_of_a_root_opens_a_session_and_comes_back(tmp_path: Path) -> None:
    app = make_app(make_root(tmp_path))
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        assert isinstance(app.screen, FleetScreen)
        assert app.screen.shown == [
            str(tmp_path / "sessions" / "--w--" / n / "session.jsonl") for n in ("new-2", "old-1")
        ]
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(pilot)
        assert app.live is not None and app.live.session.id == "old-1"
        await pilot.press("escape")
        assert isinstance(app.screen, FleetScreen) and app.live is None


@pytest.mark.anyio
@pytest.mark.parametrize("live", ["session.jsonl", "session.jsonl.zstd"])
async def test_a_session_directory_holding_both_logs_opens_the_one_written_last(tmp_path: Path, live: str) -> None:
    """The fleet lists it once, by the log its session writes, and the view of the directory reads that log, not
    the stale copy beside it."""
    sdir = one_stale_copy(tmp_path, live)
    app = make_app(sdir.parents[1])
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        assert isinstance(app.screen, FleetScreen)
        assert [path for path in app.screen.shown if "other-2" in path] == [str(sdir / live)]
    app = make_app(sdir)
    async with app.run_test(size=(150, 40)) as pilot:
        await settled_main_screen(pilot)
        assert app.live is not None and app.live.path == sdir / live and len(app.live.session.turns) == 2


@pytest.mark.anyio
async def test_end_key_resumes_follow(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        await pilot.press("home")
        assert screen.events.cursor == 0 and not screen.events.following
        await pilot.press("end")
        assert screen.events.following and screen.events.cursor == len(screen.events.view) - 1


@pytest.mark.anyio
async def test_mouse_click_selects_and_wheel_pauses_follow(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await settled_main_screen(pilot)
        events = screen.events
        top = int(events.scroll_y)
        await pilot.click(events, offset=(10, 3))  # the border is row 0, so content row 2
        assert events.cursor == top + 2 and not events.following
        await pilot.press("end")
        assert events.following
        events.post_message(MouseScrollUp(events, 10, 3, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not events.following


@pytest.mark.anyio
async def test_long_lines_of_read_back_logs_are_not_decoded_for_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.live
    import tui.widgets.event_list as event_list

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)  # read back from the file, as a huge log would be
    monkeypatch.setattr(event_list, "HUGE_LINE_BYTES", 400)
    log = policy_log()
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and app.live is not None and app.live.lines is not None
        long_result = screen.events.cache.get(6)  # turn 1's 480-char tool result: its line is over 400 bytes
        assert long_result is not None and long_result.summary.endswith(
            "tool/result line: select it to read it)"
        )
        short = screen.events.cache.get(18)
        assert short is not None and short.summary == "3 passed"


@pytest.mark.anyio
async def test_alerts_are_marked_and_entered_without_the_ui_thread_resolving_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board resolved each alert's log path on the UI thread (to key its row marks), and ``enter`` on the
    Alerts screen resolved the open log's and the alert's at each press: the workers that read the logs resolve
    them now, and the alert still marks its event and ``enter`` still goes to it."""
    import threading

    from tests.snapshot.test_sizes import alerting_app
    from tui.screens.alerts import AlertsScreen

    on_ui: list[str] = []
    resolve = Path.resolve

    def recorded(self: Path, strict: bool = False) -> Path:
        if threading.current_thread() is threading.main_thread() and str(self).startswith(str(tmp_path)):
            on_ui.append(str(self))
        return resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", recorded)
    app = alerting_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settled_main_screen(pilot)
        await until(pilot, lambda: bool(app.board.alerts and app.alert_marks))
        [alert] = app.board.alerts
        assert app.alert_marks == {alert.seq: (f"⚑ {alert.cause}",)}
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        await settle(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert not any("another session" in n.message for n in app._notifications)
    assert on_ui == []


@pytest.mark.anyio
@pytest.mark.parametrize("target_name", ["tapedeck-test.invalid:session.jsonl", "tapedeck-test.invalid:logs"])
async def test_a_remote_target_is_told_from_a_local_file_off_the_ui_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target_name: str
) -> None:
    """Whether ``host:PATH`` names a remote log or root asks the disk (a local file of that name keeps it local):
    the app asked it again on the UI thread as it mounted, to start the log's alert engine or the fleet's feed;
    it is asked as the app is built, or by the fleet feed's worker, now. (The remote machine is never reached:
    the test ends once the app mounted.)"""
    import threading

    from core.remote import target

    monkeypatch.chdir(tmp_path)  # no local file named like the target
    app = make_app(Path(target_name))
    on_ui: list[str] = []
    exists = target.os.path.exists

    def recorded(path: str) -> bool:
        if threading.current_thread() is threading.main_thread() and path == str(app.target):
            on_ui.append(path)
        return exists(path)

    monkeypatch.setattr(target.os.path, "exists", recorded)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert on_ui == []
