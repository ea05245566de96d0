"""``tapedeck sessions`` on a log or session directory named on the command line that is no session log: its
problem is said once on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main


@pytest.mark.parametrize("named", ["log", "directory"])
def test_a_named_log_that_is_no_session_log_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    """A garbage log named (or its session directory named) was said twice: once as the listing's 'skipped' note
    and once as the named path's error, in the same words."""
    sdir = tmp_path / "sd"
    sdir.mkdir()
    log = sdir / "session.jsonl"
    log.write_bytes(b"garbage\n")
    assert main(["sessions", str(log if named == "log" else sdir)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert (
        err[0]
        == f"tapedeck: {log}: line 1 is not valid JSON (unexpected character, expected a JSON value: line 1 column 1 (char 0))"
    ), err
