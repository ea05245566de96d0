"""Live control against a slow loopback model: requests act during a model call or a tool, never fire late."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.control import inbox as control
from core.control.config import load_config, validate_config
from core.control.host_state import read_host_state, read_inbox_position, state_path
from core.host import hooks
from core.host.loop import AgentHost, HostOptions, TurnOutcome
from core.host.providers.openai_provider import OpenAIProvider
from core.host.providers.retry import RetryPolicy
from core.log.reader import read_log
from core.read.facts import SessionFacts
from core.shared.errors import ConfigError
from tests.host.sse_server import ChatServer, Reply, chunk, error_reply, text_reply, tool_delta

SLOW = 30.0  # the model's answers take this long unless the host interrupts them


def _wait(predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    return value


def _slow_text(text: str = "a slow answer") -> Reply:
    reply = text_reply(*text.split(" "))
    reply.delay = SLOW
    return reply


def _tool_reply(command: str, delay: float = 0.0) -> Reply:
    args = json.dumps({"command": command})
    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk(tool_delta(0, args[:5], call_id="call_1", name="bash")),
        chunk(tool_delta(0, args[5:])),
        chunk(finish="tool_calls"),
        chunk(usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
    ]
    return Reply(chunks, delay=delay)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


class Running:
    """A host on a thread, against the loopback model."""

    def __init__(self, tmp_path: Path, server: ChatServer, tasks: list[str], *, linger: bool = False) -> None:
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        self.model = OpenAIProvider(
            api_key="k", base_url=server.base_url, model="m", retry=RetryPolicy(max_retries=0)
        )
        self.said: list[str] = []  # what the host tells the operator (tapedeck run's output)
        self.host = AgentHost.create(
            tmp_path / "root", self.model, load_config(None),
            HostOptions(workspace=workspace, linger=linger, linger_poll=0.02, progress=self.said.append), tasks=tasks,
        )  # fmt: skip
        self.log = self.host.writer.path
        self.inbox = control.inbox_path(self.log)
        self.outcomes: list[TurnOutcome] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.outcomes = self.host.run()
        finally:
            self.host.close()

    def events(self, etype: str | None = None) -> list[dict[str, Any]]:
        return [e for e in list(self.host.session.events) if etype is None or e["type"] == etype]

    def outcome(self, request_id: str, final: bool = True) -> dict[str, Any] | None:
        for e in self.events("tapedeck/control"):
            if e["data"]["requestId"] == request_id and (not final or e["data"]["outcome"] in control.FINAL):
                return e
        return None

    def send(self, op: str, args: dict[str, Any] | None = None) -> str:
        return control.append_request(self.inbox, op, args)["id"]

    def join(self) -> None:
        self.thread.join(60)
        assert not self.thread.is_alive(), "the host did not end"


def test_stop_aborts_the_model_stream_in_flight(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.push(_slow_text())
    run = Running(tmp_path, server, ["explain the code"])
    _wait(lambda: server.received)
    rid = run.send("stop", {"reason": "wrong task"})
    run.join()  # long before the model's answer would end

    stop = run.outcome(rid)
    assert stop is not None and stop["data"]["outcome"] == "applied"
    assert stop["data"]["detail"] == {"reason": "wrong task"}
    [end] = run.events("turn/end")
    assert end["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}  # DSH's fields, exactly
    # The operator's reason rides along in a field of our own, which DSH readers ignore.
    assert end["data"]["stop"] == {"by": "operator", "requestId": rid, "reason": "wrong task"}
    finishes = [
        e["data"]["chunk"] for e in run.events("assistant/chunk") if e["data"]["chunk"]["type"] == "finish"
    ]
    assert finishes == [{"type": "finish", "reason": {"kind": "aborted"}}]
    assert not run.events("assistant/message")
    assert [o.reason["kind"] for o in run.outcomes] == ["aborted"]
    assert read_host_state(run.log).state == "exited"
    code, out, _ = _cli(["events", str(run.log), "--type", "turn/end"], capsys)
    assert code == 0 and "turn 1 ended: aborted by the operator: wrong task" in out


def test_stop_kills_a_running_tool_and_its_setsid_children(tmp_path: Path, server: ChatServer) -> None:
    # a detached grandchild appends to beat.txt until something kills it, holding beat.lock's flock while it (or a
    # child of it) lives: the lock comes free only once every one of them is gone
    beat = tmp_path / "ws" / "beat.txt"
    server.push(_tool_reply("setsid flock beat.lock sh -c 'while true; do echo x >> beat.txt; sleep 0.05; done' & "
                            "sleep 60"))  # fmt: skip
    run = Running(tmp_path, server, ["run the job"])
    _wait(lambda: beat.exists() and beat.stat().st_size > 10)
    assert not _lock_free(tmp_path / "ws" / "beat.lock")  # held while it runs
    rid = run.send("stop", {})
    run.join()

    assert run.outcome(rid)["data"]["outcome"] == "applied"  # type: ignore[index]
    [result] = run.events("tool/result")
    assert result["data"]["error"]["code"] == "ABORTED"
    [end] = run.events("turn/end")
    assert end["data"]["reason"]["kind"] == "aborted"
    assert end["data"]["stop"] == {"by": "operator", "requestId": rid}  # no reason given, none made up
    _wait(lambda: _lock_free(tmp_path / "ws" / "beat.lock"))  # the setsid grandchild is gone too


def _lock_free(path: Path) -> bool:
    """Whether the flock of the file at ``path`` can be taken now (and is let go at once)."""
    with path.open("rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_pause_mid_stream_holds_before_the_tool_call_and_resume_goes_on(
    tmp_path: Path, server: ChatServer
) -> None:
    server.push(_tool_reply("echo hi", delay=1.0), text_reply("done"))
    run = Running(tmp_path, server, ["say hi"])
    _wait(lambda: server.received)
    pause = run.send("pause")
    _wait(lambda: run.outcome(pause))
    assert read_host_state(run.log).state == "pausing"  # the model call in flight goes on
    _wait(lambda: read_host_state(run.log).state == "paused")
    assert run.events("assistant/message") and not run.events("tool/call")  # held before the tool call
    again = run.send("pause")  # to a host already held: it stays paused (it said "pausing" for good, held)
    _wait(lambda: run.outcome(again))
    assert read_host_state(run.log).state == "paused"
    resume = run.send("resume")
    run.join()

    assert run.outcome(resume)["data"]["detail"] == {"wasPaused": True}  # type: ignore[index]
    assert [o.reason["kind"] for o in run.outcomes] == ["completed"]
    assert len(run.events("tool/result")) == 1
    states = [e["data"]["state"] for e in run.events("tapedeck/state")]
    assert states == ["running", "pausing", "paused", "running", "exited"]


def test_a_message_during_a_tool_call_is_logged_before_applied_and_reaches_the_next_step(
    tmp_path: Path, server: ChatServer
) -> None:
    gate = tmp_path / "ws" / "go"  # in the workspace: a sandboxed command has its own /tmp
    server.push(_tool_reply(f"while [ ! -e {gate} ]; do sleep 0.05; done; echo ok"), text_reply("noted"))
    run = Running(tmp_path, server, ["wait for the gate"])
    _wait(lambda: run.events("tool/call"))
    rid = run.send("message", {"text": "Operator: prefer small diffs."})
    applied = _wait(lambda: run.outcome(rid))
    assert applied["data"]["detail"] == {"queued": "next step", "text": "Operator: prefer small diffs."}
    assert not run.events("tool/result")  # acknowledged while the tool still runs
    gate.touch()
    run.join()

    [result] = run.events("tool/result")
    steer = [e for e in run.events("user/message") if e["data"]["source"].get("requestId") == rid]
    assert len(steer) == 1 and steer[0]["seq"] > result["seq"]
    second = server.received[1].body["messages"]
    assert second[-1] == {"role": "user", "content": "Operator: prefer small diffs."}


def test_a_waiting_request_read_again_from_a_replaced_inbox_is_applied_once(
    tmp_path: Path, server: ChatServer
) -> None:
    # the line of a request waiting for the next step, read again (the inbox replaced by a copy), was taken as a
    # new request: deferred twice, it was applied twice and given two final outcomes
    gate = tmp_path / "ws" / "go"
    server.push(_tool_reply(f"while [ ! -e {gate} ]; do sleep 0.05; done; echo ok"), text_reply("noted"))
    run = Running(tmp_path, server, ["wait for the gate"])
    _wait(lambda: run.events("tool/call"))
    rid = run.send("config.set", {"key": "slice.fold.pinSteps", "value": 2})
    _wait(lambda: run.outcome(rid, final=False))
    copy = run.inbox.with_name("copy")
    shutil.copy(run.inbox, copy)
    os.replace(copy, run.inbox)
    _wait(lambda: read_inbox_position(run.log)[:2] == (run.inbox.stat().st_dev, run.inbox.stat().st_ino))
    gate.touch()
    run.join()
    outcomes = [e["data"]["outcome"] for e in run.events("tapedeck/control") if e["data"]["requestId"] == rid]
    assert outcomes == ["pending", "applied"]
    assert len([e for e in run.events("tapedeck/config") if e["data"].get("requestId") == rid]) == 1


def test_a_checkpoint_during_a_model_call_is_applied_at_once(tmp_path: Path, server: ChatServer) -> None:
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    rid = run.send("checkpoint", {"objective": "try the parser"})
    applied = _wait(lambda: run.outcome(rid))
    [mark] = run.events("tapedeck/checkpoint")
    assert applied["data"]["outcome"] == "applied" and mark["data"]["anchor"] == mark["seq"]
    assert not run.events("assistant/message")  # the model call is still in flight
    run.send("stop")
    run.join()


def test_policy_requests_are_pending_until_the_next_boundary(tmp_path: Path, server: ChatServer) -> None:
    server.push(_tool_reply("echo one", delay=1.0), text_reply("done"))
    run = Running(tmp_path, server, ["one"])
    _wait(lambda: server.received)
    rid = run.send("config.set", {"key": "slice.history.keepRecentTurns", "value": 2})
    pending = _wait(lambda: run.outcome(rid, final=False))
    assert pending["data"]["outcome"] == "pending"
    run.join()
    applied = run.outcome(rid)
    assert applied is not None and applied["data"]["outcome"] == "applied"
    [step2] = [e for e in run.events("step/start") if e["data"]["step"] == 2]
    assert pending["seq"] < step2["seq"] < applied["seq"]


def test_a_rewind_tool_name_taken_by_another_tool_is_refused(tmp_path: Path, server: ChatServer) -> None:
    # rewind.toolName "bash" sent two tools named bash and ran every bash call as a rewind
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with pytest.raises(ConfigError, match='rewind.toolName "bash" is the name of another tool'):
        AgentHost.create(tmp_path / "root", OpenAIProvider(api_key="k", base_url=server.base_url, model="m"),
                         validate_config({"rewind": {"toolName": "bash"}}),
                         HostOptions(workspace=workspace), tasks=["one"])  # fmt: skip
    server.push(_tool_reply("echo one", delay=1.0), text_reply("done"))
    run = Running(tmp_path, server, ["one"])
    _wait(lambda: server.received)
    rid = run.send("config.set", {"key": "rewind.toolName", "value": "checkpoint"})
    run.join()
    refused = run.outcome(rid)
    assert refused is not None and refused["data"]["outcome"] == "rejected"
    assert 'rewind.toolName "checkpoint" is the name of another tool' in refused["data"]["error"]
    names = [t["function"]["name"] for t in server.received[-1].body["tools"]]
    assert len(names) == len(set(names)) and "rewind" in names


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "slice.history.keepRecentTurns",
            '"abc"',
            'slice.history.keepRecentTurns must be a number, got "abc" (a string)',
        ),
        (
            "slice.history.keepRecentTurns",
            "-3",
            "slice.history.keepRecentTurns must be from 0 to 10,000 (got -3)",
        ),
        ("slice.nosuch", "1", "Unknown slice configuration key nosuch. Valid keys: "),
        ("rewind.toolName", '"bash"', 'rewind.toolName "bash" is the name of another tool'),
        (
            "adaptive.taskProfiles.read.softStepBudget",
            "10",
            "taskProfiles[0].hardStepBudget must exceed softStepBudget",
        ),
    ],
)
def test_a_config_set_the_host_would_refuse_is_refused_on_arrival(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str], key: str, value: str, message: str
) -> None:
    # it stayed pending until the next step, which a model stream can hold off for minutes
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    rid = run.send("config.set", {"key": key, "value": json.loads(value)})
    outcome = _wait(lambda: run.outcome(rid))["data"]
    assert outcome["outcome"] == "rejected" and message in outcome["error"], outcome
    assert not run.events("assistant/message")  # answered while the model call is still in flight
    # `tapedeck control` refuses it before sending, in the host's words; a tool's name only the host knows taken
    code, out, err = _cli(["control", str(run.log), "config.set", "--arg", f"key={key}", "--arg", f"value={value}",
                           "--wait", "--timeout", "10"], capsys)  # fmt: skip
    if key == "rewind.toolName":
        assert code == 1 and out.startswith("rejected: config.set") and message in out, out
    else:
        assert code == 2 and err == f"tapedeck: config.set: {outcome['error']}\n", err
    run.send("stop")
    run.join()


def test_a_valid_config_set_is_pending_at_once_even_when_it_needs_one_ahead_of_it(
    tmp_path: Path, server: ChatServer
) -> None:
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    hard = run.send("config.set", {"key": "adaptive.taskProfiles.read.hardStepBudget", "value": 12})
    soft = run.send(
        "config.set", {"key": "adaptive.taskProfiles.read.softStepBudget", "value": 10}
    )  # needs hard
    for rid in (hard, soft):
        pending = _wait(lambda rid=rid: run.outcome(rid, final=False))
        assert pending["data"]["outcome"] == "pending" and pending["data"]["detail"] == {"until": "next step"}
    assert not run.events("assistant/message")
    run.send("stop")
    run.join()


def test_config_sets_piling_up_in_one_step_are_each_checked_once_on_arrival(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each arrival replayed every config.set waiting ahead of it: a flood of them took the host quadratic time
    from core.host import hooks

    checks: list[str] = []
    set_value = hooks.set_value
    monkeypatch.setattr(
        hooks, "set_value", lambda config, key, value: checks.append(key) or set_value(config, key, value)
    )
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    sent = [run.send("config.set", {"key": "slice.fold.pinSteps", "value": n % 3}) for n in range(60)]
    for rid in sent:
        _wait(lambda rid=rid: run.outcome(rid, final=False))
    assert len(checks) <= 2 * len(sent)  # its own check, and taking in the one before it
    run.send("stop")
    run.join()


class _Counted(dict):  # type: ignore[type-arg]
    """A request that counts how often the host looks a field of it up."""

    looks = 0

    def __getitem__(self, key: str) -> Any:
        _Counted.looks += 1
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        _Counted.looks += 1
        return super().get(key, default)


def test_requests_piling_up_in_one_step_cost_each_the_same_looks_however_many_wait(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each arrival of a checked op (config.set, expand) listed every request waiting ahead of it, and each
    # withdrawal looked through all of them twice: a flood of either took the host quadratic time
    entry = control._entry

    def counted(line: int, offset: int, raw: bytes) -> control.InboxEntry:
        taken = entry(line, offset, raw)
        return taken if taken.request is None else dataclasses.replace(taken, request=_Counted(taken.request))

    monkeypatch.setattr(control, "_entry", counted)
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    looks = []
    for n in (100, 400):
        _Counted.looks = 0
        sent = [run.send("config.set", {"key": "slice.fold.pinSteps", "value": k % 3}) for k in range(n)]
        _wait(lambda sent=sent: run.outcome(sent[-1], final=False))
        for rid in sent:
            control.withdraw_request(run.inbox, rid)
        _wait(lambda sent=sent: run.outcome(sent[-1]))
        looks.append(_Counted.looks / n)
    assert looks[1] <= looks[0] * 1.2, looks  # per request: as many looks with 400 waiting as with 100
    run.send("stop")
    run.join()


def test_a_config_set_whose_value_the_log_cannot_hold_once_counted_is_rejected_on_arrival(
    tmp_path: Path, server: ChatServer
) -> None:
    # 1e26 for a count is a whole number, taken as the int 10**26, which no JSON event can hold: the request was
    # pending, and at the next step writing its applied outcome killed the host's thread (Integer exceeds 64-bit range)
    gate = tmp_path / "ws" / "go"
    server.push(_tool_reply(f"while [ ! -e {gate} ]; do sleep 0.05; done; echo ok"), text_reply("noted"))
    run = Running(tmp_path, server, ["wait for the gate"])
    _wait(lambda: run.events("tool/call"))
    rid = run.send("config.set", {"key": "slice.fold.pinSteps", "value": 1e26})
    rejected = _wait(lambda: run.outcome(rid, final=False))
    assert rejected["data"]["outcome"] == "rejected", rejected
    assert "slice.fold.pinSteps must be from 0 to 10,000 (got 1e+26)" in rejected["data"]["error"]
    gate.touch()
    run.join()
    assert [o.reason["kind"] for o in run.outcomes] == ["completed"]


@pytest.mark.parametrize("op", ["config.set", "expand"])
def test_sending_and_withdrawing_in_turn_costs_the_same_however_many_wait(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    # an operator whose requests time out (--wait --timeout) sends one and withdraws it, again and again, while a
    # pile of others waits for the next step: each withdrawal made the host list the whole pile again at the next
    # arrival, and take in every config.set of it again, so each pair cost as much as the pile
    entry, with_value = control._entry, hooks._with_value
    applied = [0]

    def counted(line: int, offset: int, raw: bytes) -> control.InboxEntry:
        taken = entry(line, offset, raw)
        return taken if taken.request is None else dataclasses.replace(taken, request=_Counted(taken.request))

    def counted_value(config: Any, args: dict[str, Any]) -> Any:
        applied[0] += 1
        return with_value(config, args)

    monkeypatch.setattr(control, "_entry", counted)
    monkeypatch.setattr(hooks, "_with_value", counted_value)
    server.push(_tool_reply("echo hi"))
    server.push(_slow_text())
    run = Running(tmp_path, server, ["look"])
    _wait(lambda: len(server.received) == 2)
    result = next(e["seq"] for e in run.events("tool/result"))
    args = {"key": "slice.fold.pinSteps", "value": 1} if op == "config.set" else {"seq": result}
    work = []
    for pile in (50, 200):
        waiting = [run.send(op, args) for _ in range(pile)]
        _wait(lambda waiting=waiting: run.outcome(waiting[-1], final=False))
        _Counted.looks, applied[0] = 0, 0
        for _ in range(20):  # each taken and withdrawn in a read of the inbox of its own
            rid = run.send(op, args)
            _wait(lambda rid=rid: run.outcome(rid, final=False))
            control.withdraw_request(run.inbox, rid)
            _wait(lambda rid=rid: run.outcome(rid))
        work.append((_Counted.looks, applied[0]))
        for rid in waiting:
            control.withdraw_request(run.inbox, rid)
        _wait(lambda waiting=waiting: run.outcome(waiting[-1]))
    assert work[1] == work[0], work  # 20 pairs cost the same with 200 waiting as with 50
    run.send("stop")
    run.join()


def test_a_config_set_after_a_step_applied_those_before_it_is_checked_afresh(
    tmp_path: Path, server: ChatServer
) -> None:
    # the check kept how many config.set requests it had taken in; once a step applied two, the next arrival found
    # none waiting and read past the end of the list (IndexError): it was rejected as the host failing on it
    gates = [tmp_path / "ws" / "one", tmp_path / "ws" / "two"]
    server.push(
        *[_tool_reply(f"while [ ! -e {g} ]; do sleep 0.05; done; echo ok") for g in gates], text_reply("done")
    )
    run = Running(tmp_path, server, ["wait for the gates"])
    _wait(lambda: run.events("tool/call"))
    first = [run.send("config.set", {"key": "slice.fold.pinSteps", "value": v}) for v in (1, 2)]
    _wait(lambda: run.outcome(first[-1], final=False))
    gates[0].touch()
    applied = [_wait(lambda rid=rid: run.outcome(rid)) for rid in first]
    assert [a["data"]["outcome"] for a in applied] == [control.APPLIED] * 2, applied
    _wait(lambda: len(run.events("tool/call")) == 2)
    rid = run.send("config.set", {"key": "slice.fold.pinSteps", "value": 0})
    answer = _wait(lambda: run.outcome(rid, final=False))
    assert answer["data"]["outcome"] != control.REJECTED, answer
    gates[1].touch()
    run.join()
    assert run.outcome(rid)["data"]["outcome"] == control.APPLIED  # type: ignore[index]
    assert [o.reason["kind"] for o in run.outcomes] == ["completed"]


def test_an_expand_that_cannot_succeed_is_rejected_on_arrival(tmp_path: Path, server: ChatServer) -> None:
    server.push(_slow_text())
    run = Running(tmp_path, server, ["think"])
    _wait(lambda: server.received)
    beyond = run.send("expand", {"seq": 10_000})
    task = run.send("expand", {"seq": run.events("user/message")[0]["seq"]})
    rejected = [_wait(lambda rid=rid: run.outcome(rid)) for rid in (beyond, task)]
    assert not run.events("assistant/message")  # answered while the model call is still in flight
    assert [r["data"]["outcome"] for r in rejected] == ["rejected", "rejected"]
    assert rejected[0]["data"]["error"] == "no session event at seq 10000"
    assert "is a user/message event, not a tool result" in rejected[1]["data"]["error"]
    assert not [e for e in run.events("tapedeck/control") if e["data"]["outcome"] == "pending"]
    run.send("stop")
    run.join()


def test_hostile_inbox_lines_are_rejected_once_each_and_never_stop_the_host(
    tmp_path: Path, server: ChatServer
) -> None:
    run = Running(tmp_path, server, [], linger=True)
    _wait(lambda: read_host_state(run.log).state == "idle")
    lines = [
        b'{"id":"deep","op":"message","args":{"text":' + b"[" * 1000 + b"]" * 1000 + b"}}",
        b'{"id":"lone","op":"message","args":{"text":"\\ud800"}}',
        b'{"id":"huge","op":"message","args":{"text":"' + b"x" * (2 << 20) + b'"}}',
        b'{"id":"bad-op","op":"explode"}',
        b"\xff\xfe not even text",
    ]
    with open(run.inbox, "ab") as f:
        for line in lines:
            f.write(line[: len(line) // 2])
            f.flush()
            time.sleep(0.06)
            f.write(line[len(line) // 2 :] + b"\n")
            f.flush()
    for rid in ("deep", "lone", "huge", "bad-op"):
        assert _wait(lambda rid=rid: run.outcome(rid))["data"]["outcome"] == "rejected"
    assert read_host_state(run.log).live
    stop = run.send("stop")
    run.join()
    outcomes = [e["data"]["requestId"] for e in run.events("tapedeck/control")]
    assert sorted(outcomes) == sorted(["deep", "lone", "huge", "bad-op", stop])
    # a line whose op could not be read is named as a request, not as "None"
    assert "control request rejected: control inbox line 3 is longer than 1048576 bytes" in run.said
    assert not [line for line in run.said if "None" in line]


def test_a_request_reusing_an_id_is_a_retry_never_applied_twice_and_keeps_one_outcome(
    tmp_path: Path, server: ChatServer
) -> None:
    # a copy of a request waiting for its boundary was waiting too, and applied a second time; a copy is a retry:
    # the request keeps its one final outcome (a second would stand for it in the TUI and the index), with a warning
    run = Running(tmp_path, server, [], linger=True)
    _wait(lambda: read_host_state(run.log).state == "idle")

    def line(rid: str, op: str, args: dict[str, Any]) -> bytes:
        return json.dumps({"id": rid, "op": op, "args": args, "at": int(time.time() * 1000)}).encode() + b"\n"

    def finals(rid: str) -> list[dict[str, Any]]:
        return [e["data"] for e in run.events("tapedeck/control")
                if e["data"]["requestId"] == rid and e["data"]["outcome"] in control.FINAL]  # fmt: skip

    with open(run.inbox, "ab") as f:
        f.write(line("mark", "checkpoint", {}))
    _wait(lambda: finals("mark"))
    keep = {"key": "slice.history.keepRecentTurns", "value": 2}
    odd = (
        "it's\x1b]2;x\x07" + "y" * 190
    )  # an id is any text of up to 200 characters: named as control names one
    with open(run.inbox, "ab") as f:  # one write: the copy arrives while the first waits for a boundary
        f.write(
            line("mark", "checkpoint", {})
            + line("keep", "config.set", keep)
            + line("keep", "config.set", keep)
        )
        f.write(line(odd, "resume", {}) + line(odd, "resume", {}))
    _wait(lambda: finals("keep") and finals(odd))
    run.send("checkpoint")  # answered after every line before it was taken
    _wait(lambda: len(run.events("tapedeck/checkpoint")) == 2)
    assert [d["outcome"] for d in finals("mark")] == [d["outcome"] for d in finals("keep")] == ["applied"]
    assert len(run.events("tapedeck/config")) == 1
    assert [said for said in run.said if "reuses request id" in said] == [
        f"control: an inbox line reuses request id {rid}, taken already: ignored as a retry (its outcome is the "
        "first one's)"
        for rid in ("mark", "keep", "it's\\u001b]2;x\\u0007" + "y" * 69 + "…")
    ]
    facts = SessionFacts.empty()
    for event in read_log(run.log).events:
        facts.observe(event)
    assert facts.outcomes["mark"]["outcome"] == facts.outcomes["keep"]["outcome"] == "applied"
    run.send("stop")
    run.join()


def test_a_host_json_that_cannot_be_written_does_not_stop_the_inbox_watch(
    tmp_path: Path, server: ChatServer
) -> None:
    run = Running(tmp_path, server, [], linger=True)
    _wait(lambda: read_host_state(run.log).state == "idle")
    blocked = state_path(run.log)
    blocked.unlink()
    (blocked / "in-the-way").mkdir(parents=True)  # host.json cannot be replaced now

    checkpoint = run.send("checkpoint")
    assert _wait(lambda: run.outcome(checkpoint))["data"]["outcome"] == "applied"
    shutil.rmtree(blocked)
    run.send("stop")
    run.join()


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_run_says_why_a_turn_ended_in_an_error(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a wrong key (or base URL) said only "turn 1 ended: error after 1 step(s)": the cause was in the log alone
    monkeypatch.setenv("DEEPSEEK_API_KEY", "wrong")
    server.push(error_reply(401, "invalid api key"))
    (tmp_path / "ws").mkdir()
    code, out, _ = _cli(["run", "fix it", "--base-url", server.base_url, "--model", "m", "--workspace",
                         str(tmp_path / "ws"), "--sessions-root", str(tmp_path / "root")], capsys)  # fmt: skip
    assert code == 1
    [line] = [line for line in out.splitlines() if line.startswith("turn 1 ended:")]
    assert line.startswith("turn 1 ended: error after 1 step(s): ") and "invalid api key" in line


def _finished(tmp_path: Path, server: ChatServer) -> Path:
    server.push(text_reply("done"))
    run = Running(tmp_path, server, ["one task"])
    run.join()
    return run.log


def _resume(log: Path, server: ChatServer, *, linger: bool = False) -> AgentHost:
    model = OpenAIProvider(api_key="k", base_url=server.base_url, model="m", retry=RetryPolicy(max_retries=0))
    return AgentHost.resume(log, model, load_config(None), HostOptions(workspace=None, linger=linger))


def test_a_request_to_a_dead_host_exits_3_and_writes_nothing(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished(tmp_path, server)
    code, out, err = _cli(["control", str(log), "rewind"], capsys)
    assert code == 3 and out == ""
    assert len(err.splitlines()) == 1
    assert "no live host (it exited at " in err and "nothing was sent" in err
    assert not control.inbox_path(log).exists() or control.inbox_path(log).read_text() == ""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["stpo"], 'unknown control op "stpo"'),
        (["rewind", "--arg", "markId=abc"], "rewind: 'markId' must be an integer"),
        (["expand", "--arg", "sq=4"], 'expand: unknown argument "sq"'),
    ],
)
def test_a_malformed_request_to_a_dead_host_is_a_usage_error_not_no_host(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    """A typo is exit 2 naming it, whether or not a host runs: a script must not read it as "host gone" (3)."""
    log = _finished(tmp_path, server)
    code, out, err = _cli(["control", str(log), *extra], capsys)
    assert (code, out) == (2, "") and message in err, err
    assert not control.inbox_path(log).exists() or control.inbox_path(log).read_text() == ""


def test_a_queued_request_waits_for_the_next_resume(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished(tmp_path, server)
    code, out, _ = _cli(["control", str(log), "checkpoint", "--queue"], capsys)
    assert code == 0 and "for the next resume" in out
    code, _, _ = _cli(["control", str(log), "pause", "--queue", "--expires", "0.05"], capsys)
    assert code == 0
    time.sleep(0.1)
    host = _resume(log, server)
    host.run()
    host.close()
    by_op = {e["data"]["op"]: e["data"] for e in read_log(log).events if e["type"] == "tapedeck/control"}
    assert by_op["checkpoint"]["outcome"] == "applied"
    assert by_op["pause"]["outcome"] == "expired" and "expired at" in by_op["pause"]["error"]


@pytest.mark.parametrize("left", ["queued", "applied"])
def test_a_resumed_host_says_where_its_pause_came_from(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str], left: str
) -> None:
    # a pause queued for the resume was said to be one "the operator paused ... before its last host stopped"
    if left == "queued":
        log = _finished(tmp_path, server)
        assert _cli(["control", str(log), "pause", "--queue"], capsys)[0] == 0
    else:
        run = Running(tmp_path, server, [], linger=True)
        _wait(lambda: read_host_state(run.log).state == "idle")
        run.send("pause")
        _wait(lambda: read_host_state(run.log).state == "paused")
        run.send("stop")
        run.join()
        log = run.log
    said: list[str] = []
    model = OpenAIProvider(api_key="k", base_url=server.base_url, model="m", retry=RetryPolicy(max_retries=0))
    host = AgentHost.resume(log, model, load_config(None), HostOptions(workspace=None, linger=True,
                                                                       progress=said.append))  # fmt: skip
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    _wait(lambda: read_host_state(log).state == "paused" and [s for s in said if s.startswith("paused: ")])
    control.append_request(control.inbox_path(log), "stop")
    thread.join(60)
    host.close()
    [line] = [s for s in said if s.startswith("paused: ")]
    why = {
        "queued": "paused: a pause request was left for this resume",
        "applied": "paused: the operator paused this session before its last host stopped",
    }
    assert line.startswith(why[left] + "; nothing runs until `tapedeck control "), line


def test_requests_left_for_a_dead_host_are_cancelled_at_resume_and_withdrawals_hold(
    tmp_path: Path, server: ChatServer
) -> None:
    log = _finished(tmp_path, server)
    inbox = control.inbox_path(log)
    stale = control.append_request(inbox, "stop")["id"]  # written behind the CLI's back while no host ran
    withdrawn = control.append_request(inbox, "pause", queued=True)["id"]
    control.withdraw_request(inbox, withdrawn)  # e.g. a --wait that timed out
    host = _resume(log, server)
    outcomes = host.run()
    host.close()
    assert outcomes == []
    by_id = {
        e["data"]["requestId"]: e["data"] for e in read_log(log).events if e["type"] == "tapedeck/control"
    }
    assert by_id[stale]["outcome"] == "cancelled" and "no host was running" in by_id[stale]["error"]
    assert by_id[withdrawn]["outcome"] == "cancelled" and "withdrawn" in by_id[withdrawn]["error"]


def test_a_resumed_host_ignores_a_new_line_reusing_an_answered_id_and_skips_lines_read_again(
    tmp_path: Path, server: ChatServer
) -> None:
    log = _finished(tmp_path, server)
    inbox = control.inbox_path(log)
    request = control.append_request(inbox, "checkpoint", queued=True)

    def resume_twice() -> None:  # the second host reads every line again, each answered already
        for _ in range(2):
            host = _resume(log, server)
            host.run()
            host.close()

    resume_twice()
    with open(inbox, "ab") as f:  # a copy sent after the answer: a new line, its id taken
        f.write(control.inbox_line({**request, "at": int(time.time() * 1000)}))
    resume_twice()
    events = read_log(log).events
    answers = [
        e["data"]
        for e in events
        if e["type"] == "tapedeck/control" and e["data"]["requestId"] == request["id"]
    ]
    assert [a["outcome"] for a in answers] == ["applied"], answers
    assert len([e for e in events if e["type"] == "tapedeck/checkpoint"]) == 1


def test_control_on_a_log_no_tapedeck_host_owns_exits_2_and_creates_nothing(
    tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(fixtures_dir / "multi-turn.session.jsonl", log)
    code, _, err = _cli(["control", str(log), "stop", "--queue"], capsys)
    assert code == 2 and "no tapedeck bridge runs" in err and "tapedeck bridge install" in err
    assert sorted(p.name for p in log.parent.iterdir()) == ["session.jsonl"]
    code, out, _ = _cli(["inspect", str(log), "--json"], capsys)
    assert json.loads(out)["host"] == {"state": "none", "pid": None, "since": None, "kind": "dsh"}


def test_inspect_reports_the_host_state(
    tmp_path: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Running(tmp_path, server, [], linger=True)
    _wait(lambda: read_host_state(run.log).state == "idle")
    code, out, _ = _cli(["inspect", str(run.log), "--json"], capsys)
    host = json.loads(out)["host"]
    assert (
        code == 0
        and host["state"] == "idle"
        and host["pid"] == os.getpid()
        and isinstance(host["since"], int)
    )
    run.send("pause")
    _wait(lambda: read_host_state(run.log).state == "paused")
    run.send("stop")
    run.join()
    code, out, _ = _cli(["inspect", str(run.log), "--json"], capsys)
    assert json.loads(out)["host"]["state"] == "exited"
    code, out, _ = _cli(["sessions", str(tmp_path / "root")], capsys)
    assert " exited " in out


def _cli_run(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[Any, Path]:
    """``tapedeck run`` against the loopback model on a thread; its exit code (a list to read) and its log."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    (tmp_path / "ws").mkdir(exist_ok=True)
    argv = ["run", *args, "--base-url", server.base_url, "--model", "m", "--workspace", str(tmp_path / "ws"),
            "--sessions-root", str(tmp_path / "root"), "--session-id", "s1", "--json"]  # fmt: skip
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(main(argv)), daemon=True)
    thread.start()
    log = _wait(lambda: next((tmp_path / "root").rglob("session.jsonl"), None))
    return (code, thread), log


@pytest.mark.parametrize("linger", [False, True], ids=["run", "linger"])
def test_a_run_the_operator_stopped_exits_4(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, linger: bool
) -> None:
    server.push(_slow_text())
    (code, thread), log = _cli_run(
        tmp_path, server, monkeypatch, "explain", *(["--linger"] if linger else [])
    )
    _wait(lambda: server.received)
    control.append_request(control.inbox_path(log), "stop", {"reason": "enough"})
    thread.join(60)
    assert code == [4]


def test_a_lingering_run_stopped_while_idle_after_its_tasks_exits_0(
    tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.push(text_reply("done"))
    (code, thread), log = _cli_run(tmp_path, server, monkeypatch, "one task", "--linger")
    _wait(lambda: read_host_state(log).state == "idle")
    control.append_request(control.inbox_path(log), "stop", {})
    thread.join(60)
    assert code == [0]
