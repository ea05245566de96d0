"""End to end: closing the terminal of ``tapedeck demo`` leaves no host process behind."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

from core.host_state import read_host_state
from tests.e2e.test_tmux_watch import TAPEDECK, Tmux, pytestmark  # noqa: F401 - the same skip condition


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status.lower()


def _wait(predicate, what: str, timeout: float = 30.0):  # type: ignore[no-untyped-def]
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
        assert _alive(state.pid)
        subprocess.run(["tmux", "kill-session", "-t", name], check=True)
        _wait(lambda: not _alive(state.pid), "the host to end", timeout=20)
        assert read_host_state(log).state == "exited"
        leftovers = subprocess.run(["pgrep", "-f", log.parent.name], capture_output=True, text=True).stdout.split()
        assert [p for p in leftovers if int(p) != os.getpid()] == []
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
