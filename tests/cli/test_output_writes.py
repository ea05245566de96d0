"""What a command prints goes out in the stream's buffer-sized writes, however many pieces it is made of: a
system call per event (or per request's message) cost a ``--json`` list more than making its lines. The same
holds for what ``surface`` spools before it prints."""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

import pytest

from core.cli import main
from core.cli.rowspool import BATCH, RowSpool

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "dsh" / "tool-call-turn.session.jsonl"


class _Counted(io.RawIOBase):
    """A raw stream that keeps what it is given and counts the writes (each one a system call on a real file)."""

    def __init__(self) -> None:
        self.data, self.writes = bytearray(), 0

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.data += b
        self.writes += 1
        return len(b)


@pytest.mark.parametrize("command", [["events", str(LOG), "--json"], ["request", str(LOG), "--all", "--json"]])
def test_a_json_list_is_written_in_buffer_sized_writes(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _Counted()
    stdout = io.TextIOWrapper(io.BufferedWriter(raw, buffer_size=1 << 16), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(command) == 0
    stdout.flush()
    assert raw.data.startswith(b"[") and raw.data.endswith(b"]\n")
    assert raw.writes <= len(raw.data) // (1 << 16) + 2, (raw.writes, len(raw.data))


class _CountedFile:
    """A spool file that counts the writes it is given (each one a system call on a real file)."""

    def __init__(self, file: BinaryIO) -> None:
        self.file, self.writes = file, 0

    def write(self, data: bytes | memoryview) -> int:
        self.writes += 1
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def fileno(self) -> int:
        return self.file.fileno()


def test_surface_rows_are_spooled_in_batch_sized_writes(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``surface`` spools every node's row (a few kB each on a log that is never cut): a write per row cost the
    kernel twice the time of writing the same bytes in 64 kB pieces. A row bigger than that goes out as it is."""
    rows = {seq: b",%d:" % seq + b"x" * (300 + seq % 700) for seq in range(0, 4000, 2)}
    rows[1000] = b",big:" + b"y" * (3 * BATCH)  # a huge tool result's row
    with tempfile.TemporaryFile() as file:
        counted = _CountedFile(file)
        spool = RowSpool(counted)  # type: ignore[arg-type]
        for seq, row in rows.items():
            spool.put(seq, row[:1], memoryview(row)[1:])
        total = sum(map(len, rows.values()))
        assert counted.writes <= total // BATCH + 3, (counted.writes, total)
        wanted = [seq for seq in rows if seq % 3]
        assert spool.print(wanted, lambda seq: b"", b"[", 1) == len(wanted)
    assert capsysbinary.readouterr().out == b"[" + b"".join(rows[seq] for seq in wanted)[1:]


def test_a_packed_row_s_members_are_dumped_together(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``events --json`` made each member of a packed row a full event and dumped and wrote it on its own (a call
    chain per stream delta, most of a DSH log's events); a row's members go out in one dump, the same bytes."""
    import core.cli.common as common

    log = ROOT / "tests" / "fixtures" / "dsh" / "code-mode-turn.session.jsonl"  # 38 lines, 255 events
    dumps = common.dumps_indented
    calls: list[int] = []
    monkeypatch.setattr(common, "dumps_indented", lambda value: calls.append(1) or dumps(value))
    assert main(["events", str(log), "--json"]) == 0
    printed = json.loads(capsysbinary.readouterr().out)
    lines = len(log.read_bytes().splitlines())
    assert len(printed) > 3 * lines and len(calls) < lines, (len(printed), len(calls), lines)
