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
    assert f"--interval must be a positive number of seconds, not {float(interval):g}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [["fleet", "BAD"], ["fleet", "ROOT", "BAD"], ["watch", "BAD"], ["watch", "ROOT", "BAD"], ["alerts", "BAD"],
     ["alerts", "ROOT", "BAD", "--follow"], ["sessions", "ROOT", "BAD"]],
)  # fmt: skip
@pytest.mark.parametrize("bad", ["loop", "fifo"])
def test_a_root_that_is_a_link_loop_or_no_directory_nor_file_is_named_so_before_anything_starts(
    tmp_path: Path, command: list[str], bad: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command over sessions roots says which root loops, as ``sessions`` does, never 'no such file'. A FIFO
    or a device given for a root opened the fleet table (fleet, watch of several roots) with no session and no word
    why: it is refused too, naming what it is, as ``sessions`` and ``alerts`` named it."""
    import os

    def started(self: TapedeckApp) -> None:
        raise AssertionError("the TUI started")

    monkeypatch.setattr(TapedeckApp, "run", started)
    path, root = tmp_path / bad, tmp_path / "root"
    path.symlink_to(path) if bad == "loop" else os.mkfifo(path)
    root.mkdir()
    argv = [str({"BAD": path, "ROOT": root}.get(word, word)) for word in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    said = "cannot read (Too many levels of symbolic links)" if bad == "loop" else "is a FIFO, not a session log file"
    assert f"{path}: {said}" in err and "no such file" not in err, err


@pytest.mark.parametrize("command", [["watch", "LOG"], ["watch", "ROOT"], ["fleet", "ROOT"], ["watch", "ROOT", "ROOT"]])
def test_the_tui_needs_a_terminal(
    fixtures_dir: Path, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """``tapedeck watch LOG </dev/null 2>out`` (a script, a cron job, CI) ran until killed, drawing the screen's escape
    sequences into the file and waiting for keys that never came: the TUI is not started without a terminal."""
    import os

    def started(self: TapedeckApp) -> None:
        raise AssertionError("the TUI started")

    monkeypatch.setattr(TapedeckApp, "run", started)
    monkeypatch.setattr(os, "isatty", lambda fd: fd != 0)  # stdin is no terminal, stderr is one
    paths = {"LOG": fixtures_dir / "tool-call-turn.session.jsonl", "ROOT": tmp_path}
    assert main([str(paths.get(word, word)) for word in command]) == 2
    assert capsys.readouterr().err == (
        "tapedeck: the TUI needs a terminal: it draws on stderr and reads keys from stdin, and stdin is not one here; "
        "`tapedeck sessions`, `inspect` and `events` read logs without one\n"
    )
