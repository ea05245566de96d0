"""What a command prints goes out in the stream's buffer-sized writes, however many pieces it is made of: a
system call per event (or per request's message) cost a ``--json`` list more than making its lines."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from core.cli import main

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
