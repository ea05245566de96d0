"""End to end: the real ``tapedeck watch`` console script in a detached tmux session, driven with send-keys."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui.logs import Log, append, policy_log

TAPEDECK = Path(sys.prefix) / "bin" / "tapedeck"
pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None or not TAPEDECK.exists(),
    reason="needs tmux and the installed tapedeck console script",
)


ENDED = "[tmux pane: command ended, status "  # what a pane's shell prints when its command ends, then its status


class Tmux:
    """One detached tmux session running a command, on a tmux server of its own.

    A private socket (``-S``, removed at the end) keeps the test away from the user's tmux server and from other runs: a shared
    server that is shutting down when a session starts fails it with "server exited unexpectedly".
    """

    def __init__(
        self, name: str, command: list[str], env: dict[str, str], size: tuple[int, int] = (150, 45)
    ) -> None:
        self.name = name
        self.socket = str(Path(tempfile.gettempdir()) / f"tapedeck-e2e-{os.getpid()}-{name}.sock")
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        line = " ".join(command)
        # COLUMNS/LINES inherited from the test runner would override the pane's real size. The pane's shell outlives
        # the command: it prints ``ENDED`` and its status, then sleeps until the session is killed. A pane whose
        # command ended was tmux's sign of the end before, but tmux may close a pty before its last output reached
        # it (5 of 200 quick panes lost their line at load 10): the mark comes after every byte the command wrote.
        shell = f"env -u COLUMNS -u LINES {exports} {line}; printf '\\n{ENDED}%d\\n' $?; exec sleep 2147483647"
        self._run("new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), shell)

    def _run(self, *args: str) -> str:
        """Run tmux with ``args`` on this session's server; its output."""
        return subprocess.run(["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True).stdout

    def screen(self) -> str:
        """The visible text."""
        return self._run("capture-pane", "-p", "-t", self.name)

    def exited(self) -> bool:
        """Whether the command in the pane has ended (its shell printed ``ENDED``)."""
        return ENDED in self.screen()

    def keys(self, *keys: str) -> None:
        """Send keys (tmux key names)."""
        self._run("send-keys", "-t", self.name, *keys)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 60.0) -> str:
        """Poll the screen until ``predicate`` holds; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if ENDED in text:  # every byte the command wrote is on the screen before the mark
                raise AssertionError(f"the command ended before the screen showed {what}:\n{text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"screen never showed {what}:\n{text}")
            time.sleep(0.05)

    def kill(self) -> None:
        """End the session and its server (the pane's command gets SIGHUP, as when a terminal closes)."""
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)
        Path(self.socket).unlink(missing_ok=True)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., Tmux]]:
    sessions: list[Tmux] = []
    env = {"TAPEDECK_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}

    def start(*args: str, size: tuple[int, int] = (150, 45)) -> Tmux:
        session = Tmux(f"tapedeck-e2e-{os.getpid()}-{len(sessions)}", [str(TAPEDECK), *args], env, size)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.kill()


def test_wait_for_reads_the_last_screen_of_a_command_that_ends_at_once() -> None:
    # a command that ends at once took its session and tmux's server with it before remain-on-exit held its pane,
    # and with it held, tmux could close the pane's pty before the command's one line had reached it (a dead pane,
    # empty but for tmux's own line: 5 of 200 at load 10); the pane's shell now outlives the command
    for n in range(20):
        pane = Tmux(f"tapedeck-e2e-{os.getpid()}-quick-{n}", ["printf", "'ready\\n'"], {})
        try:
            assert "ready" in pane.wait_for(lambda s: "ready" in s and ENDED in s, "its one line and its end")
        finally:
            pane.kill()


@pytest.mark.parametrize("size", [(150, 45), (80, 24)], ids=["150x45", "80x24"])
def test_fixture_navigation_surface_search_help_and_quit(
    tmux: Callable[..., Tmux], fixtures_dir: Path, size: tuple[int, int]
) -> None:
    pane = tmux("watch", str(fixtures_dir / "tool-call-turn.session.jsonl"), "--no-follow", size=size)
    # capture-pane can catch a frame half written (the header new, the body not yet): wait for the whole screen
    pane.wait_for(lambda s: all(m in s for m in ("index ready", "read-only", "FULL LOG")), "the loaded screen")
    pane.keys("g")
    pane.wait_for(lambda s: "row 1/19" in s, "the cursor on the first row")  # 104 events, streams as one row each
    pane.keys("s")
    pane.wait_for(lambda s: "SURFACE" in s and "row 1/5" in s, "the surface view on its first row")
    pane.keys("s")
    pane.wait_for(lambda s: "FULL LOG" in s, "the full log again")
    pane.keys("/")
    # keys typed before the search bar has focus would go to the list
    pane.wait_for(lambda s: "Enter to search" in s, "the search bar")
    pane.keys("SNAPSHOT_OK", "Enter")  # Enter closes the bar and jumps to the first match
    found = re.compile(r"(\d+)/(\d+) matches for 'SNAPSHOT_OK'")
    first = found.search(pane.wait_for(lambda s: found.search(s) is not None, "a match selected"))
    assert first is not None and "Enter to search" not in pane.screen()
    pane.keys("n")  # n works at once, no Escape needed
    step = f"{int(first[1]) % int(first[2]) + 1}/{first[2]} matches"
    pane.wait_for(lambda s: step in s, "the next match selected")
    pane.wait_for(lambda s: "? Help" in s and "q Quit" in s, "the footer")  # first in the footer at any width
    pane.keys("?")
    pane.wait_for(lambda s: "what the columns mean" in s, "the help screen (legend first)")
    pane.keys("Escape")
    pane.wait_for(lambda s: "what the columns mean" not in s and "FULL LOG" in s, "the main screen again")
    pane.keys("q")
    pane.wait_for(lambda s: "index ready" not in s, "the app to exit")


def test_live_log_appends_show_and_truncation_resyncs(tmux: Callable[..., Tmux], tmp_path: Path) -> None:
    log = policy_log()
    path = tmp_path / "live" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(log.lines([log.header, *log.events[:12]]))
    pane = tmux("watch", str(path), "--interval", "0.05")
    text = pane.wait_for(lambda s: "index ready" in s and "following" in s, "the followed log")
    assert "read-only" not in text  # a tapedeck host wrote this log

    append(path, log, 12)
    pane.wait_for(lambda s: "fix the failure" in s and "37 events" in s, "the appended turn")

    more = Log()
    more.events = list(log.events)
    more.add(
        {
            "type": "user/message",
            "data": {"id": "op", "role": "user", "content": [{"type": "text", "text": "E2E-MARK-7f3a"}],
                     "source": {"kind": "user"}},
            "surfaceOp": "append",
        }
    )  # fmt: skip
    append(path, more, len(log.events))
    pane.wait_for(lambda s: "E2E-MARK-7f3a" in s, "the marked event")

    pane.keys("g")  # scrolled away: follow pauses and new rows are counted
    pane.wait_for(lambda s: "scroll lock" in s, "follow paused")
    more.turn(4, "later prompt", "later output")
    append(path, more, len(log.events) + 1)
    pane.wait_for(lambda s: "scroll lock +" in s and "new" in s, "the new-rows counter")
    pane.keys("F")
    pane.wait_for(lambda s: "following" in s and "later output" in s, "follow resumed at the end")

    path.write_bytes(log.lines([log.header, *log.events[:5]]))
    pane.wait_for(lambda s: "re-synced" in s and "5 events" in s, "the truncation notice")


def test_watch_reports_bad_paths_without_starting(tmp_path: Path) -> None:
    missing = subprocess.run([str(TAPEDECK), "watch", str(tmp_path / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a log\n")
    wrong = subprocess.run([str(TAPEDECK), "watch", str(bad)], capture_output=True, text=True)
    assert wrong.returncode == 2 and "line 1 is not valid JSON" in wrong.stderr
    interval = subprocess.run(
        [str(TAPEDECK), "watch", str(bad), "--interval", "0"], capture_output=True, text=True
    )
    assert interval.returncode == 2 and "--interval must be a positive" in interval.stderr


@pytest.mark.parametrize("command", ["watch", "fleet"])
def test_a_tui_told_to_end_gives_the_terminal_back(
    tmux: Callable[..., Tmux], fixtures_dir: Path, tmp_path: Path, command: str
) -> None:
    """SIGTERM (``kill``, a service manager's stop) ended ``watch`` and ``fleet`` where they stood, leaving the
    terminal on the TUI's screen (the alternate screen, mouse reporting on); they quit as ``q`` does now, and exit
    143, as the demo does."""
    log = fixtures_dir / "tool-call-turn.session.jsonl"
    if command == "watch":
        args, loaded = ["watch", str(log), "--no-follow"], "index ready"
    else:
        (tmp_path / "root" / "project" / "session").mkdir(parents=True)
        shutil.copy(log, tmp_path / "root" / "project" / "session" / "session.jsonl")
        args, loaded = ["fleet", str(tmp_path / "root")], "Fleet: 1 session"
    pane = tmux(*args, ";", "echo", "TUI-EXITED-$?", size=(80, 24))  # a shell reaps it (tmux may leave a zombie)
    pane.wait_for(lambda s: loaded in s, "the loaded screen")
    shell = pane._run("display-message", "-p", "-t", pane.name, "#{pane_pid}").strip()
    (tui,) = map(int, Path(f"/proc/{shell}/task/{shell}/children").read_text().split())
    os.kill(tui, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while not pane.exited():
        assert time.monotonic() < deadline, pane.screen()
        time.sleep(0.05)
    said = pane._run("capture-pane", "-p", "-S", "-", "-t", pane.name)  # tmux's last line may scroll it up
    assert "TUI-EXITED-143" in said, said
    assert pane._run("display-message", "-p", "-t", pane.name, "#{alternate_on} #{mouse_any_flag}").split() == ["0", "0"]
