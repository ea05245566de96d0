"""Hypothesis properties: pruning tiers never un-prune, levels never flap within a step, bounds always hold."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_adaptive_support import add, extend, new_session, replayed, small_levels, start_turn, tool_step

from core.policies.adaptive import classify_task, plan_route
from core.policies.adaptive_config import TASK_CLASSES, PruneBudget, RiskRouterConfig
from core.policies.pruner import PRUNE_MARKER, measure, prune_content
from core.policies.risk import bound_text, js_units, route_risk
from core.read.session import Session
from core.shared.text import utf16_len

CONFIG = small_levels()
LEVELS = [level.name for level in CONFIG.prune_levels]
WINDOW = 1000

step_plan = st.tuples(
    st.lists(st.integers(min_value=20, max_value=2500), max_size=3),  # result sizes of the step
    st.lists(
        st.one_of(st.none(), st.floats(min_value=0, max_value=1)), min_size=1, max_size=4
    ),  # pressure trace
)


def surface_by_original(session: Session) -> dict[int, int]:
    """Original tool-result seq -> the surface node that currently shows it."""
    return {
        session.original_of(seq): seq
        for seq in session.surface
        if session.events[seq]["type"] == "tool/result"
    }


def policy_of(session: Session, seq: int) -> str | None:
    meta = session.events[seq]["data"].get("meta")
    return meta.get("policy") if isinstance(meta, dict) else None


def level_of(session: Session, seq: int) -> int:
    """The index of the prune level that made a pruned node."""
    return LEVELS.index(session.events[seq]["data"]["meta"]["level"])


@pytest.mark.parametrize("schedule", ["cache-aware", "step"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step_plan, min_size=1, max_size=10))
def test_tiers_never_unprune_never_flap_within_a_step_and_re_prune_only_harsher(
    schedule: str, plan: list[tuple[list[int], list[float | None]]]
) -> None:
    config = replace(CONFIG, prune_schedule=schedule)
    session = new_session()
    start_turn(session, 1, "Implement the retry policy")
    chars: dict[int, int] = {}
    pruned_node: dict[int, int] = {}
    for step, (sizes, pressures) in enumerate(plan, 1):
        add(session, "step/start", {"turn": 1, "step": step})
        reached = -1
        for pressure in pressures:
            tokens = None if pressure is None else int(pressure * WINDOW)
            decision = plan_route(session, config, context_window=WINDOW, context_tokens=tokens)
            index = -1 if decision.prune_level is None else LEVELS.index(decision.prune_level)
            assert index >= reached, "the level dropped within a step"
            reached = index
            extend(session, decision.events)
            for original, node in surface_by_original(session).items():
                now = session.node_chars(node)
                assert now <= chars.get(original, now), "a result grew back"
                chars[original] = now
                if original in pruned_node and node != pruned_node[original]:
                    # only a harsher tier touches a pruned result again: it re-prunes to its own budget
                    assert level_of(session, node) > level_of(session, pruned_node[original]), "re-pruned milder"
                if policy_of(session, node) == "prune":
                    pruned_node[original] = node
        tool_step(session, 1, step, ["z" * size for size in sizes], start=False)
    assert session.diagnostics == []
    assert replayed(session).messages() == session.messages()


blocks = st.lists(
    st.one_of(
        st.text(max_size=120).map(lambda t: {"type": "text", "text": t}),
        st.just({"type": "image", "mediaType": "image/png", "data": "AA=="}),
    ),
    max_size=6,
)
budgets = st.tuples(st.integers(0, 60), st.integers(0, 60), st.integers(0, 80)).map(
    lambda t: PruneBudget(t[0] + t[1] + len(PRUNE_MARKER) + t[2], t[0], t[1])
)


@settings(max_examples=200, deadline=None)
@given(blocks, budgets)
def test_prune_content_keeps_exact_head_and_tail(content: list[dict[str, Any]], budget: PruneBudget) -> None:
    total = measure(content)
    pruned = prune_content(content, budget)
    if total <= budget.threshold_chars:
        assert pruned is None
        return
    assert pruned is not None
    assert measure(pruned) <= budget.threshold_chars and measure(pruned) < total
    full = "".join(b["text"] for b in content if b["type"] == "text")
    kept = "".join(b["text"] for b in pruned if b["type"] == "text")
    assert kept == full[: budget.head_chars] + PRUNE_MARKER + full[total - budget.tail_chars :]
    assert [b for b in pruned if b["type"] != "text"] == [b for b in content if b["type"] != "text"]
    assert all(b["text"] for b in pruned if b["type"] == "text")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_bound_text_never_exceeds_its_maximum(text: str, maximum: int) -> None:
    bounded = bound_text(text, maximum)
    assert len(bounded) <= maximum
    if utf16_len(text) <= maximum:
        assert bounded == js_units(text)
    else:
        assert len(bounded) == maximum and js_units(text).startswith(
            bounded[: max(0, maximum - maximum // 4 - 3)]
        )


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(TASK_CLASSES),
    st.text(max_size=400),
    st.text(max_size=600),
    st.integers(min_value=1, max_value=300),
    st.integers(min_value=1, max_value=300),
)
def test_routers_accept_any_text(
    task_class: str, request: str, evidence: str, max_request: int, max_evidence: int
) -> None:
    assert classify_task(request) in TASK_CLASSES
    config = RiskRouterConfig(max_request_chars=max_request, max_evidence_chars=max_evidence)
    decision = route_risk(task_class, request, evidence, config)
    assert (
        decision.request_chars_inspected <= max_request and decision.evidence_chars_inspected <= max_evidence
    )
    assert (decision.risk is None) == (decision.reason != "selected")
