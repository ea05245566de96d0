"""Each alert rule on crafted sessions: it fires once when its condition starts, clears, and fires again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.alerts.engine import AlertEngine
from core.policies.rewind import GUARD_SOURCE
from tests.alerts.crafted import HEADER, Log, config


def engine(alerts: dict[str, Any], **kw: Any) -> AlertEngine:
    """An engine running only the rules ``alerts`` names (with their settings)."""
    from core.alerts.config import RULE_KEYS

    only = {key: alerts.get(key, {"enabled": False}) for key in RULE_KEYS.values()}
    cfg = config(only, **kw)
    e = AlertEngine(cfg.alerts, cfg.model, path="/s/session.jsonl")
    e.start(HEADER)
    return e


def fired(e: AlertEngine, log: Log, start: int = 0) -> list[tuple[str, int]]:
    """Feed the log's events from ``start`` one at a time; the (cause, seq) of every alert raised."""
    out = []
    for event in log.events[start:]:
        out.extend((a.cause, a.seq) for a in e.feed([event]))
    return out


def test_error_streak_fires_at_the_nth_failure_clears_on_a_success_and_fires_again() -> None:
    log, e = Log(), engine({"errorStreak": {"count": 2}})
    log.turn(1)
    log.result(True)
    second = log.result(True)
    log.result(True)  # still the same streak: no second alert
    assert fired(e, log) == [("error-streak", second)]
    assert [a.cause for a in e.attention] == ["error-streak"]
    n = len(log.events)
    log.result(False)
    log.result(True)
    again = log.result(True)
    assert fired(e, log, n) == [("error-streak", again)]
    alert = e.fired[-1]
    assert alert.to_dict() == {
        "session": "crafted-1", "path": "/s/session.jsonl", "cause": "error-streak", "seq": again,
        "severity": "warning", "reason": "2 tool calls failed in a row", "at": log.events[again]["time"],
    }  # fmt: skip


def _sub_call(log: Log, failed: bool) -> int:
    """A ``run_code`` sub-call of DSH's ``bash`` (``tool/code-dispatch``): a non-zero exit, or a success."""
    text = "ls: cannot access 'x'\n[exit code: 2]" if failed else "x\n"
    return log.add("tool/code-dispatch", {"rootCallId": "r", "parentCallId": "r", "subCallId": f"r:code:{len(log.events)}",
                                          "name": "bash", "arguments": {"command": "ls x"}, "isError": False,
                                          "content": [{"type": "text", "text": text}]})  # fmt: skip


def test_error_streak_counts_failed_code_mode_sub_calls_as_failed_tool_results() -> None:
    """A sub-call that failed extends the streak and one that succeeded ends it, as tool results do."""
    log, e = Log(), engine({"errorStreak": {"count": 3}})
    log.turn(1)
    log.result(True)
    _sub_call(log, True)
    third = _sub_call(log, True)
    assert fired(e, log) == [("error-streak", third)]
    n = len(log.events)
    _sub_call(log, False)
    log.result(True)
    _sub_call(log, True)
    assert fired(e, log, n) == []
    assert e.attention == []


def test_stalled_needs_the_clock_and_clears_when_the_log_moves() -> None:
    log, e = Log(), engine({"stalled": {"seconds": 60}})
    log.turn(1)
    last = log.add("step/start", {"turn": 1, "step": 1})
    assert fired(e, log) == []  # no clock, no stall
    t = log.time
    assert e.tick(t + 59_000) == []
    (alert,) = e.tick(t + 60_000)
    assert (alert.cause, alert.seq, alert.at) == ("stalled", last, t + 60_000)
    assert alert.reason == "turn 1 is open, but nothing written for 60 s"  # no host state known: not "running"
    assert e.tick(t + 120_000) == []  # once
    log.add("step/end", {"turn": 1, "step": 1}, at=t + 121_000)
    fired(e, log, last + 1)
    assert e.tick(t + 122_000) == [] and "stalled" not in e.active
    assert [a.cause for a in e.tick(t + 181_000)] == ["stalled"]


def test_stalled_is_about_a_running_host_not_a_paused_or_finished_one() -> None:
    log, e = Log(), engine({"stalled": {"seconds": 60}})
    log.turn(1)
    log.end(1)
    fired(e, log)
    assert e.tick(log.time + 600_000) == []
    assert "stalled" not in [a.cause for a in e.tick(log.time + 600_000, host_state="paused")]
    (alert,) = e.tick(log.time + 600_000, host_state="running")
    assert (alert.cause, alert.reason) == ("stalled", "running, but nothing written for 10 min")


def test_a_host_pausing_that_writes_nothing_has_stalled() -> None:
    """A pause holds the host before its next step: while ``pausing`` its step still runs. One that hangs (a tool
    that never returns) kept the session ``pausing`` for good without a word: it has stalled as a running one has."""
    log, e = Log(), engine({"stalled": {"seconds": 60}})
    log.turn(1)
    fired(e, log)
    (alert,) = e.tick(log.time + 600_000, host_state="pausing")
    assert (alert.cause, alert.reason) == ("stalled", "pausing, but nothing written for 10 min")


def test_a_tool_call_waiting_for_approval_is_waiting_not_stalled() -> None:
    """DSH asks the operator before a tool call and writes nothing until the answer, its agent running all the
    while: the session waits for the operator (``waiting``); it has not stalled, however long the answer takes.
    Once the call is decided, a quiet log stalls again."""
    log, e = Log(), engine({"stalled": {"seconds": 60}, "waiting": {}})
    log.turn(1)
    asked = log.add("approval/asked", {"id": "a1", "toolName": "bash"})
    assert fired(e, log) == [("waiting", asked)]
    assert e.tick(log.time + 600_000, host_state="running") == []
    decided = log.add("approval/decided", {"id": "a1", "outcome": "allowed-once"})
    fired(e, log, decided)
    assert [a.cause for a in e.tick(log.time + 600_000, host_state="running")] == ["stalled"]


def test_an_approval_left_open_by_a_killed_dsh_ends_with_its_turn() -> None:
    """DSH killed while a tool call waited for approval logs no ``approval/decided``: at its restart it closes the
    turn (``turn/end`` interrupted), and an approval is asked only inside its turn. The session waited for the
    operator's approval forever after (``waiting`` never cleared, ``stalled`` never fired again), and while DSH was
    down too."""
    log, e = Log(), engine({"stalled": {"seconds": 60}, "waiting": {}})
    log.turn(1)
    asked = log.add("approval/asked", {"id": "a1", "toolName": "bash"})
    assert fired(e, log) == [("waiting", asked)]
    e.tick(log.time, host_state="exited")  # nobody is asking any more while DSH is down
    assert "waiting" not in e.active
    n = len(log.events)
    log.end(1, "interrupted")  # DSH's crash repair, at its restart
    log.turn(2)
    fired(e, log, n)
    assert "waiting" not in e.active
    assert [a.cause for a in e.tick(log.time + 600_000, host_state="running")] == ["stalled"]


def test_waiting_on_a_pause_an_idle_host_or_an_approval_clears_and_fires_again() -> None:
    log, e = Log(), engine({"waiting": {}})
    paused = log.add("tapedeck/state", {"state": "paused"})
    log.add("tapedeck/state", {"state": "running"})
    idle = log.add("tapedeck/state", {"state": "idle"})
    log.add("tapedeck/state", {"state": "running"})
    asked = log.add("approval/asked", {"id": "a1", "toolName": "bash"})
    log.add("approval/decided", {"id": "a1", "outcome": "allowed-once"})
    assert fired(e, log) == [("waiting", paused), ("waiting", idle), ("waiting", asked)]
    assert e.fired[0].reason == "paused: the host holds until it is resumed"
    # the host's live state (host.json and its lock) counts as well
    assert [a.cause for a in e.tick(log.time, host_state="paused")] == ["waiting"]
    assert e.tick(log.time, host_state="running") == [] and "waiting" not in e.active


def test_waiting_on_a_dsh_session_names_dsh_not_a_host_it_never_had() -> None:
    """A DSH session paused or idle through the bridge read 'paused: the host holds …' / 'idle: the host waits …',
    naming a host the session never had, as its host column says 'DSH paused' and host-died 'DSH exited'."""
    log, e = Log(), engine({"waiting": {}})
    log.turn(1)
    log.end(1)
    fired(e, log)
    (idle,) = e.tick(log.time, host_state="idle")
    assert idle.reason == "idle: DSH waits for the next task"
    assert e.tick(log.time, host_state="running") == []
    (paused,) = e.tick(log.time, host_state="paused")
    assert paused.reason == "paused: DSH holds until it is resumed"


def test_an_idle_subagent_child_is_not_waiting_for_the_operator() -> None:
    """A subagent child that finished its task sits idle in DSH (its parent, not the operator, gives it work): it
    does not call the operator over, as an idle top-level session does; paused or asking approval, it does."""
    cfg = config({"waiting": {}})
    log, e = Log(), AlertEngine(cfg.alerts, cfg.model, path="/s/child/session.jsonl")
    e.start({**HEADER, "id": "child-1", "parentSession": "crafted-1", "origin": "subagent", "delegationDepth": 1})
    log.turn(1)
    log.end(1)
    fired(e, log)
    assert e.tick(log.time, host_state="idle") == []
    assert [a.cause for a in e.tick(log.time, host_state="paused")] == ["waiting"]


def test_a_look_at_host_json_older_than_the_logged_state_does_not_flap_waiting() -> None:
    """The host logs a change of state, then rewrites host.json: a watcher that reads the log's new state and then
    the old host.json must not clear the alert (and raise it again once host.json catches up)."""
    log, e = Log(), engine({"waiting": {}})
    log.add("tapedeck/state", {"state": "running"})
    fired(e, log)
    running_since = log.time
    assert e.tick(log.time, host_state="running", since=running_since) == []
    paused = log.add("tapedeck/state", {"state": "paused"})
    assert fired(e, log, paused) == [("waiting", paused)]
    # host.json still says what it said before the pause was logged: the log is newer
    assert e.tick(log.time, host_state="running", since=running_since) == [] and "waiting" in e.active
    # host.json caught up (written a moment before the event's time was taken): nothing new
    assert e.tick(log.time + 500, host_state="paused", since=log.time - 1) == [] and "waiting" in e.active
    assert [a.seq for a in e.fired] == [paused]
    # a later change host.json records (the log's event not read yet) counts at once
    assert e.tick(log.time + 900, host_state="running", since=log.time + 800) == []
    assert "waiting" not in e.active


def test_a_host_found_dead_is_taken_whenever_its_host_json_was_written() -> None:
    """A host killed without a word leaves host.json as it was (running, since long ago): that it exited is news
    however old the file is."""
    log, e = Log(), engine({"hostDied": {}})
    log.add("tapedeck/state", {"state": "running"})
    since = log.time
    turn = log.turn(1)
    log.add("tapedeck/state", {"state": "running"})
    fired(e, log)
    (alert,) = e.tick(log.time + 5_000, host_state="exited", since=since)
    assert (alert.cause, alert.seq) == ("host-died", turn + 1)


def test_context_from_usage_against_the_window_and_from_the_router_pressure() -> None:
    log, e = Log(), engine({"context": {"percent": 85}})
    log.header()
    log.turn(1)
    high = log.usage(1, 1, miss=60_000, hit=30_000)  # 90% of 100k
    log.usage(1, 2, miss=50_000)
    route = log.add("tapedeck/route", {"turn": 1, "step": 3, "taskClass": "small", "pressure": 0.86})
    assert fired(e, log) == [("context", high), ("context", route)]
    assert e.fired[0].reason == "context at 90% of the model's window"


def test_context_of_a_dsh_session_is_its_share_of_the_window_dsh_logged() -> None:
    """DSH logs the window it runs a request with (``request/context``'s ``contextWindow``, 128k tokens where the
    table says 1M for deepseek-v4-flash): the context rule and the fleet's ctx column take the share of that one;
    a request/context without it leaves the table's."""
    from core.alerts.rules import context_ratio

    log, e = Log(), engine({"context": {"percent": 85}}, window=1_000_000)
    log.header()
    log.add("request/context", {"provider": "p", "model": "crafted-model", "contextWindow": 128_000})
    log.turn(1)
    high = log.usage(1, 1, miss=110_000)  # 86% of 128k, 11% of 1M
    assert fired(e, log) == [("context", high)]
    assert e.fired[0].reason == "context at 86% of the model's window"
    log.add("request/context", {"provider": "p", "model": "crafted-model"})
    log.usage(1, 2, miss=110_000)
    fired(e, log, len(log.events) - 2)
    assert context_ratio(e.signals)[0] == 0.11 and not e.attention


def test_context_is_silent_when_the_window_is_unknown() -> None:
    log, e = Log(), engine({"context": {"percent": 1}}, window=None)
    log.header("unknown-model")
    log.usage(1, 1, miss=10_000_000)
    assert fired(e, log) == []


def test_context_with_an_unknown_window_goes_by_the_router_pressure_through_later_usage() -> None:
    """The model's window is unknown (not in the table, no ``model.limits``): a step's usage says nothing of the
    share then, so the router's pressure stands until the next word on it. Before, each usage after it read as
    "unknown", which cleared the alert: it fired again at the next route, once a step, for one high stretch."""
    log, e = Log(), engine({"context": {"percent": 50}}, window=None)
    log.header("unknown-model")
    log.turn(1)
    high = log.add("tapedeck/route", {"turn": 1, "step": 1, "taskClass": "small", "pressure": 0.6})
    log.usage(1, 1, miss=10_000)
    log.add("tapedeck/route", {"turn": 1, "step": 2, "taskClass": "small", "pressure": 0.62})
    log.usage(1, 2, miss=12_000)
    log.add("tapedeck/route", {"turn": 1, "step": 3, "taskClass": "small", "pressure": 0.3})  # cleared
    again = log.add("tapedeck/route", {"turn": 1, "step": 4, "taskClass": "small", "pressure": 0.7})
    assert fired(e, log) == [("context", high), ("context", again)]
    assert [t for t in e.transitions if t[0] == "context"] == [("context", True), ("context", False), ("context", True)]


def test_budget_fires_when_the_session_cost_crosses_it() -> None:
    log, e = Log(), engine({"budget": {"usd": 0.5}})
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=30_000)  # $0.30
    crossing = log.usage(1, 2, miss=30_000)  # $0.60
    assert fired(e, log) == [("budget", crossing)]
    assert e.fired[0].reason == "the session cost $0.60 (budget $0.50)"
    assert e.fired[0].severity == "critical"
    n = len(log.events)
    log.usage(1, 2, miss=10_000)  # a later sample for step 2 replaces the first: $0.40, under the budget
    again = log.usage(1, 3, miss=20_000)
    assert fired(e, log, n) == [("budget", again)]


def test_budget_counts_dshs_compaction_summary_calls_as_cost_does() -> None:
    """A DSH compaction is a model call of its own, billed from the usage its ``compaction/summary`` logs: the
    session's cost counts it (as ``tapedeck cost`` does), so the budget fires on the call that crosses it."""
    log, e = Log(), engine({"budget": {"usd": 0.5}})
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=30_000)  # $0.30
    summary = {"compactionId": "c1", "summary": [{"type": "text", "text": "s"}], "shadowedSeqs": [],
               "model": "crafted-model", "usage": {"inputTokens": 30_000, "outputTokens": 0}}  # fmt: skip
    crossing = log.add("compaction/summary", summary)  # $0.30 more
    assert fired(e, log) == [("budget", crossing)]
    assert e.fired[0].reason == "the session cost $0.60 (budget $0.50)"


def test_the_fleets_cost_of_every_dsh_fixture_is_what_cost_says(capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli import main
    from tests.conftest import FIXTURES

    for log in sorted(FIXTURES.glob("*.jsonl")):
        assert main(["cost", str(log), "--json"]) == 0
        total = json.loads(capsys.readouterr().out)["total"]["usd"]
        assert main(["sessions", str(log), "--json"]) == 0
        [row] = json.loads(capsys.readouterr().out)
        assert row["costUsd"] == (None if total is None else round(total, 6)), log.name  # six decimals kept


def test_budget_needs_a_price() -> None:
    log, e = Log(), engine({"budget": {"usd": 0}})
    log.header("unpriced-model")
    log.usage(1, 1, miss=10**9)
    assert fired(e, log) == []


def test_run_rate_fires_on_a_fast_spend_and_clears_once_it_leaves_the_window() -> None:
    log, e = Log(step_ms=1_000), engine({"runRate": {"usdPerHour": 10, "windowMinutes": 10}})
    log.header()
    log.turn(1)
    first = log.usage(1, 1, miss=20_000)  # $0.20 in the first minute: $12/h
    assert fired(e, log) == [("run-rate", first)]
    assert e.fired[0].reason == "spending $12.00/h (limit $10.00/h)"
    n = len(log.events)
    log.add("step/start", {"turn": 1, "step": 2}, at=log.time + 11 * 60_000)  # the spend left the window
    assert fired(e, log, n) == [] and "run-rate" not in e.active
    n = len(log.events)
    again = log.usage(1, 2, miss=200_000)  # $2 within 10 minutes: $12/h
    assert fired(e, log, n) == [("run-rate", again)]


def test_run_rate_decays_on_the_clock() -> None:
    log, e = Log(), engine({"runRate": {"usdPerHour": 10, "windowMinutes": 10}})
    log.header()
    log.usage(1, 1, miss=20_000)
    fired(e, log)
    assert "run-rate" in e.active
    assert e.tick(log.time + 11 * 60_000) == [] and "run-rate" not in e.active


def test_loop_counts_the_same_call_with_the_same_arguments_within_a_turn() -> None:
    log, e = Log(), engine({"loop": {"count": 3}})
    log.turn(1)
    log.call("read_file", '{"path": "a.py", "offset": 1}')
    log.call("read_file", '{"path": "b.py"}')
    log.call("read_file", '{"offset": 1, "path": "a.py"}')  # the same arguments, in another order
    third = log.call("read_file", '{"path":"a.py","offset":1}')
    log.call("read_file", '{"path":"a.py","offset":1}')
    log.end(1)
    log.turn(2)
    log.call("read_file", '{"path":"a.py","offset":1}')
    log.call("read_file", '{"path":"a.py","offset":1}')
    again = log.call("read_file", '{"path":"a.py","offset":1}')
    assert fired(e, log) == [("loop", third), ("loop", again)]
    assert e.fired[0].reason == "read_file called 3 times with the same arguments in this turn"


@pytest.mark.parametrize("depth", [300, 1000])
def test_loop_reads_arguments_nested_deeper_than_orjson_writes(depth: int) -> None:
    """Arguments past orjson's 254 levels were spelled by ``repr`` (keys in the order sent: the same call went
    uncounted) and, deeper, raised RecursionError out of the engine; they are spelled as any others."""
    log, e = Log(), engine({"loop": {"count": 3}})
    deep = "[" * depth + "]" * depth
    log.turn(1)
    log.call("read_file", f'{{"path": "a.py", "deep": {deep}}}')
    log.call("read_file", f'{{"deep": {deep}, "path": "a.py"}}')
    third = log.call("read_file", f'{{"path":"a.py","deep":{deep}}}')
    log.end(1)
    assert fired(e, log) == [("loop", third)]


def test_host_died_mid_turn_from_the_live_state_and_from_a_host_taking_over() -> None:
    log, e = Log(), engine({"hostDied": {}})
    log.add("tapedeck/host", {"model": "crafted-model"})
    log.add("tapedeck/state", {"state": "running"})
    log.turn(1)
    last = log.add("step/start", {"turn": 1, "step": 1})
    fired(e, log)
    assert e.tick(log.time) == []
    (alert,) = e.tick(log.time, host_state="exited")
    assert (alert.cause, alert.seq, alert.severity) == ("host-died", last, "critical")
    n = len(log.events)
    resumed = log.add("tapedeck/host", {"model": "crafted-model", "resumed": True})
    log.add("tapedeck/state", {"state": "running"})
    assert fired(e, log, n) == []  # still the same death until a live host is seen
    assert e.tick(log.time, host_state="running") == [] and "host-died" not in e.active
    assert [a.cause for a in e.tick(log.time, host_state="exited")] == ["host-died"]
    # replayed, the take-over alone tells that the first host died mid-turn
    replay = engine({"hostDied": {}})
    assert ("host-died", resumed - 1) in fired(replay, log)


def test_a_dsh_that_died_mid_turn_is_named_as_dsh() -> None:
    """A session DSH ran through the bridge has no tapedeck host: the alert names DSH, as its host column does
    (``DSH exited``)."""
    log, e = Log(), engine({"hostDied": {}})
    log.header()
    log.turn(1)
    fired(e, log)
    (alert,) = e.tick(log.time, host_state="exited")
    assert alert.reason == "DSH exited in the middle of turn 1"


def test_a_turn_a_new_dsh_opens_after_the_old_one_exited_is_not_a_death() -> None:
    """A DSH session whose DSH exited (killed mid-turn, or between turns) is taken up by a new DSH process, which
    opens a turn before its bridge writes bridge.json (its repair closes the old turn, then the next prompt opens
    one). Fed before the next look at the host, that turn met the old ``exited``: a critical host-died, bell and
    all, that cleared a second later. A turn opened after the host's last sign of life is another process's; one
    that opened while the host lived still died with it."""
    log, e = Log(), engine({"hostDied": {}})
    log.header()
    log.turn(1)
    fired(e, log)
    gone = log.time + 400  # the old DSH's last heartbeat, just after its turn began
    (alert,) = e.tick(gone + 10_000, host_state="exited", since=gone)
    assert alert.cause == "host-died"
    n = len(log.events)
    log.end(1, "interrupted")  # the new DSH's repair, minutes later
    log.time = gone + 120_000
    log.turn(2)
    assert fired(e, log, n) == [] and "host-died" not in e.active
    assert e.tick(log.time, host_state="exited", since=gone) == []  # its bridge.json is not written yet
    assert e.tick(log.time + 1_000, host_state="running", since=log.time) == []
    (alert,) = e.tick(log.time + 9_000, host_state="exited", since=log.time + 8_000)  # the new DSH dies too
    assert (alert.cause, alert.reason) == ("host-died", "DSH exited in the middle of turn 2")


def test_a_turn_opened_since_the_host_read_exited_waits_for_the_next_look_at_it() -> None:
    """A DSH back within seconds (a supervisor restarted it) takes the session up: its repair closes the dead turn
    and the next prompt opens one, under a second after the old DSH's last heartbeat. Fed before the next look at
    the host, that turn met the old ``exited`` and raised a false critical host-died. The turn is judged by the
    next reading of the host, the pid ``bridge.json`` then names: the new DSH's is live, so nothing fires; had
    the old DSH opened it and died (its last batch read late), it died with that turn."""
    log, e = Log(), engine({"hostDied": {}})
    log.header()
    log.turn(1)
    fired(e, log)
    gone = log.time + 400  # the old DSH's last heartbeat
    (alert,) = e.tick(gone + 1_000, host_state="exited", since=gone)
    assert alert.reason == "DSH exited in the middle of turn 1"
    n = len(log.events)
    log.end(1, "interrupted")
    log.time = gone + 600
    log.turn(2)
    assert fired(e, log, n) == [] and "host-died" not in e.active
    back = e.tick(log.time + 200, host_state="running", since=log.time - 100)  # the new DSH's bridge.json
    assert back == [] and "host-died" not in e.active
    (alert,) = e.tick(log.time + 9_000, host_state="exited", since=log.time + 8_000)  # the new DSH dies too
    assert alert.reason == "DSH exited in the middle of turn 2"

    late, e = Log(), engine({"hostDied": {}})  # the old DSH opened turn 2 and died; the look came first
    late.header()
    late.turn(1)
    late.end(1)
    fired(e, late)
    assert e.tick(late.time + 2_000, host_state="exited", since=late.time + 1_500) == []
    n = len(late.events)
    late.turn(2)
    assert fired(e, late, n) == []
    (alert,) = e.tick(late.time + 3_000, host_state="exited", since=late.time + 500)
    assert alert.reason == "DSH exited in the middle of turn 2"


def test_a_host_exiting_between_turns_did_not_die() -> None:
    log, e = Log(), engine({"hostDied": {}})
    log.add("tapedeck/host", {})
    log.turn(1)
    log.end(1)
    log.add("tapedeck/state", {"state": "exited"})
    assert fired(e, log) == [] and e.tick(log.time, host_state="exited") == []


def test_turn_error_fires_on_each_turn_that_ended_with_an_error() -> None:
    """A turn that ended with an error (the model's server refused: a bad key, a quota) stopped the run short of
    its task, and no other rule said so once its host was gone or idle: ``alerts`` on such a log said ``no
    alerts``. It fires at that turn's end, once per turn, and a turn that ends otherwise raises none."""
    log, e = Log(), engine({"turnError": {}})
    log.turn(1)
    log.end(1, "aborted")
    log.turn(2)
    failed = log.add("turn/end", {"turn": 2, "reason": {"kind": "error", "error": {"code": "AUTH", "message": "\x1b[2J401"}}})
    log.turn(3)
    bare = log.end(3, "error")
    assert fired(e, log) == [("turn-error", failed), ("turn-error", bare)]
    assert [a.reason for a in e.fired] == ["turn 2 ended with an error: AUTH: \\u001b[2J401",
                                           "turn 3 ended with an error: no cause recorded"]  # fmt: skip
    assert e.fired[0].severity == "warning" and [a.cause for a in e.attention] == ["turn-error"]


def test_turn_error_of_a_turn_end_without_its_number_names_no_turn_none() -> None:
    """A ``turn/end`` may leave out its turn number (the log's validation allows it): its alert said "turn None
    ended with an error"; it says a turn ended so, without a number the log does not hold."""
    log, e = Log(), engine({"turnError": {}})
    log.turn(1)
    log.add("turn/end", {"reason": {"kind": "error", "error": {"code": "AUTH"}}})
    assert [cause for cause, _ in fired(e, log)] == ["turn-error"]
    assert [a.reason for a in e.fired] == ["a turn ended with an error: AUTH"]


def test_turn_error_shows_a_code_that_is_no_string_as_json() -> None:
    """An error code that is no string (a hostile or hand-written log's) was shown as Python writes it
    (``{'a': [1]}``); it is shown as compact JSON, a control character in it escaped."""
    log, e = Log(), engine({"turnError": {}})
    log.turn(1)
    log.add("turn/end", {"turn": 1, "reason": {"kind": "error", "error": {"code": {"a": [1, "\x1b[2J"]}, "message": "m"}}})
    assert [cause for cause, _ in fired(e, log)] == ["turn-error"]
    assert [a.reason for a in e.fired] == ['turn 1 ended with an error: {"a":[1,"\\u001b[2J"]}: m']


def test_the_error_finish_fixture_raises_turn_error(capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli import main
    from tests.conftest import FIXTURES

    assert main(["alerts", str(FIXTURES / "error-finish.session.jsonl"), "--json"]) == 1
    [alert] = json.loads(capsys.readouterr().out)
    assert (alert["cause"], alert["seq"]) == ("turn-error", 11)
    assert alert["reason"] == "turn 1 ended with an error: AUTH: simulated provider error (HTTP 401)"


def test_rewind_guard_fires_per_turn() -> None:
    log, e = Log(), engine({"rewindGuard": {}})
    log.turn(1)
    guard = {"role": "user", "content": [{"type": "text", "text": "fold first"}], "source": dict(GUARD_SOURCE)}
    first = log.add("user/message", guard, surfaceOp="append")
    log.end(1)
    log.turn(2)
    second = log.add("user/message", guard, surfaceOp="append")
    assert fired(e, log) == [("rewind-guard", first), ("rewind-guard", second)]


def test_class_change_fires_when_the_router_moves_to_another_class() -> None:
    log, e = Log(), engine({"classChange": {}})
    route: dict[str, Any] = {"turn": 1, "step": 1, "phase": "normal"}
    log.add("tapedeck/route", {**route, "taskClass": "read"})
    changed = log.add("tapedeck/route", {**route, "taskClass": "small"})
    log.add("tapedeck/route", {**route, "taskClass": "small"})
    back = log.add("tapedeck/route", {**route, "taskClass": "read"})
    assert fired(e, log) == [("class-change", changed), ("class-change", back)]
    assert e.fired[0].reason == "the router changed the task class from read to small"


def test_unreachable_comes_from_the_transport() -> None:
    e = engine({"unreachable": {}})
    (alert,) = e.reachable(False, 5_000, "ssh: connection refused")
    assert (alert.cause, alert.reason, alert.at) == ("unreachable", "ssh: connection refused", 5_000)
    assert e.reachable(False, 6_000) == []
    assert e.reachable(True, 7_000) == []
    assert [a.cause for a in e.reachable(False, 8_000)] == ["unreachable"]


def test_unreachable_withdraws_stalled_which_returns_only_once_the_log_is_reached_again() -> None:
    """A session found stalled, then unreachable, was listed as both: that it stalled can no longer be known once its
    log cannot be read. ``unreachable`` withdraws ``stalled``, and a tick while the log is out of reach (a caller
    that ticks anyway) raises it no more; once the log is reached again, the next tick judges it afresh."""
    log, e = Log(), engine({"stalled": {"seconds": 60}, "unreachable": {}})
    log.turn(1)
    fired(e, log)
    t = log.time
    assert [a.cause for a in e.tick(t + 60_000)] == ["stalled"]
    assert [a.cause for a in e.reachable(False, t + 61_000, "gone")] == ["unreachable"]
    assert list(e.active) == ["unreachable"] and e.transitions[-2:] == [("stalled", False), ("unreachable", True)]
    assert e.tick(t + 200_000) == [] and list(e.active) == ["unreachable"]
    assert e.reachable(True, t + 201_000) == [] and e.active == {}
    assert [a.cause for a in e.tick(t + 202_000)] == ["stalled"]



def test_rules_turned_off_never_fire() -> None:
    """Every rule off (the helper turns off what it is not given): nothing fires, whatever happens."""
    e = engine({})
    log = Log()
    log.header()
    log.turn(1)
    for _ in range(5):
        log.call("x", "{}")
        log.result(True)
        log.usage(1, 1, miss=10**8)
    log.add("tapedeck/state", {"state": "paused"})
    log.add("tapedeck/route", {"taskClass": "a", "pressure": 1.0})
    log.add("tapedeck/route", {"taskClass": "b", "pressure": 1.0})
    assert fired(e, log) == []
    assert e.tick(log.time + 10**9, host_state="exited") == []
    assert e.reachable(False, 0) == []


def test_an_invalid_or_hostile_event_is_folded_without_a_crash() -> None:
    e = engine({"errorStreak": {"count": 1}})
    hostile: list[dict[str, Any]] = [
        {"type": "tool/result", "seq": 0, "data": {"message": "not a dict"}},
        {"type": "tool/call", "seq": 1, "data": {"name": 3, "arguments": [1]}},
        {"type": "tool/call", "seq": 2, "data": {"name": "x", "arguments": {"a": float("nan")}}},
        {"type": "assistant/message", "seq": 3, "data": {"usage": {"inputTokens": "many"}}},
        {"type": "tapedeck/route", "seq": 4, "data": {"taskClass": None, "pressure": True}},
        {"type": "approval/decided", "seq": 5, "data": {"id": ["x"]}},
        {"type": 7, "seq": 6, "data": None},
        {"type": "turn/start", "seq": 7, "time": "soon", "data": {"turn": "one"}},
    ]
    assert e.feed(hostile) == []


def test_a_class_change_is_active_but_never_asks_for_the_operator() -> None:
    log, e = Log(), engine({"classChange": {}, "errorStreak": {"count": 1}})
    log.add("tapedeck/route", {"taskClass": "read"})
    log.add("tapedeck/route", {"taskClass": "small"})
    fired(e, log)
    assert set(e.active) == {"class-change"} and e.attention == []
    log.result(True)
    fired(e, log, len(log.events) - 1)
    assert [a.cause for a in e.attention] == ["error-streak"]
