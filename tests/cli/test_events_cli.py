"""``tapedeck events``: turn filter and the turn column for events outside a turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from tests.core.test_turn_attribution import between_turns_log
from tests.tui.logs import Log


def test_events_turn_filter_leaves_out_events_between_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, outside = between_turns_log()
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--turn", "1"]) == 0
    listed = [int(line.split()[0]) for line in capsys.readouterr().out.splitlines()]
    assert listed == list(range(11))
    assert main(["events", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    for seq in outside:
        assert lines[seq].split()[1] == "t-", lines[seq]
        assert "None" not in lines[seq]


def test_interrupted_answer_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    seqs = log.turn(1, "first", "ok")
    log.events[seqs["answer"]]["data"]["interrupted"] = True
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path), "--type", "assistant/message"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "interrupted" not in lines[0] and "interrupted" in lines[1], lines
    assert main(["surface", str(path)]) == 0
    assert "interrupted" in capsys.readouterr().out
