"""Alerts in the fleet table: a remote session's alerts are delivered as a local one's are (the toast, the alerts
list), each once, by the one worker that follows every log of the table; an alert's action reaches a remote host."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from core.alerts.engine import Alert
from core.control.config import validate_config
from core.control.host_state import write_state
from core.control.inbox import inbox_path
from core.fleet.follow import Fleet
from tests.alerts.crafted import HEADER, Log
from tests.remote.sshd import MISSING, Sshd
from tests.tui.logs import hold_host, release_hosts
from tests.tui.pilot import NO_KEYMAP, raised_toasts, until
from tui.app import TapedeckApp
from tui.screens.alerts import AlertsScreen
from tui.screens.fleet import FleetScreen

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _failing(root: Path, sid: str) -> tuple[Log, Path]:
    log = Log()
    log.header()
    log.turn(1)
    for _ in range(3):
        log.result(error=True)
    path = root / "p" / sid / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [{**HEADER, "id": sid}, *log.events]))
    return log, path


def _fail_again(log: Log, path: Path) -> None:
    """A success ends the streak, three failures start another."""
    start = len(log.events)
    log.result(error=False)
    for _ in range(3):
        log.result(error=True)
    with open(path, "ab") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in log.events[start:]))


@pytest.mark.anyio
async def test_a_remote_sessions_alert_is_delivered_like_a_local_one_and_each_once(sshd: Sshd, tmp_path: Path) -> None:
    sshd.trust()
    local = tmp_path / "here"
    far = tmp_path / "there"
    near = _failing(local, "near-1")
    far_log = _failing(far, "far-2")
    config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 3}}})
    roots = [local, Path(f"testbox:{far}")]
    app = TapedeckApp(local, interval=0.02, keymap_file=NO_KEYMAP, fleet_roots=roots, config=config)
    raised = raised_toasts(app)  # each toast is gone after a few seconds, which a loaded machine's poll can outlast
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen) and len(app.screen.shown) == 2, timeout=60)
        await until(pilot, lambda: {a.session for a in app.board.alerts} == {"near-1", "far-2"})
        await pilot.pause(1.0)  # a second delivery of either would land by now
        assert sorted((a.session, a.cause) for a in app.board.alerts) == [
            ("far-2", "error-streak"), ("near-1", "error-streak")]  # fmt: skip
        # the histories: listed, summed up in one toast
        assert [t.message for t in raised] == ["2 alerts in the history of 2 sessions: A lists them"]
        _fail_again(*near)
        _fail_again(*far_log)
        await until(pilot, lambda: len(app.board.alerts) == 4)
        await pilot.pause(1.0)
        assert len(app.board.alerts) == 4
        toasts = sorted(str(t.message) for t in raised if t.title == "Alert: error-streak")
        assert len(toasts) == 2 and "far-2" in toasts[0] and "near-1" in toasts[1], toasts
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        assert app.screen.query_one("DataTable").row_count == 4  # type: ignore[attr-defined]


def test_an_alerts_action_reaches_the_remote_hosts_inbox(sshd: Sshd, tmp_path: Path) -> None:
    sshd.trust()
    root = tmp_path / "there"
    log = Log()
    log.header()
    log.add("tapedeck/host", {"pid": os.getpid(), "model": "crafted-model"})
    log.turn(1)
    log.call("bash", '{"command": "ls"}')
    log.result(error=False)
    path = root / "p" / "loop-1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [{**HEADER, "id": "loop-1"}, *log.events]))
    write_state(path, "running", os.getpid(), int(time.time() * 1000))  # this process: live on the far side
    hold_host(path)  # … holding its log, as a live host does
    config = validate_config({"alerts": {"loop": {"count": 2, "action": "message", "message": "try another way"}}})
    warnings: list[str] = []
    fleet = Fleet([f"testbox:{root}"], config)
    fleet.poll()  # the first look: what the log holds now is its history, which no watcher acts on
    written = len(log.events)
    log.call("bash", '{"command": "ls"}')  # the same call again, while the fleet watches
    log.result(error=False)
    with path.open("ab") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in log.events[written:]))
    deadline = time.monotonic() + 60
    while not inbox_path(path).exists():
        raised: list[Alert] = []
        fleet.poll(raised=raised)
        fleet.act(raised, warnings.append)
        assert time.monotonic() < deadline and not warnings, warnings
        time.sleep(0.05)
    release_hosts()
    (request,) = [orjson.loads(line) for line in inbox_path(path).read_bytes().splitlines()]
    assert (request["op"], request["args"], request["origin"]) == ("message", {"text": "try another way"}, "alert:loop")
