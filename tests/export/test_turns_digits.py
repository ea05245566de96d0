"""``--turns`` (export, and the TUI filter's turns field) counts in ASCII digits, as every option that counts does."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.read.event_filter import parse_turns
from tests.conftest import FIXTURES


@pytest.mark.parametrize("text", ["٣", "1-٣", "３-", "१"])
def test_a_turn_range_in_another_script_s_digits_is_refused(text: str) -> None:
    """``\\d`` let Arabic-Indic, fullwidth and Devanagari digits through as turn numbers, where docs/cli.md says an
    option that counts refuses other scripts' digits."""
    with pytest.raises(ValueError, match="must look like 3, 3-7 or 3-"):
        parse_turns(text)


def test_export_refuses_turns_in_another_script_s_digits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.json"
    assert main(["export", str(FIXTURES / "multi-turn.session.jsonl"), "--turns", "٢", "-o", str(out)]) == 2
    assert "must look like 3, 3-7 or 3-" in capsys.readouterr().err and not out.exists()
