"""A watcher's actions (the TUI, ``tapedeck alerts --follow``): sent to a live host that does not act on the rule
itself, with the rule as the request's origin; never to a host that guards itself, nor to one that is gone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.alerts.follow import AlertFollower
from core.control.config import validate_config
from core.control.inbox import InboxReader
from tests.alerts.crafted import HEADER, PRICES, Log
from tests.tui.logs import hold_host

ACTING = validate_config({"model": {"prices": PRICES},
                          "alerts": {"budget": {"usd": 0.5, "action": "pause"},
                                     "loop": {"count": 2, "action": "message", "message": "Stop re-reading a.py."}}})  # fmt: skip


def _session(tmp_path: Path, host_alerts: dict[str, Any] | None) -> Path:
    log = Log()
    log.add("tapedeck/host", {"model": "crafted-model", "config": {"alerts": host_alerts or {}}})
    log.header()
    log.turn(1)
    log.call("read_file", '{"path": "a.py"}')
    log.call("read_file", '{"path": "a.py"}')
    log.usage(1, 1, miss=60_000)  # $0.60
    path = tmp_path / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    return path


def _requests(path: Path) -> list[dict[str, Any]]:
    return [e.request for e in InboxReader(path.parent / "control.jsonl").read() if e.request]


def test_a_live_host_that_does_not_guard_itself_gets_the_actions(tmp_path: Path) -> None:
    path = _session(tmp_path, None)
    hold_host(path)
    raised = AlertFollower([path], ACTING, act=True).poll()
    assert {a.cause for a in raised} >= {"budget", "loop"}
    sent = sorted((r["origin"], r["op"], r["args"]) for r in _requests(path))  # type: ignore[misc]
    assert sent == [("alert:budget", "pause", {}), ("alert:loop", "message", {"text": "Stop re-reading a.py."})]


def test_a_host_that_acts_on_a_rule_itself_is_left_to_it(tmp_path: Path) -> None:
    path = _session(tmp_path, {"budget": {"usd": 1, "action": "pause"}})
    hold_host(path)
    AlertFollower([path], ACTING, act=True).poll()
    assert [r["origin"] for r in _requests(path)] == ["alert:loop"]


def test_no_action_reaches_a_host_that_is_gone_or_a_watcher_without_actions(tmp_path: Path) -> None:
    gone = _session(tmp_path / "gone", None)
    assert AlertFollower([gone], ACTING, act=True).poll()
    assert _requests(gone) == []
    live = _session(tmp_path / "quiet", None)
    hold_host(live)
    assert AlertFollower([live], ACTING, act=False).poll()
    assert _requests(live) == []
