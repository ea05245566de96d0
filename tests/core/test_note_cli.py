"""``tapedeck note`` says what it did to the note at a seq: added one, replaced the one there, or removed it (it
printed ``noted seq N`` for an added note and a replaced one alike)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.cli import main
from core.read.notes import load_notes
from core.shared.text import quoted_path

FIXTURE = "tool-call-turn.session.jsonl"


def test_note_says_added_replaced_or_removed(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "session.jsonl"
    shutil.copy(fixtures_dir / FIXTURE, log)
    sidecar = quoted_path(f"{log}.notes.json")
    said = []
    for text in ("first", "second", "", ""):
        assert main(["note", str(log), "--seq", "1", text]) == 0
        said.append(capsys.readouterr().out)
    assert said == [
        f"added a note at seq 1 ({sidecar})\n",
        f"replaced the note at seq 1 ({sidecar})\n",
        f"removed the note at seq 1 ({sidecar})\n",
        "no note at seq 1; nothing changed\n",
    ]
    assert load_notes(log) == {}


def test_a_note_at_another_seq_is_added(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note at one seq makes a note at another an added one, not a replacement."""
    log = tmp_path / "session.jsonl"
    shutil.copy(fixtures_dir / FIXTURE, log)
    assert main(["note", str(log), "--seq", "1", "first"]) == 0
    capsys.readouterr()
    assert main(["note", str(log), "--seq", "2", "other"]) == 0
    assert capsys.readouterr().out.startswith("added a note at seq 2 (")
    assert sorted(load_notes(log)) == [1, 2]
