"""Every tool runs under a deadline and ends at once when the host's stop event is set."""

from __future__ import annotations

import threading
from pathlib import Path

from core.host.toolbox import ToolBox
from core.host.tools import ToolLimits, workspace_tools


def test_a_cancelled_call_ends_aborted_without_running(tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()
    calls = {
        "read_file": {"path": "x.txt"},
        "list_dir": {},
        "glob": {"pattern": "*"},
        "grep": {"pattern": "x"},
        "bash": {"command": "touch ran"},
        "write_file": {"path": "x.txt", "content": "no"},
        "edit_file": {"path": "x.txt", "old_text": "a", "new_text": "b"},
    }
    for tool in workspace_tools(tmp_path):
        args = calls[tool.name]
        outcome = tool.run(args, stop)
        assert outcome.is_error and outcome.error_code == "ABORTED", (tool.name, outcome.text)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_toolbox_interrupt_stops_later_calls(tmp_path: Path) -> None:
    box = ToolBox(tmp_path)
    assert not box.run("list_dir", "{}").is_error
    box.interrupt()
    result = box.run("list_dir", "{}")
    assert result.is_error and result.error == {"name": "WorkspaceToolError", "code": "ABORTED"}


def test_a_tool_past_its_deadline_ends_with_tool_timeout(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text("x\n")
    glob = {t.name: t for t in workspace_tools(tmp_path, ToolLimits(call_seconds=0))}["glob"]
    outcome = glob.run({"pattern": "**/*.txt"})
    assert outcome.is_error and outcome.error_code == "TOOL_TIMEOUT"
