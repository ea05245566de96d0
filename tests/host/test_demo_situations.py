"""The demo's scripted model answers by situation: an operator op at any point still ends the demo completed.

Each op is sent through the real control inbox during a chosen model call (or right after a turn ended) and
read there and then by the host's own ``Operator.poll``, so where it lands is exact, not a race with the inbox
thread. The model is the demo's real scripted model; the wrapper only counts its calls.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.control import inbox as control
from core.control.config import load_config
from core.host.demo_scenario import TASKS, write_script
from core.host.demo_workspace import create_demo_workspace
from core.host.loop import AgentHost, HostOptions, TurnOutcome
from core.host.providers import make_provider
from core.host.providers.scripted import SCRIPT_EXHAUSTED, ScriptedModel
from core.read.load import load_session
from core.read.session import Session
from core.shared.chat import ChunkSink, Completion, ModelRequest

Requests = list[tuple[str, dict[str, Any]]]
# The ops to send at point ``k`` (the k-th model call, or ``end:N`` after turn N ended), given the host.
Act = Callable[[AgentHost, int | str], Requests]


class _Counted:
    """The demo's scripted model; before each call it lets the operator act."""

    def __init__(self, model: ScriptedModel, before_call: Callable[[int], None]) -> None:
        self._model = model
        self._before_call = before_call
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def complete(self, request: ModelRequest, on_chunk: ChunkSink | None = None) -> Completion:
        self.calls += 1
        self._before_call(self.calls)
        return self._model.complete(request, on_chunk)


class _Resumer:
    """Answers each pause with a resume once the host shows ``paused``."""

    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.done = threading.Event()
        self.resumed = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.done.wait(0.01):
            if self.host.operator.state == "paused":
                request_id = control.append_request(self.host.inbox_path, "resume", {})["id"]
                self.resumed += 1
                # Wait for that resume's answer, not for the state to leave "paused": another pause may land
                # right after it, and a look every 10 ms can miss the short run between the two.
                while not self._answered(request_id):
                    if self.done.wait(0.01):
                        return

    def _answered(self, request_id: str) -> bool:
        return any(
            e["type"] == control.CONTROL_EVENT
            and e["data"].get("requestId") == request_id
            and e["data"].get("outcome") in control.FINAL
            for e in self.host.session.events[-200:]
        )


def _run_demo(tmp_path: Path, act: Act) -> tuple[list[TurnOutcome], Session, Counter[tuple[str, str]]]:
    workspace = create_demo_workspace(tmp_path / "ws")
    holder: list[AgentHost] = []

    def send(point: int | str) -> None:
        host = holder[0]
        with host.lock:
            requests = act(host, point)
        for op, args in requests:
            control.append_request(host.inbox_path, op, args)
        host.operator.poll()

    def progress(line: str) -> None:
        if line.startswith("turn ") and " ended: " in line:
            send("end:" + line.split()[1].rstrip(":"))

    model = _Counted(make_provider(f"scripted:{write_script(tmp_path / 'script.json')}"), send)  # type: ignore[arg-type]
    host = AgentHost.create(
        tmp_path / "root", model, load_config(None), HostOptions(workspace=workspace, progress=progress),  # type: ignore[arg-type]
        tasks=TASKS,
    )  # fmt: skip
    holder.append(host)
    resumer = _Resumer(host)
    resumer.thread.start()
    try:
        outcomes = host.run()
    finally:
        resumer.done.set()
        host.close()
    resumer.thread.join(60)
    session = load_session(host.writer.path)
    finals = Counter(
        (e["data"]["op"], e["data"]["outcome"])
        for e in session.events
        if e["type"] == control.CONTROL_EVENT and e["data"]["outcome"] in control.FINAL
    )
    return outcomes, session, finals


def _assert_completed(outcomes: list[TurnOutcome], session: Session) -> None:
    assert [o.reason["kind"] for o in outcomes] == ["completed"] * len(outcomes)
    assert SCRIPT_EXHAUSTED not in session.path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    prompts = [
        e["data"]["content"][0]["text"]
        for e in session.events
        if e["type"] == "user/message" and e["data"]["source"] == {"kind": "user"}
    ]
    assert prompts == TASKS  # every task ran, once, in order


def _folded_seq(host: AgentHost) -> int | None:
    """The newest folded tool result on the surface, for an ``expand``."""
    session = host.session
    for seq in reversed(session.surface):
        event = session.events[seq]
        if event["type"] == "tool/result" and (event["data"].get("meta") or {}).get("policy") == "fold":
            return seq
    return None


def _task_turn(host: AgentHost, turn: int) -> bool:
    """Whether ``turn`` was started by one of the demo's tasks (not by an operator's message)."""
    session = host.session
    start = session.turns[turn].start_seq
    for event in session.events[start:]:
        if event["type"] == "user/message":
            return event["data"]["source"] == {"kind": "user"}
    return True


CONFIG_CYCLE = [
    ("slice.history.keepRecentTurns", 1),
    ("slice.fold.enabled", False),
    ("slice.history.keepRecentTurns", 0),
    ("slice.fold.enabled", True),
]


def _every_point(op: str) -> Act:
    def act(host: AgentHost, point: int | str) -> Requests:
        n = point if isinstance(point, int) else 0
        if op == "checkpoint":
            return [("checkpoint", {"objective": f"operator mark at {point}"})]
        if op == "rewind":  # a mark at one point, rewound at the next
            return [("checkpoint", {"objective": f"operator mark at {point}"}) if n % 2 else ("rewind", {})]
        if op == "message":  # not from a turn one of these messages started: each would start another
            turn = int(point[4:]) if isinstance(point, str) else host.session.open_turn
            if turn is not None and not _task_turn(host, turn):
                return []
            return [("message", {"text": f"Operator at {point}: mind the edge cases."})]
        if op == "pause":
            return [("pause", {})]
        if op == "config.set":
            key, value = CONFIG_CYCLE[n % len(CONFIG_CYCLE)]
            return [("config.set", {"key": key, "value": value})]
        folded = _folded_seq(host)
        return [] if folded is None else [("expand", {"seq": folded})]

    return act


# How many of each op the every-point sweep must have applied (so the sweep really exercised it).
APPLIED_AT_LEAST = {"checkpoint": 35, "rewind": 10, "message": 35, "pause": 30, "config.set": 35, "expand": 3}


@pytest.mark.parametrize("op", list(APPLIED_AT_LEAST))
def test_an_operator_op_at_every_model_call_and_turn_end_still_completes_the_demo(tmp_path: Path, op: str) -> None:
    outcomes, session, finals = _run_demo(tmp_path, _every_point(op))
    _assert_completed(outcomes, session)
    assert finals[(op, control.APPLIED)] >= APPLIED_AT_LEAST[op], finals
    if op == "message":  # one sent between turns, or too late for its turn, starts a turn of its own
        assert len(outcomes) > len(TASKS) + 5
    if op == "pause":  # the host really held, at model calls, tool calls and between turns, and went on
        states = [e["data"]["state"] for e in session.events if e["type"] == "tapedeck/state"]
        assert states.count("paused") >= 30 and states[-1] == "exited"


def _mark_then_rewind(mark_at: int | str, rewind_at: int | str) -> Act:
    def act(host: AgentHost, point: int | str) -> Requests:
        if point == mark_at:
            return [("checkpoint", {"objective": f"operator mark at {point}"})]
        return [("rewind", {})] if point == rewind_at else []

    return act


# The demo's 33 model calls: turn 1 is calls 1-8 (the model's own mark at 1, its rewind at 7), turn 2 9-12,
# turn 3 13-17, turn 4 18-26 (mark at 18, rewind at 25), turn 5 27-29, turn 6 30-33.
@pytest.mark.parametrize("at", [9, 16, "end:4", 29, 33])
def test_one_checkpoint_at_any_point_still_completes_the_demo(tmp_path: Path, at: int | str) -> None:
    outcomes, session, finals = _run_demo(tmp_path, _mark_then_rewind(at, -1))
    _assert_completed(outcomes, session)
    assert finals[("checkpoint", control.APPLIED)] == 1


@pytest.mark.parametrize(("mark_at", "rewind_at"), [(3, 5), (13, 15), (19, 22), (30, 32), ("end:2", 15)])
def test_one_operator_rewind_at_any_point_still_completes_the_demo(
    tmp_path: Path, mark_at: int | str, rewind_at: int | str
) -> None:
    outcomes, session, finals = _run_demo(tmp_path, _mark_then_rewind(mark_at, rewind_at))
    _assert_completed(outcomes, session)
    assert finals[("rewind", control.APPLIED)] == 1
    said = [
        block["text"]
        for e in session.events
        if e["type"] == "assistant/message"
        for block in e["data"]["message"]["content"]
        if block["type"] == "text"
    ]
    assert sum("folded into a rewind report" in text for text in said) == 1  # the model took note, once


def test_the_demo_agent_reports_the_warnings_its_own_grep_counted(tmp_path: Path) -> None:
    outcomes, session, _ = _run_demo(tmp_path, lambda host, point: [])
    _assert_completed(outcomes, session)
    counted = next(
        e["data"]["message"]["content"][0]["content"][0]["text"]
        for e in session.events
        if e["type"] == "tool/result" and e["data"]["turn"] == 4
        and session.tool_calls[e["data"]["message"]["source"]["callId"]].arguments.startswith('{"command":"grep -c')
    )  # fmt: skip
    warnings = int(counted.split()[0])
    [answer] = [o.final_text for o in outcomes if o.turn == 4]
    assert f"has {warnings} `WARN" in answer
