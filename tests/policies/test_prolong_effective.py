"""``tapedeck status`` and the prolong prompt follow the session's own config (seed 003).

The seed's status block prints the window the session runs with ("window: full"), the denied calls kept
("denyKeep … 状态报告中保留的最近被拒调用条数"), and points at the culprit with "suspect a …"; ``promptOrder`` orders
the prompt section and ``registerCommand`` can turn the status command off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_rewind_support import HEADER, Log, tool_call

from core.cli import main
from core.control.config import config_event, logged_config, validate_config
from core.log.vocabulary import HOST_EVENT

GREP_LOG = '{"command":"grep -n KeyError log.txt"}'


def hosted(config: dict[str, Any], denials: int = 0, changes: dict[str, tuple[Any, Any]] | None = None) -> Log:
    log = Log("sess-effective")
    log.add(HOST_EVENT, {"pid": 1, "config": config, "resumed": False}, ignorable=True)
    if changes:
        log.extend([config_event(changes, "operator")])
    log.turn_start()
    log.user("what failed earlier?")
    for n in range(denials):
        log.assistant(tool_call(f"c{n}", "bash", GREP_LOG))
        log.call(f"c{n}", "bash", GREP_LOG)
        log.result(f"c{n}", f"Error: rejected by policy #{n}", is_error=True)
    log.turn_end()
    return log


def write(log: Log, tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    path = tmp_path / "session.jsonl"
    header = HEADER | {"id": log.session.id, "cwd": str(tmp_path / "ws")}
    path.write_text("\n".join(json.dumps(e) for e in [header, *log.session.events]) + "\n")
    return path


def status(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["status", str(path), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_status_reports_the_window_the_session_ran_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(hosted({"prolong": {"logWindow": 3}}), tmp_path)
    code, out = status(path, capsys)
    assert code == 0 and "window: last 3 sections" in out
    # the window is set only at start: a change an older host logged (it kept writing with its window) is not it
    changed = write(hosted({"prolong": {"logWindow": 3}}, changes={"prolong.logWindow": (3, 7)}), tmp_path)
    assert "window: last 3 sections" in status(changed, capsys)[1]


def test_status_lists_every_denial_it_keeps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(hosted({"prolong": {"denyKeep": 20}}, denials=8), tmp_path)
    code, out = status(path, capsys)
    assert code == 0 and "denied tool calls referencing the log: 8" in out
    assert [f"#{n})" in out for n in range(8)] == [True] * 8
    assert "hint: suspect a tools/pre-execute policy plugin" in out
    kept = write(hosted({"prolong": {"denyKeep": 3}}, denials=8), tmp_path)
    out = status(kept, capsys)[1]
    assert [f"#{n})" in out for n in range(8)] == [False] * 5 + [True] * 3


def test_a_session_without_the_status_command_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(hosted({"prolong": {"registerCommand": False}}), tmp_path)
    code, out = status(path, capsys)
    assert code == 2 and "registerCommand is false" in out


def test_logged_config_is_the_hosts_config_plus_its_changes() -> None:
    log = hosted({"rewind": {"reportLanguage": "zh"}}, changes={"prolong.denyKeep": (20, 4)})
    config = logged_config(log.session.events)
    assert config is not None
    assert config.rewind.report_language == "zh" and config.prolong.deny_keep == 4
    assert logged_config([]) is None
    assert logged_config(hosted({}).session.events) == validate_config({})
