"""``tapedeck watch [user@]host:PATH/session.jsonl`` through the real OpenSSH server: the log opens in the full
TUI from its new bytes (raw and zstd), appends show as they are written, the header names the machine, and the
operator keys reach a live host on the far side through its remote inbox; its alerts reach the screen as a local
log's do."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from core.control.config import validate_config
from core.control.host_state import read_host_state
from core.log.reader import read_log
from core.remote import tail as remote_tail
from tests.alerts.crafted import HEADER as CRAFTED
from tests.alerts.crafted import Log
from tests.conftest import Processes
from tests.log.helpers import HEADER, number, raw_log, user, zstd_log
from tests.remote.sshd import MISSING, Sshd, demo_host
from tests.tui.pilot import NO_KEYMAP, make_app, raised_toasts, settle, until
from tui.app import TapedeckApp
from tui.cli_watch import watch_target
from tui.screens.alerts import AlertsScreen
from tui.widgets.header import SessionHeader

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
TAPEDECK = Path(sys.prefix) / "bin" / "tapedeck"
Snap = Callable[..., bool]


def _log(texts: list[str], compressed: bool) -> bytes:
    header = {**HEADER, "id": "far-session"}
    events = number([user(text) for text in texts])
    return zstd_log(events, batch=2, header=header) if compressed else raw_log(events, header=header)


def _append(path: Path, texts: list[str], compressed: bool) -> None:
    """Grow ``path`` to the log of ``texts`` by appending what it lacks, in one write: rewritten whole, the file is
    empty for a moment, and a poll that lands then reads a truncation (and the log again)."""
    whole = _log(texts, compressed)
    held = path.read_bytes()
    assert whole.startswith(held)  # the same events, the same frames: only new ones come after
    with path.open("ab") as f:
        f.write(whole[len(held):])


def _header(pilot: Pilot[None]) -> str:
    return str(pilot.app.screen.query_one(SessionHeader).render())


@pytest.mark.anyio
@pytest.mark.parametrize("compressed", [False, True])
async def test_a_remote_session_opens_in_the_full_tui_and_follows_appends(sshd: Sshd, tmp_path: Path,
                                                                          compressed: bool) -> None:  # fmt: skip
    sshd.trust()
    path = tmp_path / "p" / "s1" / ("session.jsonl.zstd" if compressed else "session.jsonl")
    path.parent.mkdir(parents=True)
    path.write_bytes(_log(["one", "two"], compressed))
    target = watch_target(f"testbox:{path.parent}")  # a session directory resolves to its log
    assert str(target) == f"testbox:{path}"
    app = make_app(target, follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        live = app.live
        assert live is not None and live.remote is not None and live.count == 2 and live.error is None
        assert " on testbox" in _header(pilot)
        remote = live.remote
        # the load's one look at its bytes once settled (``SETTLE_SECONDS``) is made before the count, not during it
        await until(pilot, lambda: remote.tail is not None and remote.tail._verify_at is None)
        before, size = live.remote.link.bytes_read, path.stat().st_size
        _append(path, ["one", "two", "three", "four"], compressed)  # whole new frames
        await until(pilot, lambda: live.count == 4)
        assert [e["data"]["content"][0]["text"] for e in live.iter_events(0, 4)] == ["one", "two", "three", "four"]
        read = live.remote.link.bytes_read - before
        appended = path.stat().st_size - size + remote_tail.OVERLAP + remote_tail.HEAD_CHECK  # compared, not read again
        # a poll that lands inside the append's one write may see its new mtime before its new size (the kernel sets
        # the one before it copies the bytes): a file changed without growing has its last consumed bytes and the
        # head's compared once, and is still not read again
        assert read in (appended, appended + remote_tail.TAIL_CHECK + remote_tail.HEAD_CHECK), (read, appended)
        sshd.kill()  # the machine goes away: the header says so, and comes back with it
        await until(pilot, lambda: "on testbox: unreachable since" in _header(pilot))
        sshd.start()
        _append(path, ["one", "two", "three", "four", "five", "six"], compressed)
        await until(pilot, lambda: live.count == 6 and "unreachable" not in _header(pilot))
        cwd = set(Path.cwd().iterdir())
        await pilot.press("a")  # a note: kept beside a local log only
        await pilot.press("X")  # the HTML export: reads the log from this machine's disk
        needs_local = "needs the log on this machine (this one is on testbox)"
        await until(pilot, lambda: sum(needs_local in n.message for n in app._notifications) == 2)
        assert set(Path.cwd().iterdir()) == cwd  # nothing written under a path named after the remote one


@pytest.mark.anyio
async def test_the_operator_keys_reach_a_live_host_on_the_far_side(
    sshd: Sshd, tmp_path: Path, processes: Processes
) -> None:

    sshd.trust()
    root = tmp_path / "root"
    demo_host(processes, tmp_path, root)
    deadline = time.monotonic() + 60
    while not list(root.glob("*/*/session.jsonl")) or read_host_state(next(root.glob("*/*/session.jsonl"))).state != "running":
        assert time.monotonic() < deadline, "the host never ran"
        time.sleep(0.05)
    log = next(root.glob("*/*/session.jsonl"))
    app = make_app(watch_target(f"testbox:{log}"), follow=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.live is not None and app.live.ready and app.live.host.live)
        await until(pilot, lambda: re.search(r"host \w+ on testbox", _header(pilot)) is not None)  # redrawn
        await pilot.press("P")  # pause, through the remote inbox
        await until(pilot, lambda: read_host_state(log).state == "paused")
        await until(pilot, lambda: app.live is not None and app.live.host.state == "paused")
        await pilot.press("P")  # resume
        await until(pilot, lambda: read_host_state(log).state != "paused")
    assert any(e["type"] == "tapedeck/control" for e in read_log(log).events)


def test_the_remote_header(snap_compare: Snap, sshd: Sshd, tmp_path: Path) -> None:
    """The main screen of a session read over SSH: the header names the machine after the host's state."""
    sshd.trust()
    path = tmp_path / "s1" / "session.jsonl"  # the path is not drawn: a run of its own never meets another's
    path.parent.mkdir()
    path.write_bytes(_log(["look at the remote log", "and follow it"], False))
    assert snap_compare(make_app(watch_target(f"testbox:{path}")), terminal_size=(100, 20), run_before=settle)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_real_console_script_follows_a_remote_log_in_tmux(sshd: Sshd, tmp_path: Path) -> None:
    """End to end: ``tapedeck watch testbox:PATH`` in a detached tmux session, its log written on the far side."""
    from tests.e2e.test_tmux_watch import Tmux
    from tests.tui.logs import append, policy_log

    sshd.trust()
    log = policy_log()
    path = tmp_path / "live" / "session.jsonl"
    path.parent.mkdir()
    path.write_bytes(log.lines([log.header, *log.events[:12]]))
    env = {"HOME": str(sshd.home), "TAPEDECK_HOME": str(tmp_path / "th"), "TERM": "xterm-256color"}
    pane = Tmux(f"tapedeck-remote-{os.getpid()}", [str(TAPEDECK), "watch", f"testbox:{path}"], env)
    try:
        pane.wait_for(lambda s: "index ready" in s and "following" in s and "on testbox" in s, "the remote log")
        append(path, log, 12)
        pane.wait_for(lambda s: "fix the failure" in s and "37 events" in s, "the turn appended on the far side")
        path.write_bytes(log.lines([log.header, *log.events[:5]]))
        pane.wait_for(lambda s: "re-synced" in s and "5 events" in s, "the truncation notice")
        pane.keys("q")
        pane.wait_for(lambda s: "index ready" not in s, "the app to exit")
    finally:
        pane.kill()


@pytest.mark.anyio
async def test_a_remote_session_raises_its_alerts_in_the_tui(sshd: Sshd, tmp_path: Path) -> None:
    """A remote log's error streak: the toast, the mark on its row and the alerts list, as for a local log; then
    `unreachable` once the machine stops answering the view's reads."""
    sshd.trust()
    path = tmp_path / "s1" / "session.jsonl"
    path.parent.mkdir()
    log = Log()
    log.turn(1)
    log.result(True)
    path.write_text("".join(json.dumps(e) + "\n" for e in [CRAFTED, *log.events]))
    config = validate_config({"alerts": {"bell": False, "notify": False, "errorStreak": {"count": 2}}})
    app = TapedeckApp(watch_target(f"testbox:{path}"), follow=True, interval=0.02, use_watchfiles=False,
                      keymap_file=NO_KEYMAP, config=config)  # fmt: skip
    toasts = raised_toasts(app)
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: app.live is not None and app.live.ready and app.live.count == 2)
        assert app.board.alerts == []
        second = log.result(True)  # appended on the far side
        with open(path, "a") as f:
            f.write(json.dumps(log.events[-1]) + "\n")
        await until(pilot, lambda: len(app.board.alerts) == 1 and bool(toasts))  # the toast comes after
        (alert,) = app.board.alerts
        assert (alert.cause, alert.seq) == ("error-streak", second)
        assert [t.title for t in toasts] == ["Alert: error-streak"]
        await until(pilot, lambda: app.alert_marks == {second: ("⚑ error-streak",)})
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AlertsScreen))
        await pilot.pause()
        assert "error-streak" in str(app.screen.query_one("#alerts-table", DataTable).get_row_at(0))
        sshd.kill()  # the machine goes away: the view's reads get no answer
        # the list is in time order, and the crafted log's times lie ahead of the clock that dates 'unreachable'
        await until(pilot, lambda: sorted(a.cause for a in app.board.alerts) == ["error-streak", "unreachable"])


@pytest.mark.anyio
async def test_a_remote_session_that_cannot_be_reached_is_not_also_called_stalled(sshd: Sshd, tmp_path: Path) -> None:
    """While the view's reads get no answer, nothing is known of the log's writes: ``unreachable``, and no
    ``stalled`` after it for a log that may be growing over there."""
    import orjson

    sshd.trust()
    path = tmp_path / "s1" / "session.jsonl"
    path.parent.mkdir()
    log = Log(start_ms=int(time.time() * 1000) - 60_000, step_ms=1)
    log.add("tapedeck/host", {"pid": os.getpid(), "model": "crafted-model"})
    log.turn(1)
    path.write_text("".join(json.dumps(e) + "\n" for e in [CRAFTED, *log.events]))
    (path.parent / "host.json").write_bytes(orjson.dumps({"state": "running", "pid": os.getpid(),
                                                          "since": int(time.time() * 1000)}))  # fmt: skip
    config = validate_config({"alerts": {"bell": False, "notify": False, "stalled": {"seconds": 3}}})
    app = TapedeckApp(watch_target(f"testbox:{path}"), follow=True, interval=0.02, use_watchfiles=False,
                      keymap_file=NO_KEYMAP, config=config)  # fmt: skip
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: app.live is not None and app.live.ready and "running" in _header(pilot))
        log.add("step/start", {"turn": 1, "step": 2}, at=int(time.time() * 1000))  # the log moves
        with open(path, "a") as f:
            f.write(json.dumps(log.events[-1]) + "\n")
        await until(pilot, lambda: app.live.count == len(log.events))
        sshd.kill()
        await until(pilot, lambda: "unreachable" in [a.cause for a in app.board.alerts])
        # a 'stalled' before it is true of a log quiet for the limit while it could still be read (a loaded machine
        # can take that long to start the app, or to see the append before the kill): what no longer holds is known
        told = list(app.board.alerts)
        await pilot.pause(6)  # twice the stalled limit
        assert [a.cause for a in app.board.alerts if a not in told] == []


def test_an_empty_remote_root_opens_the_empty_fleet_as_a_local_one_does(sshd: Sshd, tmp_path: Path) -> None:
    """``watch`` on a sessions root with no session yet: a local one opens the empty fleet table (sessions show as
    they appear); a remote one was refused ('no session log there'). Both now open the fleet."""
    from tui.app import is_session_log_target

    sshd.trust()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not is_session_log_target(watch_target(str(empty)))
    target = watch_target(f"testbox:{empty}")
    assert target == Path(f"testbox:{empty}") and not is_session_log_target(target)


def test_a_remote_log_by_another_name_opens_in_the_session_view_as_a_local_one_does(sshd: Sshd, tmp_path: Path) -> None:
    """A log by another name (``a.jsonl``) is one session, here and over SSH: ``watch`` opened a local one in the
    session view, but a remote one in the fleet table, as a sessions root, since only a log's own name told a remote
    path for one session. What the machine holds there now decides, as it does locally."""
    from tui.app import is_session_log_target

    sshd.trust()
    log = tmp_path / "a.jsonl"
    log.write_bytes(_log(["one"], False))
    assert is_session_log_target(watch_target(str(log)))
    assert is_session_log_target(watch_target(f"testbox:{log}"))


@pytest.mark.anyio
async def test_the_empty_fleet_of_a_remote_root_shows_a_session_once_it_appears(sshd: Sshd, tmp_path: Path) -> None:
    from textual.worker import WorkerState

    from tui.screens.fleet import FleetScreen

    sshd.trust()
    root = tmp_path / "empty"
    root.mkdir()
    remote = watch_target(f"testbox:{root}")
    app = TapedeckApp(remote, follow=True, keymap_file=NO_KEYMAP, fleet_roots=[remote])
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FleetScreen))
        path = root / "p" / "s1" / "session.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(_log(["a session appears"], False))
        await until(pilot, lambda: len(app.screen.rows) == 1)  # type: ignore[attr-defined]
        assert [w.name for w in app.workers if w.state == WorkerState.ERROR] == []
