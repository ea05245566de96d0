"""The requests the host sends: a stable head across phases, phase notes pinned in place, finalization."""

from __future__ import annotations

import json
from pathlib import Path

from core.control.config import load_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.shared.chat import ChunkSink, Completion, ModelRequest

TASK = (
    "Rename timeoutLabel in src/view.ts"  # a "small" task: checkpoint from step 5, finalization from step 9
)


class RecordingModel(ScriptedModel):
    """The scripted model, keeping every request the host sent it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest, on_chunk: ChunkSink | None = None) -> Completion:
        self.requests.append(request)
        return super().complete(request, on_chunk)


def _run(tmp_path: Path, steps: int) -> tuple[AgentHost, RecordingModel]:
    script = tmp_path / "script.json"
    calls = [{"toolCalls": [{"name": "list_files", "arguments": {"path": "."}}]} for _ in range(steps - 1)]
    script.write_text(json.dumps({"model": "m", "responses": [*calls, {"text": "done"}]}))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    model = RecordingModel(script)
    host = AgentHost.create(tmp_path / "root", model, load_config(None), HostOptions(workspace=tmp_path / "ws"),
                            tasks=[TASK])  # fmt: skip
    host.run()
    host.close()
    return host, model


def test_every_request_of_a_turn_extends_the_one_before_it(tmp_path: Path) -> None:
    host, model = _run(tmp_path, 9)
    requests = model.requests
    assert len(requests) == 9
    # One system prompt and one tool list for the whole turn: the head never breaks.
    assert len({r.system for r in requests}) == 1
    assert all(r.tools == requests[0].tools for r in requests)
    for before, after in zip(requests, requests[1:], strict=False):
        assert after.messages[: len(before.messages)] == before.messages
    notes = [m for m in requests[-1].messages if m.get("source", {}).get("kind") == "phase-note"]
    assert [n["content"][0]["text"].split(" ", 1)[0] for n in notes] == ["<task_checkpoint", "<task_finalization"]
    assert "<task_sizing>" in requests[0].system  # the standing policy: in the cached head, not a note
    log = host.writer.path.read_bytes()
    assert not any(tag in log for tag in (b"task_policy", b"task_checkpoint", b"task_finalization"))


def test_finalization_sends_tool_choice_none_and_refuses_a_call_anyway(tmp_path: Path) -> None:
    # Seed 004: "纯文本硬终步" — the hard step is a text-only final step. The script still asks for a tool at
    # step 9 (the small class's hard step) and would go on asking; the turn ends there, blocked.
    host, model = _run(tmp_path, 11)
    choices = [r.tool_choice for r in model.requests]
    assert choices == [None] * 8 + ["none"]
    refused = [
        e for e in host.session.events
        if e["type"] == "tool/result" and e["data"]["step"] == 9 and e["data"]["turn"] == 1
    ]  # fmt: skip
    [block] = refused[0]["data"]["message"]["content"]
    assert block["isError"] and "no tool named 'list_files' is available" in block["content"][0]["text"]
    turn = host.session.turns[1]
    assert turn.end_reason == {"kind": "blocked"} and max(turn.steps) == 9


def test_a_hard_step_answered_in_text_completes_the_turn(tmp_path: Path) -> None:
    host, model = _run(tmp_path, 9)
    assert host.session.turns[1].end_reason == {"kind": "completed"} and len(model.requests) == 9
