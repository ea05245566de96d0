"""``events`` on a log whose one packed row has a hundred thousand members renders them a piece at a time
(``ROW_MEMBERS``), as text and as JSON: what it holds rendered at once does not grow with the row (a row of a million
members took 355 MB as text and 4.7 GB as JSON)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson
import pytest

from bench.big_row import write_log
from core.cli import main
from tests.conftest import allocated_peak

MEMBERS = 100_000


def test_events_json_never_holds_every_member_of_a_row_dumped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each delta's own orjson dump (a buffer of some KiB for a few bytes of JSON) was kept for the whole row before
    the members were put together: 460 MB at its peak on this log of 2 MB."""
    log, printed = tmp_path / "session.jsonl", tmp_path / "out.json"
    write_log(log, MEMBERS)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    with printed.open("w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        peak = allocated_peak(lambda: main(["events", str(log), "--json"]))
    events = orjson.loads(printed.read_bytes())
    assert [e["seq"] for e in events] == list(range(MEMBERS + 3))
    assert events[MEMBERS + 1]["data"]["chunk"]["text"] == f"w{MEMBERS - 1} "
    assert peak < 64 << 20, f"events --json held {peak >> 20} MiB at its peak"


class _Spool:
    """A temporary file that notes the size of each write (``writes``)."""

    writes: list[int] = []

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def write(self, data: bytes) -> int:
        self.writes.append(len(data))
        return self.file.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


def test_events_as_text_renders_a_row_a_piece_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The text lines of a row's members were all made, joined and encoded at once, then spooled in one write."""
    log = tmp_path / "session.jsonl"
    write_log(log, MEMBERS)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    temporary = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **kw: _Spool(temporary(**kw)))
    monkeypatch.setattr(_Spool, "writes", [])
    assert main(["events", str(log)]) == 0
    lines = capsysbinary.readouterr().out.splitlines()
    assert len(lines) == MEMBERS + 3 and lines[-2].endswith(b"text-delta 'w99999 '"), lines[-2:]
    assert sum(_Spool.writes) > 5_000_000 and max(_Spool.writes) < 2_000_000, max(_Spool.writes)
