"""A tapedeck host's own guard (``core.alerts.actions.HostGuard``) made while the session is already over its line:
it acts once, at its first evaluation, naming the newest seq; a guard remade with the same rule leaves a line it
already acted on alone; a guard made under the line acts on the crossing as it comes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.alerts.actions import HostGuard
from core.control.config import validate_config
from core.control.inbox import InboxReader
from tests.alerts.crafted import HEADER, PRICES, Log


def _config(alerts: dict[str, Any]) -> Any:
    return validate_config({"model": {"prices": PRICES}, "alerts": alerts})


BUDGET = {"budget": {"usd": 0.5, "action": "pause"}}


def _over_budget() -> Log:
    log = Log()
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=60_000)  # $0.60: over a $0.50 budget
    return log


def _guard(tmp_path: Path, alerts: dict[str, Any]) -> HostGuard:
    config = _config(alerts)
    return HostGuard(config.alerts, config.model, tmp_path / "control.jsonl", HEADER)


def _sent(tmp_path: Path) -> list[tuple[str, str]]:
    return [(e.request["origin"], e.request["op"]) for e in InboxReader(tmp_path / "control.jsonl").read() if e.request]


def test_a_guard_made_over_the_budget_pauses_once_at_its_first_evaluation(tmp_path: Path) -> None:
    log = _over_budget()
    guard = _guard(tmp_path, BUDGET)
    guard.prime(log.events)
    assert _sent(tmp_path) == []  # priming reads the past, it sends nothing
    seq = log.add("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "ls", "arguments": "{}"})
    acted = guard.observe(log.events[seq:])
    assert [(a.cause, a.seq) for a in acted] == [("budget", seq)]  # the newest seq, not the crossing's
    assert "$0.60" in acted[0].reason
    assert _sent(tmp_path) == [("alert:budget", "pause")]
    more = log.add("tool/call", {"turn": 1, "step": 1, "callId": "d", "name": "ls", "arguments": "{}"})
    assert guard.observe(log.events[more:]) == []
    assert _sent(tmp_path) == [("alert:budget", "pause")]  # once


def test_a_run_rate_guard_made_over_the_rate_pauses_once(tmp_path: Path) -> None:
    log = Log(step_ms=60_000)
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=600_000)  # $6 in two minutes: $180/h
    guard = _guard(tmp_path, {"runRate": {"usdPerHour": 10, "action": "pause"}})
    guard.prime(log.events)
    seq = log.add("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "ls", "arguments": "{}"})
    assert [(a.cause, a.seq) for a in guard.observe(log.events[seq:])] == [("run-rate", seq)]
    assert _sent(tmp_path) == [("alert:run-rate", "pause")]


def test_a_guard_remade_with_the_same_rule_does_not_act_again(tmp_path: Path) -> None:
    log = _over_budget()
    first = _guard(tmp_path, BUDGET)
    first.prime(log.events[:2])
    crossing = log.events[2:]
    assert [a.cause for a in first.observe(crossing)] == ["budget"]
    again = _guard(tmp_path, {**BUDGET, "loop": {"count": 3, "action": "message"}})  # another rule changed
    again.prime(log.events, settled=first)
    seq = log.add("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "ls", "arguments": "{}"})
    assert again.observe(log.events[seq:]) == []
    assert _sent(tmp_path) == [("alert:budget", "pause")]
    lower = _guard(tmp_path, {"budget": {"usd": 0.4, "action": "pause"}})  # the budget itself changed
    lower.prime(log.events, settled=again)
    assert [a.cause for a in lower.observe([])] == ["budget"]


def test_a_guard_made_under_the_line_acts_on_the_crossing_and_not_before(tmp_path: Path) -> None:
    log = _over_budget()
    guard = _guard(tmp_path, BUDGET)
    guard.prime(log.events[:2])  # header and turn start: nothing spent yet
    assert guard.observe([]) == []
    acted = guard.observe(log.events[2:])
    assert [(a.cause, a.seq) for a in acted] == [("budget", 2)]  # the crossing's own seq
    assert _sent(tmp_path) == [("alert:budget", "pause")]
