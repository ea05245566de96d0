"""A bench's number options take finite numbers only: ``--delay nan`` was measured and written into the JSON result
as ``NaN``, which no JSON reader takes (``emit``)."""

from __future__ import annotations

from typing import Any

import pytest

from bench import control


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
def test_a_delay_that_is_not_finite_is_refused_before_measuring(
    value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[Any] = []
    monkeypatch.setattr(control, "measure", lambda *args: measured.append(args) or {"checkpoint": [1]})
    with pytest.raises(SystemExit) as done:
        control.main([f"--delay={value}", "--tries", "1", "--json"])
    assert done.value.code == 2 and measured == []
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1].endswith(f": error: argument --delay: '{value}' is not a finite number")
