"""The app shell and the watch command: targets, the browser, clipboard through tmux, CLI errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.events import MouseScrollUp

from tests.tui.logs import Log, policy_log
from tests.tui.pilot import main_screen, make_app, settle, until
from tui import cli
from tui.app import is_session_log_target, tmux_wrap
from tui.cli_watch import watch_target
from tui.screens.browser import BrowserScreen
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
    empty_dir = tmp_path / "emptydir"
    empty_dir.mkdir()
    assert watch_target(str(empty_dir)) == empty_dir  # a (still empty) sessions root opens the browser


def test_cli_errors_and_core_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixtures_dir: Path
) -> None:
    assert cli.main(["watch", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    zero = tmp_path / "zero.jsonl"
    zero.write_bytes(b"\x00\x01")
    assert cli.main(["watch", str(zero)]) == 2
    assert "not a DSH session log" in capsys.readouterr().err
    assert cli.main(["inspect", str(fixtures_dir / "multi-turn.session.jsonl"), "--json"]) == 0
    assert '"surface"' in capsys.readouterr().out


def test_tmux_wrap() -> None:
    assert tmux_wrap("\x1b]52;c;eA==\a") == "\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\"


@pytest.mark.anyio
async def test_copy_inside_tmux_uses_passthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    app = make_app(policy_log().write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        written: list[str] = []
        monkeypatch.setattr(app._driver, "write", written.append)  # type: ignore[union-attr]
        app.copy_to_clipboard("hi")
        assert written == [tmux_wrap("\x1b]52;c;aGk=\a")] and app.clipboard == "hi"


@pytest.mark.anyio
async def test_browser_opens_a_session_and_comes_back(tmp_path: Path) -> None:
    app = make_app(make_root(tmp_path))
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert list(app.screen.paths) == [
            str(tmp_path / "sessions" / "--w--" / n / "session.jsonl") for n in ("new-2", "old-1")
        ]
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(pilot)
        assert app.live is not None and app.live.session.id == "old-1"
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen) and app.live is None


@pytest.mark.anyio
async def test_end_key_resumes_follow(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None
        await pilot.press("home")
        assert screen.events.cursor == 0 and not screen.events.following
        await pilot.press("end")
        assert screen.events.following and screen.events.cursor == len(screen.events.view) - 1


@pytest.mark.anyio
async def test_mouse_click_selects_and_wheel_pauses_follow(tmp_path: Path) -> None:
    app = make_app(policy_log().write(tmp_path / "session.jsonl"), follow=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None
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
async def test_long_lines_of_index_backed_logs_are_not_decoded_for_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.live
    import tui.widgets.event_list as event_list

    monkeypatch.setattr(tui.live, "RETAIN_BYTES", 1)  # index-backed, as a huge log would be
    monkeypatch.setattr(event_list, "HUGE_LINE_BYTES", 400)
    log = policy_log()
    app = make_app(log.write(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None and app.live is not None and app.live.index is not None
        long_result = screen.events.cache.get(6)  # turn 1's 480-char tool result: its line is over 400 bytes
        assert long_result is not None and long_result.summary.endswith(
            "tool/result line: select it to read it)"
        )
        short = screen.events.cache.get(18)
        assert short is not None and short.summary == "3 passed"
