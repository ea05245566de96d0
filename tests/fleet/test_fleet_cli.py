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


@pytest.mark.parametrize(
    "command",
    [["fleet", "LOOP"], ["fleet", "ROOT", "LOOP"], ["watch", "LOOP"], ["watch", "ROOT", "LOOP"], ["alerts", "LOOP"],
     ["alerts", "ROOT", "LOOP", "--follow"], ["sessions", "ROOT", "LOOP"]],
)  # fmt: skip
def test_a_root_that_is_a_link_loop_is_named_so_before_anything_starts(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command over sessions roots says which root loops, as ``sessions`` does, never 'no such file'."""

    def started(self: TapedeckApp) -> None:
        raise AssertionError("the TUI started")

    monkeypatch.setattr(TapedeckApp, "run", started)
    loop, root = tmp_path / "loop", tmp_path / "root"
    loop.symlink_to(loop)
    root.mkdir()
    argv = [str({"LOOP": loop, "ROOT": root}.get(word, word)) for word in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{loop}: cannot read (Too many levels of symbolic links)" in err and "no such file" not in err, err
