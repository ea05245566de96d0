"""``fold``, ``notes`` and ``cost``'s cuts print their seq column as wide as the largest seq printed: a log past a
million events kept a fixed six-place column there, which pushed the rest of a seven-digit row one place right."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.cli import main
from tests.log.helpers import assistant, tool_call, tool_result
from tests.tui.logs import Log

DELTAS = 1_000_010  # a packed row of this many deltas takes the seqs after it past six digits


def _long_log(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """A turn with a folded tool result (seqs below a hundred), then a second whose first step streams one packed
    row of ``DELTAS`` deltas and calls a tool, whose result is folded before a last step: seqs of seven digits.
    The seqs of the two results and their folds."""
    log = Log()
    first = log.turn(1, "first", "x" * 5000)
    seqs = {"result1": first["result"], "fold1": log.fold(first["result"], "digest one")}
    log.add({"type": "turn/start", "data": {"turn": 2}})
    log.add({"type": "step/start", "data": {"turn": 2, "step": 1}})
    seq0 = len(log.events)
    row = {
        "type": "text-chunks",
        "seq0": seq0,
        "time0": 2000,
        "data": {"turn": 2, "step": 1, "index": 0, "dt": [1] * (DELTAS - 1), "texts": ["x"] * DELTAS},
    }
    log.events.extend([{}] * DELTAS)  # the row's seqs: written as the row
    log.add(assistant(2, 1, "x" * DELTAS, [("c2", "bash")]))
    call = log.add(tool_call(2, 1, "c2", "bash", '{"command":"ls"}'))
    seqs["result2"] = log.add(tool_result(2, 1, "c2", "y" * 5000, call))
    log.add({"type": "step/end", "data": {"turn": 2, "step": 1}})
    seqs["fold2"] = log.fold(seqs["result2"], "digest two")
    log.add({"type": "step/start", "data": {"turn": 2, "step": 2}})
    log.add(assistant(2, 2, "done"))
    log.add({"type": "step/end", "data": {"turn": 2, "step": 2}})
    log.add({"type": "turn/end", "data": {"turn": 2, "reason": {"kind": "completed"}}})
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir()
    before, after = log.events[:seq0], log.events[seq0 + DELTAS :]
    path.write_bytes(log.lines([log.header, *before]) + orjson.dumps(row) + b"\n" + log.lines(after))
    return path, seqs


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return _long_log(tmp_path_factory.mktemp("long"))


def _column_after_seq(lines: list[str], width: int) -> set[str]:
    """What each line holds right after a seq column of ``width`` places: the same for every aligned line."""
    return {line[width : width + 2] for line in lines}


def test_fold_sizes_its_seq_column_from_the_largest_seq(
    long_log: tuple[Path, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, seqs = long_log
    assert main(["fold", str(path)]) == 0
    header, *rows, _summary = capsys.readouterr().out.splitlines()
    assert [int(row[:7]) for row in rows] == [seqs["fold1"], seqs["fold2"]], rows
    assert header.startswith("    seq  t.s.c ") and _column_after_seq(rows, 7) == {"  "}, [header, *rows]
    assert len({row.index(".", 7) for row in rows}) == 1 and {row[9] for row in rows} == {"1", "2"}, rows


def test_notes_sizes_its_seq_column_from_the_largest_seq(
    long_log: tuple[Path, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, seqs = long_log
    for seq in (seqs["result1"], seqs["result2"]):
        assert main(["note", str(path), "--seq", str(seq), f"first line\nsecond of {seq}"]) == 0
    capsys.readouterr()
    assert main(["notes", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{seqs['result1']:>7}  first line",
        f"{'':>7}  second of {seqs['result1']}",
        f"{seqs['result2']:>7}  first line",
        f"{'':>7}  second of {seqs['result2']}",
    ], lines


def test_cost_sizes_its_cuts_seq_column_from_the_largest_seq(
    long_log: tuple[Path, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, seqs = long_log
    assert main(["cost", str(path)]) == 0
    cuts = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  seq ")]
    assert [int(line[6:13]) for line in cuts] == [seqs["fold1"], seqs["fold2"]], cuts
    assert _column_after_seq([line[6:] for line in cuts], 7) == {" f"}, cuts


def test_a_log_below_a_million_keeps_six_places(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    fold = log.fold(log.turn(1, "first", "x" * 5000)["result"], "digest")
    path = log.write(tmp_path / "s" / "session.jsonl")
    assert main(["fold", str(path)]) == 0
    header, row, _summary = capsys.readouterr().out.splitlines()
    assert header.startswith("   seq  t.s.c ") and row.startswith(f"{fold:>6}  1.1.1 "), [header, row]
