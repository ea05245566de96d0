"""An export in two processes of a log another program cuts while the pass reads it fails as the export in one
process does: it is not done again, silently, on what is left of the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from bench.gen_session import generate
from core.cli import main
from core.export import split
from core.read import load


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_log_cut_while_a_split_export_reads_it_fails_the_export(
    jobs: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TAPEDECK_EXPORT_JOBS=2 the pass's 'the log was truncated while it was read' sent the export to be done
    again in one process, which read the cut log from its start and exported its first MB with exit 0: a page of
    another log than the one asked for, where one process said to read it again (exit 2)."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAPEDECK_EXPORT_JOBS", jobs)
    if split.active_count() > 1:  # a thread an earlier test left idle: the renderer uses none of its locks
        monkeypatch.setattr(split, "active_count", lambda: 1)
    log = tmp_path / "session.jsonl"
    generate(log, 3_000_000, seed=3, profile="mixed")
    cut = 1_000_000
    # another program cuts the log once the pass has read past the cut's point (in both modes the pass reads so)
    real = load._chunks

    def chunks(f: BinaryIO, path: Path) -> Iterator[bytes]:
        for chunk in real(f, path):
            if f.tell() > cut and log.stat().st_size > cut:
                os.truncate(log, cut)
            yield chunk

    monkeypatch.setattr(load, "_chunks", chunks)
    out = tmp_path / "x.json"
    assert main(["export", str(log), "--format", "json", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the log was truncated to 1,000,000 bytes while it was read" in err, err
    assert not out.exists()
