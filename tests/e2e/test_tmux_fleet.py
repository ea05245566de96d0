"""End to end: ``tapedeck watch ROOT`` (the fleet table) in tmux over three live demo hosts (one paused, one stopped,
one running): the paused one is the row needing attention, ``n`` jumps back to it, and a confirmed resume reaches its
host."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.control.host_state import read_host_state
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from tests.conftest import Processes
from tests.e2e.test_tmux_watch import TAPEDECK, Tmux, pytestmark  # noqa: F401 - the same skip condition


def _wait(predicate: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def _host(
    processes: Processes, tmp: Path, root: Path, sid: str, pace: float
) -> tuple[subprocess.Popen[bytes], Path]:
    """A demo host of session ``sid`` under ``root``, once its log says it runs (killed with its group at the test's
    end if the test has not stopped it)."""
    workspace = create_demo_workspace(tmp / f"ws-{sid}")
    script = write_script(tmp / f"script-{sid}.json")
    argv = [str(TAPEDECK), "run", "--provider", f"scripted:{script}", "--workspace", str(workspace),
            "--sessions-root", str(root), "--session-id", sid, "--pace", str(pace), "--linger", *TASKS]  # fmt: skip
    env = {**os.environ, "TAPEDECK_HOME": str(tmp / "home")}
    proc = processes.start(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = _wait(lambda: next(iter(root.glob(f"*/{sid}/session.jsonl")), None), f"{sid}'s log")
    _wait(lambda: read_host_state(log).live, f"{sid}'s host")
    return proc, log


def _row(screen: str, sid: str) -> list[str]:
    """The cells after the session's name in its row (host state, attention, …); none while it has no row."""
    return next((line.split()[1:] for line in screen.splitlines() if line.split()[:1] == [sid]), [])


def _first(screen: str) -> str | None:
    """The name of the table's first session row."""
    return next((line.split()[0] for line in screen.splitlines() if line.split()[:1] and line.split()[0][-2:]
                 in ("-a", "-b", "-c")), None)  # fmt: skip


def _control(log: Path, op: str) -> None:
    subprocess.run(
        [str(TAPEDECK), "control", str(log), op, "--wait"], check=True, capture_output=True, timeout=60
    )


def test_the_fleet_shows_three_live_demo_hosts_jumps_to_the_paused_one_and_resumes_it(
    tmp_path: Path, processes: Processes
) -> None:
    root = tmp_path / "sessions"
    hosts = [_host(processes, tmp_path, root, sid, pace)
             for sid, pace in (("paused-a", 0.5), ("stopped-b", 0.5), ("running-c", 30))]  # fmt: skip
    (_, paused), (_, stopped), _ = hosts
    tmux = Tmux(f"td-fleet-{os.getpid()}", [str(TAPEDECK), "watch", str(root)],
                {"TAPEDECK_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}, size=(80, 24))  # fmt: skip
    try:
        _control(paused, "pause")
        _control(stopped, "stop")
        _wait(lambda: read_host_state(stopped).state == "exited", "the stopped host to exit")
        # each row's own state (a session's name holds "paused" or "running" too; "pausing" comes before "paused")
        states = ("paused-a", "paused"), ("stopped-b", "exited"), ("running-c", "running")
        tmux.wait_for(lambda t: all(_row(t, sid)[:1] == [state] for sid, state in states), "the three states")
        # the paused one waits for the operator and, needing attention, comes first (one predicate: a capture can
        # catch a frame half written, and the attention column may follow the state by a refresh)
        tmux.wait_for(lambda t: _row(t, "paused-a")[:2] == ["paused", "waiting"] and _first(t) == "paused-a",
                      "the paused session waiting, first in the table")  # fmt: skip
        tmux.keys("Down", "Down")  # the last row, which needs nothing
        tmux.keys("n")  # wraps around to the paused session
        tmux.keys("P")
        # the dialog itself (its buttons), not the footer's or a row's words: a y sent before it is there is lost
        tmux.wait_for(
            lambda t: "Resume (y)" in t and "Cancel (n)" in t, "a confirm to resume the paused session"
        )
        tmux.keys("y")
        _wait(lambda: read_host_state(paused).state != "paused", "the host to take the resume")
        tmux.wait_for(
            lambda t: _row(t, "paused-a")[:1] in (["running"], ["idle"]), "the row no longer paused"
        )
    finally:
        tmux.kill()
        for proc, log in hosts:
            if proc.poll() is None:
                subprocess.run([str(TAPEDECK), "control", str(log), "stop"], capture_output=True)
        for proc, _ in hosts:  # one the stop has not ended by then, the processes fixture kills
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
