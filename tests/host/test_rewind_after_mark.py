"""The region a rewind folds, on the host: "after the mark" is what was added after it, not a replacement of
something older that was merely written after it (a fold of an earlier result, a tape entry of earlier turns)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from core.control import inbox as control
from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.policies.checkpoint import latest_mark


def _host(
    tmp_path: Path, responses: list[dict], tasks: list[str], progress: Callable[[str], None] | None = None
) -> AgentHost:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": responses}))
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    rows = ["id,name,value,status"] + [f"{i},row{i},{i * 7},ok" for i in range(3000)]
    (workspace / "big.csv").write_text("\n".join(rows))
    return AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=workspace, progress=progress), tasks=tasks)  # fmt: skip


def test_a_checkpoint_called_beside_a_read_keeps_its_result_when_the_read_is_folded(tmp_path: Path) -> None:
    # The read's fold is written at step 2, after the mark, but stands where the read's result stood, before the
    # checkpoint's own result: the rewind folded that result too and left the checkpoint call without one.
    host = _host(tmp_path, [
        {"toolCalls": [{"name": "read_file", "arguments": {"path": "big.csv"}},
                       {"name": "checkpoint", "arguments": {"objective": "find the bad row"}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "grep -c bad big.csv"}}]},
        {"toolCalls": [{"name": "rewind", "arguments": {}}]},
        {"text": "done"},
    ], ["Find the bad row in big.csv"])  # fmt: skip
    host.run()
    host.close()
    session = host.session
    [report] = [e for e in session.events if e["type"] == "user/message" and session.is_replacement(e["seq"])]
    folded = [session.events[s]["type"] for s in report["sourceEventSeqs"]]
    assert folded == ["assistant/message", "tool/result"]  # the bash step only
    calls = {b["id"] for e in session.events if e["type"] == "assistant/message" and e["seq"] in session.surface
             for b in e["data"]["message"]["content"] if b["type"] == "tool-call"}  # fmt: skip
    results = {session.events[s]["data"]["message"]["content"][0]["toolCallId"]
               for s in session.surface if session.events[s]["type"] == "tool/result"}  # fmt: skip
    assert calls == results  # every call on the surface keeps its result


def test_a_mark_placed_between_turns_does_not_fold_the_tape_of_the_turns_before_it(tmp_path: Path) -> None:
    # An operator's checkpoint while the host is between turns, then the next turn: its tape entry of turn 1 is
    # written after the mark, in turn 1's place; the rewind folds turn 2's exploration, not turn 1's history.
    holder: list[AgentHost] = []

    def progress(line: str) -> None:
        if line.startswith("turn 1 ended"):
            host = holder[0]
            control.append_request(host.inbox_path, "checkpoint", {"objective": "second"})
            host.operator.poll()

    host = _host(tmp_path, [
        {"toolCalls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"text": "turn one done"},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "grep -c bad big.csv"}}]},
        {"toolCalls": [{"name": "rewind", "arguments": {}}]},
        {"text": "turn two done"},
    ], ["first", "second"], progress)  # fmt: skip
    holder.append(host)
    host.run()
    host.close()
    session = host.session
    mark = latest_mark(session)
    assert mark is not None and mark.by == "operator" and not mark.active
    [tape] = [e for e in session.events if e["type"] == "user/message"
              and (e["data"].get("source") or {}).get("kind") == "plugin:slice:history"]  # fmt: skip
    assert tape["seq"] > mark.anchor and tape["seq"] in session.surface  # the sealed turn 1 stays
    [report] = [e for e in session.events if e["type"] == "user/message"
                and (e["data"].get("source") or {}).get("plugin") == "rewind"]  # fmt: skip
    assert tape["seq"] not in report["sourceEventSeqs"]
