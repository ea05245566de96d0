"""``tapedeck fleet``'s arguments are checked before the TUI starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.app import TapedeckApp
from tui.cli import main


@pytest.mark.parametrize("interval", ["0", "-1", "nan", "inf"])
def test_fleet_refuses_an_interval_that_is_not_a_positive_number_of_seconds(
    tmp_path: Path, interval: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checked as watch checks it: a zero or negative interval would have the opened session poll without pause.
    def started(self: TapedeckApp) -> None:
        raise AssertionError(f"the TUI started with --interval {interval}")

    monkeypatch.setattr(TapedeckApp, "run", started)
    assert main(["fleet", str(tmp_path), "--interval", interval]) == 2
    assert f"--interval must be a positive number of seconds, not {float(interval)}" in capsys.readouterr().err
