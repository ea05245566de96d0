"""``tapedeck cost``'s text: a sum in a sentence is written as a word, not padded to a table column's width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.cli import main


@pytest.mark.parametrize(("log", "unknown"), [("compaction-recovery", True), ("multi-turn", False)])
def test_a_sum_in_the_totals_reads_as_a_word(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str], log: str, unknown: bool
) -> None:
    """The totals under the table (``turn N: …``, ``session: …``) write each cost and cached share without the
    padding the table gives them (``turn 1: 4 requests, $0.0000,    - cached`` had it); an unknown share is the word
    ``-``. The whole output is pinned by ``tests/golden/cli/<log>/cost.txt``; this says what matters in it."""
    assert main(["cost", str(fixtures_dir / f"{log}.session.jsonl")]) == 0
    totals = [
        line for line in capsys.readouterr().out.splitlines() if re.match(r"(turn \d+|session): ", line)
    ]
    assert totals and all("  " not in line for line in totals), totals
    assert all(line.endswith(", - cached") for line in totals) == unknown, totals
