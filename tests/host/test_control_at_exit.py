"""Requests sent while a real host process exits: each is answered, or refused and never written."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from core.alerts.engine import Alert
from core.alerts.follow import AlertWatch
from core.cli import main
from core.control import inbox as control
from core.control.config import validate_config
from core.fleet.actions import send_row_action
from core.log.layout import log_path
from core.log.reader import read_log
from core.shared.errors import TapedeckError
from tests.conftest import Processes

ROOT = Path(__file__).resolve().parents[2]
# The host as `tapedeck run` runs it, but its last step, releasing the log, takes half a second: the moment a
# request sent as the host exits can fall into, held open long enough for a test to send into it every time.
SLOW_EXIT = """
import sys, time
from core.log.writer import SessionWriter
from core.cli import main
release = SessionWriter.close
def slow_release(self):
    if self._log_fd >= 0:
        time.sleep(0.5)
    release(self)
SessionWriter.close = slow_release
sys.exit(main(sys.argv[1:]))
"""


def _host(
    processes: Processes, tmp_path: Path, script_text: str = SLOW_EXIT, steps: int = 2, pace: float = 0.3
) -> tuple[subprocess.Popen[bytes], Path]:
    """The host of ``script_text`` (``SLOW_EXIT`` unless given) running ``steps`` bash steps, each model answer
    ``pace`` seconds apart; its process and log."""
    call = {"name": "bash", "arguments": {"command": "true"}}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [*[{"toolCalls": [call]}] * steps, {"text": "done"}]}))
    workspace, root = tmp_path / "ws", tmp_path / "root"
    workspace.mkdir()
    proc = processes.start(
        [sys.executable, "-c", script_text, "run", "task", "--provider", f"scripted:{script}", "--workspace",
         str(workspace), "--sessions-root", str(root), "--session-id", "s1", "--pace", str(pace)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    return proc, log_path(root, str(workspace), "s1", False)


def lingering_host(processes: Processes, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A ``tapedeck run --linger`` host whose one turn answers "done" and then waits for requests; its process and
    log (what it reports goes to ``host.out`` in ``tmp_path``)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "done"}]}))
    (tmp_path / "ws").mkdir()
    proc = processes.start(
        [sys.executable, "-m", "core.cli", "run", "task", "--provider", f"scripted:{script}", "--workspace",
         str(tmp_path / "ws"), "--sessions-root", str(tmp_path / "root"), "--session-id", "s1", "--linger"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=(tmp_path / "host.out").open("wb"),
        stderr=subprocess.PIPE,
    )  # fmt: skip
    return proc, log_path(tmp_path / "root", str(tmp_path / "ws"), "s1", False)


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("message", ["--arg", "text=still there?", "--arg", "kind=note"]),  # answered at once
        ("config.set", ["--arg", "key=slice.history.keepRecentTurns", "--arg", "value=3"]),  # at the next step
    ],
)
def test_a_request_sent_as_the_host_exits_is_answered_or_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str, args: list[str], processes: Processes
) -> None:
    """``tapedeck control`` sent over and over until the host process is gone: a request it says it sent has its
    final outcome in the log, and the inbox holds no request that nobody will ever answer."""
    proc, log = _host(processes, tmp_path)
    sent: list[str] = []
    while proc.poll() is None:
        if not log.exists():
            continue
        code = main(["control", str(log), op, *args, "--json"])
        out = capsys.readouterr().out
        if code == 0:
            sent.append(json.loads(out)["id"])
        else:
            assert code in (2, 3), out  # 2: the log has no header yet
    _, err = proc.communicate()
    assert proc.returncode == 0 and sent, err
    final = control.answered_ids(read_log(log).events)
    assert [rid for rid in sent if rid not in final] == []
    written = [orjson.loads(line) for line in control.inbox_path(log).read_bytes().splitlines()]
    assert [r["id"] for r in written if "id" in r and r["id"] not in final] == []


def test_a_host_exits_even_while_another_process_holds_its_inbox_locked(tmp_path: Path, processes: Processes) -> None:
    """A sender stuck inside the inbox's lock (suspended, say) cannot keep the host from exiting."""
    proc, log = _host(processes, tmp_path)
    while not log.exists() and proc.poll() is None:
        time.sleep(0.005)  # a wait, not a spin: the host needs the core
    with control.locked_inbox(control.inbox_path(log)):
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert read_log(log).events[-1]["data"] == {"state": "exited"}


def test_a_request_sent_through_a_link_to_the_log_reaches_its_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], processes: Processes
) -> None:
    """The inbox and host.json are beside the log itself, not beside a symbolic link that names it."""
    proc, log = lingering_host(processes, tmp_path)
    link = tmp_path / "elsewhere" / "session.jsonl"
    link.parent.mkdir()
    link.symlink_to(log)
    try:
        while not (log.parent / "host.json").exists() or b'"idle"' not in (log.parent / "host.json").read_bytes():
            assert proc.poll() is None
            time.sleep(0.005)
        assert main(["inspect", str(link), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["host"]["state"] == "idle"
        assert main(["control", str(link), "checkpoint", "--wait", "--timeout", "20"]) == 0
        assert capsys.readouterr().out.startswith("applied: checkpoint")
        assert not (link.parent / "control.jsonl").exists()
    finally:
        control.append_request(control.inbox_path(log), "stop", {})
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def _unanswered(log: Path) -> list[str]:
    """The ids of the requests in the inbox beside ``log`` with no final outcome in the log."""
    final = control.answered_ids(read_log(log).events)
    written = [orjson.loads(line) for line in control.inbox_path(log).read_bytes().splitlines()]
    return [r["id"] for r in written if "id" in r and r["id"] not in final]


def _exiting(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until the host has logged its exit (it holds the log half a second more): a message sent before would
    start another turn, and one sent over and over would keep the host from ever exiting."""
    while proc.poll() is None and not (log.exists() and b'"exited"' in log.read_bytes()):
        time.sleep(0.01)


def test_a_fleet_row_action_sent_as_the_host_exits_is_answered_or_never_written(
    tmp_path: Path, processes: Processes
) -> None:
    """The fleet's row action, sent over and over from the host's exit until its process is gone."""
    proc, log = _host(processes, tmp_path)
    _exiting(proc, log)
    tries = 0
    while proc.poll() is None:
        tries += 1
        with contextlib.suppress(TapedeckError):
            send_row_action(log, "message", {"text": "still there?"})
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    assert tries and _unanswered(log) == []


def test_an_alert_action_sent_as_the_host_exits_is_answered_or_never_written(
    tmp_path: Path, processes: Processes
) -> None:
    """A watcher's alert action (``AlertWatch.send_action``), sent over and over from the host's exit
    until its process is gone."""
    config = validate_config({"alerts": {"loop": {"count": 2, "action": "message", "message": "Stop it."}}})
    proc, log = _host(processes, tmp_path)
    _exiting(proc, log)
    watch = AlertWatch(log, config)
    tries = 0
    while proc.poll() is None:
        tries += 1
        with contextlib.suppress(TapedeckError):
            watch.send_action(Alert("s1", str(log), "loop", 1, "warning", "a loop", None))
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    assert tries and _unanswered(log) == []
