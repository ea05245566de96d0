"""Resume after a crash at any point of a turn: prompts, steps and queued steering messages are never lost.

A crash is reproduced by cutting a finished log back to what was durable at the moment of the kill (every
batch is fsynced before the next begins, so any prefix of whole events is a state a SIGKILL can leave), or by
abandoning a host without closing its turn. The subprocess SIGKILL runs are in ``test_crash_kills.py``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.control import inbox as control
from core.control.config import load_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers import make_provider
from core.log.frames import decode_frame, frame_end
from core.log.messages import user_message
from core.log.reader import read_log
from core.policies.prolong import intact_length, is_narrative, parse_sections, render_section
from core.read.load import load_session
from core.read.session import Session


def _script(tmp_path: Path, responses: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"model": "resume-test", "responses": responses}))
    return f"scripted:{path}"


def _read(path: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "read_file", "arguments": {"path": path}}]}


def _config(tmp_path: Path, settings: dict[str, Any] | None = None) -> Any:
    if settings is None:
        return load_config(None)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(settings))
    return load_config(str(path))


def _host(tmp_path: Path, provider: str, tasks: list[str], config: Any = None) -> AgentHost:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "a.txt").write_text("alpha\n")
    return AgentHost.create(
        tmp_path / "root", make_provider(provider), config or load_config(None),
        HostOptions(workspace=workspace), tasks=tasks, session_id="s1",
    )  # fmt: skip


def _resume(tmp_path: Path, log: Path, provider: str, config: Any = None) -> AgentHost:
    return AgentHost.resume(
        log, make_provider(provider), config or load_config(None), HostOptions(workspace=tmp_path / "ws")
    )


def _kill(host: AgentHost) -> None:
    """What a killed host leaves: its log as written so far, and nobody watching its inbox any more (its
    watcher ends without answering anything, as a dead process would; log.txt is flushed, which these tests
    do not look at)."""
    host.writer.close()
    host.operator._closing.set()
    if host.operator._thread is not None:
        host.operator._thread.join()
    host.hooks.close()


def _cut(log: Path, keep: int) -> None:
    """Keep the header and events 0..keep-1 (a raw log): what a kill right after event keep-1 leaves."""
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[: keep + 1]))


def _prompts(session: Session, turn: int) -> list[str]:
    record = session.turns[turn]
    end = record.end_seq if record.end_seq is not None else session.next_seq
    return [
        e["data"]["content"][0]["text"]
        for e in session.events[record.start_seq : end]
        if e["type"] == "user/message" and e["data"]["source"].get("kind") == "user"
    ]


def _finish(host: AgentHost) -> list[Any]:
    try:
        return host.run()
    finally:
        host.close()


def test_a_turn_whose_prompt_never_reached_the_log_is_run_with_its_prompt(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "one"}, {"text": "two"}])
    host = _host(tmp_path, provider, ["first task", "second task"])
    log = host.writer.path
    host.append(
        [{"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {"turn": 1, "step": 1}}]
    )
    _kill(host)  # killed before the prompt was written

    outcomes = _finish(_resume(tmp_path, log, provider))

    session = load_session(log)
    assert [o.reason["kind"] for o in outcomes] == ["completed", "completed"]
    assert _prompts(session, 1) == ["first task"] and _prompts(session, 2) == ["second task"]
    assert sorted(session.turns[1].steps) == [1]


def test_a_model_call_cut_short_is_repeated_in_the_same_step(tmp_path: Path) -> None:
    provider = _script(tmp_path, [_read("a.txt"), _read("a.txt"), {"text": "done " * 40}])
    config = _config(tmp_path, {"slice": {"maxStepsPerTurn": 3}})
    host = _host(tmp_path, provider, ["read twice"], config)
    assert _finish(host)[0].reason["kind"] == "completed"
    log = host.writer.path
    events = read_log(log).events
    third = next(e for e in events if e["type"] == "step/start" and e["data"]["step"] == 3)["seq"]
    chunks = [e["seq"] for e in events if e["type"] == "assistant/chunk" and e["seq"] > third]
    _cut(log, chunks[2])  # the third model call was streaming when the host died

    outcomes = _finish(_resume(tmp_path, log, provider, config))

    session = load_session(log)
    assert [o.reason["kind"] for o in outcomes] == ["completed"]
    assert sorted(session.turns[1].steps) == [1, 2, 3]
    assert session.diagnostics == []


def test_a_turn_whose_last_step_finished_is_ended_not_given_another_model_call(tmp_path: Path) -> None:
    provider = _script(tmp_path, [_read("a.txt"), {"text": "answer one"}, {"text": "answer two"}])
    host = _host(tmp_path, provider, ["task one", "task two"])
    _finish(host)
    log = host.writer.path
    events = read_log(log).events
    turn_end = next(e for e in events if e["type"] == "turn/end")["seq"]
    _cut(log, turn_end)  # killed between the last step/end and turn/end

    outcomes = _finish(_resume(tmp_path, log, provider))

    session = load_session(log)
    assert [o.reason["kind"] for o in outcomes] == ["completed", "completed"]
    assert sorted(session.turns[1].steps) == [1, 2] and _prompts(session, 2) == ["task two"]


def test_an_answer_logged_before_its_step_ended_ends_the_turn(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "answer one"}, {"text": "answer two"}])
    host = _host(tmp_path, provider, ["task one", "task two"])
    _finish(host)
    log = host.writer.path
    message = next(e for e in read_log(log).events if e["type"] == "assistant/message")["seq"]
    _cut(log, message + 1)  # killed right after the answer, before step/end

    outcomes = _finish(_resume(tmp_path, log, provider))

    session = load_session(log)
    assert [o.reason["kind"] for o in outcomes] == ["completed", "completed"]
    assert sorted(session.turns[1].steps) == [1]


def _queue_steer(host: AgentHost, text: str) -> str:
    request_id = control.append_request(host.inbox_path, "message", {"text": text})["id"]
    assert host.operator.boundary(idle=True)
    [outcome] = [e for e in host.session.events if e["type"] == "tapedeck/control"]
    assert outcome["data"]["detail"]["queued"] == "next turn"
    return request_id


def test_a_steering_message_queued_for_the_next_turn_survives_a_crash(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "one"}, {"text": "steered"}])
    host = _host(tmp_path, provider, ["task one"])
    assert [o.reason["kind"] for o in host.run()] == ["completed"]
    request_id = _queue_steer(host, "Operator: also check b.txt")
    log = host.writer.path
    _kill(host)  # killed after acknowledging the steer, before its turn began

    outcomes = _finish(_resume(tmp_path, log, provider))

    session = load_session(log)
    assert [o.turn for o in outcomes] == [2]
    assert _prompts(session, 2) == ["Operator: also check b.txt"]
    first = next(e for e in session.events[session.turns[2].start_seq :] if e["type"] == "user/message")
    assert first["data"]["source"] == {"kind": "user", "via": "tapedeck-control", "requestId": request_id}


def test_a_steered_turn_that_lost_its_prompt_gets_the_steer(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "one"}, {"text": "steered"}])
    host = _host(tmp_path, provider, ["task one"])
    host.run()
    _queue_steer(host, "Operator: stop after this")
    host.append([{"type": "turn/start", "data": {"turn": 2}}])
    log = host.writer.path
    _kill(host)

    outcomes = _finish(_resume(tmp_path, log, provider))

    assert [o.turn for o in outcomes] == [2]
    assert _prompts(load_session(log), 2) == ["Operator: stop after this"]


def test_a_steer_between_tasks_does_not_skip_a_task(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "steered"}, {"text": "one"}, {"text": "two"}])
    host = _host(tmp_path, provider, ["task one", "task two"])
    control.append_request(host.inbox_path, "message", {"text": "Operator: hello"})

    outcomes = _finish(host)

    session = load_session(host.writer.path)
    assert [o.turn for o in outcomes] == [1, 2, 3]
    assert [_prompts(session, t) for t in (1, 2, 3)] == [["Operator: hello"], ["task one"], ["task two"]]


def test_a_turn_whose_prompt_cannot_be_known_ends_interrupted(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "one"}])
    host = _host(tmp_path, provider, ["task one"])
    host.run()
    host.append([{"type": "turn/start", "data": {"turn": 2}}])
    log = host.writer.path
    _kill(host)

    outcomes = _finish(_resume(tmp_path, log, provider))

    assert [(o.turn, o.reason["kind"]) for o in outcomes] == [(2, "interrupted")]
    assert load_session(log).turns[2].status == "interrupted"


def _sections(workspace: Path) -> list[int]:
    text = (workspace / "log.txt").read_text()
    return [s.seq for s in parse_sections(text) if s.seq is not None]


def test_resume_back_fills_log_txt_with_the_sections_a_kill_lost(tmp_path: Path) -> None:
    provider = _script(tmp_path, [_read("a.txt"), {"text": "one"}, {"text": "two"}])
    host = _host(tmp_path, provider, ["task one", "task two"])
    _finish(host)
    log, workspace = host.writer.path, tmp_path / "ws"
    narrative = [e["seq"] for e in read_log(log).events if is_narrative(e)]
    assert _sections(workspace) == narrative
    text = (workspace / "log.txt").read_text()
    cut = text.index(f"=== seq={narrative[-4]} ")
    (workspace / "log.txt").write_text(text[: cut + 30])  # in the queue or half written at the kill

    _finish(_resume(tmp_path, log, provider))

    sections = _sections(workspace)
    after = [e["seq"] for e in read_log(log).events if is_narrative(e)]
    assert sections == after and after[: len(narrative)] == narrative


@settings(max_examples=200, deadline=None)
@given(
    payloads=st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), min_size=1, max_size=6),
    data=st.data(),
)
def test_a_torn_log_txt_is_cut_back_to_its_last_whole_section(
    payloads: list[str], data: st.DataObject
) -> None:
    sections = [
        render_section([("seq", n), ("type", "user/message")], p).encode() for n, p in enumerate(payloads)
    ]
    blob = b"".join(sections)
    ends = [len(b"".join(sections[: n + 1])) for n in range(len(sections))]
    cut = data.draw(st.integers(0, len(blob)))

    kept = intact_length(blob[:cut])

    assert kept == max((end for end in ends if end <= cut), default=0)


def _rewind_run(tmp_path: Path) -> tuple[str, Path, list[dict[str, Any]]]:
    provider = _script(tmp_path, [
        {"toolCalls": [{"name": "checkpoint", "arguments": {"objective": "look around"}}]},
        _read("a.txt"), _read("a.txt"),
        {"toolCalls": [{"name": "rewind", "arguments": {}}]},
        {"text": "done"},
    ])  # fmt: skip
    host = _host(tmp_path, provider, ["explore"])
    assert [o.reason["kind"] for o in _finish(host)] == ["completed"]
    return provider, host.writer.path, read_log(host.writer.path).events


def _results(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    calls = {e["data"]["callId"] for e in events if e["type"] == "tool/call" and e["data"]["name"] == name}
    return [
        e["data"] for e in events
        if e["type"] == "tool/result" and e["data"]["message"]["source"]["callId"] in calls and "surfaceOp" in e
        and e["surfaceOp"] == "append"
    ]  # fmt: skip


def test_a_rewind_cut_off_before_it_committed_runs_on_resume(tmp_path: Path) -> None:
    provider, log, events = _rewind_run(tmp_path)
    call = next(e for e in events if e["type"] == "tool/call" and e["data"]["name"] == "rewind")
    _cut(log, call["seq"] + 1)

    outcomes = _finish(_resume(tmp_path, log, provider))

    after = read_log(log).events
    assert [o.reason["kind"] for o in outcomes] == ["completed"]
    assert sum(e["type"] == "tapedeck/rewind" for e in after) == 1
    [result] = _results(after, "rewind")
    assert result["message"]["content"][0]["isError"] is False


def test_a_rewind_that_committed_before_the_kill_is_not_run_twice(tmp_path: Path) -> None:
    provider, log, events = _rewind_run(tmp_path)
    fold = next(e for e in events if e["type"] == "tapedeck/rewind")
    [expected] = _results(events, "rewind")
    _cut(log, fold["seq"] + 1)  # the fold is in the log, its tool result is not

    outcomes = _finish(_resume(tmp_path, log, provider))

    after = read_log(log).events
    assert [o.reason["kind"] for o in outcomes] == ["completed"]
    assert sum(e["type"] == "tapedeck/rewind" for e in after) == 1
    [result] = _results(after, "rewind")
    assert (
        result["message"]["content"] == expected["message"]["content"] and result["meta"] == expected["meta"]
    )


def test_a_read_only_call_cut_off_mid_run_is_run_again_once(tmp_path: Path) -> None:
    provider, log, events = _rewind_run(tmp_path)
    call = next(e for e in events if e["type"] == "tool/call" and e["data"]["name"] == "read_file")
    _cut(log, call["seq"] + 1)

    _finish(_resume(tmp_path, log, provider))

    after = read_log(log).events
    assert sum(e["type"] == "tool/call" and e["data"]["callId"] == call["data"]["callId"] for e in after) == 1
    first = _results(after, "read_file")[0]
    assert first["message"]["content"][0]["isError"] is False and "alpha" in str(first["message"]["content"])


def test_a_steer_acknowledged_for_the_next_step_survives_a_crash(tmp_path: Path) -> None:
    provider = _script(tmp_path, [_read("a.txt"), {"text": "done"}])
    host = _host(tmp_path, provider, ["task one"])
    host.append([
        {"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {"turn": 1, "step": 1}},
        user_message("task one", {"kind": "user"}),
    ])  # fmt: skip
    request_id = control.append_request(host.inbox_path, "message", {"text": "Operator: mind b.txt"})["id"]
    host.operator.poll()  # acknowledged while the turn runs: it would reach the model at the next step
    [outcome] = [e for e in host.session.events if e["type"] == "tapedeck/control"]
    assert outcome["data"]["detail"]["queued"] == "next step"
    log = host.writer.path
    _kill(host)  # killed before that step

    _finish(_resume(tmp_path, log, provider))

    session = load_session(log)
    steered = [
        e for e in session.events if e["type"] == "user/message" and e["data"]["source"].get("requestId")
    ]
    assert [(e["data"]["content"][0]["text"], session.turn_of(e["seq"])) for e in steered] == [
        ("Operator: mind b.txt", 1)
    ]
    assert steered[0]["data"]["source"]["requestId"] == request_id


def test_a_turn_ended_by_a_failed_model_call_ends_its_step_in_the_same_write(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"finish": "error", "error": {"message": "boom", "code": "E_TEST"}}])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    host = AgentHost.create(
        tmp_path / "root", make_provider(provider), load_config(None), HostOptions(workspace=workspace),
        tasks=["fail"], compressed=True,
    )  # fmt: skip
    assert [o.reason["kind"] for o in _finish(host)] == ["error"]
    data = host.writer.path.read_bytes()
    frames, pos = [], 0
    while pos < len(data):
        end = frame_end(data, pos)
        assert end is not None
        frames.append(decode_frame(data[pos:end]))
        pos = end
    ending = next(f for f in frames if b'"turn/end"' in f)
    assert b'"step/end"' in ending  # a kill can never land between them


def _write_and_edit_run(tmp_path: Path, edit: dict[str, Any]) -> tuple[str, Path, list[dict[str, Any]]]:
    provider = _script(tmp_path, [
        {"toolCalls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "one\ntwo\n"}}]},
        {"toolCalls": [{"name": "edit_file", "arguments": {"path": "b.txt", **edit}}]},
        {"text": "done"},
    ])  # fmt: skip
    host = _host(tmp_path, provider, ["write then edit"])
    assert [o.reason["kind"] for o in _finish(host)] == ["completed"]
    return provider, host.writer.path, read_log(host.writer.path).events


def _result_of(events: list[dict[str, Any]], call: dict[str, Any]) -> dict[str, Any]:
    [result] = [
        r for r in _results(events, call["data"]["name"]) if r["message"]["source"]["callId"] == call["data"]["callId"]
    ]
    return result


REPLACE = {"old_text": "two", "new_text": "2"}
# An edit that adds lines after an anchor keeps its old_text (the demo's regression test is one): the file holds
# old_text both before and after it lands.
APPEND = {"old_text": "two\n", "new_text": "two\nthree\n"}


@pytest.mark.parametrize(("tool", "edit", "before"), [
    ("write_file", REPLACE, None),  # killed before the file was created
    ("write_file", REPLACE, "one\ntwo\n"),  # killed after: running it again writes the same bytes
    ("edit_file", REPLACE, "one\ntwo\n"),  # killed before the edit landed
    ("edit_file", REPLACE, "one\n2\n"),  # killed after it landed
    ("edit_file", APPEND, "one\ntwo\n"),
    ("edit_file", APPEND, "one\ntwo\nthree\n"),
], ids=["write-before", "write-after", "replace-before", "replace-after", "append-before", "append-after"])  # fmt: skip
def test_a_file_call_cut_off_mid_run_ends_as_the_uninterrupted_run_did(
    tmp_path: Path, tool: str, edit: dict[str, Any], before: str | None
) -> None:
    provider, log, events = _write_and_edit_run(tmp_path, edit)
    target = tmp_path / "ws" / "b.txt"
    uninterrupted = target.read_text()
    call = next(e for e in events if e["type"] == "tool/call" and e["data"]["name"] == tool)
    expected = _result_of(events, call)
    _cut(log, call["seq"] + 1)
    if before is None:
        target.unlink()
    else:
        target.write_text(before)

    assert [o.reason["kind"] for o in _finish(_resume(tmp_path, log, provider))] == ["completed"]

    after = read_log(log).events
    assert target.read_text() == uninterrupted  # applied once: neither lost nor applied twice
    result = _result_of(after, call)
    assert (result["message"]["content"], result.get("meta"), result.get("error")) == (
        expected["message"]["content"], expected.get("meta"), expected.get("error"),
    )  # fmt: skip


def test_a_write_killed_before_its_rename_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    provider, log, events = _write_and_edit_run(tmp_path, APPEND)
    call = next(e for e in events if e["type"] == "tool/call" and e["data"]["name"] == "edit_file")
    _cut(log, call["seq"] + 1)
    workspace = tmp_path / "ws"
    (workspace / "b.txt").write_text("one\ntwo\n")
    (workspace / ".b.txt.0123456789ab.tmp").write_text("one\ntwo\nthr")  # the kill came mid-write
    (workspace / ".b.txt.notours.tmp").write_text("kept")

    _finish(_resume(tmp_path, log, provider))

    assert sorted(p.name for p in workspace.iterdir()) == [".b.txt.notours.tmp", "a.txt", "b.txt", "log.txt"]
    assert (workspace / "b.txt").read_text() == "one\ntwo\nthree\n"


def _without_file_before(log: Path) -> None:
    """The log as a host from before ``fileBefore`` wrote it."""
    lines = log.read_bytes().splitlines(keepends=True)
    events = [json.loads(line) for line in lines[1:]]
    for event in events:
        event["data"].pop("fileBefore", None)
    log.write_bytes(lines[0] + b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events))


@pytest.mark.parametrize(("recorded", "before", "unknown"), [
    (True, "zero\n", True),  # changed by something else since the call started: never guessed at
    (False, "one\ntwo\n", False),  # an older log: new_text is not in the file, so the edit never landed
    (False, "one\ntwo\nthree\n", True),  # an older log cannot tell this from the file before the edit
])  # fmt: skip
def test_an_edit_whose_file_cannot_be_told_apart_is_not_run_again(
    tmp_path: Path, recorded: bool, before: str, unknown: bool
) -> None:
    provider, log, events = _write_and_edit_run(tmp_path, APPEND)
    call = next(e for e in events if e["type"] == "tool/call" and e["data"]["name"] == "edit_file")
    _cut(log, call["seq"] + 1)
    if not recorded:
        _without_file_before(log)
    target = tmp_path / "ws" / "b.txt"
    target.write_text(before)

    _finish(_resume(tmp_path, log, provider))

    result = _result_of(read_log(log).events, call)
    assert ((result.get("error") or {}).get("code") == "TOOL_OUTCOME_UNKNOWN") is unknown
    assert target.read_text() == (before if unknown else "one\ntwo\nthree\n")


def test_a_stop_sent_to_a_host_resumed_paused_ends_the_calls_it_held_unrun(tmp_path: Path) -> None:
    write = {"name": "write_file", "arguments": {"path": "out.txt", "content": "hi"}}
    provider = _script(tmp_path, [{"toolCalls": [write]}, {"text": "done"}])
    host = _host(tmp_path, provider, ["write it"])
    host.append([control.outcome_event({"id": "req-1", "op": "pause"}, control.APPLIED)])  # what the log keeps
    _finish(host)
    log = host.writer.path
    answer = next(e for e in read_log(log).events if e["type"] == "assistant/message")
    _cut(log, answer["seq"] + 1)  # killed while held before the write_file call
    (tmp_path / "ws" / "out.txt").unlink()

    resumed = _resume(tmp_path, log, provider)
    runner = threading.Thread(target=resumed.run)
    runner.start()
    deadline = time.monotonic() + 60
    while resumed.operator.state != "paused":
        assert runner.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    control.append_request(control.inbox_path(log), "stop", {})
    runner.join(60)
    resumed.close()

    session = load_session(log)
    assert not (tmp_path / "ws" / "out.txt").exists()
    [result] = _results(read_log(log).events, "write_file")
    assert result["error"]["code"] == "ABORTED_BEFORE_DISPATCH"
    assert session.turns[1].status == "aborted" and session.diagnostics == []


def test_a_host_resumed_paused_says_pausing_until_it_holds(tmp_path: Path) -> None:
    """A host resumed on a session its operator paused recorded 'paused' (held, nothing happens) as it started, then
    wrote the step the crash left due (its step/start) before it held: 'pausing', as a pause that arrives during a
    turn says, until the hold, and 'paused' only from there."""
    provider = _script(tmp_path, [_read("a.txt"), {"text": "done"}])
    host = _host(tmp_path, provider, ["read it"])
    host.append([control.outcome_event({"id": "req-1", "op": "pause"}, control.APPLIED)])  # what the log keeps
    _finish(host)
    log = host.writer.path
    step_end = next(e for e in read_log(log).events if e["type"] == "step/end")
    _cut(log, step_end["seq"] + 1)  # killed after step 1 ended, its turn open, before step 2 began

    resumed = _resume(tmp_path, log, provider)
    runner = threading.Thread(target=resumed.run)
    runner.start()
    deadline = time.monotonic() + 60
    while resumed.operator.state != "paused" or not any(e["type"] == "step/start" for e in read_log(log).events[step_end["seq"] + 1 :]):
        assert runner.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    control.append_request(control.inbox_path(log), "stop", {})
    runner.join(60)
    resumed.close()

    after = read_log(log).events[step_end["seq"] + 1 :]
    said = [e["data"]["state"] if e["type"] == "tapedeck/state" else e["type"] for e in after]
    assert said[: said.index("tapedeck/control")] == ["tapedeck/host", "pausing", "step/start", "paused"], said


def test_a_request_the_killed_host_acknowledged_is_cancelled_as_left_by_that_host(tmp_path: Path) -> None:
    provider = _script(tmp_path, [{"text": "done"}])
    host = _host(tmp_path, provider, ["task"])
    log = host.writer.path
    request = control.append_request(control.inbox_path(log), "config.set",
                                     {"key": "slice.fold.pinSteps", "value": 2})  # fmt: skip
    host.append([control.outcome_event(request, control.PENDING, None, {"until": "next step"})])
    _kill(host)  # acknowledged, to be applied at the next step that never came

    _finish(_resume(tmp_path, log, provider))

    outcomes = [e["data"] for e in read_log(log).events if e["type"] == "tapedeck/control"]
    assert [(o["outcome"], o.get("error")) for o in outcomes] == [
        ("pending", None), ("cancelled", "the host exited before applying it")
    ]


def test_a_resume_queued_for_a_paused_session_lifts_the_pause_before_the_host_says_it_holds(
    tmp_path: Path,
) -> None:
    provider = _script(tmp_path, [{"text": "one"}, {"text": "two"}])
    host = _host(tmp_path, provider, ["first", "second"])
    host.append([control.outcome_event({"id": "req-1", "op": "pause"}, control.APPLIED)])
    _kill(host)  # paused by the operator, then killed
    log = host.writer.path
    control.append_request(control.inbox_path(log), "resume", queued=True)
    said: list[str] = []

    resumed = AgentHost.resume(log, make_provider(provider), load_config(None),
                               HostOptions(workspace=tmp_path / "ws", progress=said.append))  # fmt: skip
    outcomes = _finish(resumed)

    assert [o.reason["kind"] for o in outcomes] == ["completed", "completed"]
    assert not [line for line in said if line.startswith("paused")], said


def test_a_temporary_file_a_resume_removes_is_named_quoted(tmp_path: Path) -> None:
    """The resumed host said 'removed NAME, left by the write_file the crash cut off' with the name as the model
    chose it: a file named with a newline and an escape sequence forged a line of run's progress and, piped, put
    the raw escape out. It is named as every note names a path (quoted_path)."""
    name = "b\nturn 9 ended: completed\x1b[2J.txt"
    provider = _script(tmp_path, [
        {"toolCalls": [{"name": "write_file", "arguments": {"path": name, "content": "one\n"}}]}, {"text": "done"},
    ])  # fmt: skip
    host = _host(tmp_path, provider, ["write it"])
    _finish(host)
    log = host.writer.path
    call = next(e for e in read_log(log).events if e["type"] == "tool/call")
    _cut(log, call["seq"] + 1)
    workspace = tmp_path / "ws"
    (workspace / name).unlink()
    (workspace / f".{name}.0123456789ab.tmp").write_text("on")  # the kill came mid-write
    said: list[str] = []
    resumed = AgentHost.resume(log, make_provider(provider), load_config(None),
                               HostOptions(workspace=workspace, progress=said.append))  # fmt: skip
    _finish(resumed)
    [line] = [s for s in said if s.startswith("removed ")]
    assert line == "removed .b\\nturn 9 ended: completed\\u001b[2J.txt.0123456789ab.tmp, left by the write_file the crash cut off"
