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

from core.cli import main
from tests.conftest import allocated_peak
from tests.log.helpers import HEADER

MEMBERS = 100_000


def _big_row_log(path: Path) -> None:
    """A turn whose one step streams ``MEMBERS`` text deltas in one packed row."""
    lines: list[dict[str, Any]] = [
        HEADER,
        {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1000, "data": {"turn": 1, "step": 1}},
        {"type": "text-chunks", "seq0": 2, "time0": 1001, "data": {"turn": 1, "step": 1, "index": 0,
         "texts": [f"w{k} " for k in range(MEMBERS)], "dt": [k % 7 for k in range(MEMBERS - 1)]}},
        {"type": "step/end", "seq": MEMBERS + 2, "time": 10**7, "data": {"turn": 1, "step": 1}},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_events_json_never_holds_every_member_of_a_row_dumped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each delta's own orjson dump (a buffer of some KiB for a few bytes of JSON) was kept for the whole row before
    the members were put together: 460 MB at its peak on this log of 2 MB."""
    log, printed = tmp_path / "session.jsonl", tmp_path / "out.json"
    _big_row_log(log)
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
    _big_row_log(log)
    monkeypatch.setenv("TAPEDECK_CACHE_DIR", str(tmp_path / "cache"))
    temporary = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **kw: _Spool(temporary(**kw)))
    monkeypatch.setattr(_Spool, "writes", [])
    assert main(["events", str(log)]) == 0
    lines = capsysbinary.readouterr().out.splitlines()
    assert len(lines) == MEMBERS + 3 and lines[-2].endswith(b"text-delta 'w99999 '"), lines[-2:]
    assert sum(_Spool.writes) > 5_000_000 and max(_Spool.writes) < 2_000_000, max(_Spool.writes)
