"""``bench/crash.py --out DIR``: where the trials that went wrong are kept."""

from __future__ import annotations

import os
import signal
import subprocess
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


def test_a_run_cut_short_leaves_no_host_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each host runs in a session of its own (a kill takes its commands too), so Ctrl-C at the bench never reached
    it, and a run past its time limit was left as it was: both went on playing alone. Both now kill its group."""
    started: list[subprocess.Popen[bytes]] = []
    start = crash._start

    def recorded(cmd: list[str]) -> subprocess.Popen[bytes]:
        started.append(start(cmd))
        return started[-1]

    monkeypatch.setattr(crash, "_start", recorded)
    monkeypatch.setattr(crash, "RUN_TIMEOUT", 0.2)  # long before the demo ends
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            crash.baseline(tmp_path, False)
        (host,) = started
        assert host.poll() is not None, "the host outlived the bench's run"
    finally:
        for proc in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
