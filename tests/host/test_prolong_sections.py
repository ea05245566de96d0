"""``log.txt`` as the host writes it: a fold's section names the tool of the result it replaced."""

from __future__ import annotations

import json
from pathlib import Path

from core.control.config import validate_config
from core.host.loop import AgentHost, HostOptions
from core.host.providers.scripted import ScriptedModel
from core.policies.prolong import parse_sections

COMMAND = "seq 1 3000"


def test_a_fold_names_the_tool_like_the_result_it_replaces(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "m", "responses": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": COMMAND}, "id": "call_big"}]},
        {"toolCalls": [{"name": "list_dir", "arguments": {"path": "."}, "id": "call_ls"}]},
        {"text": "done"},
    ]}))  # fmt: skip
    workspace = tmp_path / "ws"
    workspace.mkdir()
    host = AgentHost.create(tmp_path / "root", ScriptedModel(script), validate_config({}),
                            HostOptions(workspace=workspace), tasks=["Count the rows"])  # fmt: skip
    host.run()
    host.close()
    results = [s for s in parse_sections((workspace / "log.txt").read_text()) if s.type == "tool/result"]
    by = {(s.fields["call"], s.fields.get("by")): s.fields["tool"] for s in results}
    assert by[("call_big", None)] == "bash"
    assert by[("call_big", "fold")] == "bash"  # the fold is written at the next step, after step/end
