"""The adaptive policy: task router, phases and their texts, caps, budgets, routing once per turn, route events."""

from __future__ import annotations

import re

import orjson
import pytest
from test_adaptive_support import add, end_turn, extend, new_session, start_turn, tool_step, user

from core.policies.adaptive import (
    CHECKPOINT_TEXT,
    POLICY_TEXT,
    ROUTE_EVENT,
    Position,
    RouteError,
    classify_task,
    current_position,
    newest_request_text,
    phase_text,
    plan_route,
)
from core.policies.adaptive_config import TASK_CLASSES, AdaptiveConfig, validate
from core.policies.risk import RISKS, RiskDecision
from core.read.session import Session

CONFIG = AdaptiveConfig(prune_schedule="step")  # the seed's schedule: these cases are the seed's
NO_PRESSURE = {"context_window": None, "context_tokens": None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("分析性能下降原因，不要修改", "read"),
        ("修复 src/retry.ts 的边界条件", "small"),
        ("创建响应式静态网页仪表盘", "frontend"),
        ("完成跨模块端到端架构改造", "large"),
        ("批量修改所有文件中的旧 API", "batch"),
    ],
)
def test_classification_acceptance(text: str, expected: str) -> None:
    assert classify_task(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "small"),
        ("", "small"),
        ("Explain why the cache misses", "read"),
        ("Review the parser and fix the crash", "small"),
        ("Review the parser and fix nothing: read-only please", "read"),
        ("Review the mail address parsing", "small"),  # "address" contains "add": a mutation word
        ("Audit the module without changing anything", "read"),
        ("做一个ui组件", "frontend"),  # ASCII \b: CJK letters are not word characters
        ("rebuild the guide", "small"),  # "guide" has no \bui\b
        ("rename across the\u3000repo", "batch"),  # JavaScript's \s includes U+3000
        ("x" * 1499, "small"),
        ("x" * 1500, "large"),
        ("😀" * 750, "large"),  # 750 code points, 1500 UTF-16 units
        ("Update the landing page copy", "frontend"),
        ("Refactor across the monorepo", "batch"),
    ],
)
def test_classification_edges(text: str | None, expected: str) -> None:
    assert classify_task(text) == expected


def test_newest_human_request() -> None:
    session = new_session()
    assert newest_request_text(session) is None
    user(session, "first")
    start_turn(session, 1)
    data = {"id": "u9", "role": "user", "source": {"kind": "user"},
            "content": [{"type": "text", "text": "line one"}, {"type": "image", "data": "x"}, {"type": "text", "text": "line two"}]}  # fmt: skip
    add(session, "user/message", data, surfaceOp="append")
    user(session, "<runtime context>", kind="runtime-context")
    assert newest_request_text(session) == "line one\nline two"


def test_position_follows_the_open_turn() -> None:
    session = new_session()
    assert current_position(session) is None
    start_turn(session, 1, "go")
    assert current_position(session) == Position(1, 1)
    tool_step(session, 1, 1, close=False)
    assert current_position(session) == Position(1, 1)
    add(session, "step/end", {"turn": 1, "step": 1})
    assert current_position(session) == Position(1, 2)
    end_turn(session, 1)
    assert current_position(session) is None
    with pytest.raises(RouteError, match="no open turn"):
        plan_route(session, CONFIG, **NO_PRESSURE)


def test_phase_sections_across_a_turn() -> None:
    """§4.g: normal, then a retry checkpoint after four steps, finalization after eight, normal again next turn."""
    session = new_session()
    user(session, "修复重试逻辑并保证幂等，避免重复请求")
    start_turn(session, 1)

    def route() -> str:
        decision = plan_route(session, CONFIG, **NO_PRESSURE)
        extend(session, decision.events)
        return decision.phase_text

    normal = route()
    assert normal.startswith('<task_policy class="small">\n') and "<task_checkpoint" not in normal
    assert route() == normal
    for step in range(1, 5):
        tool_step(session, 1, step)
    checkpoint = route()
    assert checkpoint.startswith('<task_checkpoint class="small" risk="retry">\n')
    assert "<task_policy" not in checkpoint and checkpoint != normal
    assert route() == checkpoint
    for step in range(5, 9):
        tool_step(session, 1, step)
    final = plan_route(session, CONFIG, **NO_PRESSURE)
    assert final.phase_text.startswith('<task_finalization class="small">\n') and final.phase_text.endswith(
        "</task_finalization>"
    )
    assert "<task_checkpoint" not in final.phase_text and "<task_policy" not in final.phase_text
    assert not final.tools_allowed and final.phase == "finalization"
    extend(session, final.events)
    assert route() == final.phase_text
    end_turn(session, 1)
    start_turn(session, 2)
    assert route() == normal
    # The phase text is never logged: no event (route events included) carries it.
    assert not re.search(
        r"task_(?:policy|checkpoint|finalization)", orjson.dumps(list(session.events)).decode()
    )
    assert sum(1 for e in session.events if e["type"] == ROUTE_EVENT) == 4


def test_checkpoint_routes_once_per_turn() -> None:
    session = new_session()
    start_turn(session, 1, "修复重试逻辑并保证幂等")
    for step in range(1, 5):
        tool_step(session, 1, step)
    first = plan_route(session, CONFIG, **NO_PRESSURE)
    assert first.risk is not None and (first.risk.risk, first.risk.reason) == ("retry", "selected")
    extend(session, first.events)
    # New evidence that would cover the risk does not change this turn's decision ...
    tool_step(session, 1, 5, ["✓ retry timeout idempotency test passed"])
    later = plan_route(session, CONFIG, **NO_PRESSURE)
    assert later.risk == first.risk and later.phase_text == first.phase_text
    # ... unless the host forces a fresh routing.
    forced = plan_route(session, CONFIG, **NO_PRESSURE, routed_this_turn=False)
    assert forced.risk is not None and forced.risk.reason == "already-covered"
    assert 'risk="none"' in forced.phase_text and "already confirms" in forced.phase_text
    # A restarted host reads the decision back from the log.
    assert (
        plan_route(Session.from_events(session.header, list(session.events)), CONFIG, **NO_PRESSURE).risk
        == first.risk
    )
    # The next turn routes again.
    end_turn(session, 1)
    start_turn(session, 2)
    for step in range(1, 5):
        tool_step(session, 2, step)
    assert plan_route(session, CONFIG, **NO_PRESSURE).risk.reason == "already-covered"  # type: ignore[union-attr]


def test_routed_this_turn_true_without_a_logged_decision_routes() -> None:
    session = new_session()
    start_turn(session, 1, "修复重试逻辑并保证幂等")
    for step in range(1, 5):
        tool_step(session, 1, step)
    assert plan_route(session, CONFIG, **NO_PRESSURE, routed_this_turn=True).risk.risk == "retry"  # type: ignore[union-attr]


def test_route_event_shape_caps_and_budgets() -> None:
    session = new_session()
    start_turn(session, 1, "Implement retry policy with idempotent side effects across the monorepo")
    decision = plan_route(session, CONFIG, context_window=1000, context_tokens=100)
    [event] = decision.events
    assert event == {
        "type": ROUTE_EVENT,
        "ignorable": True,
        "data": {
            "turn": 1,
            "step": 1,
            "taskClass": "batch",
            "phase": "normal",
            "caps": {"maxTokens": 65536},
            "budgets": {"soft": 10, "hard": 20},
            "risk": None,
            "pruneLevel": None,
            "pressure": 0.1,
            "charsRemoved": 0,
            "prunedSeqs": [],
        },
    }
    assert decision.tools_allowed and decision.max_tokens == 65536
    assert (decision.cap(None), decision.cap(1000), decision.cap(100_000)) == (65536, 1000, 65536)
    extend(session, decision.events)
    assert session.diagnostics == []
    # Planning again with nothing changed records nothing new.
    assert plan_route(session, CONFIG, context_window=1000, context_tokens=100).events == ()
    assert len(plan_route(session, CONFIG, context_window=1000, context_tokens=120).events) == 1


def test_checkpoint_event_records_the_risk_decision() -> None:
    session = new_session()
    start_turn(session, 1, "阻止下载接口中的路径穿越")
    for step in range(1, 6):
        tool_step(session, 1, step)
    decision = plan_route(session, CONFIG, **NO_PRESSURE)
    data = decision.events[-1]["data"]
    assert data["phase"] == "checkpoint" and data["step"] == 6
    assert data["risk"] == {
        "risk": "security",
        "score": 5,
        "reason": "selected",
        "requestCharsInspected": 12,
        "evidenceCharsInspected": 0,
    }
    assert decision.to_dict()["phaseText"] == decision.phase_text


def test_a_new_request_reclassifies() -> None:
    session = new_session()
    start_turn(session, 1, "Explain the cache layer")
    assert plan_route(session, CONFIG, **NO_PRESSURE).task_class == "read"
    user(session, "Now build a dashboard for it")
    assert plan_route(session, CONFIG, **NO_PRESSURE).task_class == "frontend"


def test_read_checkpoint_uses_the_read_text() -> None:
    session = new_session()
    start_turn(session, 1, "分析性能下降原因，不要修改")
    for step in range(1, 5):
        tool_step(session, 1, step)
    decision = plan_route(session, CONFIG, **NO_PRESSURE)
    assert decision.risk is not None and decision.risk.reason == "read-only"
    assert (
        decision.phase_text
        == f'<task_checkpoint class="read" risk="none">\n{CHECKPOINT_TEXT["read"]}\n</task_checkpoint>'
    )


def test_phase_texts_are_distinct_and_wrapped() -> None:
    texts = set()
    for task_class in TASK_CLASSES:
        normal = phase_text(task_class, "normal")
        assert normal == f'<task_policy class="{task_class}">\n{POLICY_TEXT[task_class]}\n</task_policy>'
        low = RiskDecision(None, 0, "low-confidence", 0, 0)
        fallback = phase_text(task_class, "checkpoint", low)
        assert (
            fallback
            == f'<task_checkpoint class="{task_class}" risk="none">\n{CHECKPOINT_TEXT[task_class]}\n</task_checkpoint>'
        )
        texts |= {normal, fallback, phase_text(task_class, "finalization")}
    for risk in RISKS:
        text = phase_text("large", "checkpoint", RiskDecision(risk, 6, "selected", 1, 0))
        assert text.startswith(f'<task_checkpoint class="large" risk="{risk}">\n')
        texts.add(text)
    assert len(texts) == 3 * len(TASK_CLASSES) + len(RISKS)


# ------------------------------------------------------------------------------------------- pruning tiers
def big_steps(session: Session, turn: int, steps: range, size: int = 20_000) -> list[int]:
    return [seq for step in steps for seq in tool_step(session, turn, step, ["y" * size])]


def test_step_trigger_prunes_once_per_step() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    seqs = big_steps(session, 1, range(1, 6))
    decision = plan_route(session, CONFIG, **NO_PRESSURE)
    assert decision.step == 6 and decision.prune_level == "moderate"
    # moderate protects the two newest steps: results of steps 1-3 are pruned.
    assert [p.shadowed_seq for p in decision.prune.pruned] == seqs[:3]
    kinds = [e["type"] for e in decision.events]
    assert kinds == ["compaction/prune", "tool/result"] * 3 + [ROUTE_EVENT]
    data = decision.events[-1]["data"]
    assert data["prunedSeqs"] == seqs[:3] and data["charsRemoved"] == 3 * (20_000 - (12288 + 39 + 2048))
    assert decision.to_dict()["pruned"][0] == {
        "shadowedSeq": seqs[0],
        "replacementSeq": session.next_seq + 1,
        "callId": "c1-1-0",
        "charsBefore": 20_000,
        "charsAfter": 12288 + 39 + 2048,
    }
    extend(session, decision.events)
    assert session.diagnostics == []
    again = plan_route(session, CONFIG, **NO_PRESSURE)
    assert again.events == () and again.prune_level == "moderate"


def test_pressure_trigger_and_unknown_window() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    big_steps(session, 1, range(1, 3))
    assert plan_route(session, CONFIG, context_window=None, context_tokens=90_000).prune_level is None
    assert plan_route(session, CONFIG, context_window=0, context_tokens=10).prune_level is None
    assert (
        plan_route(session, CONFIG, context_window=100_000, context_tokens=50_000).prune_level == "moderate"
    )
    critical = plan_route(session, CONFIG, context_window=100_000, context_tokens=80_000)
    assert critical.prune_level == "critical" and critical.pressure == 0.8
    # critical protects only the newest step.
    assert len(critical.prune.pruned) == 1


def test_level_never_drops_within_a_step() -> None:
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    big_steps(session, 1, range(1, 4))
    hot = plan_route(session, CONFIG, context_window=100, context_tokens=90)
    assert hot.prune_level == "critical" and hot.prune.pruned
    extend(session, hot.events)
    cool = plan_route(session, CONFIG, context_window=100, context_tokens=10)
    assert cool.prune_level == "critical" and cool.prune.pruned == ()
    extend(session, cool.events)
    tool_step(session, 1, 4)
    assert plan_route(session, CONFIG, context_window=100, context_tokens=10).prune_level is None


def test_custom_levels_and_disabled_pruning() -> None:
    session = new_session()
    start_turn(session, 1, "go")
    big_steps(session, 1, range(1, 8), size=3000)
    assert plan_route(session, validate({"pruneLevels": []}), **NO_PRESSURE).prune_level is None
    levels = validate({"pruneLevels": [{"name": "only", "atStep": 2, "atPressureRatio": 1, "thresholdChars": 1000,
                                        "headChars": 100, "tailChars": 100, "protectRecentSteps": 0,
                                        "minimumCharsRemoved": 0}], "pruneSchedule": "step"})  # fmt: skip
    decision = plan_route(session, levels, **NO_PRESSURE)
    assert decision.prune_level == "only" and len(decision.prune.pruned) == 7
