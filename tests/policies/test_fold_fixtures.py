"""The fold planner over real DSH logs: finished sessions are left alone, errors are never folded."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policies.fold import ERROR, KEPT, SHOWN, plan_fold, preview_fold, shown_through
from core.policies.slice_config import SliceConfig
from core.read.load import load_session
from core.read.session import Session
from tests.conftest import FIXTURES as FIXTURE_DIR

DEFAULT = SliceConfig()
FIXTURES = sorted(p.name for p in FIXTURE_DIR.glob("*.jsonl"))


@pytest.mark.parametrize("name", FIXTURES)
def test_finished_sessions_plan_nothing(fixtures_dir: Path, name: str) -> None:
    session = load_session(fixtures_dir / name)
    assert plan_fold(session, DEFAULT) == []
    rows = preview_fold(session, DEFAULT)
    tool_nodes = [s for s in session.surface if session.events[s]["type"] == "tool/result"]
    assert [r.seq for r in rows] == tool_nodes
    assert all(r.status in (SHOWN, ERROR) for r in rows)


@pytest.mark.parametrize(
    ("name", "statuses"),
    [
        ("tool-call-turn.session.jsonl", {65: SHOWN}),
        ("cancel-tool-calls.session.jsonl", {19: ERROR, 21: ERROR}),
        ("tool-outcome-unknown.session.expected.jsonl", {5: ERROR}),
        ("bash-spill.session.jsonl", {16: SHOWN}),
        ("code-mode-turn.session.jsonl", {194: SHOWN}),
        ("subagent-spawn-in-process.session.jsonl", {118: SHOWN}),
    ],
)
def test_fixture_rows(fixtures_dir: Path, name: str, statuses: dict[int, str]) -> None:
    session = load_session(fixtures_dir / name)
    assert {r.seq: r.status for r in preview_fold(session, DEFAULT)} == statuses


def test_a_fixture_cut_right_after_its_tool_result_makes_it_a_candidate(fixtures_dir: Path) -> None:
    full = load_session(fixtures_dir / "tool-call-turn.session.jsonl")
    cut = Session.from_events(full.header, list(full.events[:66]))
    assert shown_through(cut) < 65 < shown_through(full)
    (row,) = preview_fold(cut, DEFAULT)
    assert (row.seq, row.tool, row.status, row.kind) == (65, "bash", KEPT, "data")
    assert "minChars" in row.reason
