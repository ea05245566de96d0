"""``tapedeck request --all --json --full`` rebuilds, byte for byte, the bodies the real DSH posted.

Real DSH rc.8 sessions run against the scripted loopback model, which records the raw body of every request DSH
posted: a one-shot task of several tool calls (and the title call), a two-turn session (turn 2 sends turn 1's
final answer with its reasoning back, and DSH prunes turn 1's big results under turn 2's pressure), a compaction forced by a small context window (a checkpoint message of
several text blocks, and DSH's summary calls) and a subagent (its own session and log). Every log of those runs
is then read back with ``tapedeck request`` and each rebuilt body compared with the recorded one, whole and
message by message. The bodies are compared raw: DSH serializes with ``JSON.stringify``, which gives the same
bytes as ``orjson.dumps`` for these bodies (strings, integers, booleans).

A compaction summary call ends with DSH's own instruction, a user message whose text is not in the log: its
other messages, tools and fields are compared, and the instruction is taken from the recorded body. A
compaction that failed after its call logs no summary, so its call cannot be rebuilt; those calls are counted.

Run with ``-s`` to see the tally: ``python -m pytest -q -s tests/dsh/test_request_fidelity.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.log.reader import read_log
from tests.dsh.harness import (
    COMPACT_HEADER,
    SESSION_HEADER,
    DshHome,
    DshInstall,
    DshWeb,
    ScriptedModel,
    run_headless,
    wait_for,
)
from tests.host.sse_server import Received, Reply, chunk, tool_delta

DELEGATE = "delegate=child"
CHILD_PROMPT = "Reply with the single word CHILD_OK."


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or () if isinstance(p, dict))


class FidelityModel(ScriptedModel):
    """The harness's scripted model, plus one directive: a prompt holding ``delegate=child`` makes the model call
    the ``subagent`` tool once (the child's prompt holds no directive, so the child answers at once).

    The call waits for the child (``run_in_background: false``): DSH's default, a background child, lets the
    parent's turn end at once, and headless DSH exits when the parent is idle, so on a busy machine it killed the
    child between its request and its reply, leaving a log with no model output to rebuild the request from."""

    def _answer(self, request: Received) -> Reply:
        messages = request.body.get("messages") or []
        asked = any(m.get("role") == "user" and DELEGATE in _text(m.get("content")) for m in messages)
        if request.body.get("tools") and asked and not any(m.get("role") == "tool" for m in messages):
            arguments = json.dumps({"description": "Child check", "prompt": CHILD_PROMPT, "run_in_background": False})
            return Reply([
                chunk({"role": "assistant", "content": None, "reasoning_content": "Delegate it."}),
                chunk(tool_delta(0, arguments, call_id=f"call_{uuid.uuid4().hex[:12]}", name="subagent")),
                chunk(finish="tool_calls"),
                chunk(usage={"prompt_tokens": 900, "completion_tokens": 5, "prompt_cache_hit_tokens": 450}),
            ])  # fmt: skip
        return super()._answer(request)


def _kind(request: Received) -> str:
    if request.headers.get(COMPACT_HEADER) == "1":
        return "compaction"
    return "agent" if request.body.get("tools") else "title"


@dataclass
class Runs:
    """The logs the runs wrote and the requests DSH posted."""

    logs: list[Path]
    posted: list[Received]


def _web_session(world: DshHome, model: ScriptedModel, prompts: list[str]) -> None:
    """One ``dsh web`` session, one turn per prompt, each awaited to its end."""
    with DshWeb(world) as web:
        session = web.create_session()
        for prompt in prompts:
            before = len(model.requests(session))
            web.prompt(session, prompt)
            wait_for(lambda: len(model.requests(session)) > before, 60, "the turn's first request")  # noqa: B023
            wait_for(lambda: not web.running(session), 120, "the turn to end", interval=0.2)


@pytest.fixture(scope="module")
def runs(dsh: DshInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Every run, once per module (about a minute: three headless tasks and a two-turn web session)."""
    with FidelityModel() as model:
        root = tmp_path_factory.mktemp("fidelity")
        worlds = []

        def world(name: str, **kw: Any) -> DshHome:
            worlds.append(DshHome(dsh, root / name, model.url, bridge=False, **kw))
            return worlds[-1]

        for name, task, kw in (
            ("tools", "Run the script. steps=3 big=300", {}),
            ("compaction", "Run the script. steps=4 big=6000", {"context_window": 11_000}),
            ("subagent", f"Check the child. {DELEGATE}", {}),
        ):
            result = run_headless(world(name, **kw), task, timeout=180)
            assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
        # Turn 2 reports a prompt near the window: DSH prunes turn 1's big result before turn 2's second step.
        _web_session(world("turns"), model, ["First turn. steps=2 big=60000", "Second turn. steps=1 report=110000"])
        yield Runs(sorted(p for w in worlds for p in w.sessions.rglob("session*.jsonl")), list(model.server.received))


def _rebuilt(log: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["request", str(log), "--all", "--json", "--full"]) == 0
    return json.loads(out.getvalue())


@dataclass
class Tally:
    bodies: int = 0
    bodies_equal: int = 0
    messages: int = 0
    messages_equal: int = 0
    tools_equal: int = 0

    def add(self, posted: bytes, rebuilt: dict[str, Any]) -> bool:
        sent = orjson.loads(posted)
        self.bodies += 1
        self.bodies_equal += posted == orjson.dumps(rebuilt)
        self.tools_equal += orjson.dumps(sent.get("tools")) == orjson.dumps(rebuilt.get("tools"))
        pairs = list(zip(sent["messages"], rebuilt["messages"], strict=False))
        self.messages += max(len(sent["messages"]), len(rebuilt["messages"]))
        self.messages_equal += sum(orjson.dumps(a) == orjson.dumps(b) for a, b in pairs)
        return posted == orjson.dumps(rebuilt)


def _by_session(runs: Runs) -> list[tuple[Path, list[Received], list[dict[str, Any]]]]:
    out = []
    for log in runs.logs:
        session = read_log(log).header["id"]
        out.append((log, [r for r in runs.posted if r.headers.get(SESSION_HEADER) == session], _rebuilt(log)))
    return out


def test_every_agent_and_title_body_is_rebuilt_byte_for_byte(runs: Runs) -> None:
    tallies = {"agent": Tally(), "title": Tally()}
    for log, posted, rebuilt in _by_session(runs):
        for kind, tally in tallies.items():
            sent = [r.raw for r in posted if _kind(r) == kind]
            built = [r["body"] for r in rebuilt if r["kind"] == kind]
            assert len(built) == len(sent), f"{log}: {len(sent)} {kind} requests posted, {len(built)} rebuilt"
            for raw, body in zip(sent, built, strict=True):
                assert tally.add(raw, body), f"{log}: a {kind} body differs"
    for kind, t in tallies.items():
        print(f"\n{kind}: {t.bodies_equal}/{t.bodies} bodies byte-identical, {t.messages_equal}/{t.messages} "
              f"messages, tools {t.tools_equal}/{t.bodies}")  # fmt: skip
    assert tallies["agent"].bodies >= 10 and tallies["title"].bodies >= 4


def test_every_logged_compaction_call_is_rebuilt_but_for_dsh_s_instruction(runs: Runs) -> None:
    tally, unlogged, failed = Tally(), 0, 0
    for log, posted, rebuilt in _by_session(runs):
        sent = [r.raw for r in posted if _kind(r) == "compaction"]
        calls = [r for r in rebuilt if r["kind"] == "compaction"]
        failed += sum(1 for e in read_log(log).events if e["type"] == "compaction/end" and "error" in e["data"])
        for call in calls:
            assert call["unlogged"], "the rebuilt call says the instruction is not in the log"
            # The instruction DSH appended is the one message the log lacks: take it from the posted body.
            match = [raw for raw in sent
                     if orjson.loads(raw)["messages"][:-1] == call["body"]["messages"]]  # fmt: skip
            assert match, f"{log}: no posted summary call carries the messages of the one at seq {call['seq']}"
            posted_body = orjson.loads(match[0])
            whole = {**call["body"], "messages": [*call["body"]["messages"], posted_body["messages"][-1]]}
            assert tally.add(match[0], whole), f"{log}: the summary call at seq {call['seq']} differs"
            sent.remove(match[0])
        unlogged += len(sent)
    print(f"\ncompaction: {tally.bodies_equal}/{tally.bodies} summary calls byte-identical with DSH's instruction "
          f"taken from the posted body; {unlogged} posted calls of failed compactions ({failed} failed) have "
          "nothing in the log to rebuild them from")  # fmt: skip
    assert tally.bodies >= 1
    assert unlogged <= failed


def test_the_runs_covered_what_the_fidelity_target_names(runs: Runs) -> None:
    events = {log: read_log(log).events for log in runs.logs}
    every = [e for es in events.values() for e in es]
    assert any(e["type"] == "tool/call" for e in every)
    replaced = [e for e in every if e["type"] == "user/message" and e.get("surfaceOp") != "append"]
    assert any(len(e["data"]["content"]) > 1 for e in replaced), "a compaction checkpoint of several text blocks"
    assert any(e["type"] == "session/title-llm-request" for e in every)
    assert any(read_log(log).header.get("parentSession") for log in runs.logs), "a subagent's own log"
    assert any(e["type"] == "compaction/prune" for e in every), "DSH's tool-result pruner"
    # A request that sends an earlier final answer back with its reasoning (turn 2 of the web session).
    assert any(
        m.get("role") == "assistant" and "tool_calls" not in m and m.get("reasoning_content")
        for r in runs.posted for m in r.body.get("messages") or ()
    )  # fmt: skip


def test_cost_books_dsh_s_prunes_in_the_turn_that_made_them(runs: Runs) -> None:
    earlier = 0  # prunes of a result an earlier turn wrote (DSH's replacement keeps that turn in its data)
    for log in runs.logs:
        made: dict[int, int] = {}
        turn = 0
        for event in read_log(log).events:
            if event["type"] == "turn/start":
                turn = event["data"]["turn"]
            elif event["type"] == "tool/result" and isinstance(event.get("surfaceOp"), dict):
                made[event["seq"]] = turn
                earlier += event["data"]["turn"] < turn
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["cost", str(log), "--json"]) == 0
        cuts = {c["seq"]: c["turn"] for c in json.loads(out.getvalue())["cuts"] if c["seq"] in made}
        assert cuts == {seq: made[seq] for seq in cuts}
    assert earlier >= 1
