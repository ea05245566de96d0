"""The adaptive policy over real DSH logs: requests, positions, routes and prunes that replay cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_adaptive_support import extend

from core.log.reader import read_log
from core.log.vocabulary import ROUTE_EVENT
from core.policies.adaptive import RouteError, classify_task, newest_request_text, plan_route
from core.policies.adaptive_config import AdaptiveConfig, validate
from core.policies.pruner import PRUNE_MARKER
from core.read.load import load_session
from core.read.session import Session

FIXTURES = [
    "tool-call-turn.session.jsonl",
    "multi-turn.session.jsonl",
    "compaction-recovery.session.jsonl",
    "code-mode-turn.session.jsonl",
    "error-finish.session.jsonl",
    "cancel-tool-calls.session.jsonl",
    "bash-spill.session.jsonl",
    "subagent-spawn-in-process.session.jsonl",
]
EAGER = {"pruneLevels": [{"name": "eager", "atStep": 1, "atPressureRatio": 1, "thresholdChars": 200, "headChars": 60,
                          "tailChars": 40, "protectRecentSteps": 0, "minimumCharsRemoved": 1}],
         "pruneSchedule": "step"}  # fmt: skip


def reopened_last_turn(path: Path) -> Session:
    """The log cut just before its last ``turn/end``: the last turn is open again, as during a live run."""
    data = read_log(path)
    end = max(i for i, e in enumerate(data.events) if e["type"] == "turn/end")
    return Session.from_events(data.header, data.events[:end])


@pytest.mark.parametrize("name", FIXTURES)
def test_routes_a_reopened_fixture_turn(fixtures_dir: Path, name: str) -> None:
    closed = load_session(fixtures_dir / name)
    with pytest.raises(RouteError):
        plan_route(closed, AdaptiveConfig(), context_window=None, context_tokens=None)
    session = reopened_last_turn(fixtures_dir / name)
    before = len(session.diagnostics)
    request = newest_request_text(session)
    assert request, name
    decision = plan_route(session, AdaptiveConfig(), context_window=128_000, context_tokens=2_000)
    assert decision.task_class == classify_task(request) and decision.phase == "normal"
    assert decision.turn == session.open_turn and decision.step >= 1
    assert [e["type"] for e in decision.events] == [ROUTE_EVENT]
    extend(session, decision.events)
    assert len(session.diagnostics) == before


def test_prunes_the_real_spill_result_and_replays(fixtures_dir: Path) -> None:
    session = reopened_last_turn(fixtures_dir / "bash-spill.session.jsonl")
    before = session.messages()
    decision = plan_route(session, validate(EAGER), context_window=None, context_tokens=None)
    assert decision.prune_level == "eager" and len(decision.prune.pruned) == 1
    [pruned] = decision.prune.pruned
    diagnostics = len(session.diagnostics)
    extend(session, decision.events)
    assert len(session.diagnostics) == diagnostics
    after = session.messages()
    assert len(after) == len(before) and after != before
    changed = [m for m in after if m not in before]
    text = changed[0]["content"][0]["content"][0]["text"]
    assert PRUNE_MARKER in text and len(text) == 60 + len(PRUNE_MARKER) + 40 == pruned.chars_after
    assert Session.from_events(session.header, list(session.events)).messages() == after
