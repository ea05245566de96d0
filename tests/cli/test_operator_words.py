"""What the operator reads says it once, plainly: turn spans, config values, recall's argument errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.read.event_filter import EventFilter
from core.read.summary import in_words, summarize, turn_span
from tests.log.helpers import user


def test_a_span_of_one_turn_reads_turn_n() -> None:
    assert (turn_span(1, 1), turn_span(2, 5)) == ("turn 1", "turns 2-5")
    tape = user("[slice tape v1 · turns 1-1 · 1 turn(s) sealed]\nturn 1: listed files", "plugin:slice:history")
    tape["sourceEventSeqs"] = [3, 4]
    assert summarize({**tape, "seq": 9}, 200).startswith("tape entry: turn 1 · 2 nodes")
    assert EventFilter.parse("", "", "3", False, "").describe() == "turn 3"


def test_config_values_read_as_the_operator_types_them() -> None:
    assert (in_words(True), in_words(False)) == ("true", "false")
    change = {"type": "tapedeck/config", "seq": 4, "data": {
        "changes": {"prolong.registerCommand": {"old": False, "new": True}}, "by": "operator"}}  # fmt: skip
    assert summarize(change, 200) == "config prolong.registerCommand: false → true"


def test_a_bad_turn_for_recall_is_told_to_the_operator(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", "turn", str(fixtures_dir / "multi-turn.session.jsonl"), "x"]) == 2
    err = capsys.readouterr().err
    assert "recall_turn" not in err and '{"turn"' not in err
    assert "'x' is not a turn" in err
