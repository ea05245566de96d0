"""``surface`` text output sizes its seq column to the widest seq it prints, as ``events`` does: a surface that holds
seqs of six digits and of seven kept a fixed ``:>6`` column, pushing every row of a seven-digit seq one place
right of the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from tests.cli.test_events_seq_column import DELTAS, _long_log
from tests.tui.logs import Log


def test_seven_digit_seqs_line_up_with_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _long_log(tmp_path)
    assert main(["surface", str(path)]) == 0
    *rows, total = capsys.readouterr().out.splitlines()
    assert total.endswith("model-visible message(s); * = replacement"), total
    seqs = [int(row[:7]) for row in rows]
    assert seqs[0] < 10**6 <= seqs[-1] == 13 + DELTAS, rows
    assert {row[7:9] for row in rows} == {"  "}, (
        rows
    )  # the mark (none here) and its space, one column for all
    # seq (7), mark and space (2), role (9) and a space: every row's source starts at 19
    assert {row[9:18].strip() for row in rows} >= {"user", "assistant"}, rows
    assert all(row[18] == " " != row[19] for row in rows), rows


def test_a_surface_of_fewer_seqs_keeps_six_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["surface", str(path)]) == 0
    *rows, _ = capsys.readouterr().out.splitlines()
    assert rows and all(row[:6].strip().isdigit() and row[6:8] == "  " for row in rows), rows
