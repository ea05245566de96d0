"""``--turns`` (export, and the TUI filter's turns field): turns count from 1, as ``events --turn`` says; a range
starting at turn 0 was taken, and ``export --turns 0`` wrote an export of no row without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cli import main
from core.read.event_filter import parse_turns
from tests.conftest import FIXTURES


@given(st.integers(0, 10**6), st.sampled_from(["", "-", "-{}"]))
def test_a_range_from_turn_0_is_refused_and_one_from_1_is_taken(last: int, shape: str) -> None:
    for first in (0, 1):
        text = f"{first}{shape.format(first + last)}"
        if first == 0:
            with pytest.raises(ValueError, match="turns count from 1"):
                parse_turns(text)
        else:
            got = parse_turns(text)
            assert got is not None and got[0] == 1


def test_export_refuses_turn_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.json"
    assert main(["export", str(FIXTURES / "multi-turn.session.jsonl"), "--turns", "0", "-o", str(out)]) == 2
    assert capsys.readouterr().err == "tapedeck: turn range '0': turns count from 1\n"
    assert not out.exists()
