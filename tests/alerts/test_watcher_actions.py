"""A watcher's actions (the TUI, ``tapedeck alerts --follow``): sent to a live host that does not act on the rule
itself, with the rule as the request's origin; never to a host that guards itself, nor to one that is gone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.alerts.engine import Alert
from core.alerts.follow import AlertFollower
from core.control.config import validate_config
from core.control.inbox import InboxReader
from tests.alerts.crafted import HEADER, PRICES, Log
from tests.tui.logs import hold_host

ACTING = validate_config({"model": {"prices": PRICES},
                          "alerts": {"budget": {"usd": 0.5, "action": "pause"},
                                     "loop": {"count": 2, "action": "message", "message": "Stop re-reading a.py."}}})  # fmt: skip


def _session(tmp_path: Path, host_alerts: dict[str, Any] | None, history: bool = False) -> tuple[Path, Callable[[], None]]:
    """A session's log, and what appends the events that cross the budget and repeat a call (with ``history`` they
    are in the log from the start, and the second does nothing)."""
    log = Log()
    log.add("tapedeck/host", {"model": "crafted-model", "config": {"alerts": host_alerts or {}}})
    log.header()
    log.turn(1)
    start = len(log.events)
    log.call("read_file", '{"path": "a.py"}')
    log.call("read_file", '{"path": "a.py"}')
    log.usage(1, 1, miss=60_000)  # $0.60
    path = tmp_path / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = log.events if history else log.events[:start]
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *kept]))

    def crossing() -> None:
        with path.open("a") as f:
            f.write("".join(json.dumps(e) + "\n" for e in log.events[len(kept) :]))

    return path, crossing


def _requests(path: Path) -> list[dict[str, Any]]:
    return [e.request for e in InboxReader(path.parent / "control.jsonl").read() if e.request]


def _watched(path: Path, crossing: Callable[[], None], act: bool = True) -> list[Alert]:
    """A watcher's first look at the log, then what it raises once ``crossing`` appended to it."""
    follower = AlertFollower([path], ACTING, act=act)
    follower.poll()
    crossing()
    return follower.poll()


def test_a_live_host_that_does_not_guard_itself_gets_the_actions(tmp_path: Path) -> None:
    path, crossing = _session(tmp_path, None)
    hold_host(path)
    raised = _watched(path, crossing)
    assert {a.cause for a in raised} >= {"budget", "loop"}
    sent = sorted((r["origin"], r["op"], r["args"]) for r in _requests(path))  # type: ignore[misc]
    assert sent == [("alert:budget", "pause", {}), ("alert:loop", "message", {"text": "Stop re-reading a.py."})]


def test_a_host_that_acts_on_a_rule_itself_is_left_to_it(tmp_path: Path) -> None:
    path, crossing = _session(tmp_path, {"budget": {"usd": 1, "action": "pause"}})
    hold_host(path)
    _watched(path, crossing)
    assert [r["origin"] for r in _requests(path)] == ["alert:loop"]


def test_no_action_reaches_a_host_that_is_gone_or_a_watcher_without_actions(tmp_path: Path) -> None:
    gone, crossing = _session(tmp_path / "gone", None)
    assert _watched(gone, crossing)
    assert _requests(gone) == []
    live, crossing = _session(tmp_path / "quiet", None)
    hold_host(live)
    assert _watched(live, crossing, act=False)
    assert _requests(live) == []


def test_the_history_a_watcher_reads_first_is_shown_not_acted_on(tmp_path: Path) -> None:
    """The session crossed its budget before this watcher started (an earlier watcher paused it, and the operator
    resumed it on purpose): the watcher's first look raises the alerts of that history and sends nothing, however
    often it is started (each open of the TUI with this config would pause the session again); what the log
    raises while it watches is acted on."""
    path, _ = _session(tmp_path, None, history=True)
    hold_host(path)
    for _ in range(2):  # a watcher started, then started again
        follower = AlertFollower([path], ACTING, act=True)
        assert {a.cause for a in follower.poll()} >= {"budget", "loop"}
        assert _requests(path) == []
    with path.open("a") as f:  # the same call again, in a new turn: the loop rule fires anew while it watches
        f.write("".join(json.dumps(e) + "\n" for e in _again(path)))
    assert [a.cause for a in follower.poll()] == ["loop"]
    assert [r["origin"] for r in _requests(path)] == ["alert:loop"]


def _again(path: Path) -> list[dict[str, Any]]:
    """Events that open turn 2 and call read_file twice with the same arguments, numbered after the log's last."""
    last = json.loads(path.read_text().splitlines()[-1])
    log = Log(start_ms=last["time"])
    log.events = [{}] * (last["seq"] + 1)  # seqs go on from the log's
    log.turn(2)
    log.call("read_file", '{"path": "a.py"}', turn=2)
    log.call("read_file", '{"path": "a.py"}', turn=2)
    return log.events[last["seq"] + 1 :]


def test_the_tuis_engine_acts_on_what_its_view_hands_over_after_the_first_pass(tmp_path: Path) -> None:
    """The TUI's engine (``FedWatch``, fed by the view): the view's first pass over the log is its history, whose
    alerts are shown and not acted on; what the view hands over while it follows the log is acted on."""
    from core.alerts.follow import FedWatch
    from core.log.reader import read_log_header
    from core.log.store import EventStore

    path, _ = _session(tmp_path, None, history=True)
    hold_host(path)
    fed, view = FedWatch(ACTING, live=False), object()
    follower = AlertFollower([], ACTING, act=True, fed=[fed])
    events = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    store = EventStore()
    fed.begin(view, path, read_log_header(path), store)
    for event in events:
        store.append(event)
    fed.take(view, events)
    fed.loaded(view, path.stat().st_size)
    assert {a.cause for a in follower.poll()} >= {"budget", "loop"}
    assert _requests(path) == []
    again = _again(path)  # appended: the view follows and hands it over
    for event in again:
        store.append(event)
    fed.take(view, again)
    assert [a.cause for a in follower.poll()] == ["loop"]
    assert [r["origin"] for r in _requests(path)] == ["alert:loop"]


def test_a_session_that_appears_while_the_watcher_runs_is_acted_on_from_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session started under a watched root after the watcher's first look is watched from its birth: what its
    log raised before the next look at the root (the roots are listed again every few seconds) happened while the
    watcher ran, so it is acted on, not taken for history an operator may have answered. One already there at the
    first look still is history."""
    root = tmp_path / "root"
    old, _ = _session(root / "--w--" / "old", None, history=True)
    hold_host(old)
    follower = AlertFollower([root], ACTING, act=True)
    assert {a.cause for a in follower.poll()} >= {"budget"}
    new, _ = _session(root / "--w--" / "new", None, history=True)  # crossed its budget before the next listing
    hold_host(new)
    monkeypatch.setattr("core.alerts.follow.RESCAN_SECONDS", 0)
    assert {a.cause for a in follower.poll()} >= {"budget", "loop"}
    assert sorted(r["origin"] for r in _requests(new)) == ["alert:budget", "alert:loop"]
    assert _requests(old) == []


def test_actions_on_a_dsh_session_read_the_start_of_its_log_once_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a tapedeck host ever ran a log is read from its first 256 KiB, for a log without host.json (a DSH
    session): the actions of a watcher read it once for the file, not for every alert, and again only for another
    file at its place or one cut shorter."""
    import os
    import subprocess

    from core.control import host_state
    from tests.bridge.conftest import write_bridge

    reads: list[Path] = []
    head_of = host_state._head_of
    monkeypatch.setattr(host_state, "_head_of", lambda f, log: reads.append(log) or head_of(f, log))
    log = Log()
    log.header()
    log.turn(1)
    start = len(log.events)
    log.call("read_file", '{"path": "a.py"}')
    log.call("read_file", '{"path": "a.py"}')
    log.usage(1, 1, miss=60_000)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events[:start]]))
    dsh = subprocess.Popen(["sleep", "600"])
    try:
        write_bridge(tmp_path, dsh.pid, "running")
        follower = AlertFollower([path], ACTING, act=True)
        follower.poll()
        with path.open("a") as f:
            f.write("".join(json.dumps(e) + "\n" for e in log.events[start:]))
        assert {a.cause for a in follower.poll()} >= {"budget", "loop"}
        assert sorted(r["origin"] for r in _requests(path)) == ["alert:budget", "alert:loop"]
        assert len(reads) == 1, reads
        assert host_state.read_host_state(path).live and len(reads) == 1
        cut = path.read_bytes()[: len(path.read_bytes()) // 2]
        path.write_bytes(cut[: cut.rfind(b"\n") + 1])  # the same file, cut shorter: its start may differ now
        assert host_state.read_host_state(path).kind == "dsh" and len(reads) == 2
        other = tmp_path / "other.jsonl"
        other.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n"
                                 for e in [HEADER, {"type": "tapedeck/host", "data": {}}]))  # fmt: skip
        os.replace(other, path)  # another file at the log's place
        assert host_state.read_host_state(path).kind == "tapedeck" and len(reads) == 3
    finally:
        dsh.kill()
        dsh.wait()


def test_an_action_that_cannot_be_sent_names_the_log_quoted(tmp_path: Path) -> None:
    """A watcher that could not write an action said so naming the log as it was: a session directory whose name
    held a newline and an escape sequence forged a line on stderr and, piped, put the raw escape out. The log is
    named as every note names a path (quoted_path)."""
    path, crossing = _session(tmp_path / "a\x1b[2J\nforged", None)
    hold_host(path)
    (path.parent / "control.jsonl").mkdir()  # no inbox can be written there
    said: list[str] = []
    follower = AlertFollower([path], ACTING, act=True, warn=said.append)
    follower.poll()
    crossing()
    assert follower.poll()
    notes = [s for s in said if "action was not sent" in s]
    assert notes and all(s.startswith(f"{tmp_path}/a\\u001b[2J\\nforged/session.jsonl: the ") for s in notes), said
    assert not any("\n" in s or "\x1b" in s for s in notes), notes
