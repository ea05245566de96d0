"""``events`` text output: the seq column is as wide as the largest seq printed, so a log past a million events
keeps its rows aligned (a fixed ``:>6`` column pushed the rest of a row of 7 digits one place right)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.cli import main
from tests.log.helpers import assistant
from tests.tui.logs import Log

DELTAS = 1_000_010  # a packed row of this many deltas takes the seqs after it past six digits


def _long_log(tmp_path: Path) -> Path:
    """A turn (seqs 0-10), then a second whose answer streams as one packed row of ``DELTAS`` deltas before it is
    said whole and the turn ends."""
    log = Log()
    log.turn(1, "first", "ok")
    log.add({"type": "turn/start", "data": {"turn": 2}})
    log.add({"type": "step/start", "data": {"turn": 2, "step": 1}})
    seq0 = len(log.events)
    row = {
        "type": "text-chunks",
        "seq0": seq0,
        "time0": 2000,
        "data": {"turn": 2, "step": 1, "index": 0, "dt": [1] * (DELTAS - 1), "texts": ["x"] * DELTAS},
    }
    after = [
        {**assistant(2, 1, "done"), "seq": seq0 + DELTAS, "time": 3000},
        {"type": "step/end", "seq": seq0 + DELTAS + 1, "time": 3001, "data": {"turn": 2, "step": 1}},
        {
            "type": "turn/end",
            "seq": seq0 + DELTAS + 2,
            "time": 3002,
            "data": {"turn": 2, "reason": {"kind": "completed"}},
        },
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(log.lines() + orjson.dumps(row) + b"\n" + log.lines(after))
    return path


@pytest.mark.parametrize(
    ("types", "printed"),
    [
        ("turn/start,turn/end,assistant/message", [0, 3, 8, 10, 11, 13 + DELTAS, 15 + DELTAS]),
        ("turn/end", [10, 15 + DELTAS]),
    ],
)
def test_the_seq_column_fits_the_largest_seq_printed(
    types: str, printed: list[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of six-digit seqs and of seven-digit ones start their turn column at the same place, and a surface
    event's mark sits in its own column either side of the million."""
    path = _long_log(tmp_path)
    assert main(["events", str(path), "--type", types]) == 0
    lines = capsys.readouterr().out.splitlines()
    largest = len(str(printed[-1]))
    assert [int(line[:largest]) for line in lines] == printed, lines
    assert all(line[largest : largest + 2] == " t" for line in lines), lines
    # the mark (or its blank) and the summary after it: seq, turn column (5), type column (27), mark (2)
    marks = {line[largest + 33 : largest + 35] for line in lines}
    assert marks == ({"· ", "  "} if "assistant/message" in types else {"  "}), lines
    assert all(line[largest + 35] != " " for line in lines), lines


def test_a_log_of_fewer_seqs_keeps_six_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Below a million events the column is six places wide, as it always was."""
    log = Log()
    log.turn(1, "first", "ok")
    path = log.write(tmp_path / "session.jsonl")
    assert main(["events", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line[6:8] == " t" and line[:6].strip().isdigit() for line in lines), lines


def test_a_packed_row_across_the_million_is_aligned(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The deltas of one packed row whose seqs go from six digits to seven are printed in one column."""
    path = _long_log(tmp_path)
    assert main(["events", str(path)]) == 0
    out = capsysbinary.readouterr().out
    assert out.count(b"\n") == 16 + DELTAS
    assert (
        out.startswith(b"      0 t1 ")
        and b"\n 999999 t2   assistant/chunk" in out
        and b"\n1000000 t2 " in out
    )
    assert len({line.find(b" t") for line in out.splitlines()}) == 1
