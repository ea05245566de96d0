"""A log reached by two names (a root given relative and absolute, through a symbolic link, or a session directory
under a root given too) is one session: one row, one set of alerts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from tests.alerts.crafted import HEADER, Log


def _root(tmp_path: Path) -> Path:
    """A sessions root of one session whose log fails three tool calls in a row (one error-streak alert)."""
    log = Log()
    log.turn(1)
    for _ in range(3):
        log.result(True)
    path = tmp_path / "sessions" / "--w--" / "s-1" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *log.events]))
    (tmp_path / "link").symlink_to(tmp_path / "sessions")
    return tmp_path / "sessions"


def _names(tmp_path: Path, how: str) -> list[str]:
    root = _root(tmp_path)
    return {
        "relative and absolute": [os.path.relpath(root), str(root)],
        "through a link": [str(root), str(tmp_path / "link")],
        "a session directory under its root": [str(root), str(root / "--w--" / "s-1")],
        "a log under its root": [str(root / "--w--" / "s-1" / "session.jsonl"), str(tmp_path / "link")],
    }[how]


HOW = [
    "relative and absolute",
    "through a link",
    "a session directory under its root",
    "a log under its root",
]


@pytest.mark.parametrize("how", HOW)
def test_sessions_lists_a_log_named_twice_once(
    tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rows of one session, told apart by nothing (the same id, the same twin mark), and every pause or stop an
    operator sent from the table sent to the one host twice over."""
    monkeypatch.chdir(tmp_path)
    names = _names(tmp_path, how)
    assert main(["sessions", *names, "--json"]) in (0, None)
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == ["crafted-1"], rows
    assert rows[0]["path"].endswith("session.jsonl") and Path(rows[0]["path"]).resolve() == (
        tmp_path / "sessions" / "--w--" / "s-1" / "session.jsonl"
    )


@pytest.mark.parametrize("how", HOW)
def test_alerts_reports_the_alerts_of_a_log_named_twice_once(
    tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each alert was reported once per name, so `--exec` paged the operator twice and a configured action (a pause,
    a message to the agent) was sent twice."""
    monkeypatch.chdir(tmp_path)
    assert main(["alerts", *_names(tmp_path, how), "--json"]) == 1
    alerts = json.loads(capsys.readouterr().out)
    assert [(a["cause"], a["seq"]) for a in alerts] == [("error-streak", 3)], alerts
