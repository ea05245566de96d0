"""End to end: closing the terminal of ``tapedeck demo`` leaves no host process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from core.control.host_state import read_host_state
from core.log.reader import read_log
from tests.e2e.test_tmux_watch import TAPEDECK, Tmux, pytestmark  # noqa: F401 - the same skip condition
from tests.procs import proc_stat, process_gone


def _wait(predicate, what: str, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def test_killing_the_demo_pane_stops_its_host(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    name = f"td-demo-{uuid.uuid4().hex[:8]}"
    env = {"TAPEDECK_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    tmux = Tmux(name, [str(TAPEDECK), "demo", "--sessions-root", str(root)], env)
    try:
        log = _wait(lambda: next(iter(root.glob("*/*/session.jsonl")), None), "the demo's log")
        state = _wait(lambda: (s := read_host_state(log)).live and s.pid and s, "a live host")
        tmux.wait_for(lambda text: "tapedeck" in text, "the TUI")
        assert not process_gone(state.pid)
        tmux.kill()  # closing the terminal
        _wait(lambda: process_gone(state.pid), "the host to end", timeout=60)
        assert read_host_state(log).state == "exited"
        leftovers = subprocess.run(
            ["pgrep", "-f", log.parent.name], capture_output=True, text=True
        ).stdout.split()
        assert [p for p in leftovers if int(p) != os.getpid()] == []
    finally:
        tmux.kill()


def _turn_ends(log: Path) -> list[str]:
    return [e["data"]["reason"]["kind"] for e in read_log(log).events if e["type"] == "turn/end"]


def test_pausing_the_demo_from_its_tui_holds_the_host_and_resuming_completes_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    name = f"td-demo-{uuid.uuid4().hex[:8]}"
    env = {"TAPEDECK_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    tmux = Tmux(name, [str(TAPEDECK), "demo", "--speed", "8", "--sessions-root", str(root)], env)
    try:
        log = _wait(lambda: next(iter(root.glob("*/*/session.jsonl")), None), "the demo's log")
        tmux.wait_for(lambda text: "host running" in text, "the running host in the header")
        tmux.keys("P")
        _wait(lambda: read_host_state(log).state == "paused", "the host to hold")
        # the header's own field: the toast and the event list say "paused" before the header's host state does,
        # and P sent then is a second pause, not the resume
        tmux.wait_for(lambda text: "host paused" in text, "the paused state in the header")
        assert len(_turn_ends(log)) < 6
        tmux.keys("P")
        _wait(lambda: read_host_state(log).state != "paused", "the host to go on")
        _wait(lambda: len(_turn_ends(log)) == 6, "the demo to finish", timeout=120)
        assert _turn_ends(log) == ["completed"] * 6
        events = read_log(log).events
        # held: from its pause to its answer to the resume the host wrote nothing but states and control answers
        held = next(
            e["seq"] for e in events if e["type"] == "tapedeck/state" and e["data"]["state"] == "paused"
        )
        resumed = next(
            e["seq"] for e in events if e["type"] == "tapedeck/control" and e["data"]["op"] == "resume"
        )
        between = {e["type"] for e in events if held < e["seq"] < resumed}
        assert between <= {"tapedeck/state", "tapedeck/control"}, between
        states = [e["data"]["state"] for e in events if e["type"] == "tapedeck/state"]
        paused = states.index("paused")
        # resumed, it goes back to what it was doing: "running" inside a turn, "idle" when the pause came
        # between two turns (the next task then starts it); then it lingers for the TUI
        assert states[paused + 1] in ("running", "idle") and "running" in states[paused + 1 :]
        assert states[-1] == "idle"
    finally:
        tmux.kill()


def test_a_demo_told_to_end_gives_the_terminal_back_stops_its_host_and_cleans_up(tmp_path: Path) -> None:
    """SIGTERM (``kill``, a service manager) killed the demo where it stood: the terminal stayed on the TUI's screen
    (the alternate screen, with mouse reporting), and the throw-away workspace stayed; it now quits as ``q`` does."""
    root = tmp_path / "sessions"
    name = f"td-demo-{uuid.uuid4().hex[:8]}"
    env = {"TAPEDECK_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    tmux = Tmux(
        name, [str(TAPEDECK), "demo", "--sessions-root", str(root), ";", "echo", "DEMO-EXITED-$?"], env
    )
    try:
        log = _wait(lambda: next(iter(root.glob("*/*/session.jsonl")), None), "the demo's log")
        state = _wait(lambda: (s := read_host_state(log)).live and s.pid and s, "a live host")
        tmux.wait_for(lambda text: "tapedeck" in text, "the TUI")
        host = proc_stat(state.pid)
        assert host is not None, "the host is gone"
        demo = host.parent
        workspace = Path(read_log(log).header["cwd"])
        os.kill(demo, signal.SIGTERM)
        _wait(tmux.exited, "the demo's end")
        screen = tmux.screen()
        assert "DEMO-EXITED-143" in screen and "removed" in screen, screen
        assert tmux._run("display-message", "-p", "-t", tmux.name, "#{alternate_on}").strip() == "0"
        _wait(lambda: process_gone(state.pid), "the host to end", timeout=60)
        assert read_host_state(log).state == "exited" and not workspace.exists()
    finally:
        tmux.kill()
