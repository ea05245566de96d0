"""``tapedeck run --resume`` takes a session's id, or its log or session directory (its --help): a log or directory
named without a directory part (``session.jsonl`` in its own directory, ``.``) was looked up as an id only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def _ran(tmp_path: Path, session_id: str) -> tuple[str, Path, Path]:
    """Run one scripted turn as session ``session_id`` under ``tmp_path/sessions``: its provider, sessions root and
    log."""
    workspace, sessions = tmp_path / "workspace", tmp_path / "sessions"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "done"}]))
    provider = f"scripted:{script}"
    argv = ["run", "--provider", provider, "--workspace", str(workspace), "--sessions-root", str(sessions)]
    assert main([*argv, "--session-id", session_id, "hello"]) == 0
    return provider, sessions, next(sessions.rglob("session.jsonl"))


@pytest.mark.parametrize("named", ["session.jsonl", "."])
def test_a_log_named_without_a_directory_part_is_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    provider, _, log = _ran(tmp_path, "s1")
    capsys.readouterr()
    monkeypatch.chdir(log.parent)
    elsewhere = str(tmp_path / "elsewhere")
    assert main(["run", "--provider", provider, "--sessions-root", elsewhere, "--resume", named]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("session s1\n"), (out.out, out.err)


def test_an_id_is_still_looked_up_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare name that is both a session's id under the root and a file here resumes the session of that id."""
    provider, sessions, log = _ran(tmp_path, "s2")
    (tmp_path / "s2").write_text("not a log\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["run", "--provider", provider, "--sessions-root", str(sessions), "--resume", "s2"]) == 0
    assert f"log {log}" in capsys.readouterr().out
