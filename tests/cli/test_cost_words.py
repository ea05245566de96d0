"""``tapedeck cost``'s text: a sum in a sentence is written as a word, not padded to a table column's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main


def test_an_unknown_cost_or_share_reads_as_a_word_in_the_totals(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "turn 1: 4 requests, $0.0000,    - cached": the table's padding went into the sentence
    assert main(["cost", str(fixtures_dir / "compaction-recovery.session.jsonl")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "turn 1: 4 requests, $0.0000, - cached" in lines
    assert "session: 4 requests, hit 0 / miss 64 / output 14 tokens, $0.0000, - cached" in lines


def test_a_share_in_the_totals_is_not_padded(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cost", str(fixtures_dir / "multi-turn.session.jsonl")]) == 0
    totals = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("turn 1:", "turn 2:", "session:"))
    ]
    assert totals and all("  " not in line for line in totals), totals
