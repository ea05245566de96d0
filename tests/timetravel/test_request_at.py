"""Requests rebuilt from the moment they went out (the TUI's path) equal the forward pass's, everywhere."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.mutation import Mutation, mutate_lines
from core.log.reader import read_log
from core.read.load import load_session
from core.read.session import Session
from core.read.timetravel import SurfaceTimeline
from core.rebuild.request import RequestClock, iter_requests, request_at, request_marks, request_points
from tests.timetravel.conftest import FIXTURE_LOGS


def _check(session: Session, path: Path) -> int:
    data = read_log(path)
    passed = list(iter_requests(data.header, data.events, others=False))  # the TUI's path: the agent's requests
    points = request_points(session)
    assert [(p.turn, p.step, p.attempt, p.seq) for p in points] == [(r.turn, r.step, r.attempt, r.seq) for r in passed]
    timeline = SurfaceTimeline.from_session(session, every=4)
    marks = request_marks(session)
    for point, expected in zip(points, passed, strict=True):
        rebuilt = request_at(session, timeline, point, marks)
        assert (rebuilt.body, rebuilt.keys, rebuilt.header_seq) == (expected.body, expected.keys, expected.header_seq)
    return len(points)


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.name)
def test_fixtures(path: Path) -> None:
    assert _check(load_session(path), path) >= 1


def _read_back(path: Path) -> Session:
    """A session projected in one streaming pass whose events are read back from the file on demand."""
    return load_session(path, retain=False, readback=True)


def test_generated_logs(generated_logs: list[Path]) -> None:
    raw, zstd = generated_logs
    assert _check(_read_back(raw), raw) > 20  # events read back from the file, as for a big log
    assert _check(load_session(zstd), zstd) > 20


def test_a_host_session(demo_log: Path) -> None:
    assert _check(load_session(demo_log), demo_log) > 30


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(FIXTURE_LOGS)), cuts=st.lists(st.floats(0, 1), max_size=6))
def test_points_taken_piece_by_piece_are_the_same(demo_log: Path, which: int, cuts: list[float]) -> None:
    session = load_session([*FIXTURE_LOGS, demo_log][which])
    bounds = sorted({int(c * session.next_seq) for c in cuts} | {session.next_seq})
    clock = RequestClock()
    pieces, start = [], 0
    for stop in bounds:
        pieces += request_points(session, start, stop, clock)
        start = stop
    assert pieces == request_points(session)


def test_a_host_session_whose_header_lists_a_tool_without_a_name(demo_log: Path, tmp_path: Path) -> None:
    """Rebuilt as logged: the schema keeps the fields it has (a KeyError in to_openai_tools crashed request
    views, alerts and export before)."""
    lines = demo_log.read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if n and orjson.loads(line)["type"] == "request/header")
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(mutate_lines(lines, Mutation(at, ("data", "header", "tools", 0, "name"), "delete"))) + b"\n")
    session = load_session(path)
    assert _check(session, path) > 30
    tools = request_at(session, SurfaceTimeline.from_session(session), request_points(session)[0]).body["tools"]
    assert "name" not in tools[0]["function"] and all(isinstance(t["function"]["name"], str) for t in tools[1:])
