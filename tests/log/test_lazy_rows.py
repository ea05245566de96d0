"""Packed chunk rows kept packed: the projection and the events read back are exactly those of expanded rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gen_session import generate
from core.log.reader import read_log
from core.read.load import load_session
from core.read.session import Session


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "s.jsonl"
    generate(path, 150_000, seed=5, profile="short-turns")
    return path


def expanded(path: Path) -> Session:
    data = read_log(path)
    session = Session(data.header, path=data.path)
    session.diagnostics.extend(data.diagnostics)
    for event in data.events:
        session.apply(event)
    return session


def test_a_retained_load_reads_back_every_event_as_the_expanded_log_has_it(log: Path) -> None:
    lazy, full = load_session(log), expanded(log)
    assert list(lazy.events) == list(full.events)
    assert [lazy.events[n] for n in range(len(lazy.events))] == list(full.events)
    assert lazy.events[-1] == full.events[-1] and lazy.events[3:9] == full.events[3:9]
    assert sum(lazy.events.is_row_member(n) for n in range(len(lazy.events))) > len(lazy.events) // 2


def test_packed_rows_project_like_their_members(log: Path) -> None:
    lazy, full = load_session(log, retain=False), expanded(log)
    assert len(lazy.events) == 0  # nothing retained
    for name in ("counts", "surface", "turns", "tool_calls", "results_by_step", "context_samples", "cuts"):
        assert getattr(lazy, name) == getattr(full, name), name
    assert [lazy.turn_of(n) for n in range(full.next_seq)] == [full.turn_of(n) for n in range(full.next_seq)]
    assert [lazy.in_turn(n) for n in range(full.next_seq)] == [full.in_turn(n) for n in range(full.next_seq)]
    assert lazy.diagnostics == full.diagnostics and lazy.usage_total() == full.usage_total()
