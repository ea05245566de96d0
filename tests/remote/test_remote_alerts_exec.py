"""``tapedeck alerts --follow --exec`` on a remote root: the hook (a real script) runs once for each alert a remote
log raises after the follow began, with the alert's JSON on its stdin, as it runs for a local log
(``tests/alerts/test_cli.py``), and not for the alerts of the log's history (printed still). The log grows through
the server (appended over SFTP), the way a host on the far machine writes it; every wait is on a condition, bounded
at 60 s."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.remote.link import SshLink
from core.remote.target import RemoteTarget
from tests.alerts.crafted import HEADER, Log
from tests.conftest import Processes
from tests.lines import Lines
from tests.remote.sshd import MISSING, Sshd

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _lines(events: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def _hooked(seen: Path, count: int) -> list[dict[str, object]]:
    """The alerts the hook wrote to ``seen`` (a JSON document a line) once it wrote ``count`` of them, waited for up
    to 60 s."""
    deadline = time.monotonic() + 60
    while (
        len(written := [line for line in seen.read_text().splitlines() if line] if seen.exists() else [])
        < count
    ):
        assert time.monotonic() < deadline, f"the hook wrote {written}"
        time.sleep(0.05)
    return [json.loads(line) for line in written]


def test_follow_exec_runs_the_hook_for_each_new_alert_of_a_remote_log(
    sshd: Sshd, tmp_path: Path, processes: Processes
) -> None:
    sshd.trust()
    path = tmp_path / "root" / "p" / "s1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    log = Log()
    log.turn(1)
    log.result(True)  # a failure of the log's history: printed, never hooked
    path.write_bytes(_lines([{**HEADER, "id": "s1"}, *log.events]))
    seen = tmp_path / "seen"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >> {seen}\necho >> {seen}\n")
    hook.chmod(0o755)
    root = f"testbox:{tmp_path / 'root'}"
    # a limit no hook here comes near, however loaded the machine; no stall alert (its clock is not this test's)
    proc = processes.start([sys.executable, "-m", "core.cli", "alerts", root, "--follow", "--json",
                            "--set", "alerts.errorStreak.count=1", "--set", "alerts.stalled.enabled=false",
                            "--exec", str(hook), "--exec-timeout", "60"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None
    out = Lines(proc.stdout)
    past = json.loads(out.next())
    assert (past["cause"], past["seq"], past["path"]) == ("error-streak", 1, f"{root}/p/s1/session.jsonl")
    link = SshLink(
        RemoteTarget(None, "testbox", str(path))
    )  # the far side's writer: appends through the server
    try:
        alerts = []
        written = len(log.events)
        for n in range(
            2
        ):  # a success then a failure: one alert each, each appended once the last was printed
            log.result(False)
            log.result(True)
            link.append(str(path), _lines(log.events[written:]), 0o600)
            written = len(log.events)
            alerts.append(json.loads(out.next()))
            assert (alerts[-1]["cause"], alerts[-1]["seq"]) == ("error-streak", 3 + 2 * n)
        assert _hooked(seen, 2) == alerts  # in order, each once, the history's not among them
    finally:
        link.close()
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err and "--exec" not in err, err
