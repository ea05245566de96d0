"""The head of ``tapedeck sessions`` (``sessions_under``) words a log file named as a root for a file: a session is
*in* a file, *under* a directory (``1 session under session.jsonl`` read as if the file were a directory)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.cli import main
from core.log.layout import sessions_under

FIXTURE = "tool-call-turn.session.jsonl"


def _log(fixtures_dir: Path, place: Path) -> Path:
    place.mkdir(parents=True)
    shutil.copy(fixtures_dir / FIXTURE, place / "session.jsonl")
    return place / "session.jsonl"


def test_a_log_file_is_worded_as_a_file(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(fixtures_dir, tmp_path / "root" / "p" / "s1")
    assert main(["sessions", str(log)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"1 session in {log}"
    assert main(["sessions", str(log.parent)]) == 0  # a session directory holds its log: under it
    assert capsys.readouterr().out.splitlines()[0] == f"1 session under {log.parent}"


def test_files_and_directories_named_together(fixtures_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    first = _log(fixtures_dir, root / "p" / "s1")
    second = _log(fixtures_dir, tmp_path / "loose")
    gone = tmp_path / "gone" / "session.jsonl"  # a log removed meanwhile is still named as the file it was
    assert sessions_under(2, [first, second]) == f"2 sessions in {first}, {second}"
    assert sessions_under(3, [root, first]) == f"3 sessions under {root} and in {first}"
    assert sessions_under(3, [first, root]) == f"3 sessions in {first} and under {root}"
    assert sessions_under(0, [gone]) == f"no sessions in {gone}"
    assert sessions_under(0, [tmp_path / "nothing-here"]) == f"no sessions under {tmp_path / 'nothing-here'}"
    assert (
        sessions_under(1, ["box:logs/session.jsonl", "box:logs"])
        == "1 session in box:logs/session.jsonl and under box:logs"
    )
