"""Requests the TUI sends while a real host process exits: each is answered, or refused and never written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from core.control import inbox as control
from core.control.host_state import read_host_state
from core.log.layout import log_path
from core.log.reader import read_log
from core.shared.errors import TapedeckError
from tests.conftest import Processes
from tests.host.test_control_at_exit import ROOT, _host
from tui.live import LiveSession
from tui.screens.policy_screen import RequestLog


def test_a_request_the_tui_sends_as_the_host_exits_is_answered_or_not_sent(
    tmp_path: Path, processes: Processes
) -> None:
    proc, log = _host(processes, tmp_path)
    while not log.exists() and proc.poll() is None:
        time.sleep(0.005)  # a wait, not a spin: the host needs the core
    live = LiveSession(log, follow=True, interval=0.01)
    reader = threading.Thread(target=live.run, daemon=True)
    reader.start()
    sent, refused = [], 0
    try:
        while proc.poll() is None:
            if not live.ready:
                continue
            try:
                sent.append(live.send("message", {"text": "still there?", "kind": "note"})["id"])
            except TapedeckError as exc:
                assert str(exc).startswith("not sent: no live host (it exited at "), exc
                refused += 1
    finally:
        live.stop()
        reader.join(10)
    _, err = proc.communicate()
    assert proc.returncode == 0 and sent, err
    final = control.answered_ids(read_log(log).events)
    assert [rid for rid in sent if rid not in final] == []
    written = [orjson.loads(line) for line in control.inbox_path(log).read_bytes().splitlines()]
    assert [r["id"] for r in written if r["id"] not in final] == []


def test_a_request_left_with_a_killed_host_reads_cancelled_with_its_exit_never_pending(
    tmp_path: Path, processes: Processes
) -> None:
    """The host is alive when the TUI sends, and killed before it reads the request: the TUI's record of it turns
    ``cancelled`` with the host's exit, the request is withdrawn, and the next host answers it so."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    (tmp_path / "ws").mkdir()
    common = ["--provider", f"scripted:{script}", "--sessions-root", str(tmp_path / "root"), "--linger"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = processes.start([sys.executable, "-m", "core.cli", "run", "task", *common, "--workspace",
                             str(tmp_path / "ws"), "--session-id", "s1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    log = log_path(tmp_path / "root", str(tmp_path / "ws"), "s1", False)
    while read_host_state(log).state != "idle":
        assert first.poll() is None
        time.sleep(0.005)
    live = LiveSession(log, follow=True, interval=0.01)
    reader = threading.Thread(target=live.run, daemon=True)
    reader.start()
    try:
        while not live.ready:
            time.sleep(0.005)
        first.send_signal(signal.SIGSTOP)  # alive, owning the log, reading nothing
        requests = RequestLog()
        item = requests.add("checkpoint", "checkpoint")
        requests.sent(item, live.send("checkpoint", {})["id"])
        assert [i.state for i in requests.poll(live.outcome_for, live.host_gone, live.withdraw)] == ["pending"]
        first.kill()
        first.wait()
        (after,) = requests.poll(live.outcome_for, live.host_gone, live.withdraw)
    finally:
        live.stop()
        reader.join(10)
    # it was said to have 'exited at' the log's last write, as if host.json said so: control's words now
    killed = "no live host (it stopped without saying so, as a killed host does; the log was last written at "
    assert after.state == "cancelled" and after.reason.startswith(killed), after.reason

    second = subprocess.run([sys.executable, "-m", "core.cli", "run", "--resume", str(log), *common[:2]],
                            cwd=ROOT, env=env, input="", capture_output=True, timeout=60)  # fmt: skip
    assert second.returncode == 0, second.stderr
    (outcome,) = [e["data"] for e in read_log(log).events if e["type"] == "tapedeck/control"]
    assert (outcome["requestId"], outcome["outcome"]) == (after.request_id, "cancelled")
