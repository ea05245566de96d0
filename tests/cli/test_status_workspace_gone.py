"""``tapedeck status`` on a session whose workspace is gone (the demo removes its own): it says so, where the
report blamed a sandbox plugin for a log file it could not find."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def test_a_workspace_that_is_gone_is_named_not_blamed_on_a_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "workspace"
    sessions = tmp_path / "sessions"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "done"}]))
    argv = [
        "run",
        "--provider",
        f"scripted:{script}",
        "--workspace",
        str(workspace),
        "--sessions-root",
        str(sessions),
    ]
    assert main([*argv, "--session-id", "s1", "hello"]) == 0
    log = next(sessions.rglob("session.jsonl"))
    assert (workspace / "log.txt").is_file()  # the host wrote its prolong log there
    capsys.readouterr()
    assert main(["status", str(log)]) == 0
    assert "writable=yes" in capsys.readouterr().out
    (workspace / "log.txt").unlink()
    workspace.rmdir()
    assert main(["status", str(log)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        f"tapedeck: the session's workspace {workspace} is not there any more (moved or removed since the session "
        "ran), so its prolong log file cannot be read; pass --workspace DIR where it is now\n"
    ), out.err
    assert main(["status", str(log), "--workspace", str(tmp_path)]) == 0  # another place is read as asked
    assert "writable=NO" in capsys.readouterr().out
