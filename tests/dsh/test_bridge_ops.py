"""Every control op on a live session of the real DSH, through the bridge plugin, during turns of slow steps.

One ``dsh web`` serves the module; each test opens its own session. Assertions read what DSH wrote (the session
log) and what the plugin wrote beside it (outcomes, ``bridge.json``, ``bridge.state.json``), and the requests the
scripted model received.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.policies.fold import preview_fold
from core.policies.slice_config import SliceConfig
from core.read.load import load_session
from core.read.summary import summarize
from tests.dsh.harness import (
    DshHome,
    DshWeb,
    ScriptedModel,
    bridge_json,
    done_seq,
    final_outcome,
    known_event_types,
    log_events,
    outcomes,
    send,
    send_line,
    start_session,
    td_runs,
    tool_in_flight,
    wait_for,
)

SLOW = "steps=3 sleep=2"  # three bash steps of 2 s each, then an answer


def _start(world: DshHome, web: DshWeb, prompt: str = f"Work slowly: {SLOW}", in_flight: bool = True) -> tuple[str, Path]:
    return start_session(world, web, prompt, in_flight)


def _types_after(events: list[dict[str, Any]], seq: int) -> list[str]:
    return [e["type"] for e in events if e["seq"] > seq]


def _turn_ends(d: Path) -> list[dict[str, Any]]:
    return [e for e in log_events(d) if e["type"] == "turn/end"]


def _idle(d: Path, turns: int, timeout: float = 60.0) -> None:
    wait_for(lambda: len(_turn_ends(d)) >= turns, timeout, f"turn {turns} to end")
    wait_for(lambda: bridge_json(d)["state"] in ("idle", "paused"), 60, "the bridge to see the agent idle")


def _own_types_only(dsh_types: set[str], d: Path) -> None:
    foreign = {e["type"] for e in log_events(d)} - dsh_types
    assert not foreign, f"event types DSH does not know: {foreign}"


def test_pause_holds_the_next_step_and_resume_releases_it(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    _, d = _start(world, web)
    pause = send(d, "pause")
    assert final_outcome(d, pause["id"])["outcome"] == "applied"
    # The step in flight ends, then the gate holds: bridge.json says paused and no step starts.
    wait_for(lambda: bridge_json(d)["state"] == "paused", 60, "state paused")
    held = done_seq(log_events(d), pause["id"])
    resume = send(d, "resume")
    assert final_outcome(d, resume["id"])["outcome"] == "applied"
    wait_for(lambda: "step/start" in _types_after(log_events(d), held), 60, "a step after resume")
    # held until then: no step started between the pause's answer and the resume's command (one started during
    # the pause, however late, would be there)
    events = log_events(d)
    [resumed] = [run["seq"] for run, _ in td_runs(events) if run["request"]["id"] == resume["id"]]
    assert "step/start" not in [e["type"] for e in events if held < e["seq"] < resumed]
    _idle(d, 1)
    assert _turn_ends(d)[-1]["data"]["reason"] == {"kind": "completed"}
    state = json.loads((d / "bridge.state.json").read_text())
    assert state["paused"] is False and state["cursor"]["offset"] == (d / "control.jsonl").stat().st_size


def test_a_requests_origin_is_in_its_outcome_and_in_the_logged_command(shared_web: tuple[DshHome, DshWeb]) -> None:
    """What sent a request (an alert's action, the fleet) stays with it through the bridge, as on our host: in the
    outcome line, in the ``td`` command DSH logs and in the event list's line for its outcome."""
    world, web = shared_web
    _, d = _start(world, web)
    pause = send(d, "pause", origin="alert:budget")
    assert final_outcome(d, pause["id"])["origin"] == "alert:budget"
    events = log_events(d)
    [(run, done)] = [(r, o) for r, o in td_runs(events) if r["request"]["id"] == pause["id"]]
    assert run["request"]["origin"] == "alert:budget" and done is not None
    assert summarize(done).startswith(f"bridge pause applied (sent by alert:budget) [{pause['id']}]")
    assert final_outcome(d, send(d, "resume")["id"])["outcome"] == "applied"
    _idle(d, 1)


def test_pause_from_idle_is_paused_and_a_message_opens_a_held_turn(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    sid, d = _start(world, web, "Quick: steps=1 sleep=0", in_flight=False)
    _idle(d, 1)
    pause = send(d, "pause")
    assert final_outcome(d, pause["id"])["detail"] == {"state": "paused"}
    assert bridge_json(d)["state"] == "paused"
    held = done_seq(log_events(d), pause["id"])
    message = send(d, "message", {"text": "a new turn while paused: steps=1 sleep=0", "mode": "queue"})
    assert final_outcome(d, message["id"])["outcome"] == "applied"
    wait_for(lambda: "turn/start" in _types_after(log_events(d), held), 60, "the queued message to open a turn")
    assert bridge_json(d)["state"] == "paused"  # a turn is open, but it is held, not stuck (no step: see below)
    # stop still works while paused
    stop = send(d, "stop", {"reason": "operator: not now"})
    assert final_outcome(d, stop["id"])["outcome"] == "applied"
    wait_for(lambda: len(_turn_ends(d)) == 2, 60, "the held turn to end")
    assert _turn_ends(d)[-1]["data"]["reason"] == {
        "kind": "aborted",
        "reason": {"kind": "hook", "reason": "operator: not now", "by": "operator"},
    }
    assert "step/start" not in _types_after(log_events(d), held)
    send(d, "resume")
    wait_for(lambda: bridge_json(d)["state"] == "idle", 60, "state idle after resume")


def test_stop_mid_tool_aborts_the_turn_with_the_reason(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    _, d = _start(world, web)
    stop = send(d, "stop", {"reason": "operator says enough"})
    assert final_outcome(d, stop["id"])["outcome"] == "applied"
    wait_for(lambda: _turn_ends(d), 60, "turn/end")
    events = log_events(d)
    [end] = _turn_ends(d)
    assert end["data"]["reason"] == {  # DSH records the cause the plugin gives it: it says who stopped the turn
        "kind": "aborted",
        "reason": {"kind": "hook", "reason": "operator says enough", "by": "operator"},
    }
    assert summarize(end, 200) == "turn 1 ended: aborted by the operator: operator says enough"
    [result] = [e["data"]["message"]["content"][0] for e in events if e["type"] == "tool/result"]
    assert result["isError"] and "aborted" in json.dumps(result["content"])
    # the bridge's command pair sits between the tool call and its result: DSH accepts it anywhere in a turn
    run = done_seq(events, stop["id"])
    call = next(e["seq"] for e in events if e["type"] == "tool/call")
    assert call < run < next(e["seq"] for e in events if e["type"] == "tool/result")
    # a stop with nothing running is refused, not silently applied
    idle_stop = send(d, "stop")
    assert "idle" in final_outcome(d, idle_stop["id"])["error"]


def test_message_steers_into_the_running_turn_and_queue_waits_for_the_next(
    shared_web: tuple[DshHome, DshWeb], model: ScriptedModel
) -> None:
    world, web = shared_web
    sid, d = _start(world, web)
    steer = send(d, "message", {"text": "STEER: also mention the weather"})
    queued = send(d, "message", {"text": "QUEUED: next turn please", "mode": "queue"})
    assert final_outcome(d, steer["id"])["detail"] == {"mode": "steer"}
    assert final_outcome(d, queued["id"])["detail"] == {"mode": "queue"}
    _idle(d, 2)
    events = log_events(d)
    turn_of = {}
    turn = 0
    for e in events:
        if e["type"] == "turn/start":
            turn = e["data"]["turn"]
        if e["type"] == "user/message":
            turn_of[json.dumps(e["data"]["content"])] = turn
    steer_turn = next(t for k, t in turn_of.items() if "STEER:" in k)
    queued_turn = next(t for k, t in turn_of.items() if "QUEUED:" in k)
    assert steer_turn == 1 and queued_turn == 2
    seen = [r for r in model.requests(sid) if "STEER:" in r.raw.decode()]
    assert seen and seen[0].body["messages"][1]["content"]  # the model saw the steer inside turn 1
    first_turn_requests = [r for r in model.requests(sid) if "QUEUED:" not in r.raw.decode()]
    assert any("STEER:" in r.raw.decode() for r in first_turn_requests)


def test_checkpoint_mid_turn_then_rewind_at_idle_shrinks_the_next_request(
    shared_web: tuple[DshHome, DshWeb], model: ScriptedModel
) -> None:
    world, web = shared_web
    sid, d = _start(world, web)
    objective = "k" * 100 + "\x1b]0;t\x07\nforged"  # the inbox's: a label of 100 characters, an escape, a newline
    mark = send(d, "checkpoint", {"objective": objective})  # mid-turn
    detail = final_outcome(d, mark["id"])["detail"]
    assert detail["markId"] == 1 and isinstance(detail["seq"], int) and detail["objective"] == objective
    rewind = send(d, "rewind")  # sent while the turn runs: it waits for idle
    wait_for(lambda: any(o["requestId"] == rewind["id"] and o["outcome"] == "pending" for o in outcomes(d)), 60, "pending")
    _idle(d, 1)
    before = len(model.requests(sid)[-1].body["messages"])
    done = final_outcome(d, rewind["id"])
    assert done["outcome"] == "applied", done
    replaced = next(e for e in log_events(d) if e["seq"] == done["detail"]["seq"])
    assert replaced["type"] == "user/message"
    # the mark's objective is named in the model's context as the checkpoint tool names one: cut, controls escaped
    assert f"checkpoint 1 ({'k' * 79}…). " in replaced["data"]["content"][0]["text"], replaced
    assert replaced["surfaceOp"] == {"op": "replace", "start": done["detail"]["start"], "end": done["detail"]["end"]}
    assert len(replaced["sourceEventSeqs"]) == done["detail"]["foldedNodes"] >= 3
    web.prompt(sid, "after the rewind: steps=1 sleep=0")
    _idle(d, 2)
    after_rewind = [r for r in model.requests(sid) if "after the rewind" in r.raw.decode()]
    assert len(after_rewind[0].body["messages"]) < before
    state = json.loads((d / "bridge.state.json").read_text())
    assert [(m["markId"], m.get("completed")) for m in state["marks"]] == [(1, True)]
    # a mark that does not exist, or that a rewind completed, is refused by name; ids never repeat
    unknown = send(d, "rewind", {"markId": 7})
    assert "no checkpoint mark 7" in final_outcome(d, unknown["id"])["error"]
    again = send(d, "rewind", {"markId": 1})
    assert "mark 1 is no longer active" in final_outcome(d, again["id"])["error"]
    assert final_outcome(d, send(d, "checkpoint")["id"])["detail"]["markId"] == 2


def test_rewind_that_cannot_wait_for_idle_is_rejected_with_the_reason(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    _, d = _start(world, web)
    final_outcome(d, send(d, "checkpoint", {"objective": "try the slow path"})["id"])
    rewind = send(d, "rewind", expires=int(time.time() * 1000) + 1500)
    assert "stayed busy until the request expired" in final_outcome(d, rewind["id"])["error"]
    _idle(d, 1)


def test_a_wait_that_ends_while_the_rewind_waits_for_idle_says_it_was_pending(
    shared_web: tuple[DshHome, DshWeb], capsys: pytest.CaptureFixture[str]
) -> None:
    """``control --wait`` that times out while the bridge holds a rewind for the turn to end says the bridge
    acknowledged it (pending, waiting for idle), not that nothing answered; the request is withdrawn, never
    applied."""
    world, web = shared_web
    _, d = _start(world, web)
    final_outcome(d, send(d, "checkpoint")["id"])
    assert main(["control", str(d), "rewind", "--wait", "--timeout", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "no outcome" not in err and "still pending (waitingFor: idle) after 1.5 s" in err, err
    [rewind] = [o for o in outcomes(d) if o["op"] == "rewind" and o["outcome"] != "pending"]
    assert rewind["outcome"] == "cancelled"
    _idle(d, 1)


def test_config_set_changes_the_next_request_and_refuses_unknown_keys(
    shared_web: tuple[DshHome, DshWeb], model: ScriptedModel
) -> None:
    world, web = shared_web
    sid, d = _start(world, web)
    effort = send(d, "config.set", {"key": "reasoningEffort", "value": "low"})
    assert final_outcome(d, effort["id"])["outcome"] == "applied"
    unknown = send(d, "config.set", {"key": "slice.history.keepRecentTurns", "value": 2})
    error = final_outcome(d, unknown["id"])["error"]
    assert "supported keys: model, reasoningEffort" in error and "shell" in error
    timeout = send(d, "config.set", {"key": "shell.timeoutMs", "value": 45000})
    assert final_outcome(d, timeout["id"])["outcome"] == "applied"
    # values DSH refuses are rejected with DSH's reason, and change nothing
    # DSH's reason quotes the value as it came ('does not support reasoning effort "x<ESC>[2J forged"'): the
    # plugin quotes that reason as the host quotes an exception's text, so no escape sequence goes out raw
    for key, value in (("reasoningEffort", "extreme"), ("model", "no-such-model"), ("shell.timeoutMs", "soon"),
                       ("reasoningEffort", "x\x1b[2J\nforged"), ("shell.timeoutMs", "x\x1b[2J\nforged")):  # fmt: skip
        bad = send(d, "config.set", {"key": key, "value": value})
        error = final_outcome(d, bad["id"])["error"]
        assert f"config.set {key}: DSH refused" in error and "\x1b" not in error and "\n" not in error, error
        assert "forged" not in value or error.count("x\\u001b[2J") == 2, error  # the value shown, DSH's reason quoted
    _idle(d, 1)
    events = log_events(d)
    after = done_seq(events, effort["id"])
    headers = [e for e in events if e["type"] == "request/header" and e["seq"] > after]
    assert headers and headers[0]["data"]["header"]["config"]["reasoningEffort"] == "low"
    assert model.requests(sid)[-1].body.get("reasoning_effort") == "low"
    assert "45000" in (world.home / "settings.yaml").read_text()


def test_two_ops_sent_at_once_run_one_at_a_time(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    _, d = _start(world, web)
    first = {"id": "both-1", "op": "checkpoint", "args": {"objective": "one"}, "at": int(time.time() * 1000)}
    second = {"id": "both-2", "op": "message", "args": {"text": "two at once"}, "at": int(time.time() * 1000)}
    send_line(d, (json.dumps(first) + "\n" + json.dumps(second)).encode())
    assert final_outcome(d, "both-1")["outcome"] == "applied"
    assert final_outcome(d, "both-2")["outcome"] == "applied"
    done_seq(log_events(d), "both-2")  # an outcome is written once the log holds its command pair
    _idle(d, 1)
    events = log_events(d)
    commands = [(e["type"], e["data"]["commandId"]) for e in events if e["type"].startswith("command/")]
    # each run is settled before the next one starts
    for (kind_a, id_a), (kind_b, id_b) in zip(commands[::2], commands[1::2], strict=True):
        assert (kind_a, kind_b) == ("command/run", "command/done") and id_a == id_b
    assert [run["request"]["id"] for run, _ in td_runs(events)] == ["both-1", "both-2"]


def test_a_request_id_written_twice_runs_once(shared_web: tuple[DshHome, DshWeb]) -> None:
    world, web = shared_web
    _, d = _start(world, web)
    twice = {"id": "twice-1", "op": "message", "args": {"text": "only once"}, "at": int(time.time() * 1000)}
    line = json.dumps(twice).encode()
    send_line(d, line + b"\n" + line)  # a sender that repeats itself in one write
    assert final_outcome(d, "twice-1")["outcome"] == "applied"
    send_line(d, line)  # and again after it ran
    final_outcome(d, send(d, "checkpoint")["id"])
    _idle(d, 1)
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))].count("twice-1") == 1
    assert [o["requestId"] for o in outcomes(d)].count("twice-1") == 1
    steers = [e for e in log_events(d) if e["type"] == "user/message" and "only once" in json.dumps(e["data"])]
    assert len(steers) == 1
    # a line reusing a taken id is a retry, as on tapedeck's host: the bridge says so (bridge.json's problem)
    assert "reuses request id twice-1, taken already" in bridge_json(d)["problem"]


def test_a_line_reusing_a_waiting_requests_id_is_a_retry_never_a_second_effect(
    shared_web: tuple[DshHome, DshWeb],
) -> None:
    """While a rewind waits for idle, lines reusing its id (another op, or malformed) neither run nor answer it:
    the rewind keeps its one outcome, applied at idle, and the bridge warns of the reuse."""
    world, web = shared_web
    _, d = _start(world, web)
    final_outcome(d, send(d, "checkpoint")["id"])
    rewind = send(d, "rewind", id="it's\x1b]2;x\x07" + "y" * 190)  # any text of up to 200: named as control names one
    wait_for(lambda: any(o["requestId"] == rewind["id"] and o["outcome"] == "pending" for o in outcomes(d)), 60, "pending")
    now = int(time.time() * 1000)
    send_line(d, json.dumps({"id": rewind["id"], "op": "message", "args": {"text": "SECOND EFFECT"}, "at": now}).encode())
    said = "reuses request id it's\\u001b]2;x\\u0007" + "y" * 69 + "…, taken already"
    wait_for(lambda: said in ((bridge_json(d) or {}).get("problem") or ""), 60, "the warning")
    send_line(d, json.dumps({"id": rewind["id"], "op": "explode", "args": {}, "at": now}).encode())
    marker = send(d, "checkpoint")
    final_outcome(d, marker["id"])  # the lines before it were read
    _idle(d, 1)
    done = final_outcome(d, rewind["id"])
    assert (done["op"], done["outcome"]) == ("rewind", "applied"), done
    assert [(o["op"], o["outcome"]) for o in outcomes(d) if o["requestId"] == rewind["id"]] == [
        ("rewind", "pending"), ("rewind", "applied")]
    assert [run["request"]["op"] for run, _ in td_runs(log_events(d)) if run["request"]["id"] == rewind["id"]] == ["rewind"]
    assert "SECOND EFFECT" not in json.dumps(log_events(d))


HOSTILE: list[tuple[bytes, str | None, str]] = [
    (b'{"id":"deep-1","op":"message","args":{"text":' + b"[" * 1000 + b"]" * 1000 + b"}}", "deep-1", "nested deeper than 32"),
    (b'{"id":"sur-1","op":"message","args":{"text":"a\\ud800b"}}', "sur-1", "not valid JSON"),
    (b'{"id":"big-1","op":"message","args":{"text":"' + b"x" * (2 << 20) + b'"}}', "big-1", "longer than 1048576 bytes"),
    (b'{"id":"op-1","op":"explode","args":{}}', "op-1", 'unknown control op "explode"'),
    (b'{"id":"arg-1","op":"expand","args":{"seq":-4}}', "arg-1", "'seq' must be a non-negative integer"),
    (b'{"id":"arg-2","op":"pause","args":[1,2]}', "arg-2", "args must be a JSON object"),
    (b'{"id":"bin-1","op":"message","args":{"text":"caf\xe9"}}', "bin-1", "is not UTF-8: its byte 48 (0xe9)"),
    (b"\xff\xfe not json at all", None, "is not UTF-8: its byte 0 (0xff)"),
    (b'["an","array"]', None, "is not a JSON object"),
    (b'{"op":"pause"}', None, "has no request id"),
]


def test_hostile_inbox_lines_are_rejected_never_a_crash(
    shared_web: tuple[DshHome, DshWeb], dsh: Any
) -> None:
    world, web = shared_web
    _, d = _start(world, web, "Short: steps=1 sleep=1")
    problems = []
    for line, request_id, message in HOSTILE:
        send_line(d, line)
        if request_id is None:
            wait_for(lambda m=message: m in ((bridge_json(d) or {}).get("problem") or ""), 60, f"problem {message}")
            problems.append(message)
        else:
            out = final_outcome(d, request_id)
            assert out["outcome"] == "rejected" and message in out["error"], out
    # the bridge still works, and none of the rejected lines reached DSH's command log
    ok = send(d, "checkpoint")
    assert final_outcome(d, ok["id"])["outcome"] == "applied"
    assert [run["request"]["id"] for run, _ in td_runs(log_events(d))] == [ok["id"]]
    _idle(d, 1)
    _own_types_only(known_event_types(dsh), d)


def test_an_inbox_that_is_a_symlink_or_not_0600_is_handled(shared_web: tuple[DshHome, DshWeb], tmp_path: Path) -> None:
    world, web = shared_web
    _, d = _start(world, web, "Short: steps=1 sleep=1")
    inbox = d / "control.jsonl"
    send(d, "checkpoint")
    os.chmod(inbox, 0o644)
    wait_for(lambda: (inbox.stat().st_mode & 0o777) == 0o600, 60, "the inbox mode to be fixed to 0600")
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(json.dumps({"id": "via-link", "op": "pause", "args": {}}) + "\n")
    aside = tmp_path / "control.jsonl"  # the inbox the bridge read, kept (a new one could reuse its inode number)
    inbox.rename(aside)
    inbox.symlink_to(elsewhere)
    wait_for(lambda: "symbolic link" in ((bridge_json(d) or {}).get("problem") or ""), 60, "the symlink problem")
    inbox.unlink()
    wait_for(lambda: "problem" not in bridge_json(d), 60, "the problem to clear once the link is gone")
    # it has looked again since the link went: a request read through the link would have been answered by now
    assert not any(o["requestId"] == "via-link" for o in outcomes(d))
    # a file-system error names what the bridge was doing, the file, the call and the errno code: a socket where
    # the inbox should be cannot be opened
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s"))  # the session directory's path is too long for a socket's
        (tmp_path / "s").rename(inbox)
        said = f"cannot open the control inbox {inbox}: open failed with ENXIO (no such device or address)"
        wait_for(lambda: (bridge_json(d) or {}).get("problem") == said, 60, "the socket problem")
        inbox.unlink()
    # nor an outcomes file that is a link appended to
    answers = d / "control.outcomes.jsonl"
    kept = tmp_path / "outcomes.jsonl"
    answers.rename(kept)
    answers.symlink_to(kept)
    aside.rename(inbox)
    send(d, "checkpoint")
    said = f"cannot append to the outcomes file {answers}: open failed with ELOOP (too many symbolic links encountered)"
    wait_for(lambda: (bridge_json(d) or {}).get("problem") == said, 60, "the outcomes problem")
    answers.unlink()
    kept.rename(answers)
    # a state file that cannot be written is noted, and the op stands (the log holds the mark): it was answered
    # rejected while its mark stayed
    state = d / "bridge.state.json"
    state.rename(tmp_path / "state.json")
    state.mkdir()
    (state / "held").touch()  # not empty: the rename onto it fails
    mark = send(d, "checkpoint")
    assert final_outcome(d, mark["id"])["outcome"] == "applied"
    tmp = d / f".bridge.state.json.{bridge_json(d)['pid']}.tmp"
    said = f"cannot write {state}: rename {tmp} to {state} failed with EISDIR (illegal operation on a directory)"
    assert bridge_json(d)["problem"] == said
    (state / "held").unlink()
    state.rmdir()
    # an inbox removed and made again is read from its start, also where the new file has the old one's inode
    # number (here the old file itself, written anew while its name was gone): the bridge read on from where it had
    # read the old one, past the new request
    os.link(inbox, aside)
    inbox.unlink()
    wait_for(lambda: _cursor(d) == {"ino": 0, "offset": 0}, 60, "the bridge to see the inbox gone")
    again = {"id": "again-1", "op": "checkpoint", "args": {}, "at": int(time.time() * 1000)}
    aside.write_bytes(json.dumps(again).encode() + b"\n" * (aside.stat().st_size + 1))  # blank lines: skipped
    aside.rename(inbox)
    assert final_outcome(d, "again-1")["outcome"] == "applied"
    _idle(d, 1)


def _cursor(d: Path) -> dict[str, int] | None:
    """How far the bridge has read the inbox, as its state file says (None before it wrote one)."""
    try:
        return json.loads((d / "bridge.state.json").read_text())["cursor"]
    except (OSError, ValueError):
        return None


def test_every_event_type_in_bridged_logs_is_dshs_own(shared_web: tuple[DshHome, DshWeb], dsh: Any) -> None:
    world, _ = shared_web
    known = known_event_types(dsh)
    logs = list(world.sessions.glob("*/*/session.jsonl"))
    if not logs:
        pytest.skip("no bridged session logs in this run (the op tests did not run)")
    for log in logs:
        _own_types_only(known, log.parent)
        assert not any(t.startswith("tapedeck/") for t in {e["type"] for e in log_events(log.parent)})


def test_expand_puts_a_pruned_result_back_and_the_next_request_grows(
    shared_web: tuple[DshHome, DshWeb], model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    world, web = shared_web
    # One step prints 60,000 chars while the model reports a prompt near the window: DSH prunes that result.
    sid = web.create_session()
    web.prompt(sid, "Print a lot: steps=1 sleep=0 big=60000 report=95000")
    d = world.session_dir(sid)
    _idle(d, 1)
    events = log_events(d)
    prunes = [e for e in events if e["type"] == "compaction/prune"]
    assert prunes, "DSH did not prune the big result"
    original = prunes[0]["data"]["shadowedSeqs"][0]
    plain = send(d, "expand", {"seq": next(e["seq"] for e in events if e["type"] == "user/message")})
    assert "not a tool result" in final_outcome(d, plain["id"])["error"]
    before = len(model.requests(sid)[-1].raw)
    expand = send(d, "expand", {"seq": original})
    done = final_outcome(d, expand["id"])
    assert done["outcome"] == "applied", done
    replacement = next(e for e in log_events(d) if e["seq"] == done["detail"]["seq"])
    assert replacement["type"] == "tool/result" and original in replacement["sourceEventSeqs"]
    full = next(e for e in log_events(d) if e["seq"] == original)["data"]["message"]["content"]
    assert replacement["data"]["message"]["content"] == full and len(json.dumps(full)) > 40_000
    again = send(d, "expand", {"seq": original})
    assert "already shown in full" in final_outcome(d, again["id"])["error"]
    web.prompt(sid, "after the expand: steps=1 sleep=0")
    _idle(d, 2)
    after = [r for r in model.requests(sid) if "after the expand" in r.raw.decode()]
    assert len(after[0].raw) > before + 30_000
    # tapedeck's readers call it an expansion, not a second prune of the result DSH pruned
    session = load_session(d)
    assert [(c.seq, c.kind) for c in session.cuts] == [(done["detail"]["replaced"], "prune"), (done["detail"]["seq"], "expand")]
    [row] = [r for r in preview_fold(session, SliceConfig()) if r.seq == done["detail"]["seq"]]
    assert (row.status, row.reason) == ("unfolded", f"restored by the operator (original seq {original})")
    assert main(["diff", str(d), "--turn", "2", "--step", "1"]) == 0
    assert f"expand at seq {done['detail']['seq']};" in capsys.readouterr().out


def test_a_stop_is_not_held_behind_a_rewind_that_a_queued_message_sent_back_to_wait(
    shared_web: tuple[DshHome, DshWeb],
) -> None:
    """At idle, a queued message and a rewind sent together: the message starts a turn before the rewind runs.
    The rewind waited for idle inside the op queue, so a stop sent during that turn waited for the turn to end and
    was then refused as idle; the rewind now goes back to wait outside the queue and the stop aborts the turn."""
    world, web = shared_web
    _, d = _start(world, web, "Quick: steps=1 sleep=0", in_flight=False)
    _idle(d, 1)
    final_outcome(d, send(d, "checkpoint")["id"])
    now = int(time.time() * 1000)
    message = {"id": "held-m", "op": "message", "args": {"text": "next: steps=6 sleep=2", "mode": "queue"}, "at": now}
    rewind = {"id": "held-r", "op": "rewind", "args": {}, "at": now}
    send_line(d, (json.dumps(message) + "\n" + json.dumps(rewind)).encode())
    assert final_outcome(d, "held-m")["outcome"] == "applied"
    wait_for(lambda: tool_in_flight(d), 60, "a step of the new turn")
    stop = send(d, "stop", {"reason": "not this turn"})
    assert final_outcome(d, stop["id"])["outcome"] == "applied"  # one held behind the turn: refused, idle
    wait_for(lambda: len(_turn_ends(d)) == 2, 60, "the stopped turn to end")
    assert _turn_ends(d)[-1]["data"]["reason"]["kind"] == "aborted"
    _idle(d, 2)
    assert final_outcome(d, "held-r")["outcome"] == "applied"  # at idle, once the stopped turn ended
    assert [o["outcome"] for o in outcomes(d) if o["requestId"] == "held-r"] == ["pending", "applied"]


@pytest.mark.parametrize("body", [b"null", b"[]"])
def test_a_bridge_json_of_another_shape_is_taken_for_none(shared_web: tuple[DshHome, DshWeb], body: bytes) -> None:
    """A bridge.json that holds JSON but no object (null, a list) where a session starts: the plugin
    read null's fields and threw at every attempt to attach, so no bridge ever served the session (its inbox
    unanswered, the file never rewritten); a file of another shape says nothing, as none."""
    world, web = shared_web
    _, first = _start(world, web, "Short: steps=1 sleep=0", in_flight=False)
    sid = web.create_session()
    d = first.parent / sid  # where DSH keeps the session (made before DSH writes there)
    d.mkdir()
    (d / "bridge.json").write_bytes(body)
    web.prompt(sid, "Short: steps=1 sleep=0")
    mark = send(d, "checkpoint", {"objective": "served"})
    assert final_outcome(d, mark["id"])["outcome"] == "applied"
    assert bridge_json(d)["state"] in ("running", "idle")
