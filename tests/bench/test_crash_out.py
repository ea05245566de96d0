"""``bench/crash.py --out DIR``: where the trials that went wrong are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import crash


def test_a_missing_out_directory_is_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It crashed with a traceback (tempfile.mkdtemp under a directory that is not there)."""
    out = tmp_path / "not" / "yet"
    assert crash.main(["--trials", "0", "--raw", "--out", str(out), "--json"]) == 0
    assert out.is_dir() and capsys.readouterr().err == ""


def test_an_out_that_cannot_be_a_directory_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "x"
    assert crash.main(["--trials", "1", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"crash.py: --out {out}: cannot make a directory there (Not a directory)\n"
