"""An event read back from the log by seq after the pass (``fold``, ``recall``, ``expand``, ``seal``, the TUI's
detail pane), its line cut off or written over since: the error says which, and to read the log again, as the
pass's own check does (``tests/log/test_cut_while_read.py``); it said only that the line no longer held its seq."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gen_session import generate
from core.log.linestore import LineStore
from core.read.load import load_session
from core.shared.errors import LogFormatError


def _store(path: Path) -> LineStore:
    generate(path, 300_000, seed=4, profile="dsh-plain")
    store = load_session(path, retain=False, readback=True).events
    assert isinstance(store, LineStore)
    return store


def test_a_line_cut_off_since_the_pass_says_the_log_was_truncated(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    store = _store(path)
    last = len(store) - 1
    path.write_bytes(path.read_bytes()[:4096])
    with pytest.raises(LogFormatError) as caught:
        store.raw(last)
    said = str(caught.value)
    assert said.startswith(f"{path}: the line") and "no longer hold" in said, said
    assert said.endswith("(the log was truncated to 4,096 bytes since it was read: read it again)"), said


def test_a_line_written_over_since_the_pass_says_so(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    store = _store(path)
    last = len(store) - 1
    data = path.read_bytes()
    path.write_bytes(data[:4096] + b" " * (len(data) - 4096))  # the same size, other bytes
    with pytest.raises(LogFormatError) as caught:
        store.raw(last)
    said = str(caught.value)
    assert said.endswith("(the log was written over since it was read: read it again)"), said
